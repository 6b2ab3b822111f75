"""Retrieval: the one score and the paths that rank memories by it."""
