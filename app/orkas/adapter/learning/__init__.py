"""Learning from use: each run's signals, and the reflections that turn them into skills and memos."""
