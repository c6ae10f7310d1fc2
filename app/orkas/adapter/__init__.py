"""Binds the engine to the product: persistence, credentials, provider pools, services."""
