"""Backends: the models that actually produce text (a server's API, or a test double)."""
