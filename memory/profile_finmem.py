"""The `finmem` profile's retrieval: every search asks each layer for its top_k, merged.

FinMem (Yu et al. 2023) retrieves the top-k memories of the short, mid, long and reflection
layers separately, so a prompt always sees some of each layer; the layers' decays,
thresholds, promotion and clean-up are the forgetting policy (`memory.policies`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from societas.memory.policies import LAYERS

if TYPE_CHECKING:
    from societas.memory.policies import ForgettingPolicy
    from societas.memory.records import MemoryHit, SearchRequest


def layered_requests(
    policy: ForgettingPolicy, requests: Sequence[SearchRequest]
) -> tuple[list[SearchRequest], list[int]] | None:
    """One request per (request, layer) and how many each request became, when per-layer
    retrieval is on; None when off or already split."""
    if not (policy.enabled and policy.per_layer_retrieval) or not requests:
        return None
    if all(r.layers is not None and len(r.layers) == 1 for r in requests):
        return None
    flat: list[SearchRequest] = []
    spans: list[int] = []
    for r in requests:
        layers = r.layers or LAYERS
        flat.extend(r.model_copy(update={"layers": (layer,)}) for layer in layers)
        spans.append(len(layers))
    return flat, spans


def merge_layers(results: Sequence[list[MemoryHit]], spans: Sequence[int]) -> list[list[MemoryHit]]:
    """Each request's per-layer hits merged, best first (every layer's top_k kept)."""
    merged, start = [], 0
    for span in spans:
        hits = {h.id: h for chunk in results[start : start + span] for h in chunk}
        merged.append(sorted(hits.values(), key=lambda h: (-h.score, -h.id)))
        start += span
    return merged
