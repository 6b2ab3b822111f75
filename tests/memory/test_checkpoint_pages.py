"""A checkpoint written a page at a time holds exactly the rows the whole-table writer held."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import societas.memory.store.checkpoint as ck
from societas.memory.store.deferred_store import DeferredStore
from societas.memory.store.kv_index import KVDeferredStore
from societas.memory.tiers.cold import rows_table, vectors_table
from societas.memory.vectorstores.base import ScoredPoint

from .test_checkpoint import populated


async def whole_tables(group) -> dict[str, pa.Table]:
    """What the checkpoint wrote before it paged: every list built whole, then one table."""
    store = group.store
    if isinstance(store, DeferredStore):
        held = store.pending_points()  # built once, as the whole-table writer did
        warm = await ck._all_points(store, store.engine_scroll) + held
        pending = [p.id for p in held]
    else:
        warm, pending = await ck._all_points(store), []
    hot = [ScoredPoint(id=r.pop("id"), score=0.0, payload=r) for r in group.hot.get_state()]
    kv_store = group.kv_store
    kv_points = (
        kv_store.index_points()
        if isinstance(kv_store, KVDeferredStore)
        else await ck._all_points(kv_store)
    )
    return {
        "warm.rows": rows_table(warm),
        "warm.vectors": vectors_table(warm),
        "pending": pa.table({"id": pa.array(pending, pa.int64())}),
        "hot": rows_table(hot),
        "kv": pa.table(group.kv_rows(), schema=ck.KV_SCHEMA),
        "kv_points": vectors_table(kv_points, ck.KV_POINT_SCHEMA),
    }


@pytest.mark.parametrize("warm_in_ram", [False, True])
@pytest.mark.parametrize("page", [3, 10_000])
async def test_paged_checkpoint_files_hold_the_whole_tables_rows(
    group_factory, backend, tmp_path, monkeypatch, page, warm_in_ram
):
    monkeypatch.setattr(ck, "PAGE", page)  # 3: every file spans many pages
    tiers = {"hot_window_hours": 12, "warm_max_age_days": 2, "migrate_every_ticks": 1}
    group = group_factory(backend, tiers=tiers | {"warm_in_ram": warm_in_ram})
    await populated(group)
    for a in range(3):
        await group.agent(a).status.update("thought", f"agent {a} thinks of the storm")
    manifest = await group.checkpoint(tmp_path / "ckpt")
    expected = await whole_tables(group)
    if backend == "edge" and not warm_in_ram:  # memories both written and pending
        assert (
            manifest["pending_points"] > 0 and manifest["warm_points"] > manifest["pending_points"]
        )
    if backend == "edge" and warm_in_ram:  # pending memories both hot and left hot (warm_rows)
        assert manifest["pending_points"] > manifest["hot_rows"] > 0 and len(group.warm_rows)
    for name, table in expected.items():
        written = pq.read_table(tmp_path / "ckpt" / f"{name}.parquet")
        assert written.schema == table.schema, name
        assert written.to_pylist() == table.to_pylist(), name
        assert table.num_rows > 0, name
    assert manifest["warm_points"] == expected["warm.rows"].num_rows
    assert manifest["hot_rows"] == expected["hot"].num_rows
    assert manifest["kv_points"] == expected["kv_points"].num_rows
    if page == 3:
        assert pq.ParquetFile(tmp_path / "ckpt" / "hot.parquet").num_row_groups > 1
    await group.close()


async def test_kv_point_ids_come_back_from_the_kv_points_file(group_factory, backend, tmp_path):
    import json

    from societas.memory import GroupMemory

    group = group_factory(backend)
    await populated(group)
    for a in range(3):
        await group.agent(a).status.update("thought", f"agent {a} thinks of the ferry")
    await group.checkpoint(tmp_path / "ckpt")
    state = json.loads((tmp_path / "ckpt" / "state.json").read_text())
    assert "kv_points" not in state  # six an agent: kept once, in kv_points.parquet
    ids = dict(group.kv_point.items())
    assert len(ids) >= 3
    restored = await GroupMemory.restore(
        tmp_path / "ckpt", tmp_path / "restored", embedder=group.embedder
    )
    assert dict(restored.kv_point.items()) == ids
    await restored.close()
    # An older checkpoint kept the ids in state.json: they are read from there.
    state["kv_points"] = sorted([a, k, i + 1000] for (a, k), i in ids.items())
    (tmp_path / "ckpt" / "state.json").write_text(json.dumps(state))
    older = await GroupMemory.restore(
        tmp_path / "ckpt", tmp_path / "older", embedder=group.embedder
    )
    assert dict(older.kv_point.items()) == {s: i + 1000 for s, i in ids.items()}
    await older.close()
    await group.close()
