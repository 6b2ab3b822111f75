"""A group's storage: RAM columns, KV, write-behind, checkpoints."""
