"""Sentence encoders that load offline, and the cache that encodes each string once."""
