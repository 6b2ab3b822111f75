"""What a run shows while and after it runs: Prometheus metrics, the run folder, replay logs."""
