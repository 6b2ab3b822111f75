"""Relevance from RAM: the BM25 terms of every hot and warm memory, per agent, in typed arrays."""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import chain

import numpy as np
from numpy.typing import NDArray

from societas.memory.embedding.base import SparseVector


class AgentPostings:
    """One agent's memories (ids ascending) and their terms, row by row."""

    __slots__ = ("ends", "ids", "importances", "layers", "terms", "times", "topics", "weights")

    def __init__(self) -> None:
        self.ids = array("q")
        self.times = array("d")
        self.importances = array("d")
        self.topics = array("H")
        self.ends = array("I")  # row r's terms are terms[ends[r-1]:ends[r]]
        self.terms = array("I")
        self.weights = array("f")
        self.layers: tuple[array[int], array[float]] | None = None  # name ids, layer_since

    def mark(self, layer: int, since: float, short: int) -> None:
        """Keep the newest row's layer (a name id) and clock once a row is not short since then."""
        if self.layers is None:
            if layer == short and since == self.times[-1]:
                return
            self.layers = (array("H", [short]) * (len(self.ids) - 1), self.times[:-1])
        self.layers[0].append(layer)
        self.layers[1].append(since)

    def __len__(self) -> int:
        return len(self.ids)

    def row(self, memory_id: int) -> int:
        """The row of `memory_id` (ids are ascending); -1 if absent."""
        ids = np.frombuffer(self.ids, np.int64) if self.ids else np.empty(0, np.int64)
        i = int(np.searchsorted(ids, memory_id))
        return i if i < len(ids) and ids[i] == memory_id else -1

    def vector(self, row: int) -> SparseVector:
        start = self.ends[row - 1] if row else 0
        end = self.ends[row]
        return SparseVector(self.terms[start:end], self.weights[start:end])


