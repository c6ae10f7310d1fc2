"""Outside agent CLIs (Claude Code, Codex, opencode) as group members, and their bridge back to Orkas."""
