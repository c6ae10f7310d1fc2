"""Scheduled work: a conversation's prompts run later or again and again, while Orkas runs."""
