"""Stand-ins for inference servers in tests and benchmarks: the emulator and a local model."""
