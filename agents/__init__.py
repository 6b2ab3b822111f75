"""societas.agents: agents, cognition and the simulation runtime."""

# isort: off
import societas.memory.heap  # noqa: F401  first: Arrow's allocator is chosen when pyarrow loads
# isort: on
