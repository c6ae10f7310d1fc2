"""Hooks around tool use: the person's and a trusted project's commands, in Claude Code's shape."""
