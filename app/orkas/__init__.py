"""Orkas: a local-first desktop AI agent workspace."""

import sys
import types

# The one place the version is written: pyproject.toml reads it from here (`dynamic`), the packages
# (.deb Version, the installers) from pyproject. A literal, not importlib.metadata: reading the
# installed distribution's metadata cost ~40 ms of every start (issue 38).
__version__ = "0.2.0"

# httpx's __init__ imports its command-line client, which imports rich, click and pygments when they are
# installed (~40 ms of every start); Orkas never runs that client. Its entry point stays callable.
if "httpx" not in sys.modules:
    _cli = types.ModuleType("httpx._main", "httpx's command-line client: not loaded in Orkas")
    _cli.main = lambda: sys.exit("httpx's command line is not available inside Orkas")  # type: ignore[attr-defined]
    sys.modules.setdefault("httpx._main", _cli)
