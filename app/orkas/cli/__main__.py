"""`python -m orkas.cli`: the same as the `orkas` command (how Orkas starts `orkas bridge` from a checkout)."""

import sys

from orkas.cli import main

sys.exit(main())
