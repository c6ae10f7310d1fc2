"""Orkas: a local-first desktop AI agent workspace."""

__version__ = "0.1.0"
