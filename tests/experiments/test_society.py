"""The notebook API: Society.from_scenario, run(days/ticks), a Mesa-like agent set."""

from __future__ import annotations

import asyncio

import pytest

from societas.agents.scenario import ScenarioConfigError
from societas.cluster.society import Society
from tests.experiments.conftest import LAB, scenario

SURVEY = {
    "id": "later",
    "day": 0,
    "hour": 8.5,  # tick 3
    "select": {"ids": [0, 1, 2]},
    "questions": [{"id": "life", "kind": "likert", "attribute": "mood", "text": "Happy?"}],
}


def test_society_runs_selects_aggregates_and_intervenes(tmp_path):
    with Society.from_scenario(scenario(ticks=8, surveys=[SURVEY]), out=tmp_path) as society:
        assert len(society.agents) == 12 and society.agents.ids == list(range(12))
        society.run(ticks=2)
        assert society.tick == 2
        assert society.agents.agg("mood", "mean") == pytest.approx(0.5)
        young = society.agents.select(lambda a: a["age"] < 40)
        assert 0 < len(young) < 12 and all(a["age"] < 40 for a in young)
        assert society.agents.select(at_most=3, mood=0.5).ids == [0, 1, 2]
        society.agents.select(lambda a: a.id in (0, 1)).do("set", "mood", 0.95)
        with pytest.raises(TypeError, match="'mood': expected float"):
            society.agents[2].set("mood", "glad")
        society.run(ticks=2)  # the survey at tick 3 sees the new moods
        answers = {r["agent_id"]: r["value"] for r in society.table("surveys").to_pylist()}
        assert answers == {0: 5.0, 1: 5.0, 2: 3.0}
        assert society.agents.agg("mood", max) == 0.95
        assert society.agents.agg("currency", "count") == 12
        assert society.table("agent_state").num_rows == 12 * 4
        with pytest.raises(ValueError, match="ticks=9 is 9 ticks; 4 of the scenario's"):
            society.run(ticks=9)
        society.run(days=4 / 48)  # 4 ticks of 30 minutes
        assert society.tick == 8


def test_society_picks_an_arm_and_works_inside_a_running_event_loop(tmp_path):
    with pytest.raises(ScenarioConfigError, match="choose one of \\['control', 'treatment'\\]"):
        Society.from_scenario(LAB / "experiment.yaml")

    async def notebook_cell():  # Jupyter runs cells inside an event loop
        society = Society.from_scenario(LAB / "experiment.yaml", arm="treatment", out=tmp_path)
        try:
            society.run(ticks=6)  # the treatment's basic income starts at tick 4
            low = society.agents.select(lambda a: a["income"] < 2000)
            return len(low), low.agg("transfers", "min"), society.agents.agg("mood", "min")
        finally:
            society.close()

    low, transfers, mood = asyncio.run(notebook_cell())
    assert low > 0 and transfers == 800.0 and 0 < mood < 1


def test_society_takes_blocks_as_python_objects(tmp_path):
    class Cheer:
        name = "cheer"

        async def forward(self, ctx):
            ctx.agent.set("mood", round(ctx.state["mood"] + 0.1, 6))

    with pytest.raises(TypeError, match="blocks\\[0\\]: 3 is not a Block"):
        Society.from_scenario(scenario(ticks=4), blocks=[3])
    with Society.from_scenario(scenario(ticks=4), out=tmp_path, blocks=[Cheer()]) as society:
        society.run(ticks=3)
        assert society.agents.agg("mood", "min") == pytest.approx(0.8)


def test_a_whole_run_in_this_process_matches_stepping(tmp_path):
    """`run(backend="local")`: the whole scenario with checkpoints and run.json (what the CLI
    runs); its agents end as a Society stepped to the end in this process ends them."""
    from societas import Society as FrontDoor
    from societas.agents.runtime.results import read_table
    from societas.cluster.observe.run_folder import read_record

    assert FrontDoor is Society
    whole = Society.from_scenario(scenario(ticks=4), out=tmp_path / "whole").run(backend="local")
    assert whole.tick == 4 and whole.summary is not None
    record = read_record(tmp_path / "whole")
    assert record is not None and record["status"] == "completed" and record["mode"] == "local"
    with pytest.raises(RuntimeError, match="ran whole"):
        whole.agents  # noqa: B018
    with Society.from_scenario(scenario(ticks=4), out=tmp_path / "steps") as stepped:
        stepped.run(ticks=4)
        stepped_rows = stepped.table("agent_state").to_pylist()
    key = lambda r: (r["tick"], r["agent_id"])  # noqa: E731
    assert sorted(whole.table("agent_state").to_pylist(), key=key) == sorted(stepped_rows, key=key)
    assert read_table(tmp_path / "whole", "agent_state").num_rows == 4 * 12


def test_run_arguments_are_checked(tmp_path):
    society = Society.from_scenario(scenario(ticks=4), out=tmp_path)
    with pytest.raises(ValueError, match="backend: one of"):
        society.run(backend="gpu")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="days/ticks step in this process"):
        society.run(ticks=2, backend="ray")
    with pytest.raises(ValueError, match="one of them"):
        society.run(days=1, ticks=2)
    society.run(ticks=1)
    with pytest.raises(ValueError, match="fresh Society"):
        society.run(backend="local")
    society.close()


def test_a_whole_run_on_ray(tmp_path):
    """`run(backend="ray")`: one actor per group, the same run folder as `--local`."""
    from societas.cluster.observe.run_folder import read_record

    society = Society.from_scenario(scenario(ticks=3), out=tmp_path)
    society.run(backend="ray", groups=2, num_cpus=2)
    record = read_record(tmp_path)
    assert record is not None and record["mode"] == "ray" and record["groups_placed"] == 2
    assert society.table("agent_state").num_rows == 3 * 12


def test_a_folder_holding_a_run_is_refused_unless_overwrite(tmp_path):
    """The API refuses an `out` that holds another run as `societas run` refuses --out,
    naming the folder and `overwrite=True`, and leaves it as it was; `overwrite=True`
    replaces the whole run, so no file of the old run is left beside the new one."""
    import json

    from societas.agents.runtime.results import read_table
    from societas.cluster.observe.run_folder import OutDirError

    out = tmp_path / "town"
    Society.from_scenario(scenario(ticks=4), out=out).run(backend="local")
    before = {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    smaller = scenario(ticks=4, agents={"count": 6})
    with pytest.raises(OutDirError, match=f"out='{out}': holds another run 'exp' \\(completed\\)"):
        Society.from_scenario(smaller, out=out).run(backend="local")
    with pytest.raises(OutDirError, match="pass overwrite=True to replace it"):
        Society.from_scenario(smaller, out=out).run(ticks=1)  # stepping writes results too
    assert {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()} == before

    Society.from_scenario(smaller, out=out, overwrite=True).run(backend="local")
    config = json.loads((out / "config.json").read_text())
    run = json.loads((out / "run.json").read_text())
    assert config["agents"]["count"] == 6 and run["agents"] == 6
    assert sorted({r["agent_id"] for r in read_table(out, "agent_state").to_pylist()}) == [
        *range(6)
    ]
    manifests = sorted((out / "checkpoints").glob("tick=*/manifest.json"))
    assert manifests and all(
        json.loads(m.read_text())["config"]["scenario"]["agents"]["count"] == 6 for m in manifests
    )
