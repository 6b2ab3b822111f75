"""A model's message and survey answer may name only people of the town or of the prompt:
the call sites pass the population's names to the meaning checks, as conversations do."""

from __future__ import annotations

import dataclasses

from societas.agents.blocks.social import SocialBlock
from societas.agents.cognition.persona import plain_name
from societas.agents.experiments.schema import Question
from societas.agents.experiments.survey import ask
from societas.agents.llm.gateway import LLMGateway
from tests.chat_server import user_text

from ..cognition.scripted import gateway_config, scripted
from .conftest import make_ctx

ME = 5


async def test_a_message_is_checked_against_the_towns_names(engine) -> None:
    """A message naming only someone of the town (not the listener) says nothing: re-asked,
    then the fallback line, as a conversation's lines are checked."""
    block = SocialBlock(engine.scenario)
    listener, third = [i for i in range(12) if i != ME][:2]
    named = plain_name(engine.population.profiles[third].name)
    async with (
        scripted(lambda schema, messages: {"utterance": named, "end": True}) as (url, seen),
        LLMGateway(gateway_config(url)) as llm,
    ):
        ctx = dataclasses.replace(make_ctx(engine, ME, tick=1), llm=llm)
        await block.speak(ctx, listener, "message", "")
    said = [r for r in engine.results.buffered("dialogues") if r[4] == "message"]
    assert [(r[5], r[-1]) for r in said] == [("Hello!", "fallback")]
    lines = [r for r in seen if "utterance" in user_text(r)]
    assert len(lines) == 2  # the line, then one re-ask


async def test_a_survey_answer_is_checked_against_the_towns_names(engine) -> None:
    """An answer naming someone neither in the town nor in the prompt is asked again."""
    known = plain_name(engine.population.profiles[1].name)
    replies = iter(["I met Zed Quill at the park.", f"I met {known} at the park."])
    q = Question(id="day", kind="open", text="How is your day going?")
    async with (
        scripted(lambda schema, messages: {"answer": next(replies), "value": None}) as (url, _),
        LLMGateway(gateway_config(url)) as llm,
    ):
        engine.llm, before = llm, engine.llm
        try:
            (answer,) = await ask(engine, [(0, q)])
        finally:
            engine.llm = before
    assert (answer.text, answer.answer_source) == (f"I met {known} at the park.", "re_asked")