class SparseIndex:
    """Per-agent postings of a group's hot and warm memories, and the group's term counts."""

    def __init__(self) -> None:
        self.agents: dict[int, AgentPostings] = {}
        self.df: Counter[int] = Counter()  # term → memories holding it (none at 0: removed)
        self.docs = 0
        self._topic_ids: dict[str, int] = {}
        self.topic_names: list[str] = []

    def __len__(self) -> int:
        return self.docs

    def topic_id(self, topic: str) -> int:
        found = self._topic_ids.get(topic)
        if found is None:
            found = self._topic_ids[topic] = len(self.topic_names)
            self.topic_names.append(topic)
        return found

    def topic_id_of(self, topic: str) -> int:
        """The id of a topic for comparisons (-1: no memory has it)."""
        return self._topic_ids.get(topic, -1)

    def add(
        self,
        ids: Sequence[int],
        agent_ids: Sequence[int],
        times: Sequence[float],
        importances: Sequence[float],
        topics: Sequence[str],
        vectors: Sequence[SparseVector | None],
        layers: Sequence[tuple[str, float]] | None = None,
    ) -> None:
        """Index new memories (ids ascending per agent); `layers`: (layer, since) of all or none."""
        agents, topic_id = self.agents, self.topic_id  # layer names share the topics' ids
        unsorted: set[int] = set()
        marks = [None] * len(ids) if layers is None else layers
        short = -1 if layers is None else topic_id("short")
        for memory_id, agent_id, time, imp, topic, vec, mark in zip(
            ids, agent_ids, times, importances, topics, vectors, marks, strict=True
        ):
            p = agents.get(agent_id)
            if p is None:
                p = agents[agent_id] = AgentPostings()
            elif p.ids and p.ids[-1] > memory_id:  # out of order (a restore): keep ids sorted
                unsorted.add(agent_id)
            p.ids.append(memory_id)
            p.times.append(time)
            p.importances.append(imp)
            p.topics.append(topic_id(topic))
            if vec is not None:
                p.terms.extend(vec.indices)
                p.weights.extend(vec.values)
            p.ends.append(len(p.terms))
            if mark is not None:
                p.mark(topic_id(mark[0]), mark[1], short)
        self.df.update(chain.from_iterable(v.indices for v in vectors if v is not None))
        self.docs += len(ids)
        for agent_id in unsorted:
            agents[agent_id] = _sorted(agents[agent_id])

    def vector(self, agent_id: int, memory_id: int) -> SparseVector | None:
        p = self.agents.get(agent_id)
        row = p.row(memory_id) if p is not None else -1
        return None if p is None or row < 0 else p.vector(row)

    def set_importance(self, agent_id: int, memory_id: int, importance: float) -> None:
        p = self.agents.get(agent_id)
        row = p.row(memory_id) if p is not None else -1
        if p is not None and row >= 0:
            p.importances[row] = importance

    def remove(self, pairs: Iterable[tuple[int, int]]) -> int:
        """Drop memories given as (agent_id, memory_id); returns how many were indexed."""
        by_agent: dict[int, set[int]] = {}
        for agent_id, memory_id in pairs:
            by_agent.setdefault(agent_id, set()).add(memory_id)
        removed = 0
        for agent_id, gone in by_agent.items():
            p = self.agents.get(agent_id)
            if p is not None:
                removed += self._remove_rows(agent_id, p, gone)
        self.docs -= removed
        return removed

    def _remove_rows(self, agent_id: int, p: AgentPostings, gone: set[int]) -> int:
        keep_rows = [r for r, i in enumerate(p.ids) if i not in gone]
        dropped = len(p.ids) - len(keep_rows)
        if not dropped:
            return 0
        df = self.df
        fresh = AgentPostings()
        start = 0
        for r, end in enumerate(p.ends):
            if p.ids[r] in gone:
                for term in p.terms[start:end]:
                    left = df[term] - 1
                    if left:
                        df[term] = left
                    else:
                        del df[term]
            start = end
        for r in keep_rows:
            _copy_row(p, r, fresh)
        if fresh.ids:
            self.agents[agent_id] = fresh
        else:
            del self.agents[agent_id]
        return dropped

    def query_weights(self, query: SparseVector) -> list[tuple[int, float]]:
        """(term, q(t) · idf(t)) of a query's terms that any indexed memory holds."""
        n, df = self.docs, self.df
        out = []
        for term, value in zip(query.indices, query.values, strict=True):
            count = df.get(term)
            if count:
                out.append((term, value * math.log(1.0 + (n - count + 0.5) / (count + 0.5))))
        return out

    def matches(
        self, p: AgentPostings, weights: list[tuple[int, float]]
    ) -> tuple[NDArray[np.intp], NDArray[np.float64]] | None:
        """The agent's postings holding a query term: rows and idf·q·d products, or None."""
        if not weights or not p.terms:
            return None
        terms = np.frombuffer(p.terms, np.uint32)
        w_at: np.float64 | NDArray[np.float64]
        if len(weights) == 1:
            term, w = weights[0]
            at = (terms == term).nonzero()[0]
            w_at = np.float64(w)
        elif len(weights) == 2:
            (t0, w0), (t1, w1) = weights
            first = terms == t0
            at = (first | (terms == t1)).nonzero()[0]
            w_at = np.where(first[at], w0, w1)
        else:
            q_terms = np.array([t for t, _ in weights], np.uint32)
            order = np.argsort(q_terms)
            sorted_terms = q_terms[order]
            pos = sorted_terms.searchsorted(terms).clip(max=len(order) - 1)
            at = (sorted_terms[pos] == terms).nonzero()[0]
            w_at = np.array([w for _, w in weights])[order[pos[at]]]
        if not at.size:
            return None
        rows = np.frombuffer(p.ends, np.uint32).searchsorted(at, side="right")
        return rows, np.frombuffer(p.weights, np.float32)[at] * w_at


def _copy_row(src: AgentPostings, r: int, dst: AgentPostings) -> None:
    begin = src.ends[r - 1] if r else 0
    dst.ids.append(src.ids[r])
    dst.times.append(src.times[r])
    dst.importances.append(src.importances[r])
    dst.topics.append(src.topics[r])
    dst.terms.extend(src.terms[begin : src.ends[r]])
    dst.weights.extend(src.weights[begin : src.ends[r]])
    dst.ends.append(len(dst.terms))
    if src.layers is not None:  # a copy of every row: marked from the first
        dst.layers = dst.layers or (array("H"), array("d"))
        dst.layers[0].append(src.layers[0][r])
        dst.layers[1].append(src.layers[1][r])


def _sorted(p: AgentPostings) -> AgentPostings:
    """The same postings with rows in ascending id order."""
    out = AgentPostings()
    for r in sorted(range(len(p.ids)), key=p.ids.__getitem__):
        _copy_row(p, r, out)
    return out
