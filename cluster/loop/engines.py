"""The one place a run's `GroupEngine`s are built: locally, inside Ray actors, for arms,
branches and notebooks. Picklable (config and id lists) when it carries no embedder or
gateway, so a Ray actor builds its own group from it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from societas.agents.llm import LLMGateway
from societas.agents.runtime.engine import Concurrency, GroupEngine
from societas.memory.embedding import Embedder

GatewayOf = Callable[[int], LLMGateway]


class EngineFactory:
    """Builds the `GroupEngine` of group g (agent ids `ids[g]`) of a scenario's run."""

    def __init__(
        self,
        scenario: Any,
        ids: list[list[int]],
        run_dir: str | Path,
        in_flight: int | None = None,
        *,
        embedder: Embedder | None = None,
        concurrency: Concurrency = "gather",
        gateway: GatewayOf | None = None,
    ) -> None:
        self.scenario = scenario
        self.ids = ids
        self.run_dir = Path(run_dir)
        self.in_flight = in_flight  # the run's cluster.agents_in_flight (None: the scenario's)
        self.embedder = embedder  # None: each engine builds the scenario's own
        self.concurrency = concurrency
        self.gateway = gateway  # None: each engine opens the scenario's gateway

    def __call__(self, group_id: int) -> GroupEngine:
        """The engine of one group."""
        return GroupEngine(
            self.scenario,
            group_id,
            self.ids[group_id],
            self.run_dir,
            embedder=self.embedder,
            llm=self.gateway(group_id) if self.gateway is not None else None,
            concurrency=self.concurrency,
            agents_in_flight=self.in_flight,
        )

    def build_all(self) -> list[GroupEngine]:
        """The engine of every group, in group order."""
        return [self(g) for g in range(len(self.ids))]
