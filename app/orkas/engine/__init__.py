"""The harness: pure agent mechanics. Imports only `orkas.core`; knows nothing of the product."""
