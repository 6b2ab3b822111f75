"""Routing conversations between agents, whichever groups (processes, Ray actors) own them.

A conversation completes within the tick it starts. After every group stepped, the driver
takes the invitations (at most one conversation per agent per tick: the first in
(initiator, partner) order wins) and runs sub-rounds: each round sends every open
conversation's next step to the group owning the agent who acts ('invite' to the invitee,
'turn' to the speaker, 'conclude' to both sides at the end), all groups concurrently, so one
conversation waits only for its own turns. Order is deterministic at every point.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from societas.agents.runtime.protocol import GroupHandle, TurnReply, TurnRequest


class ConversationTotals(BaseModel):
    """What the tick's conversations amounted to."""

    started: int = 0
    accepted: int = 0
    turns: int = 0
    cross_group: int = 0
    rounds: int = 0


def _concluding(r: TurnRequest, history: list) -> list[TurnRequest]:
    """One 'conclude' step for each participant."""
    a, b = r.initiator, r.listener if r.speaker == r.initiator else r.speaker
    base = {"history": history, "kind": "conclude"}
    return [
        r.model_copy(update={**base, "speaker": a, "listener": b}),
        r.model_copy(update={**base, "speaker": b, "listener": a}),
    ]


def _next(r: TurnRequest, reply: TurnReply) -> list[TurnRequest]:
    """The requests that follow `reply` to `r` (none after a conclusion)."""
    if r.kind == "conclude":
        return []
    if r.kind == "invite":
        if reply.end:
            return []
        first = {"kind": "turn", "speaker": r.initiator, "listener": r.speaker, "turn": 0}
        return [r.model_copy(update=first)]
    history = [*r.history, reply.line] if reply.line is not None else list(r.history)
    if reply.end or reply.line is None or r.turn + 1 >= r.max_turns:
        return _concluding(r, history)
    swap = {"speaker": r.listener, "listener": r.speaker, "turn": r.turn + 1, "history": history}
    return [r.model_copy(update=swap)]


def select(requests: Sequence[TurnRequest], owner: Mapping[int, int]) -> list[TurnRequest]:
    """At most one conversation per agent, both sides known, in deterministic order."""
    busy: set[int] = set()
    chosen = []
    for r in sorted(requests, key=TurnRequest.sort_key):
        pair = {r.speaker, r.listener}
        if len(pair) < 2 or pair & busy or not all(a in owner for a in pair):
            continue
        busy |= pair
        chosen.append(r)
    return chosen


async def run_conversations(
    groups: Sequence[GroupHandle], owner: Mapping[int, int], requests: Sequence[TurnRequest]
) -> ConversationTotals:
    """Run the invitations of one tick to the end, in sub-rounds across groups."""
    by_id = {g.group_id: g for g in groups}
    active = select(requests, owner)
    totals = ConversationTotals(started=len(active))
    while active:
        per_group: dict[int, list[TurnRequest]] = defaultdict(list)
        for r in active:
            per_group[owner[r.speaker]].append(r)
        order = sorted(per_group)
        answers = await asyncio.gather(*(by_id[g].converse_round(per_group[g]) for g in order))
        totals.rounds += 1
        following: list[TurnRequest] = []
        for g, replies in zip(order, answers, strict=True):
            asked = {(r.conversation_id, r.speaker, r.kind): r for r in per_group[g]}
            for reply in replies:
                r = asked[(reply.conversation_id, reply.speaker, reply.kind)]
                if r.kind == "invite" and not reply.end:
                    totals.accepted += 1
                    totals.cross_group += owner[r.speaker] != owner[r.listener]
                totals.turns += r.kind == "turn" and reply.line is not None
                following += _next(r, reply)
        active = sorted(following, key=TurnRequest.sort_key)
    return totals
