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


async def _sent_by_town(data: dict, tmp_path: Path, emulator, embedder) -> list[dict]:
    """The requests a 3-agent run of `data` (the town, changed) sent the emulator, from
    the run's LLM cache."""
    data["agents"] = {**data["agents"], "count": 3}
    data["network"] = {**data["network"], "k": 2}
    cache = tmp_path / "cache"
    async with emulator() as (_emu, url):
        data["llm"] = {
            "endpoints": [{"base_url": url, "model": "emulated", "send_task_hints": True}],
            "cache": {"mode": "read-write", "dir": str(cache)},
        }
        await run_in_process(data, tmp_path / "run", embedder=embedder)
    return [json.loads(line) for f in cache.glob("*.jsonl") for line in f.read_text().splitlines()]


async def test_a_scenario_folder_reaches_the_model(tmp_path, emulator, bm25_embedder) -> None:
    folder = _folder(tmp_path, "mine", "MY-TOWN-RULES: everyone bakes bread.")
    data = yaml.safe_load(TOWN.read_text())
    data.update(ticks=1, interventions=[], prompts=str(folder))
    sent = await _sent_by_town(data, tmp_path, emulator, bm25_embedder)
    plans = [e for e in sent if "Plan " in e["request"]["messages"][-1]["content"]]
    assert plans, [e["request"]["messages"][-1]["content"][:60] for e in sent]
    for entry in plans:
        system, user = entry["request"]["messages"][0], entry["request"]["messages"][-1]
        assert system["role"] == "system" and "Rules of the world" in system["content"]
        assert user["content"].startswith("MY-TOWN-RULES: everyone bakes bread.")
    assert prompts.PROMPT_FOLDER.get() is None  # the run's folder stayed in its tasks


async def test_a_survey_prompt_gives_the_situation_without_bookkeeping(
    tmp_path, emulator, bm25_embedder
) -> None:
    """The status a respondent sees leaves out what the system prompt already says (name,
    age, occupation), keys of other agents' ids, bookkeeping and values that say nothing; the
    attribute a question asks about comes first, even when it is an off flag."""
    data = yaml.safe_load(TOWN.read_text())
    questions = [
        {"id": "day", "kind": "open", "text": "How was your day?"},
        {"id": "alarm", "kind": "choice", "options": ["yes", "no"], "attribute": "alert",
         "text": "Are you alarmed?"},
    ]  # fmt: skip
    survey = {"id": "s", "day": 0, "hour": data.get("start_hour", 7), "questions": questions}
    data.update(ticks=1, interventions=[], surveys=[survey])
    sent = await _sent_by_town(data, tmp_path, emulator, bm25_embedder)
    situations = {
        line.removeprefix("Your situation now: "): entry["request"]["messages"][-1]["content"]
        for entry in sent
        for line in entry["request"]["messages"][-1]["content"].splitlines()
        if line.startswith("Your situation now: ")
    }
    assert len(situations) == 6, list(situations)
    for situation, prompt in situations.items():
        keys = [item.split("=", 1)[0] for item in situation.split(", ") if "=" in item]
        assert "activity" in keys and "hunger_satisfaction" in keys, situation
        hidden = {"name", "age", "occupation", "relationships", "chat_histories", "type"}
        assert not hidden & set(keys), situation
        assert "={}" not in situation and "=False" not in situation.removeprefix("alert=False")
        assert situation.startswith("alert=False") == ("Are you alarmed?" in prompt), situation
