"""The Ray-free tick loop: the coordinator, in-process and resilient groups, checkpointed runs."""
