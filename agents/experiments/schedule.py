"""When interventions fire and whom they reach: once at `tick`, or again `every` N ticks (or
every simulated day) until `until`; with `when:`, only the selected agents whose status
satisfies the expression at that tick (checked before the tick's interventions apply)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from societas.agents.experiments.expressions import ExpressionError, parse_expression

if TYPE_CHECKING:
    from societas.agents.experiments.schema import Intervention
    from societas.agents.scenario import ScenarioConfig

Problems = list[tuple[str, str]]


def ticks_of(iv: Intervention, cfg: ScenarioConfig) -> list[int]:
    """The ticks an intervention fires at."""
    if iv.every is None:
        return [iv.tick]
    step = cfg.ticks_per_day if iv.every == "day" else int(iv.every)
    last = cfg.ticks - 1 if iv.until is None else min(iv.until, cfg.ticks - 1)
    return list(range(iv.tick, last + 1, step))


def fired(engine: Any, tick: int) -> list[tuple[Intervention, set[int]]]:
    """This tick's interventions with the agents they reach now (`when:` applied)."""
    from societas.agents.experiments.outcomes import status_of

    out = []
    for iv, selected in engine.events_at.get(tick, []):
        if iv.when is None:
            out.append((iv, selected))
            continue
        expr = parse_expression(iv.when)
        reached = set()
        for agent_id in sorted(selected):
            try:
                if expr(status_of(engine, agent_id)):
                    reached.add(agent_id)
            except (ExpressionError, KeyError, ValueError):
                continue
        out.append((iv, reached))
    return out


def schedule_problems(cfg: ScenarioConfig) -> Problems:
    """`when:` that does not parse or reads unknown status; `until` before `tick`."""
    from societas.agents.experiments.outcomes import scalar_types

    problems: Problems = []
    known = set(scalar_types(cfg))
    for i, iv in enumerate(cfg.interventions):
        if iv.when is not None:
            try:
                unknown = sorted(parse_expression(iv.when).names - known)
            except ExpressionError as err:
                problems.append((f"interventions.{i}.when", str(err)))
                continue
            if unknown:
                problems.append(
                    (f"interventions.{i}.when", f"{iv.when!r} reads unknown status {unknown}")
                )
        if iv.until is not None and iv.until < iv.tick:
            problems.append((f"interventions.{i}.until", f"{iv.until} is before tick {iv.tick}"))
        if iv.until is not None and iv.every is None:
            problems.append((f"interventions.{i}.until", "until needs every"))
    return problems
