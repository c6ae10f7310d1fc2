"""Safety for everything the agent touches: the path policy, command risk, the process executor."""

from typing import TYPE_CHECKING, Any

from orkas.engine.sandbox.paths import PathDenied, PathPolicy

if TYPE_CHECKING:
    from orkas.engine.sandbox.risk import classify_command
    from orkas.engine.sandbox.verdict import CommandRisk

__all__ = ["SAFE_ENV", "CommandRisk", "PathDenied", "PathPolicy", "classify_command"]

# The environment variables a command inherits from the app's (the executor adds its own); here, not in the
# executor, so the settings can name them without loading the sandbox.
SAFE_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "USER", "LOGNAME", "SHELL", "HOME", "TMPDIR")


def __getattr__(name: str) -> Any:
    """The classifier on first use: its parser and rule tables are not needed to check a path."""
    if name == "classify_command":
        from orkas.engine.sandbox.risk import classify_command

        return classify_command
    if name == "CommandRisk":
        from orkas.engine.sandbox.verdict import CommandRisk

        return CommandRisk
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
