"""societas.cluster: the Ray runtime, CLI, jobs, metrics and reports."""

# isort: off
import societas.memory.heap  # noqa: F401  first: Arrow's allocator is chosen when pyarrow loads
# isort: on
