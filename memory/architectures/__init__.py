"""Memory architectures per agent type: default, FinMem, cognitive."""
