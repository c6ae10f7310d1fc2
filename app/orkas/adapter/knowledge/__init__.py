"""The knowledge base service: the person's documents and past conversations, indexed in the background."""
