"""The one way to run a scenario from Python: `Society.from_scenario(path)`, then either
`society.run(backend="local" | "ray")` for the whole scenario with checkpoints (what the CLI
runs too), or `society.run(days=1)` a day at a time in this process with a Mesa-like agent
set for analysis and interventions (`society.agents.select(...)`, `.agg(...)`, `.do(...)`),
on the same engines and tick loop as `--local`.

The simulation's event loop runs in a thread of its own, so the calls work from a Jupyter
notebook (whose own loop is already running) as from a script.

    society = Society.from_scenario("configs/examples/lab/experiment.yaml", arm="treatment")
    society.run(days=1)
    poor = society.agents.at_baseline().select(lambda a: a["income"] < 2000)  # pre-treatment
    poor.agg("mood", "mean"); poor.do("set", "mood", 0.8); society.run(days=1)
    society.table("surveys").to_pandas()

    Society.from_scenario("configs/town.yaml", out="runs/town").run(backend="ray")
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import threading
from collections.abc import Callable, Coroutine, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa

from societas.agents.agent import Agent, Block
from societas.agents.experiments.checks import arm_scenario
from societas.agents.runtime.engine import GroupEngine
from societas.agents.runtime.results import read_table
from societas.agents.scenario import ScenarioConfig, ScenarioConfigError, load_scenario
from societas.cluster.backends import BACKENDS, Backend, run_scenario
from societas.cluster.experiments.arms import preflight_code
from societas.cluster.loop.coordinator import Coordinator
from societas.cluster.loop.engines import EngineFactory
from societas.cluster.loop.local import partition
from societas.cluster.observe.run_folder import check_out_dir, clear_run, holds_run
from societas.memory.embedding import build_embedder

T = TypeVar("T")
AGGREGATES: dict[str, Callable[[list[Any]], Any]] = {
    "mean": statistics.fmean,
    "median": statistics.median,
    "sum": sum,
    "min": min,
    "max": max,
    "count": len,
}


class SocietyAgent:
    """One agent for analysis: `agent["mood"]` reads state, profile or status; `set` writes
    (validated now, stored at the next tick like a block's write)."""

    def __init__(self, agent: Agent, engine: GroupEngine) -> None:
        self._agent, self._engine = agent, engine
        self.id = agent.id
        self.profile = agent.profile

    def __getitem__(self, key: str) -> Any:
        if key in self._agent.state:
            return self._agent.state[key]
        if hasattr(self.profile, key):
            return getattr(self.profile, key)
        assert self._engine.memory is not None
        return self._engine.memory.kv_get(self.id, key)

    def get(self, key: str, default: Any = None) -> Any:
        """The value of `key`, or `default` if the agent has no such attribute."""
        try:
            return self[key]
        except KeyError:
            return default

    def set(self, key: str, value: Any) -> None:
        """Change a status attribute (type-checked at once, an error names the key)."""
        assert self._engine.memory is not None
        self._engine.memory.check_update(self.id, key, value, "replace")
        self._agent.set(key, value)

    def __repr__(self) -> str:
        return f"SocietyAgent({self.id}, {self.profile.name!r})"


class AgentSet:
    """A Mesa-like, ordered set of agents: select, agg, do, get."""

    def __init__(self, agents: list[SocietyAgent]) -> None:
        self._agents = agents

    def __len__(self) -> int:
        return len(self._agents)

    def __iter__(self) -> Iterator[SocietyAgent]:
        return iter(self._agents)

    def __getitem__(self, index: int) -> SocietyAgent:
        return self._agents[index]

    @property
    def ids(self) -> list[int]:
        """Agent ids in order."""
        return [a.id for a in self._agents]

    def select(
        self,
        filter_func: Callable[[SocietyAgent], bool] | None = None,
        at_most: int | None = None,
        **equals: Any,
    ) -> AgentSet:
        """Agents passing `filter_func` and whose attributes equal `equals`; first `at_most`."""
        chosen = [
            a
            for a in self._agents
            if (filter_func is None or filter_func(a))
            and all(a.get(k, _MISSING) == v for k, v in equals.items())
        ]
        return AgentSet(chosen if at_most is None else chosen[:at_most])

    def at_baseline(self) -> BaselineSet:
        """These agents as they were at the baseline tick (status before the first
        intervention): select on values no treatment has changed; what `select` returns is
        the live agents."""
        return BaselineSet(self._agents)

    def get(self, attribute: str) -> list[Any]:
        """The attribute of every agent, in order."""
        return [a[attribute] for a in self._agents]

    def agg(self, attribute: str, func: str | Callable[[list[Any]], Any]) -> Any:
        """`func` (mean, median, sum, min, max, count, or a callable) over the attribute."""
        if isinstance(func, str):
            if func not in AGGREGATES:
                raise ValueError(f"func: one of {sorted(AGGREGATES)} or a callable, got {func!r}")
            func = AGGREGATES[func]
        return func(self.get(attribute))

    def do(self, method: str | Callable[..., Any], *args: Any, **kwargs: Any) -> AgentSet:
        """Call `agent.<method>(*args)` (e.g. "set", "mood", 0.8) or `method(agent, ...)`."""
        for agent in self._agents:
            fn = getattr(agent, method) if isinstance(method, str) else None
            if fn is not None:
                fn(*args, **kwargs)
            else:
                method(agent, *args, **kwargs)  # type: ignore[operator]
        return self


class BaselineSet:
    """Agents with their status at the baseline tick (the scenario's `analysis`), to define
    subgroups before treatment; `select` gives an AgentSet of the live agents."""

    def __init__(self, agents: list[SocietyAgent]) -> None:
        from societas.agents.experiments.outcomes import baseline_values

        tables: dict[int, dict[int, dict[str, Any]]] = {}
        self._pairs: list[tuple[SocietyAgent, dict[str, Any]]] = []
        for agent in agents:
            engine = agent._engine
            if id(engine) not in tables:
                tables[id(engine)] = baseline_values(engine)
            self._pairs.append((agent, tables[id(engine)].get(agent.id, {})))

    def __len__(self) -> int:
        return len(self._pairs)

    def select(
        self,
        filter_func: Callable[[dict[str, Any]], bool] | None = None,
        at_most: int | None = None,
        **equals: Any,
    ) -> AgentSet:
        """The live agents whose baseline status passes `filter_func` (called with the
        baseline values, `a["income"]`) and equals `equals`; the first `at_most`."""
        chosen = [
            agent
            for agent, values in self._pairs
            if (filter_func is None or filter_func(values))
            and all(values.get(k, _MISSING) == v for k, v in equals.items())
        ]
        return AgentSet(chosen if at_most is None else chosen[:at_most])

    def get(self, attribute: str) -> list[Any]:
        """The attribute's baseline value of every agent, in order."""
        return [values[attribute] for _, values in self._pairs]


_MISSING = object()


class Society:
    """A scenario and its run folder: run whole, with checkpoints, in this process or on Ray
    (`run(backend=...)`), or a day (or some ticks) at a time in this process."""

    def __init__(
        self,
        scenario: ScenarioConfig,
        out: Path,
        blocks: Sequence[Block] = (),
        *,
        overwrite: bool = False,
    ) -> None:
        self.scenario = scenario
        self.out = out
        self.overwrite = overwrite
        self.tick = 0
        self.summary: Any = None  # the run summary of a whole run
        self._blocks = tuple(blocks)
        self._engines: list[GroupEngine] | None = None
        self._coordinator: Coordinator | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @classmethod
    def from_scenario(
        cls,
        source: str | Path | dict[str, Any] | ScenarioConfig,
        *,
        arm: str | None = None,
        out: str | Path | None = None,
        overwrite: bool = False,
        blocks: Sequence[Block] = (),
    ) -> Society:
        """Load and check a scenario (one `arm` of it, if it has arms), with `blocks` (Block
        objects, for runs in this process) after the scenario's; results go to `out`
        (default: a new temporary folder), which must not hold another run unless
        `overwrite` (the run there is removed when this one starts), as `societas run`
        requires. Agents are set up when first needed."""
        cfg = load_scenario(source)
        if cfg.arms:
            names = [a.name for a in cfg.arms]
            if arm not in names:
                raise ScenarioConfigError([("arm", f"choose one of {names}, got {arm!r}")])
            cfg = arm_scenario(cfg, arm)
        elif arm is not None:
            raise ScenarioConfigError([("arm", f"the scenario has no arms, got {arm!r}")])
        preflight_code(cfg)
        folder = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="societas-"))
        _check_out(folder, overwrite)
        folder.mkdir(parents=True, exist_ok=True)
        for i, block in enumerate(blocks):
            if not isinstance(block, Block):
                raise TypeError(f"blocks[{i}]: {block!r} is not a Block (name, async forward)")
        return cls(cfg, folder, blocks, overwrite=overwrite)

    @property
    def engines(self) -> list[GroupEngine]:
        """The in-process groups, set up on first use (stepping, the agent set)."""
        if self._engines is None:
            if self.summary is not None:
                raise RuntimeError(
                    "run: the scenario ran whole; its agents live in the run folder "
                    f"({self.out}): read `table(...)` or `societas interview`"
                )
            self._engines = self._start()
        return self._engines

    def _claim_out(self) -> None:
        """Check the run folder again as the run starts and, with `overwrite`, remove the run
        it holds, so a folder never mixes two runs."""
        _check_out(self.out, self.overwrite)
        if self.overwrite and holds_run(self.out):
            clear_run(self.out)

    def _start(self) -> list[GroupEngine]:
        self._claim_out()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        ids = partition(self.scenario.agents.count, self.scenario.groups)
        embedder = build_embedder(self.scenario.memory.embedding)
        engines = EngineFactory(self.scenario, ids, self.out, embedder=embedder).build_all()
        self._coordinator = Coordinator(
            engines,
            seed=self.scenario.seed,
            encounters_enabled=self.scenario.social.encounters,
            max_pairs_per_place=self.scenario.social.max_pairs_per_place,
        )

        async def setup() -> None:
            for engine in engines:
                await engine.setup()

        self._call(setup())
        if self._blocks:  # Python objects of the notebook's own, after the scenario's blocks
            for engine in engines:
                extended = [*next(iter(engine.agents.values())).blocks, *self._blocks]
                for agent in engine.agents.values():
                    agent.blocks = extended
        return engines

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def run(
        self,
        days: float | None = None,
        ticks: int | None = None,
        *,
        backend: Backend = "local",
        **options: Any,
    ) -> Society:
        """Advance `days` simulated days (or `ticks`) in this process, at most to the
        scenario's last tick; or, with neither, run the whole scenario with checkpoints into
        the run folder on `backend` ("local": this process, "ray": one actor per group;
        `options` as `run_scenario`: groups, address, cluster, on_progress, ...)."""
        if days is None and ticks is None:
            return self._run_whole(backend, options)
        if days is not None and ticks is not None:
            raise ValueError("run: give days or ticks (one of them), or neither for a whole run")
        if backend != "local" or options:
            raise ValueError(
                "run: days/ticks step in this process; a whole run (no days or ticks) takes "
                "a backend and options"
            )
        n = ticks if ticks is not None else round(float(days) * self.scenario.ticks_per_day)  # type: ignore[arg-type]
        left = self.scenario.ticks - self.tick
        if n < 1 or n > left:
            what = f"days={days}" if days is not None else f"ticks={ticks}"
            raise ValueError(f"run: {what} is {n} ticks; {left} of the scenario's ticks are left")
        self.engines  # noqa: B018  set up on first use
        assert self._coordinator is not None
        self._call(self._coordinator.run(n, start_tick=self.tick))
        self.tick += n
        return self

    def _run_whole(self, backend: Backend, options: dict[str, Any]) -> Society:
        if self._engines is not None or self.summary is not None:
            raise ValueError(
                "run: a whole run starts from tick 0 of a fresh Society; this one has "
                "stepped or run already (run(ticks=...) goes on in this process)"
            )
        if self._blocks:
            raise ValueError(
                "run: blocks= objects run only when stepping in this process; for a whole "
                "run name them by import path in the scenario's `blocks:`"
            )
        if backend not in BACKENDS:
            raise ValueError(f"backend: one of {list(BACKENDS)}, got {backend!r}")
        self._claim_out()
        self.summary = _outside_running_loop(
            lambda: run_scenario(self.scenario, self.out, backend=backend, **options)
        )
        self.tick = self.scenario.ticks
        return self

    @property
    def agents(self) -> AgentSet:
        """Every agent, by id."""
        out = [SocietyAgent(a, e) for e in self.engines for a in e.agents.values()]
        return AgentSet(sorted(out, key=lambda a: a.id))

    def table(self, name: str) -> pa.Table:
        """A results table so far (buffered rows are written first)."""
        for engine in self._engines or ():
            engine.results.flush()
        return read_table(self.out, name)

    def close(self) -> None:
        """Close the engines and stop the loop's thread (idempotent)."""
        if self._thread is None or not self._thread.is_alive():
            return
        engines = self._engines or []

        async def shut() -> None:
            for engine in engines:
                await engine.close()

        self._call(shut())
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def __enter__(self) -> Society:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_out(folder: Path, overwrite: bool) -> None:
    """Raise OutDirError (a ValueError naming the folder and the way out) unless `folder`
    can take a new run: the check `societas run` makes of --out, in the API's words."""
    check_out_dir(folder, overwrite=overwrite, option="out", replace="overwrite=True")


def _outside_running_loop(fn: Callable[[], T]) -> T:
    """`fn()` in this thread, or in a helper thread when this one runs an event loop (a
    notebook cell), since a run starts an event loop of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return fn()
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as err:  # re-raised in the caller's thread
            box["error"] = err

    worker = threading.Thread(target=target, name="societas-run")
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
