"""societas.agents: agents, cognition and the simulation runtime."""
