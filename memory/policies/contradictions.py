"""Contradiction check: new memories judged against the agent's most similar ones, in batches."""

from __future__ import annotations

import heapq
import inspect
import re
from collections.abc import Awaitable, Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from societas.memory.model.associations import Association
from societas.memory.retrieval.scoring import TextCosines

if TYPE_CHECKING:
    from societas.memory.group import GroupMemory

Pair = tuple[str, str]
ContradictionJudge = Callable[[list[Pair]], Sequence[bool] | Awaitable[Sequence[bool]]]

NEGATIONS = frozenset(
    "not no never none nobody nothing neither nor cannot without isn't aren't wasn't weren't "
    "don't doesn't didn't won't can't couldn't shouldn't hasn't haven't".split()
)
ANTONYMS = tuple(
    (x, y)
    for x, _, y in (
        p.partition("/")
        for p in "open/closed like/dislike love/hate trust/distrust safe/dangerous true/false "
        "agree/disagree arrived/left increase/decrease rose/fell".split()
    )
)
_STOP = frozenset("a an the is are was were be to of in on at and or i my me it this that".split())
_WORD = re.compile(r"[a-z']+")


_SAME = {y: x for x, y in ANTONYMS}  # an antonym pair counts as one content word for the overlap


@lru_cache(maxsize=4_096)  # a pass pairs each memory with several others
def _content(text: str) -> tuple[bool, frozenset[str], frozenset[str]]:
    """Whether `text` negates, its content words, and those with antonyms as one word."""
    words = _WORD.findall(text.lower().replace("n't", " not"))
    content = frozenset(w for w in words if w not in NEGATIONS and w not in _STOP)
    return not NEGATIONS.isdisjoint(words), content, frozenset(_SAME.get(w, w) for w in content)


def rule_contradicts(a: str, b: str, overlap: float = 0.6) -> bool:
    """Rule judge: most content words shared and one negates the other (negation or antonym)."""
    (neg_a, words_a, content_a), (neg_b, words_b, content_b) = _content(a), _content(b)
    antonym = any(
        (x in words_a and y in words_b) or (y in words_a and x in words_b) for x, y in ANTONYMS
    )
    if not content_a or not content_b:
        return False
    shared = len(content_a & content_b) / min(len(content_a), len(content_b))
    if shared < overlap:
        return False
    return (neg_a != neg_b) != antonym


def rule_judge(pairs: list[Pair]) -> list[bool]:
    """The default judge (rules, offline): `rule_contradicts` for each pair."""
    return [rule_contradicts(a, b) for a, b in pairs]


async def contradiction_pass(group: GroupMemory) -> int:
    """Judge the memories written since the last pass; returns contradictions found."""
    policy = group.config.policies.contradiction
    state = group.policy_state
    hot = group.hot
    fresh: dict[int, list[int]] = {}  # agent → its new hot memory ids (oldest first)
    for agent_id, rows in hot.rows_of_agent.items():
        new = []
        for row in reversed(rows):
            memory_id = hot.ids[row]
            if memory_id <= state.contradiction_mark:
                break
            new.append(memory_id)
        if new:
            fresh[agent_id] = new[::-1]
    if not fresh:
        return 0
    state.contradiction_mark = max(max(ids) for ids in fresh.values())
    pairs: list[tuple[int, int]] = []
    for agent_id in sorted(fresh):
        ids = hot.memory_ids(agent_id)
        texts = [hot.texts[hot.row_of[i]] for i in ids]
        vectors = await group.embedder.embed_documents(texts)
        cosines, row_of = TextCosines(vectors), {memory_id: j for j, memory_id in enumerate(ids)}
        new_ids = set(fresh[agent_id])
        for memory_id in fresh[agent_id]:
            scores = cosines.of(vectors[row_of[memory_id]])
            scored = heapq.nlargest(
                policy.candidates,
                (
                    (score, other)
                    for score, other in zip(scores, ids, strict=True)
                    if other != memory_id and (other not in new_ids or other < memory_id)
                ),
            )
            pairs.extend(
                (memory_id, other) for score, other in scored if score >= policy.min_similarity
            )
    found: list[Association] = []
    for start in range(0, len(pairs), policy.batch_size):
        batch = pairs[start : start + policy.batch_size]
        pair_texts = [(hot.texts[hot.row_of[a]], hot.texts[hot.row_of[b]]) for a, b in batch]
        verdicts = group.contradiction_judge(pair_texts)
        if inspect.isawaitable(verdicts):
            verdicts = await verdicts
        verdicts = list(verdicts)
        if len(verdicts) != len(batch):
            raise ValueError(
                f"contradiction_judge returned {len(verdicts)} verdicts for {len(batch)} pairs"
            )
        state.counters["contradiction_pairs"] += len(batch)
        state.counters["contradiction_calls"] += 1
        found.extend(
            Association(source=a, target=b, type="contradictory", strength=policy.strength)
            for (a, b), yes in zip(batch, verdicts, strict=True)
            if yes
        )
    group.associations.add_many(found)
    state.counters["contradictions"] += len(found)
    return len(found)
