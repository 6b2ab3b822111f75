"""Researcher-facing experiment features: custom attributes and blocks, surveys, arms, branch
patches, populations from files and the AgentSociety memory API (see configs/REFERENCE.md)."""
