"""Orkas: a local-first desktop AI agent workspace."""

from importlib.metadata import PackageNotFoundError, version


def _version() -> str:
    """pyproject.toml's version, the one place it is written: from the installed package's metadata (an
    editable checkout and the PyInstaller bundle both carry it), else from the file itself."""
    try:
        return version("orkas-desktop")  # the distribution's name (pyproject), not the package's
    except PackageNotFoundError:
        import tomllib
        from pathlib import Path

        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        return str(tomllib.loads(pyproject.read_text())["project"]["version"])


__version__ = _version()
