"""The phone mirror: its own TLS server, pairing and device checks, routes, and the fan-out to phones."""
