"""Checkpoints of a workspace, so what a turn changed — by the file tools or by any command — can be undone."""
