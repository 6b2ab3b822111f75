"""Batch builders (late engine writes, search hits) give exactly the per-memory results."""

from __future__ import annotations

import pytest

from societas.memory.embedding.base import TextVectors
from societas.memory.store.deferred_store import hot_payloads, index_vectors


def hot_payload(group, memory_id: int) -> dict:
    """The engine payload of a hot memory derived from its full hot row, one at a time: the
    row without its id, absent location, links and evidence left out, layers only when on."""
    payload = group.hot.row(memory_id)
    del payload["id"]
    for key in ("location", "links", "evidence"):
        if not payload[key]:
            del payload[key]
    if not group.profiles.any_forgetting:
        del payload["layer"], payload["layer_since"]
    return payload


@pytest.mark.parametrize("profile", ["default", "finmem"])
async def test_batch_points_equal_the_per_memory_ones(group_factory, profile):
    group = group_factory("edge", profile=profile)
    await group.add_agents({1: {}, 2: {}, 3: {}})
    ids = []
    for n in range(12):
        agent = 1 + n % 3
        extra = {}
        if n % 4 == 1:
            extra = {"tags": ["market", f"t{n}"], "metadata": {"b": n, "a": [1, 2]}}
        if n % 5 == 2:
            extra |= {"type": "semantic", "expires_at": 9e9}
        ids.append(
            await group.agent(agent).stream.add(
                "event" if n % 2 else "reflection",
                f"note {n} about the storm and the market",
                importance=round(0.05 * n, 2),
                location="park" if n % 3 == 0 else None,
                **extra,
            )
        )
    s1 = group.agent(1).stream
    await s1.add_cognition_to_memory([ids[0], ids[3]], ids[6])  # links and evidence
    group.hot.touch_many(ids[::4], 1234.5)  # reads counted (a search does this; FinMem: engine)
    await group.store.set_payloads([([ids[4]], {"importance": 0.77})])  # a pending patch
    deferred = group.deferred
    assert deferred is not None and set(ids) <= set(deferred.pending)
    todo = sorted(deferred.pending)
    expected = [{**hot_payload(group, i), **deferred.patches.get(i, {})} for i in todo]
    layered = group.profiles.any_forgetting
    got = hot_payloads(group.hot, group.warm_rows, todo, deferred.patches, layered)
    assert got == expected
    assert [list(p) for p in got] == [list(p) for p in expected]  # same key order too
    assert any("links" in p for p in got) and any("evidence" in p for p in got)
    assert any("access_count" in p for p in got) and any("tags" in p for p in got)
    assert any(p.get("layer") for p in got) == (profile == "finmem")
    vectors = index_vectors(group.sparse_index, todo, deferred.pending)
    index = group.sparse_index
    assert vectors == [TextVectors(sparse=index.vector(deferred.pending[i], i)) for i in todo]
    assert all(v.sparse is not None and not v.sparse.is_empty() for v in vectors)
    written = await deferred.persist()  # the batch path end to end: what a read gives back
    assert written == len(todo)
    stored = await deferred.inner.retrieve(todo)
    assert [stored[i]["text"] for i in todo] == [p["text"] for p in expected]
    assert stored[ids[4]]["importance"] == 0.77


def _validated(group, memory_id, score):
    """The hit of a hot memory made from every field its record has, validated."""
    from societas.memory.model.records import MemoryHit

    return MemoryHit(**group.hot.fields(memory_id), score=score, tier="hot")


