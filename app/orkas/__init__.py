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

# uvicorn's __init__ imports its command line (`uvicorn.main`), which imports click, watchfiles and multiprocessing
# for `uvicorn app:app --reload` (~2.3 MB of the idle window, 32 modules); Orkas starts its servers itself. Its
# `Server` is the real one; `run` and `main` load the real command line when called.
if "uvicorn" not in sys.modules:

    def _uvicorn_cli() -> types.ModuleType:
        import importlib

        sys.modules.pop("uvicorn.main", None)
        return importlib.import_module("uvicorn.main")

    def _uvicorn_server(name: str) -> object:
        if name == "Server":
            from uvicorn.server import Server

            return Server
        if name.startswith("__"):  # the import system asks for __path__, a repr for __file__: not the command line
            raise AttributeError(name)
        return getattr(_uvicorn_cli(), name)

    _main = types.ModuleType("uvicorn.main", "uvicorn's command line: loaded in Orkas only when called")
    _main.__getattr__ = _uvicorn_server  # type: ignore[method-assign]
    _main.run = lambda *args, **kwargs: _uvicorn_cli().run(*args, **kwargs)  # type: ignore[attr-defined]
    _main.main = lambda *args, **kwargs: _uvicorn_cli().main(*args, **kwargs)  # type: ignore[attr-defined]
    sys.modules.setdefault("uvicorn.main", _main)
