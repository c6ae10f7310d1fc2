"""The installed app's entry point: what `orkas` runs in a PyInstaller build (the checkout's `orkas`
is the console script of the same function)."""

import sys

from orkas.cli import main

if __name__ == "__main__":
    sys.exit(main())
