"""Model providers: the protocol, the registry and the wire adapters."""
