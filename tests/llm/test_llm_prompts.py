"""Prompt templates: a scenario's folder replaces templates by name, the cache is keyed by
folder (two scenarios in one process never mix), prompts are static part first, and what
the model receives is the rendered text."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml

from societas.agents.cognition import prompts
from societas.agents.llm.errors import LLMInputError
from societas.agents.scenario import ScenarioConfigError, load_scenario
from societas.cluster.loop.in_process import run_in_process

PACKAGED = Path(prompts.__file__).parent / "prompts"
TOWN = Path(__file__).resolve().parents[2] / "configs" / "town.yaml"


def _folder(tmp_path: Path, name: str, marker: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    text = (PACKAGED / "daily_plan.txt").read_text()
    (folder / "daily_plan.txt").write_text(f"{marker}\n{text}")
    return folder


def _plan(**extra: str) -> str:
    fields = {"name": "Ana", "places": "home: home-1, work: work-2", "day": "3", "needs": "-"}
    return prompts.render("daily_plan", **fields, mood="calm", memories="(none)", **extra)


async def test_two_folders_in_one_process_never_mix(tmp_path) -> None:
    a, b = _folder(tmp_path, "a", "ARM-A rules"), _folder(tmp_path, "b", "ARM-B rules")

    async def render_in(folder: Path | None) -> list[str]:
        out = []
        prompts.set_folder(folder)  # this task only
        for _ in range(20):
            out.append(_plan())
            await asyncio.sleep(0)  # interleave with the other task
        return out

    got_a, got_b, got_default = await asyncio.gather(render_in(a), render_in(b), render_in(None))
    assert all(t.startswith("ARM-A rules") for t in got_a)
    assert all(t.startswith("ARM-B rules") for t in got_b)
    assert all("ARM-" not in t for t in got_default)
    with prompts.use_folder(a):  # templates the folder lacks are the packaged ones
        assert prompts.template("system") == (PACKAGED / "system.txt").read_text()
    assert prompts.PROMPT_FOLDER.get() is None


def test_prompts_render_static_part_first() -> None:
    one = _plan()
    other = prompts.render(
        "daily_plan",
        name="Ana",
        places="home: home-1, work: work-2",
        day="9",
        needs="hunger 0.1",
        mood="sad",
        memories="- lost my keys",
    )
    common = next(i for i, (x, y) in enumerate(zip(one, other, strict=False)) if x != y)
    assert "Reply with ONLY a JSON object" in one[:common]  # the instructions are static
    assert "home-1" not in one.split("Reply with ONLY")[1].split("Today is")[0]  # neutral example
    assert "Today is day" in one[:common] and "lost my keys" not in one[:common]


def test_bad_prompt_folders_are_clear_errors(tmp_path) -> None:
    with pytest.raises(ScenarioConfigError, match=r"prompts: .*not a folder of \.txt"):
        load_scenario({"prompts": str(tmp_path / "missing")})
    with pytest.raises(LLMInputError, match="holds no .txt templates"):
        prompts.set_folder(tmp_path)


async def test_a_scenario_folder_reaches_the_model(tmp_path, emulator, bm25_embedder) -> None:
    folder = _folder(tmp_path, "mine", "MY-TOWN-RULES: everyone bakes bread.")
    data = yaml.safe_load(TOWN.read_text())
    data.update(ticks=1, interventions=[], prompts=str(folder))
    data["agents"] = {**data["agents"], "count": 3}
    data["network"] = {**data["network"], "k": 2}
    cache = tmp_path / "cache"
    async with emulator() as (_emu, url):
        data["llm"] = {
            "endpoints": [{"base_url": url, "model": "emulated", "send_task_hints": True}],
            "cache": {"mode": "read-write", "dir": str(cache)},
        }
        await run_in_process(data, tmp_path / "run", embedder=bm25_embedder)
    sent = [json.loads(line) for f in cache.glob("*.jsonl") for line in f.read_text().splitlines()]
    plans = [e for e in sent if "Plan " in e["request"]["messages"][-1]["content"]]
    assert plans, [e["request"]["messages"][-1]["content"][:60] for e in sent]
    for entry in plans:
        system, user = entry["request"]["messages"][0], entry["request"]["messages"][-1]
        assert system["role"] == "system" and "Rules of the world" in system["content"]
        assert user["content"].startswith("MY-TOWN-RULES: everyone bakes bread.")
    assert prompts.PROMPT_FOLDER.get() is None  # the run's folder stayed in its tasks
