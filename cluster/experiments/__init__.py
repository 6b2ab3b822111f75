"""Experiments over runs: arms, branches from a checkpoint, interviews, cost estimates."""
