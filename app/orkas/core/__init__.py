"""Infrastructure shared by every layer: the error tree, ids, clock."""
