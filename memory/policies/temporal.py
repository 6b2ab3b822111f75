"""Temporal associations: the memories one agent writes from one episode (a conversation),
linked in the order they were written, for spreading activation. Only the last `span`
memories of at most `max_open_episodes` open episodes are kept, so RAM stays bounded.
"""

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
        """Memory `memory_id` of `agent_id` was written in `episode`: link it to the episode's
        previous memories (nothing when the policy is off). Returns the edges added."""
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

    def close(self, agent_id: int, episode: str) -> None:
        """The episode is over: later memories under the same key start a new chain."""
        self.open.pop((agent_id, episode), None)
