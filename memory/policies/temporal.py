"""Temporal associations: an agent's memories of one episode, linked in the order written."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from societas.memory.model.associations import Association, AssociationIndex
from societas.memory.policies.configs import TemporalPolicy


def links_to(previous: Sequence[int], memory_id: int, policy: TemporalPolicy) -> list[Association]:
    """`temporal` edges from a memory's last `span` predecessors (nearest first) to it."""
    return [
        Association(
            source=previous[-back],
            target=memory_id,
            type="temporal",
            strength=policy.strength * policy.decay ** (back - 1),
        )
        for back in range(1, min(policy.span, len(previous)) + 1)
    ]


class TemporalLinker:
    """Open episodes of a group: (agent, episode key) → its last `span` memory ids."""

    def __init__(self, policy: TemporalPolicy, associations: AssociationIndex) -> None:
        self.policy = policy
        self.associations = associations  # the group's typed edges, added to in place
        self.open: OrderedDict[tuple[int, str], list[int]] = OrderedDict()
        self.linked = 0  # associations added (a figure for tests and results)

    def note(self, agent_id: int, episode: str, memory_id: int) -> list[Association]:
        """Link `memory_id` to the last memories of its `episode`; returns the edges added."""
        policy = self.policy
        if not policy.enabled:
            return []
        if not isinstance(episode, str) or not episode:
            raise ValueError(f"episode must be a non-empty string, got {episode!r}")
        key = (agent_id, episode)
        previous = self.open.pop(key, [])
        edges = links_to(previous, memory_id, policy)
        self.associations.add_many(edges)
        self.linked += len(edges)
        self.open[key] = [*previous, memory_id][-policy.span :]
        while len(self.open) > policy.max_open_episodes:
            self.open.popitem(last=False)
        return edges
