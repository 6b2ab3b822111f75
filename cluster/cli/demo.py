"""`societas demo`: agents remember a stormy day, then search their memories with scores.

Runs on the embedded defaults (BM25 + a Qdrant Edge shard in a temp folder): no server,
no model download, no GPU.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from societas.memory import GroupMemory, GroupMemoryConfig, format_memories
from societas.memory.model.clock import format_time_of_day
from societas.memory.retrieval.scoring import recency

PEOPLE = [
    {"name": "Alice Moreau", "occupation": "school teacher", "age": 41},
    {"name": "Bob Okafor", "occupation": "fisherman", "age": 55},
    {"name": "Chen Li", "occupation": "nurse", "age": 29},
    {"name": "Dana Cruz", "occupation": "shop owner", "age": 37},
]

DAY = [  # (hour, topic, place, importance, what happened) — the same day for everyone
    (7, "activity", "home", 0.2, "had coffee and read the morning news about the coming storm"),
    (9, "activity", "work", 0.3, "started work; everyone was talking about the hurricane"),
    (12, "social", "cafe", 0.4, "lunch with a friend who plans to evacuate to her sister"),
    (15, "event", "work", 0.9, "the mayor issued an official hurricane evacuation warning"),
    (17, "activity", "shop", 0.5, "bought water, batteries and canned food at the shop"),
    (20, "event", "home", 0.8, "the river near the house started to rise after heavy rain"),
]

QUESTIONS = ["hurricane evacuation warning", "what food did I buy", "river flooding"]


async def _demo(agents: int, backend: str, console: Console) -> None:
    store = {"backend": "qdrant", "location": ":memory:"} if backend == "qdrant" else {}
    with tempfile.TemporaryDirectory(prefix="societas-demo-") as tmp:
        await _demo_in(Path(tmp), agents, store, backend, console)


def _names(n: int) -> list[str]:
    """The demo's people first, then unique generated names (no ids in names)."""
    from societas.agents.population import unique_names

    own = [str(p["name"]) for p in PEOPLE]
    extra = [name for name in unique_names(n + len(own), seed=0) if name not in own]
    return (own + extra)[:n]


async def _demo_in(root: Path, agents: int, store: dict, backend: str, console: Console) -> None:
    group = GroupMemory(GroupMemoryConfig(vector_store=store), root=root)
    await group.add_agents(
        {i: PEOPLE[i % len(PEOPLE)] | {"name": name} for i, name in enumerate(_names(agents))}
    )
    console.print(
        f"[bold]societas memory demo[/] — {agents} agents, backend [cyan]{backend}[/], "
        f"embedder [cyan]{group.embedder.name}[/], store under {root}"
    )
    for hour, topic, place, importance, text in DAY:
        group.clock.set(0, hour * 3600.0)
        await asyncio.gather(
            *(
                group.agent(i).stream.add(topic, f"{text}", importance=importance, location=place)
                for i in range(agents)
            )
        )
    await group.agent(0).status.update("thought", "I am worried about the storm and my pupils")
    await group.agent(0).status.update("emotion", {"fear": 8}, mode="merge")
    group.clock.set(0, 21 * 3600.0)
    console.print(
        f"Each agent wrote {len(DAY)} memories on day 0; it is now "
        f"{format_time_of_day(group.clock.t)}. Retrieval score = "
        "α·recency + β·importance + γ·relevance (computed inside Qdrant).\n"
    )

    cfg = group.config.retrieval
    memory = group.agent(0)
    for question in QUESTIONS:
        hits = await memory.stream.search(question, top_k=3)
        table = Table(title=f"{PEOPLE[0]['name']} asks: {question!r}", show_lines=False)
        for column in ("score", "recency", "importance", "relevance", "time", "memory"):
            table.add_column(column)
        for hit in hits:
            rec = recency(group.clock.abs_seconds - hit.day * 86400 - hit.t, cfg.half_life_seconds)
            rel = hit.score - cfg.recency_weight * rec - cfg.importance_weight * hit.importance
            table.add_row(
                f"{hit.score:.3f}",
                f"{rec:.3f}",
                f"{hit.importance:.2f}",
                f"{rel / cfg.relevance_weight:.3f}",
                format_time_of_day(hit.t),
                hit.text,
            )
        console.print(table)
    console.print("[bold]As a prompt would see it[/]:")
    console.print(format_memories(await memory.stream.search("storm", top_k=3)), markup=False)
    kv = await memory.status.search("worried storm")
    console.print(f"\n[bold]KV search[/] 'worried storm' → {[(h.key, h.value) for h in kv]}")
    console.print(f"[bold]KV[/] emotion = {await memory.status.get('emotion')}")
    console.print(f"\nCounters: {group.counters}")
    await group.close()


def run_demo(agents: int = 3, backend: str = "edge") -> None:
    """Entry point of `societas demo`."""
    if backend not in ("edge", "qdrant"):
        raise ValueError(f"backend must be 'edge' or 'qdrant', got {backend!r}")
    asyncio.run(_demo(agents, backend, Console(soft_wrap=True)))
