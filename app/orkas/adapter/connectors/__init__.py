"""Connectors: the person's MCP servers, their health, and the tools they give agents."""