async def test_hot_hits_equal_the_hot_store_ones(group_factory):
    from societas.memory.retrieval.hits import HotHits

    group = group_factory("edge")
    await group.add_agents({1: {}})
    s = group.agent(1).stream
    ids = [
        await s.add("event", "plain"),
        await s.add("event", "rich", 0.3, "park", tags=["x"], metadata={"a": 1}, type="semantic"),
        await s.add("reflection", "expiring", expires_at=1e6),
    ]
    await s.add_cognition_to_memory(ids[:2], ids[2])
    await s.search("plain rich expiring")  # read counts and times
    hits = HotHits(group.hot)
    rows = [group.hot.row_of[i] for i in ids]  # a batch with its rows known
    mine, theirs = hits.many(ids, [0.5] * 3, rows), [_validated(group, i, 0.5) for i in ids]
    assert mine == theirs
    assert [list(h.__dict__) for h in mine] == [list(h.__dict__) for h in theirs]
    assert mine[1].tags == ("x",) and mine[1].metadata == {"a": 1} and mine[1].type == "semantic"
    assert mine[2].expires_at == 1e6 and mine[2].evidence_ids == tuple(ids[:2])
    assert mine[0].cognition_ids == (ids[2],) and mine[0].access_count == 1
    assert mine[1].metadata is not group.hot.metadata[ids[1]]  # a hit's dict is its own
    more = [await s.add("event", f"plain {n}", n / 40) for n in range(30)]
    await group.sync_writes()
    asked = [*reversed(more), *ids, ids[1]]  # in its order, an id asked twice twice
    scores = [n / 7 for n in range(len(asked))]
    batch = hits.many(asked, scores)
    assert batch == [_validated(group, i, sc) for i, sc in zip(asked, scores, strict=True)]


async def test_hot_hits_of_plain_memories_equal_the_hot_store_ones(group_factory):
    """No memory has tags, metadata or links (the sparse columns empty): the same hits, with
    fresh, unshared metadata dicts."""
    from societas.memory.retrieval.hits import HotHits

    group = group_factory("edge")
    await group.add_agents({1: {}, 2: {}})
    ids = [
        await group.agent(1 + n % 2).stream.add("event", f"plain {n}", n / 40) for n in range(30)
    ]
    await group.sync_writes()
    assert not (group.hot.tags or group.hot.metadata or group.hot.cognition_links)
    asked = [*ids, ids[3]]
    batch = HotHits(group.hot).many(asked, [n / 7 for n in range(len(asked))])
    assert batch == [_validated(group, i, n / 7) for n, i in enumerate(asked)]
    assert len({id(h.metadata) for h in batch}) == len(batch)


@pytest.mark.parametrize("reads", [3, 20])
async def test_touch_many_counts_each_read(group_factory, reads):
    """A batch of reads (item by item below 8, numpy from 8) counts an id read twice twice,
    stamps the time and passes over ids that are not hot."""
    group = group_factory("edge")
    await group.add_agents({1: {}})
    s = group.agent(1).stream
    ids = [await s.add("event", f"note {n}") for n in range(12)]
    await group.sync_writes()
    asked = [ids[n % 12] for n in range(reads)] + [ids[1], 10**15]  # a repeat, an unknown id
    group.hot.touch_many(asked, 777.0)
    for memory_id in ids:
        record = group.hot.record(memory_id)
        assert record.access_count == asked.count(memory_id)
        assert record.last_accessed == (777.0 if memory_id in asked else None)


