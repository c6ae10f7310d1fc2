"""Packages: skill and tool bundles installed from git or a registry, and their commands."""
