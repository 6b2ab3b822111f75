"""Ray: group actors, attaching or starting Ray, the Jobs API; the only modules importing Ray."""
