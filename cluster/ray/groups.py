"""Groups as async Ray actors: the actor body, its handle, placement options, attaching Ray."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from societas.agents.runtime.protocol import GroupHandle, GroupStats, Message, StepResult
from societas.cluster.cluster_config import ClusterConfig
from societas.cluster.loop.groups import GroupLost, InProcessGroup, ResilientGroup

log = logging.getLogger(__name__)

GroupFactory = Callable[[int], GroupHandle]


class GroupActor(InProcessGroup):
    """Body of the async Ray actor owning one group (agents, memory, LLM gateway, writer):
    an in-process group built on its node, which also fills in the actor's RSS."""

    def __init__(self, factory: GroupFactory, group_id: int) -> None:
        from societas.memory.tuning import tune_worker

        tune_worker()  # this worker process hosts the group: allocator, Arrow pool, gc
        super().__init__(factory(group_id))
        self.group_id = group_id

    async def finish_tick(self, tick: int) -> GroupStats:
        """The tick's stats; fills in the actor's RSS when the engine did not."""
        stats = await super().finish_tick(tick)
        if not stats.rss_bytes:
            import psutil

            stats = stats.model_copy(update={"rss_bytes": psutil.Process().memory_info().rss})
        return stats

    async def where(self) -> dict[str, Any]:
        """Node id and pid of this actor (placement checks, fault tests)."""
        import ray

        return {"node_id": ray.get_runtime_context().get_node_id(), "pid": os.getpid()}


def actor_options(cfg: ClusterConfig) -> dict[str, Any]:
    """Ray actor options for one group from the placement config."""
    opts: dict[str, Any] = {"num_cpus": cfg.cpus_per_group, "max_restarts": 0}
    if cfg.placement in ("spread", "resource"):
        opts["scheduling_strategy"] = "SPREAD"
    if cfg.placement == "resource" and cfg.resource:
        opts["resources"] = {cfg.resource: cfg.resource_per_group}
    return opts


class RayGroupHandle:
    """`GroupHandle` over a `GroupActor`: every call is `await actor.method.remote(...)`."""

    def __init__(self, factory: GroupFactory, group_id: int, options: dict[str, Any]) -> None:
        import ray

        self.group_id = group_id
        self.factory = factory
        self.options = options
        cls = ray.remote(GroupActor)
        self.actor: Any = cls.options(name=None, **options).remote(factory, group_id)

    async def _call(self, method: str, *args: Any) -> Any:
        from ray.exceptions import RayActorError, WorkerCrashedError

        try:
            return await getattr(self.actor, method).remote(*args)
        except (RayActorError, WorkerCrashedError) as err:
            raise GroupLost(self.group_id, err) from err

    async def setup(self) -> None:
        """Set the remote group up."""
        await self._call("setup")

    async def step(self, tick: int, inbox: list[Message]) -> StepResult:
        """One remote tick."""
        return await self._call("step", tick, inbox)

    async def converse_round(self, requests: list[Any]) -> list[Any]:
        """One remote sub-round of conversation turns."""
        return await self._call("converse_round", requests)

    async def finish_tick(self, tick: int) -> GroupStats:
        """The remote tick's stats, after its conversation rounds."""
        return await self._call("finish_tick", tick)

    async def checkpoint(self, directory: str) -> dict[str, Any]:
        """Remote atomic checkpoint into `directory` (shared storage on multi-node)."""
        return await self._call("checkpoint", directory)

    async def restore(self, directory: str) -> None:
        """Remote restore."""
        await self._call("restore", directory)

    async def close(self) -> None:
        """Close the engine and end the actor."""
        import ray

        try:
            await self._call("close")
        finally:
            ray.kill(self.actor, no_restart=True)

    async def where(self) -> dict[str, Any]:
        """Node and pid of the actor."""
        return await self._call("where")

    async def in_flight(self) -> dict[str, Any]:
        """The model calls in flight in the actor's process (`InProcessGroup.in_flight`)."""
        found: dict[str, Any] = await self._call("in_flight")
        return found

    def respawn(self) -> RayGroupHandle:
        """A fresh actor for the same group (wherever Ray can place it now)."""
        import ray

        try:
            ray.kill(self.actor, no_restart=True)
        except Exception:  # already gone with its node
            log.debug("actor of group %s already gone", self.group_id)
        return RayGroupHandle(self.factory, self.group_id, self.options)


def ensure_ray(
    address: str | None = None,
    num_cpus: int | None = None,
    timeout_s: float = 30.0,
    stop: Callable[[], bool] | None = None,
    **kwargs: Any,
) -> bool:
    """Start local Ray (default) or attach to `address` within `timeout_s`; idempotent; no
    dashboard locally. True if this call started Ray (societas.cluster.ray.attach)."""
    from societas.cluster.ray.attach import attach

    return attach(address, timeout_s, num_cpus=num_cpus, stop=stop, **kwargs)


def make_ray_groups(factory: GroupFactory, groups: int, cfg: ClusterConfig) -> list[ResilientGroup]:
    """One placed actor per group, each behind a `ResilientGroup` that can recreate it (the
    run loop spills its replay log under the run folder when checkpoints are off)."""
    opts = actor_options(cfg)
    return [
        ResilientGroup(RayGroupHandle(factory, g, opts), cfg.max_group_restarts)
        for g in range(groups)
    ]
