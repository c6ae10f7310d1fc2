"""Conversations: their store, transcripts, versions, attachments, event logs, and the runtime that runs them."""