@pytest.mark.parametrize("backend", ["edge", "qdrant"])
async def test_payload_updates_reach_the_engine_in_one_call_in_order(
    group_factory, backend, monkeypatch
):
    """A batch of payload updates over written and pending memories: one engine call, applied in
    order (a later update of a memory wins); importance reaches the RAM index either way, the
    agents of written ones read a page of payloads at a time."""
    from societas.memory.store import deferred_store

    monkeypatch.setattr(deferred_store, "PAGE", 1)
    group = group_factory(backend)
    await group.add_agents({1: {}, 2: {}})
    w = [await group.agent(1 + n % 2).stream.add("event", f"storm note {n}", 0.5) for n in range(3)]
    deferred = group.deferred
    assert deferred is not None
    await group.sync_writes()
    await deferred.persist()  # these reach the engine
    pending = await group.agent(1).stream.add("event", "market note", 0.5)
    await group.sync_writes()
    assert pending in deferred.pending
    calls = []
    real = deferred.inner.set_payloads

    async def counting(updates):
        calls.append([(list(ids), dict(payload)) for ids, payload in updates if ids])
        await real(updates)

    deferred.inner.set_payloads = counting
    reads = []
    real_retrieve = deferred.inner.retrieve

    async def retrieve(ids):
        reads.append(list(ids))
        return await real_retrieve(ids)

    deferred.inner.retrieve = retrieve
    requests = []  # the qdrant-client store's requests to its server (none on Edge)
    client = getattr(deferred.inner, "_client", None)
    if client is not None:
        for name in ("set_payload", "batch_update_points"):
            real_request = getattr(client, name)

            async def request(*args, _name=name, _real=real_request, **kwargs):
                requests.append(_name)
                return await _real(*args, **kwargs)

            monkeypatch.setattr(client, name, request)
    await group.store.set_payloads(
        [
            ([w[0], w[1], pending], {"importance": 0.3}),
            ([w[1]], {"importance": 0.9, "tags": ["x"]}),
            ([w[2]], {"tags": ["y"]}),
        ]
    )
    assert calls == [
        [
            ([w[0], w[1]], {"importance": 0.3}),
            ([w[1]], {"importance": 0.9, "tags": ["x"]}),
            ([w[2]], {"tags": ["y"]}),
        ]
    ]
    assert reads == [[w[0]], [w[1]]]  # each written memory whose importance changed, once
    assert requests == ([] if client is None else ["batch_update_points"])
    stored = await deferred.inner.retrieve(w)
    assert [stored[i]["importance"] for i in w] == [0.3, 0.9, 0.5]
    assert stored[w[1]]["tags"] == ["x"] and stored[w[2]]["tags"] == ["y"]
    assert deferred.patches[pending] == {"importance": 0.3}
    index = group.sparse_index

    def indexed(agent_id: int, memory_id: int) -> float:
        postings = index.agents[agent_id]
        return postings.importances[postings.row(memory_id)]

    assert [indexed(1, w[0]), indexed(2, w[1]), indexed(1, w[2]), indexed(1, pending)] == [
        0.3,
        0.9,
        0.5,
        0.3,
    ]
    await group.close()


@pytest.mark.parametrize("backend", ["edge", "qdrant"])
async def test_cognition_links_given_together_equal_linking_one_at_a_time(group_factory, backend):
    """Links of several cognitions (a memory linked twice, a cognition as another's evidence,
    two agents, written and pending memories) leave every memory's links and evidence, in the
    hot columns and the store, as one call per cognition does, in one payload write."""
    seen = []
    for together in (False, True):
        group = group_factory(backend)
        await group.add_agents({1: {}, 2: {}})
        m = [await group.agent(1 + n % 2).stream.add("event", f"note {n}", 0.5) for n in range(6)]
        await group.sync_writes()
        assert group.deferred is not None
        await group.deferred.persist()  # these reach the engine; the thoughts stay pending
        c = [await group.agent(a).stream.add("reflection", f"thought {a}") for a in (1, 1, 2)]
        links = [
            (1, [m[0], m[2]], c[0]),
            (1, [m[2], m[4], c[0]], c[1]),
            (2, [m[1], m[3]], c[2]),
            (1, [m[0]], c[1]),
        ]
        writes = []
        real = group.store.set_payloads

        async def counting(updates, _real=real, _writes=writes):
            _writes.append(updates)
            await _real(updates)

        group.store.set_payloads = counting
        if together:
            await group.link_cognitions(links)
        else:
            for link in links:
                await group.link_cognitions([link])
        ids = [*m, *c]
        records = await group.get_by_ids(ids)
        stored = await group.store.retrieve(ids)
        seen.append(
            (
                [(r.cognition_ids, r.evidence_ids) for r in records],
                [(stored[i].get("links"), stored[i].get("evidence")) for i in ids],
                len(writes),
            )
        )
        await group.close()
    (one_by_one, together_seen) = seen
    assert together_seen[:2] == one_by_one[:2]
    assert (one_by_one[2], together_seen[2]) == (4, 1)
    by_id = dict(zip([*m, *c], together_seen[0], strict=True))
    assert by_id[m[0]][0] == (c[0], c[1]) and by_id[m[2]][0] == (c[0], c[1])
    assert by_id[c[1]][1] == (m[2], m[4], c[0], m[0]) and by_id[c[0]] == ((c[1],), (m[0], m[2]))
    assert dict(zip([*m, *c], together_seen[1], strict=True))[c[1]][1] == [m[2], m[4], c[0], m[0]]
