"""Memory type, tags, metadata, access counts and expiry as payload, row and record fields."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np
import pyarrow as pa

from societas.memory.store.id_map import BATCH_AT

if TYPE_CHECKING:
    from societas.memory.store.hot_store import HotStore
    from societas.memory.store.id_map import IdMap
    from societas.memory.vectorstores.base import VectorStore

LongTermType = Literal[
    "episodic", "semantic", "procedural", "conversation", "preference", "style", "context"
]
MemoryType = Literal[LongTermType, "session", "task"]  # session, task: short-term (with a TTL)
MEMORY_TYPES: tuple[str, ...] = get_args(MemoryType)
DEFAULT_TYPE = "episodic"

# Columns appended to the cold/checkpoint row schema; older files lack them (defaults below).
META_FIELDS: list[tuple[str, pa.DataType]] = [
    ("type", pa.string()),
    ("tags", pa.list_(pa.string())),
    ("metadata", pa.string()),  # JSON text
    ("access_count", pa.int64()),
    ("last_accessed", pa.float64()),
    ("expires_at", pa.float64()),
]


def check_metadata(value: Any) -> dict[str, Any]:
    """Metadata must be a JSON object (it is stored as JSON in every tier)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"metadata must be a JSON object (dict), got {type(value).__name__}")
    try:
        json.dumps(value, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"metadata must be JSON-serialisable: {exc}") from None
    return dict(value)


