"""Where a whole scenario runs, with checkpoints, into a run folder: in this process
(`local`) or one Ray actor per group (`ray`). `Society.run` and the CLI's launch (run, resume,
arms, the job `submit` starts) all come through `run_scenario`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, get_args

Backend = Literal["local", "ray"]
BACKENDS: tuple[str, ...] = get_args(Backend)


def run_scenario(
    scenario: Any,
    out: str | Path,
    *,
    backend: Backend = "local",
    groups: int | None = None,
    address: str | None = None,
    on_ray_started: Callable[[dict[str, Any]], Any] | None = None,
    **options: Any,
) -> Any:
    """Run `scenario` (a config, its path or dict) into `out` on `backend`; returns the run
    summary. `options` are the runtime's own: cluster, resume, stop, on_progress, on_tick,
    on_checkpoint (both), embedder, concurrency (local), metrics, num_cpus (ray)."""
    if backend == "local":
        if address is not None:
            raise ValueError("address: only for backend='ray'")
        from societas.cluster.loop.local import run_local

        return run_local(scenario, out, groups, **options)
    if backend == "ray":
        from societas.cluster.ray.runtime import run_on_ray

        return run_on_ray(
            scenario, out, groups, address=address, on_ray_started=on_ray_started, **options
        )
    raise ValueError(f"backend: one of {list(BACKENDS)}, got {backend!r}")
