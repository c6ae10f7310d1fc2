"""Safety for everything the agent touches: the path policy, command risk, the process executor."""

from orkas.engine.sandbox.paths import PathDenied, PathPolicy

__all__ = ["PathDenied", "PathPolicy"]