def check_tags(value: Any) -> tuple[str, ...]:
    """Tags: non-empty strings, order kept, duplicates dropped."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = (value,)
    tags = tuple(value)
    bad = [t for t in tags if not isinstance(t, str) or not t.strip() or len(t) > 64]
    if bad:
        raise ValueError(f"tags must be non-empty strings of at most 64 chars, got {bad!r:.80}")
    return tuple(dict.fromkeys(tags))


def meta_payload(
    memory_type: str,
    tags: tuple[str, ...],
    metadata: Mapping[str, Any] | None,
    expires_at: float | None,
) -> dict[str, Any]:
    """The payload fields of a new memory; absent and default ones left out."""
    payload: dict[str, Any] = {} if memory_type == DEFAULT_TYPE else {"type": memory_type}
    if tags:
        payload["tags"] = list(tags)
    if metadata:
        payload["metadata"] = json.dumps(metadata, sort_keys=True)
    if expires_at is not None:
        payload["expires_at"] = float(expires_at)
    return payload


def meta_of(payload: Mapping[str, Any]) -> dict[str, Any]:
    """Record fields from a payload or a row (None or missing: the defaults)."""
    metadata = payload.get("metadata")
    if isinstance(metadata, str):
        metadata = json.loads(metadata)
    last = payload.get("last_accessed")
    expires = payload.get("expires_at")
    return {
        "type": payload.get("type") or DEFAULT_TYPE,
        "tags": tuple(payload.get("tags") or ()),
        "metadata": dict(metadata or {}),
        "access_count": int(payload.get("access_count") or 0),
        "last_accessed": None if last is None or math.isnan(last) else float(last),
        "expires_at": None if expires is None or math.isinf(expires) else float(expires),
    }


def meta_row(payload: Mapping[str, Any]) -> dict[str, Any]:
    """Row values of the META_FIELDS columns for one payload."""
    meta = meta_of(payload)
    metadata = json.dumps(meta["metadata"], sort_keys=True) if meta["metadata"] else None
    return {**meta, "tags": list(meta["tags"]), "metadata": metadata}


def restored_payload(row: Mapping[str, Any]) -> dict[str, Any]:
    """The META payload fields of a row read back (checkpoint restore), absent when default."""
    meta = meta_of(row)
    payload = meta_payload(meta["type"], meta["tags"], meta["metadata"], meta["expires_at"])
    if meta["access_count"]:
        payload["access_count"] = meta["access_count"]
    if meta["last_accessed"] is not None:
        payload["last_accessed"] = meta["last_accessed"]
    return payload


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """A table read from an older file with the columns it lacks added as nulls."""
    if table.schema.names == schema.names:
        return table
    columns = [
        table.column(name) if name in table.schema.names else pa.nulls(len(table), field.type)
        for name, field in zip(schema.names, schema, strict=True)
    ]
    return pa.table(columns, schema=schema)


class AccessLedger:
    """Reads counted in RAM, written to the vector store in batches at tick end."""

    def __init__(self) -> None:
        self.pending: dict[int, int] = {}  # memory id → reads not yet in the vector store
        self.last: dict[int, float] = {}

    def __len__(self) -> int:
        return len(self.pending)

    def record(
        self,
        memory_ids: Iterable[int],
        now: float,
        hot: HotStore,
        unsent: IdMap | None = None,
        rows: Sequence[int] | None = None,
    ) -> None:
        """Count one read of each id now: in the hot columns, and in the ledger unless `unsent`."""
        ids = list(memory_ids)
        hot.touch_many(ids, now, rows)
        if unsent is not None and len(ids) >= BATCH_AT:  # hot memories still unsent: left out
            wanted = np.array(ids, np.int64)
            ids = wanted[~_hot_and_unsent(wanted, hot, unsent)].tolist()
            if not ids:
                return
        pending, last = self.pending, self.last
        get = pending.get
        for memory_id in ids:
            pending[memory_id] = get(memory_id, 0) + 1
            last[memory_id] = now

    def overlay(self, memory_id: int, stored: int) -> int:
        """The count of a warm memory: stored value plus reads not yet flushed."""
        return stored + self.pending.get(memory_id, 0)

    def forget(self, memory_ids: Iterable[int]) -> None:
        for memory_id in memory_ids:
            self.pending.pop(memory_id, None)
            self.last.pop(memory_id, None)

    def get_state(self) -> dict[str, list[Any]]:
        """Reads not yet in the store, as columns (a checkpoint keeps them, unwritten)."""
        ids = sorted(self.pending)
        return {
            "id": ids,
            "reads": [self.pending[i] for i in ids],
            "last": [self.last[i] for i in ids],
        }

    def set_state(self, state: dict[str, list[Any]]) -> None:
        self.pending = dict(zip(state["id"], state["reads"], strict=True))
        self.last = dict(zip(state["id"], state["last"], strict=True))

    def patch(self, payloads: Iterable[tuple[int, dict[str, Any]]], hot: HotStore) -> None:
        """Put pending counts into payloads leaving warm (to cold): no store write needed."""
        for memory_id, payload in payloads:
            if memory_id not in self.pending:
                continue
            if memory_id in hot:
                count = hot.access_count(memory_id)
            else:
                count = int(payload.get("access_count") or 0) + self.pending[memory_id]
            payload["access_count"], payload["last_accessed"] = count, self.last[memory_id]
            self.forget([memory_id])

    async def flush(
        self, store: VectorStore, hot: HotStore, with_hot: bool = True, unsent: IdMap | None = None
    ) -> int:
        """Write pending counts, one update per distinct value (`with_hot`: hot ones too)."""
        if not self.pending:
            return 0
        if unsent is not None:
            counted = np.fromiter(self.pending, np.int64, len(self.pending))
            self.forget(counted[_hot_and_unsent(counted, hot, unsent)].tolist())
        ids = sorted(i for i in self.pending if with_hot or i not in hot)
        warm_only = [i for i in ids if i not in hot]
        stored = await store.retrieve(warm_only) if warm_only else {}
        counts: dict[int, list[int]] = {}
        lasts: dict[float, list[int]] = {}
        for memory_id in ids:
            if memory_id in hot:
                count = hot.access_count(memory_id)
            elif memory_id in stored:
                count = int(stored[memory_id].get("access_count") or 0)
                count += self.pending[memory_id]
            else:
                continue  # deleted or moved to cold meanwhile
            counts.setdefault(count, []).append(memory_id)
            lasts.setdefault(self.last[memory_id], []).append(memory_id)
        await store.set_payloads(
            [(members, {"access_count": count}) for count, members in sorted(counts.items())]
            + [(members, {"last_accessed": last}) for last, members in sorted(lasts.items())]
        )
        self.forget(ids)
        return len(counts) + len(lasts)


def _hot_and_unsent(ids: np.ndarray, hot: HotStore, unsent: IdMap) -> np.ndarray:
    """Whether each id (int64) is a hot memory not yet in the vector engine."""
    return unsent.contains_array(ids) & hot.row_of.contains_array(ids)
