"""Test helper (not shipped): a small synthetic `GroupHandle` for testing the coordinator
loop, routing digests and checkpoints without agents/ (fault tests use real groups).

Agents wander between places with a seeded RNG, spread a piece of information by messages
to agents of any group, and do a configurable amount of CPU work per step. Its per-tick
results go to `results_dir/group-G/tick=T.json` (overwritten when a tick is replayed), its
checkpoints are JSON (state + RNG), so runs can be compared file by file.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from societas.agents.runtime.protocol import GroupStats, Message, StepResult


def partition(agents: int, groups: int) -> list[range]:
    """Contiguous agent-id blocks, as even as possible, one per group."""
    if groups < 1 or agents < groups:
        raise ValueError(f"cannot split {agents} agents into {groups} groups")
    base, extra = divmod(agents, groups)
    out, start = [], 0
    for g in range(groups):
        n = base + (1 if g < extra else 0)
        out.append(range(start, start + n))
        start += n
    return out


def owner_of(agents: int, groups: int) -> list[int]:
    """agent id -> group id for `partition(agents, groups)`."""
    owner = [0] * agents
    for g, r in enumerate(partition(agents, groups)):
        for a in r:
            owner[a] = g
    return owner


class SyntheticConfig(BaseModel):
    """Shape of a synthetic society; `work` is CPU iterations per agent step."""

    model_config = ConfigDict(extra="forbid")

    agents: int = Field(100, ge=1)
    groups: int = Field(2, ge=1)
    seed: int = 0
    places: int = Field(20, ge=1)
    message_rate: float = Field(0.05, ge=0, le=1)
    work: int = Field(0, ge=0)
    results_dir: str | None = None
    step_delay_s: float = Field(0.0, ge=0, description="Sleep per step (to kill mid-tick).")


class SyntheticFactory:
    """Builds group `g` of a synthetic society; picklable, so Ray can ship it to actors."""

    def __init__(self, config: SyntheticConfig) -> None:
        self.config = config

    def __call__(self, group_id: int) -> SyntheticEngine:
        """The engine of one group."""
        return SyntheticEngine(self.config, group_id)

    def owner(self) -> list[int]:
        """agent id -> group id."""
        return owner_of(self.config.agents, self.config.groups)


class SyntheticEngine:
    """One group of synthetic agents implementing `GroupHandle`."""

    def __init__(self, config: SyntheticConfig, group_id: int) -> None:
        self.config = config
        self.group_id = group_id
        self.ids = list(partition(config.agents, config.groups)[group_id])
        self.rng = random.Random(f"{config.seed}:{group_id}")
        self.place: dict[int, int] = {}
        self.knows: dict[int, int] = {}
        self.received: dict[int, int] = {}

    async def setup(self) -> None:
        """Initial places; agent 0 (wherever it lives) knows the fact from the start."""
        for a in self.ids:
            self.place[a] = self.rng.randrange(self.config.places)
            self.knows[a] = 1 if a == 0 else 0
            self.received[a] = 0

    async def step(self, tick: int, inbox: list[Message]) -> StepResult:
        """Read the inbox, move, maybe message someone, write this tick's results."""
        t0 = time.perf_counter()
        cfg = self.config
        for m in inbox:
            if m.recipient not in self.place:
                raise ValueError(f"group {self.group_id} got a message for agent {m.recipient}")
            self.received[m.recipient] += 1
            if m.payload.get("fact"):
                self.knows[m.recipient] = 1
        outbox: list[Message] = []
        acc = 0
        for a in self.ids:
            self.place[a] = self.rng.randrange(cfg.places)
            if self.rng.random() < cfg.message_rate:
                to = self.rng.randrange(cfg.agents)
                outbox.append(
                    Message(
                        tick=tick,
                        sender=a,
                        recipient=to,
                        kind="info",
                        payload={"fact": bool(self.knows[a]), "place": self.place[a]},
                    )
                )
            for i in range(cfg.work):
                acc = (acc * 31 + i + a) & 0xFFFFFFFF
        if cfg.step_delay_s:
            await asyncio.sleep(cfg.step_delay_s)
        if cfg.results_dir:
            self._write_results(tick)
        stats = GroupStats(
            group_id=self.group_id,
            tick=tick,
            agent_steps=len(self.ids),
            step_seconds=time.perf_counter() - t0,
            llm_requests=len(outbox),
            llm_tokens=10 * len(outbox),
            embeddings=len(inbox),
            vector_upserts=len(inbox),
            vector_queries=len(self.ids) // 10,
            memories_by_tier={"hot": sum(self.received.values())},
            messages_out=len(outbox),
        )
        return StepResult(
            outbox=outbox, positions={a: f"p{self.place[a]}" for a in self.ids}, stats=stats
        )

    def _write_results(self, tick: int) -> None:
        folder = Path(self.config.results_dir or ".") / f"group-{self.group_id}"
        folder.mkdir(parents=True, exist_ok=True)
        rows = [[a, self.place[a], self.knows[a], self.received[a]] for a in self.ids]
        (folder / f"tick={tick}.json").write_text(json.dumps(rows))

    def digest(self) -> str:
        """A hash of the whole group state."""
        rows = [[a, self.place[a], self.knows[a], self.received[a]] for a in self.ids]
        return hashlib.sha256(json.dumps([rows, self.rng.getstate()]).encode()).hexdigest()

    async def checkpoint(self, directory: str) -> dict[str, Any]:
        """State and RNG as JSON."""
        state = {
            "place": self.place,
            "knows": self.knows,
            "received": self.received,
            "rng": list(self.rng.getstate()[1]),
            "rng_version": self.rng.getstate()[0],
            "rng_gauss": self.rng.getstate()[2],
        }
        (Path(directory) / "state.json").write_text(json.dumps(state))
        return {"agents": len(self.ids), "digest": self.digest()}

    async def restore(self, directory: str) -> None:
        """Back to the state of a checkpoint folder."""
        state = json.loads((Path(directory) / "state.json").read_text())
        self.place = {int(k): v for k, v in state["place"].items()}
        self.knows = {int(k): v for k, v in state["knows"].items()}
        self.received = {int(k): v for k, v in state["received"].items()}
        self.rng.setstate((state["rng_version"], tuple(state["rng"]), state["rng_gauss"]))

    async def close(self) -> None:
        """Nothing to release."""


def results_digest(results_dir: str | Path) -> dict[str, str]:
    """sha256 of every results file, keyed by its relative path: compares two runs."""
    root = Path(results_dir)
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*.json"))
    }
