"""Survey and interview answers are data only when they answer their question: a likert point
on the scale, a number in bounds, one option, some words, and a value saying what the words
say. Most failing replies here are SmolLM2-135M's own, read from a real run's LLM cache
(punctuation alone and template slots such as "<your answer>" fail the schema before these)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from societas.agents.cognition import prompts
from societas.agents.cognition.persona import persona_of
from societas.agents.llm.accounting import MEANING_PREFIX, SOURCE_PREFIX, split_counts
from societas.agents.llm.meaning import Population, Prompt, check
from societas.agents.llm.structured import schema_of
from societas.agents.llm.tasks import SurveyAnswer
from societas.cluster.loop.in_process import run_in_process
from tests.chat_server import chat_server, user_text

from .parrot import answer as parrot_answer
from .parrot import endpoint
from .test_llm_provenance import town

QUESTIONS = {  # id -> (question, the model's junk reply, a reply that answers it)
    "life": (
        {"kind": "likert", "scale": 5, "text": "How satisfied are you with your life?"},
        {"answer": "3.5", "value": 1},
        {"answer": "Fairly, the bakery is busy", "value": 4},
    ),
    "ubi": (
        {"kind": "choice", "options": ["support", "oppose"], "text": "Do you back a basic income?"},
        {"answer": "0: support; 1:"},
        {"answer": "I oppose it", "value": 1},
    ),
    "cash": (
        {"kind": "number", "min": 0, "text": "How much money do you have at hand?"},
        {"answer": "15.08", "value": 23},
        {"answer": "2,400", "value": 2400},
    ),
    "move": (  # a fallback's "(no answer)" must not count as the option "no"
        {"kind": "choice", "options": ["yes", "no", "not sure"], "text": "Would you move away?"},
        {"answer": "0: yes; 1: no"},
        {"answer": "No, I would stay.", "value": 1},
    ),
    "day": (
        {"kind": "open", "text": "How was your day so far?"},
        {"answer": "42"},
        {"answer": "A quiet morning at home with coffee."},
    ),
}
SURVEY = {
    "id": "morning",
    "day": 0,
    "hour": 7,
    "select": {"ids": [0, 1, 2]},
    "questions": [{"id": q, **spec} for q, (spec, _, _) in QUESTIONS.items()],
}


def asked(question: dict[str, Any], text: str, value: float | None) -> Any:
    """The first meaning check a reply to `question` fails, on the survey's own prompt."""
    msgs = prompts.messages(
        "survey",
        system=persona_of(0, {"name": "Ann Lee", "age": 34, "occupation": "baker"}, {}).system(),
        status="mood=0.5",
        memories="- bought flour at the market",
        question=question["text"],
        instructions="Answer with a number as value.",
    )
    ctx = {"question": question["text"], "name": "Ann Lee", **question}
    prompt = Prompt.of(msgs, schema_of(SurveyAnswer), ctx, "survey")
    return check("survey", SurveyAnswer(answer=text, value=value), prompt, ctx)


LIKERT = {"kind": "likert", "scale": 5, "text": "How satisfied are you?"}
CHOICE = {"kind": "choice", "options": ["support", "oppose"], "text": "Do you back it?"}
NUMBER = {"kind": "number", "min": 0, "text": "How much money do you have?"}
OPEN = {"kind": "open", "text": "How was your day?"}
COUNT = {"kind": "number", "min": 0, "max": 100, "text": "How many people did you talk to today?"}
SLEEP = {"kind": "number", "min": 0, "max": 24, "text": "How many hours did you sleep last night?"}
TELL = {"kind": "open", "text": "What would you tell your neighbour about the basic income?"}
SUPPORT = {"kind": "likert", "scale": 5, "text": "How much do you support the carbon tax?"}
WORRIED = {"kind": "likert", "scale": 5, "text": "How worried are you about the flood?"}
SPEND = {
    "kind": "number",
    "text": "How many euros a month would the carbon tax cost your household?",
}
DID = {"kind": "open", "text": "What did you do when you heard the warning?"}
WHEN = {"kind": "open", "text": "When did you leave home?"}
MORNING = {"kind": "open", "text": "What did you do this morning, and why?"}
# The prompt's "You are being asked a question" put back.
FRAMING_PUT_BACK = (
    "When I see that you have been asked to answer a question about how your life is affected "
    "by the carbon tax, I will give"
)
# The asker told what they did, "I" only in an idiom.
TOLD_WHAT_THEY_DID = (
    "This morning, you're making plans to work on the plan that he's been working on. You know "
    "what I'm talking about."
)
# An exercise's instruction, not an answer.
EXERCISE = "Demonstrate a positive mindset, no fear of failure and a desire to keep going."
# The one answering (Ann Lee) called by their own name: words said to them.
CALLED_BY_OWN_NAME = "I went to the mall and bought some pizza, Ann. Then I spent all my money."
MOVE = {"kind": "choice", "options": ["yes", "no", "not sure"], "text": "Would you move?"}
VOTE = {
    "kind": "choice",
    "options": ["support", "oppose", "undecided"],
    "text": "If there were a vote on the carbon tax tomorrow, how would you vote?",
}


@pytest.mark.parametrize(
    ("question", "text", "value", "kind"),
    [
        (LIKERT, "3.5", 1, "value_mismatch"),
        (LIKERT, ".4", 1, "value_mismatch"),
        (LIKERT, "3.5", None, "off_scale"),
        (LIKERT, "I'd say 7", 7, "off_scale"),
        (LIKERT, "I worked 8 hours, so 3", None, None),  # a span is no point: it reads 3
        (LIKERT, "I worked 8 days, so 7", None, "off_scale"),
        (CHOICE, "0: support; 1:", None, "copied_prompt"),
        (CHOICE, "the second one", 2, "not_a_choice"),
        (CHOICE, "I both support and oppose it", None, "not_a_choice"),
        (CHOICE, "I support it", 1, "value_mismatch"),
        (CHOICE, "1.0, yes, vote to support it.", None, "value_mismatch"),  # SmolLM2's, kept
        (CHOICE, "1. oppose", None, None),  # the option's number, then its text
        (VOTE, "1", 2, "value_mismatch"),  # SmolLM2's vote, kept first try: which is meant?
        (VOTE, "1", 1, None),
        (VOTE, "2.0", 2, None),
        (  # SmolLM2's, kept: it speaks of "the above responses", not as the person
            OPEN,
            "Nobody knows how much to back the carbon tax; 4 of the above responses are "
            "from the town.",
            None,
            "empty",
        ),
        (OPEN, "I read the following answers in the paper and agreed.", None, None),
        (OPEN, "The town meeting gave answers about the shelter.", None, None),
        (CHOICE, "7, I support it", None, "not_a_choice"),
        (CHOICE, "3 of my friends support it, and so do I", None, None),  # a count, not an item
        (NUMBER, "15.08", 23, "value_mismatch"),
        (NUMBER, ".0.1", 0.1, "value_mismatch"),
        (NUMBER, "-5", None, "off_scale"),
        (OPEN, "42", None, "empty"),
        (OPEN, "The 10:35: 20:48", None, "copied_prompt"),  # SmolLM2's, kept: the layout
        (OPEN, "The 10:35, 20:48", None, "empty"),  # no word but an article
        (DID, "A) 3pm-4:00pm", None, "empty"),  # SmolLM2's, kept first try: times, no deed
        (DID, "At 3pm I went home.", None, None),
        (WHEN, "3pm", None, None),  # a time asked for
        (WHEN, "At 4:00 pm.", None, None),
        (DID, "/world-1234567890", None, "empty"),  # SmolLM2's, kept after a re-ask
        (DID, "I paid 1500 dollars for the shelter bus.", None, None),
        (MORNING, "What I did this morning...", None, "copied_prompt"),  # SmolLM2's, kept
        (MORNING, "I did this morning.", None, "copied_prompt"),
        (OPEN, "My day was...", None, "copied_prompt"),
        (MORNING, "What I did this morning? Slept in.", None, None),
        (MORNING, "I did nothing this morning.", None, None),
        (MORNING, FRAMING_PUT_BACK, None, "copied_prompt"),  # SmolLM2's, kept after a re-ask
        (MORNING, "When you were asked, I had to find a way to avoid it.", None, "copied_prompt"),
        (MORNING, "I asked the baker for bread and went home.", None, None),
        (DID, "You forgot to give me the answer.", None, "empty"),  # SmolLM2's, re-asked
        (DID, "The question made me laugh; I went home.", None, None),
        (  # SmolLM2's, kept first try: cut off on "was"
            OPEN,
            "This morning, I remembered a local news report about a hurricane that struck "
            "in our town and was",
            None,
            "empty",
        ),
        (OPEN, "I don't know what the storm was.", None, None),
        (OPEN, "As an AI, I cannot answer that question.", None, "no_answer"),
        (OPEN, "I'm not sure what to say.", None, "no_answer"),  # SmolLM2's own
        (OPEN, "Honestly, I don\u2019t know what to say!", None, "no_answer"),
        (OPEN, "I have nothing to say.", None, "no_answer"),
        (LIKERT, "No comment.", 3, "no_answer"),
        (OPEN, "I'm not sure what to say, but the day was long.", None, None),
        (OPEN, "Nothing to say about the rain, it was a good day.", None, None),
        (
            OPEN,
            "You're going to relax after the meal, and your plan is still on. You have "
            "dinner (15 min), and you've been sleeping for",
            None,
            "copied_prompt",  # the plan's "(15 min)" first; told to "you" too
        ),
        (OPEN, "Your day was long and your feet hurt.", None, "not_first_person"),
        (OPEN, "Your day was a mix of work and rest.", None, "not_first_person"),  # SmolLM2's
        (  # SmolLM2's, kept first try: the question's "your day" put back beside "I"
            OPEN,
            "In your day, I am unsure about the carbon tax.",
            None,
            "not_first_person",
        ),
        (OPEN, "In my day, I was unsure about the carbon tax.", None, None),
        (DID, "You made a cake.", None, "not_first_person"),  # SmolLM2's, kept first try
        (DID, TOLD_WHAT_THEY_DID, None, "not_first_person"),  # SmolLM2's, kept after a re-ask
        (DID, "This morning, you went to the square and boarded a bus.", None, "not_first_person"),
        (DID, "You will laugh, but I stayed home.", None, None),
        (DID, "You know, I went home.", None, None),
        (DID, "Today I went home. You would have liked it.", None, None),
        (DID, EXERCISE, None, "out_of_character"),  # SmolLM2's, kept first try (hur-22)
        (DID, "Describe the importance of work ethic in a nation.", None, "out_of_character"),
        (DID, "Describe my morning? I baked bread.", None, None),
        (DID, "Explain it to my boss, that's what I did.", None, None),
        (DID, "I had to explain the storm warning to my son.", None, None),
        (LIKERT, "No more than 5 points", 5, "no_answer"),  # SmolLM2's, kept first try: 1..5
        (LIKERT, "At least 1, I suppose", 1, "no_answer"),
        (LIKERT, "No more than 2, it was a bad day", 2, None),  # a bound that picks the point
        (LIKERT, "Up to 5 on a good day, today 3", 3, None),
        (DID, CALLED_BY_OWN_NAME, None, "not_first_person"),  # SmolLM2's, kept (cog-22)
        (DID, "I made a cake, Ann Lee!", None, "not_first_person"),
        (DID, "I made a cake with my sister, Ann.", None, "not_first_person"),  # named as oneself
        (DID, "I made a cake with my friend, Rosa.", None, None),  # another, named after her
        (DID, "I made a cake, and Ann from next door ate it.", None, None),
        (DID, "I made a cake, Anna's favourite.", None, None),
        (DID, "Nothing much. You slept in, and the storm passed.", None, "not_first_person"),
        (DID, "You asked: I made a cake and went to the shelter.", None, None),
        (  # SmolLM2's, kept first try: told to "you", one "I'm" beside
            DID,
            "You forgot to change your carbon tax, which is the highest in the world. I'm "
            "afraid you're not ready for work yet.",
            None,
            "not_first_person",
        ),
        (DID, "You asked what I did: I made a cake, and you would have liked it.", None, None),
        (DID, "Made a cake. You should try it!", None, "not_first_person"),
        (CHOICE, "You are against basic income.", 1, "not_first_person"),  # SmolLM2's, kept
        (NUMBER, "You have $234,198.65", 234198.65, "not_first_person"),  # SmolLM2's, kept
        (OPEN, "You have to work hard here.", None, None),  # a generic "you"
        (OPEN, "You're right, I had a long day.", None, None),
        (DID, "Made a cake, then went to the shelter.", None, None),
        (OPEN, "You know, the shelter was full.", None, None),
        # asked what they did: nothing of theirs, or only what is to come
        (
            DID,
            "The hurricane hits the town: storm, flooding and emergency sirens.",
            None,
            "not_first_person",
        ),
        (DID, "Slightly low, not bad.", None, "not_first_person"),  # SmolLM2's, kept
        (MORNING, "Hi, I'm going to work.", None, "empty"),  # SmolLM2's, kept
        (MORNING, "Finn, I will be fine. I'm going to have a big meal.", None, "empty"),
        (MORNING, "I went to work, and I'm going to relax tonight.", None, None),
        (MORNING, "Took a shower, woke up to a new home and breakfast.", None, None),  # SmolLM2's
        (MORNING, "Working at the bakery, as always.", None, None),
        (MORNING, "Nothing much, honestly.", None, None),
        (MORNING, "Well, stayed home and read.", None, None),
        (MORNING, "The usual \u2014 opened the shop, served coffee.", None, None),
        (MORNING, "After the warning, headed straight to the shelter.", None, None),
        (MORNING, "Yes, I did just that.", None, "empty"),  # SmolLM2's, kept first try
        # SmolLM2's, kept after a re-ask (hur-902): a slot for the answer
        (MORNING, "[Ann Lee's answer] I was going to work at 10:10 am.", None, "copied_prompt"),
        (MORNING, "(Response) This morning I looked after things at home.", None, "copied_prompt"),
        (MORNING, "I baked bread (my answer to the flood) and sold it.", None, None),
        (MORNING, "I did the same as yesterday.", None, None),  # "yesterday" says which
        (WHEN, "Tomorrow, after the storm.", None, None),  # asks no deed
        (OPEN, "I had a quiet day at the bakery,", None, "empty"),  # stops mid-sentence
        (  # SmolLM2's own thought, kept after a re-ask: a full stop after "your"
            OPEN,
            "I have a very happy day today. I would like to make something special for your.",
            None,
            "empty",
        ),
        (OPEN, "I got an A. Then I went home to the.", None, "empty"),
        (OPEN, "I got an A.", None, None),
        (OPEN, "It was what I came here for.", None, None),
        (  # SmolLM2's own, the reply's JSON closed by the model mid-word
            OPEN,
            "Your day was filled with happy moments. I woke up early, got cookies from my ro",
            None,
            "empty",
        ),
        (OPEN, "It was perfect. I then went to work", None, "empty"),
        (OPEN, "The answer is:", None, "empty"),
        (OPEN, "The answer to this question is: 2018-11-30 at midnight.", None, "garbled_time"),
        (OPEN, "The answer to this question is: at midnight.", None, "empty"),
        (LIKERT, "The answer and the value are the same.", None, "empty"),  # SmolLM2's, re_asked
        (LIKERT, "The answer is 4.", 4, None),  # the value answers it
        (OPEN, "That question is easy: I had a lovely day.", None, None),
        (
            OPEN,
            "In 2019, Ann Lee went on a trip to the United States and spent two days at home.",
            None,
            "narrated",
        ),
        (OPEN, "A day of rest, with Ann Lee enjoying the morning. She is happy.", None, "narrated"),
        (LIKERT, "4, Ann Lee is fairly satisfied", 4, "narrated"),
        (NUMBER, ",2.0,1684\nThis is the minimum amount of money", 19.75, "value_mismatch"),
        (NUMBER, ",2.0,1684}\nThis is the exact answer that says", 2.0, "copied_prompt"),
        (NUMBER, "You have 20, and your purse is full", 20, "not_first_person"),
        (NUMBER, "I have 3 kids and 200 in my purse", 200, None),
        (NUMBER, "2.0, 13:45", 2.0, "value_mismatch"),  # SmolLM2's own: numbers, no words
        # SmolLM2's own, kept as 1 of 5 after json-repair and as a first-try answer
        (
            LIKERT,
            "][1]\nThis is a JSON response, and it contains the following data",
            1,
            "copied_prompt",
        ),
        (OPEN, "]I went to the shelter, and Rosa was going to work.", None, "copied_prompt"),
        (OPEN, "I went to the shelter [the one by the school].", None, None),
        (  # SmolLM2's own, kept after a re-ask: a tag of capitals, markup
            OPEN,
            "I don't know, I'm not sure. I'm sorry, you'll have to work today. 12:00: 12:00 "
            "works at the [M].",
            None,
            "copied_prompt",
        ),
        (OPEN, "[MLA] I went to the shelter.", None, "copied_prompt"),
        (OPEN, "[1] Love", None, "copied_prompt"),  # SmolLM2's thought, kept after a re-ask
        (OPEN, "I went to shelter 1 [of 3].", None, None),
        (LIKERT, "[m] 1", 1, "copied_prompt"),  # SmolLM2's, kept first try: a one-letter tag
        (OPEN, "The mayor said the storm [sic] was over.", None, None),
        (  # SmolLM2's line, kept first try: a user handle as a tag
            OPEN,
            "[adaIto_42] I am a nurse. My name is Adi Ito.",
            None,
            "copied_prompt",
        ),
        (OPEN, "[laughs] I went to the shelter.", None, "copied_prompt"),
        (COUNT, "The 10:35: 20:48", None, "copied_prompt"),  # SmolLM2's, kept first try as 10
        (COUNT, "The 10:35 and 20:48", None, "no_answer"),  # clock times, no count
        (COUNT, "By 10:35 I had talked to 3 people.", None, None),
        (COUNT, "At 9:00, nobody.", None, "no_answer"),
        (COUNT, "1.86", 1.86, "off_scale"),  # SmolLM2's, kept after a re-ask: no count
        (COUNT, "About 3 people", 3, None),
        # SmolLM2's, kept first try as 3 people: a span of days is no count of people
        (COUNT, "You're right, it's you. 3 days ago, it was the storm.", None, "not_first_person"),
        (COUNT, "3 days ago, it was the storm.", None, "no_answer"),
        (COUNT, "I talked to 4 people over 2 hours.", None, None),
        (COUNT, "I left at 10 pm and saw nobody.", None, "no_answer"),  # a time of day
        (COUNT, "6 people (20 people) 5:31am to 7:49pm", None, "value_mismatch"),  # SmolLM2's
        (COUNT, "2 people at work and 3 people at home", None, "value_mismatch"),  # reads 2
        (COUNT, "2 people at work and 3 people at home", 5, None),  # the value sums them
        (COUNT, "2 people at work and 3 people at home", 3, None),  # the value says which
        (SLEEP, "I slept 7 hours and went to bed at 11 pm.", None, None),
        (SLEEP, "I went to bed at 11 pm.", None, "no_answer"),
        (SLEEP, "For 2 days I could not sleep.", None, "no_answer"),  # days are no hours
        (SLEEP, "7 hours, and 2 hours of it on the sofa", 7, None),
        ({"kind": "number", "text": "How many hours did you sleep?"}, "7.5", 7.5, None),
        (OPEN, "I went to the shelter on the hill [a] mile away.", None, "copied_prompt"),
        (OPEN, "will_go", None, "copied_prompt"),  # SmolLM2's line, kept first try
        (OPEN, "My hunger_satisfaction is low.", None, "copied_prompt"),
        (OPEN, "I'm hungry - well, starving.", None, None),
        # SmolLM2's own, kept first try: the place id "home-0" with a decimal glued on
        (OPEN, "The next day I was in my home-0.1", None, "copied_prompt"),
        (OPEN, "I slept at home-0 and woke at 7.", None, None),
        (  # SmolLM2's own, kept first try: cut off after a closed sentence, on a bare number
            OPEN,
            "Today I woke up and have breakfast at home-2; 9:00 work at work-3, 18:00 had "
            "dinner at home-4. 19:00 sleep at home-5. 22",
            None,
            "empty",
        ),
        (OPEN, "We left at 7. The shelter opened at 9.", None, None),
        (NUMBER, ".081 EUR (3.67 USD), .", 0.081, "empty"),  # SmolLM2's own, kept first try
        (NUMBER, "About 0.08 EUR, I think.", 0.08, None),
        (  # as SmolLM2 answered for Tara Rossi after a re-ask: the name as a speaker's tag
            OPEN,
            "Ann Lee thinks: There is no one in the world who has nothing but a dream.",
            None,
            "narrated",
        ),
        (OPEN, "Ann Lee: I had a quiet day.", None, "narrated"),
        (  # SmolLM2's, kept first try: her full name as a telling verb's subject, beside "I"
            DID,
            "This morning, I woke up at 3 AM. Ann Lee thought about this morning and decided "
            "to relax after the meal.",
            None,
            "narrated",
        ),
        (OPEN, "I am Ann Lee and I stayed home.", None, None),
        (  # SmolLM2's, kept after a re-ask: her own name twice, an "I" at the end
            OPEN,
            "Ann Lee is going to work, but Ann Lee has plans of 10:30: 9:45. She is going to "
            "work in a different area, and I am *",
            None,
            "copied_prompt",  # "10:30: 9:45", the plan's layout, first
        ),
        (
            OPEN,
            "Ann Lee is going to work, but Ann Lee has plans, and I am tired.",
            None,
            "narrated",
        ),
        (OPEN, "I'm Ann Lee, and I baked bread all morning.", None, None),
        (OPEN, "I worked from 10:30 to 9:45 at night.", None, None),
        (OPEN, "I baked bread, and then I was *", None, "empty"),
        (OPEN, "Ann Lee, that is me: a quiet day at the bakery.", None, None),
        (LIKERT, "I am very worried. 5", 5, None),  # words, then the point: an answer
        (LIKERT, "A total of 5.0, no more, just a bit.", 1, "value_mismatch"),  # SmolLM2's, kept
        (LIKERT, "Quite satisfied: 4.0", 4, None),
        (LIKERT, ");1;", 1, "copied_prompt"),  # SmolLM2's, kept first try
        (LIKERT, ")Satisfied", 5, "copied_prompt"),  # SmolLM2's, kept first try
        (LIKERT, "The answer is 1.5", 2, "value_mismatch"),  # SmolLM2's, kept first try
        (COUNT, "The answer says ", 10, "empty"),  # SmolLM2's, kept first try: no answer in it
        (LIKERT, "My answer: 4", 4, None),
        (LIKERT, "The answer is 4", 4, None),
        (LIKERT, "Positive", 1, "value_mismatch"),  # SmolLM2's, kept first try
        (LIKERT, "Positive", 4, None),
        (LIKERT, "Not glad at all", 1, None),
        (LIKERT, "Satisfied (mostly)", 4, None),
        (  # SmolLM2's, kept first try: the prompt's stand-in, not the person
            DID,
            "The person said to leave the building, but he didn't.",
            None,
            "narrated",
        ),
        (DID, "The other person is going to be here for the next 12 hours.", None, "narrated"),
        (DID, "The person at the shelter told me to stay, so I stayed.", None, None),
        (LIKERT, "=4", 4, "copied_prompt"),
        (LIKERT, "4/5", 4, None),
        (LIKERT, "(4)", 4, None),
        (  # SmolLM2's, kept after a re-ask: of its own reply, as an assistant
            OPEN,
            "I'm unsure about carbon tax. The answer was incorrect, I changed it to 6.5 of 10.",
            None,
            "out_of_character",
        ),
        (OPEN, "I said no to the tax; my answer is the same today.", None, None),
        (LIKERT, "I slept 8.0 hours, so fairly satisfied.", 4, None),  # no point of 1..5
        (LIKERT, "I talked to 3 friends, so I'm happy.", 5, None),
        (OPEN, "The COVID-19 clinic was open; prices rose 2.5 percent.", None, None),
        (OPEN, "I left at 12:00: the shelter was full by 13:00.", None, None),
        (OPEN, "I remember: my plan for 21:00: 21:00 relax at home.", None, None),  # as rules say
        (OPEN, "I went to the shelter [B wing].", None, None),
        (LIKERT, "3 - 4", 3, "value_mismatch"),
        (  # SmolLM2's own, kept first try with no value: words, and no point of the scale
            LIKERT,
            "It's not for you, it will never happen, and the hurricane is a reality that does "
            "exist, but we are ready to adapt and go",
            None,
            "no_answer",
        ),
        (NUMBER, "Quite a lot, more than last month.", None, "no_answer"),
        (LIKERT, "Fairly worried, about a four.", None, "no_answer"),  # no digits: no point read
        (LIKERT, "1.0, yes", 2, "value_mismatch"),  # SmolLM2's own
        (LIKERT, ", yes", None, "no_answer"),  # its re-asked answer, kept before: no point
        (MOVE, "2. no", 1, "value_mismatch"),  # SmolLM2's, kept: option 2's number, "no"
        (MOVE, "1. no", 1, None),
        (MOVE, "No. I would stay.", 1, None),
        (MOVE, "I would say no.", None, None),
        # SmolLM2's, kept after a re-ask: told to "you", after its "No"
        (MOVE, "No, you can't go. 20% of the family now lives in the town.", 1, "not_first_person"),
        (MOVE, "Yes, you know, I'd go.", 0, None),
        (  # SmolLM2's, kept after a re-ask: a greeting to someone, not the answer
            DID,
            "Coming home from work, I see you. Nice to meet you. You're a new coworker.",
            None,
            "not_first_person",
        ),
        (MOVE, "not yes", 0, "value_mismatch"),  # SmolLM2's, kept first try as "yes"
        (MOVE, "not yes", None, "not_a_choice"),
        (VOTE, "I do not support it.", 0, "value_mismatch"),
        (VOTE, "I do not support it.", 1, None),  # no option named: the value says which
        (VOTE, "I would not support it, I oppose it.", 1, None),
        (
            OPEN,
            "This is not an easy question to answer, but I'll try.",
            None,
            "no_answer",
        ),  # SmolLM2's
        (OPEN, "It's a hard question. I worry about the flood.", None, None),
        (OPEN, "No answer was found.", None, "no_answer"),  # SmolLM2's, kept first try
        (OPEN, "No answer from the council yet, so I waited at home.", None, None),
        (MOVE, "No answer.", None, "no_answer"),  # declines; and "no" before a word is no option
        (MOVE, "No idea.", None, "not_a_choice"),  # "no" before a word: no option named
        (MOVE, "There is no way to know.", None, "not_a_choice"),
        (MOVE, "No one knows.", None, "not_a_choice"),
        (OPEN, ". I stayed home.", None, "empty"),
        (OPEN, "... and then the bridge closed. I stayed home.", None, None),  # an ellipsis
        (LIKERT, "2, fairly unhappy", 2, None),
        (LIKERT, "4/5", 4, None),  # a point and its scale
        (LIKERT, "4 / 5", None, None),
        (NUMBER, "$2,400.", 2400, None),
        (OPEN, "I, Ann Lee, had a quiet day at the bakery.", None, None),
        # Ann Lee answering: her own full name as another's, not an introduction
        (OPEN, "Ann Lee from the bakery came by, so it was a nice day for me.", None, "narrated"),
        (OPEN, "Ann Lee's bakery was busy, so it was a long day for me.", None, None),
        (OPEN, "I had a conversation with Ann Lee.", None, "narrated"),  # as SmolLM2 wrote it
        (LIKERT, "4 of 5", 4, None),
        (LIKERT, "2.0 of 10", 2, "value_mismatch"),  # SmolLM2's own, kept first try: scale 5
        (LIKERT, "7 out of 10, I like it", None, "value_mismatch"),
        (LIKERT, "3/7", 3, "value_mismatch"),
        (LIKERT, "4 out of 5, I like it", 4, None),
        (LIKERT, "4, like 3 of my 10 friends", 4, None),
        (LIKERT, "Fairly happy, I slept well.", 4, None),
        (LIKERT, "4", None, None),
        (CHOICE, "support", 0, None),
        (NUMBER, "2,389", 2389.47, None),
        (NUMBER, "1e+06", 1e6, None),
        (NUMBER, "About 2,400 in my purse", 2389, None),
        (OPEN, "A quiet morning at the bakery.", None, None),
        (OPEN, "It was fine, you know. Busy at the bakery.", None, None),
        (OPEN, "Scary. You could hear the wind all night.", None, None),  # a generic "you"
        (OPEN, "I had a great day, you would have liked it.", None, None),
        (OPEN, "Your question is a good one; I slept badly.", None, None),
        (OPEN, "Quiet, calm, slow.", None, None),
        (OPEN, "Long day. Glad it is over!", None, None),
        (OPEN, "A quiet one at the bakery", None, None),  # one sentence, no full stop
        (OPEN, "I worked till 5.30 and then went home", None, None),
        (TELL, "You should back it, it helps the bakery.", None, None),
        # SmolLM2's own, kept first try: told what they pay and how to vote, not answering
        (SPEND, "You will pay a carbon tax of 4.5 euros per month.", 4.5, "not_first_person"),
        (VOTE, "You should support the carbon tax tomorrow!", 0, "not_first_person"),
        (VOTE, "You're going to support it.", 0, "not_first_person"),
        (VOTE, "Easy. You should support it.", 0, "not_first_person"),
        (  # SmolLM2's, kept after a re-ask: the interviewer's question, asked as it opens
            DID,
            "How has your day been? I'm so sorry to hear that, but I just wanted to ask you "
            "about the event. What did you do today?",
            None,
            "copied_prompt",
        ),
        (DID, "I went to the shelter. What did you do?", None, "copied_prompt"),
        (DID, "What did I do? I ran to the shelter.", None, None),
        (WORRIED, "How worried are you? (5 + 1) = 6", 5, "copied_prompt"),  # SmolLM2's own
        (DID, "You have been asked to answer the following question.", None, "empty"),
        (  # SmolLM2's, kept after a re-ask: declines, "reply" for "answer"
            DID,
            "I have no idea. I'm not sure how to reply now but I'll provide a response as "
            "soon as possible, so you can reach me back.",
            None,
            "no_answer",
        ),
        (DID, "I have no idea what the others did; I ran to the shelter.", None, None),
        (  # SmolLM2's, kept after a re-ask
            OPEN,
            "I'm not sure what you're asking, but I understand. What's your question?",
            None,
            "no_answer",
        ),
        (OPEN, "I'm not sure what it means for us, but the day was calm.", None, None),
        (OPEN, "I don't know what the warning will mean for us; I stayed home.", None, None),
        (OPEN, "19:00, relaxation at home (60 min)", None, "copied_prompt"),  # SmolLM2's own
        (OPEN, "I remember: my plan for 19:00: 19:00 relax at home (60 min)", None, None),
        (  # SmolLM2's, kept first try: told to "you", the thought's "we" read back
            VOTE,
            "You support carbon tax: it is good and fair. You think there are no missing, we "
            "have 10 days left to make a difference.",
            0,
            "not_first_person",
        ),
        (VOTE, "Support. You know we need it, and you see the floods too.", 0, None),
        (VOTE, "Support: you and I both pay, and you know we need it.", 0, None),
        (VOTE, "You are right, support is fair.", 0, None),
        (VOTE, "Support. Mind you, it's costly.", 0, None),
        (OPEN, "You would not believe the day I had.", None, None),
        (SPEND, "You pay 4.5 euros, like everyone.", 4.5, None),  # a generic "you"
        (  # SmolLM2's own, kept first try: the question's "your household" put back
            SPEND,
            "A 5.5 euros a month is approximately $12,608.49 in your household.",
            5.5,
            "not_first_person",
        ),
        (SPEND, "About 12 euros a month for my household.", 12, None),
        (SPEND, "About 12 euros; your household and mine pay alike, I think.", 12, None),
        # SmolLM2's own interview answer to "What will you do tonight?": told from outside
        (OPEN, "She will be going to the shelter. She is going to find a job.", None, "narrated"),
        (OPEN, "He was kind to me at the bakery.", None, None),  # as "I": of someone else
        (OPEN, "She came by. It was a good day.", None, None),  # not every sentence
        # a point on the other side of the middle from the words, to "how much ... for"
        (SUPPORT, "I strongly oppose it.", 5, "value_mismatch"),
        (SUPPORT, "I support it, it helps the bakery.", 1, "value_mismatch"),
        (SUPPORT, "I don't really support it.", 4, "value_mismatch"),
        (SUPPORT, "I don't support it at all.", 1, None),
        (SUPPORT, "I am not against it.", 1, None),  # not against: not for either
        (SUPPORT, "I am unhappy about prices, but I like it.", 2, None),  # both ways: no signal
        (SUPPORT, "I support it.", 3, None),  # the middle
        (SUPPORT, "No, I support it.", 5, None),  # "no" ends its clause: it negates nothing
        (SUPPORT, "No, I do not support it.", 5, "value_mismatch"),
        (SUPPORT, "I have no support for it.", 5, "value_mismatch"),
        (LIKERT, "Not satisfied with the rain.", 5, "value_mismatch"),
        (LIKERT, "Satisfied", 5, None),
        (WORRIED, "I am unhappy, the river is rising.", 5, None),  # the question leans no way
        (  # SmolLM2's, re-asked and kept with the point 2 read from "2 days ago"
            LIKERT,
            "12:04; 2 days ago; 5:36am, 24 hours before the interview. 2 people at a time; 2 "
            "of my coworkers at work-1.",
            None,
            "no_answer",
        ),
        (LIKERT, "After 2 days off, 4.", None, None),
        (LIKERT, "4, though I only saw 2 people.", None, None),
        (NUMBER, "At home-9 I keep 50.", None, None),  # -9 would be off the scale
        (COUNT, "1.0, 2 people", 1, "value_mismatch"),  # SmolLM2's, kept first try
        (COUNT, "I talked to 2 people.", 2, None),
        (COUNT, "I met 2 people, 1 of them twice.", 2, None),
        (COUNT, "I met 3 people and 1 dog.", 3, None),
    ],
)
def test_a_survey_answer_must_answer_its_question(question, text, value, kind) -> None:
    failure = asked(question, text, value)
    assert (failure.kind if failure else None) == kind, failure


def test_a_count_of_people_larger_than_the_town_is_no_data() -> None:
    from societas.agents.llm.survey_checks import answer_problem

    town = ("Ann Lee", "Bo Chen", "Cy Diaz", "Di Evans", "Ed Fox", "Flo Gray")
    ctx = {"question": COUNT["text"], "name": "Ann Lee", **COUNT, "people": town}
    assert answer_problem("12", 12.0, ctx) == (
        "off_scale",
        "12 people, in a town of 6",
    )  # SmolLM2's
    assert answer_problem("I talked to 4 people.", 4.0, ctx) is None
    assert answer_problem("12", 12.0, {**ctx, "people": ()}) is None  # no town given: no bound
    assert answer_problem("23 people spoke today", None, ctx) == (  # SmolLM2's, kept (pol-21)
        "off_scale",
        "23 people, in a town of 6",
    )  # no value given: the number the survey reads is bounded as well
    assert answer_problem("2 4.1325;18:06;7;9;Frakology", 2.0, ctx)[0] == "value_mismatch"
    assert answer_problem("2, 3 or 4 people, I think.", 4.0, ctx) is None
    money = {**ctx, **NUMBER, "question": NUMBER["text"]}
    assert answer_problem("I keep 50.", 50.0, money) is None  # not a count of people


# The person's data as a survey prompt gives it (status line, recalled memories).
STATUS = {"activity": "relax at home", "education": "bachelor", "skill": "driving"}
MEMORIES = ["Paul Rossi's plan for 21:00: 21:00 relax at home (60 min)",
            "The hurricane hits the town: storm, flooding and emergency sirens.",
            "Paul Rossi thinks: Currently nothing good or bad is happening",
            "I heard but do not believe it: Hurricane warning from the mayor: a hurricane will "
            "hit the town tonight. Evacuate to the shelter."]  # fmt: skip
DID = {"kind": "open", "text": "What did you do when you heard the warning?"}
WHEN = {"kind": "open", "text": "When did you leave home?"}
MORNING = {"kind": "open", "text": "What did you do this morning, and why?"}
# The prompt's "You are being asked a question" put back.
FRAMING_PUT_BACK = (
    "When I see that you have been asked to answer a question about how your life is affected "
    "by the carbon tax, I will give"
)
# The asker told what they did, "I" only in an idiom.
TOLD_WHAT_THEY_DID = (
    "This morning, you're making plans to work on the plan that he's been working on. You know "
    "what I'm talking about."
)
# An exercise's instruction, not an answer.
EXERCISE = "Demonstrate a positive mindset, no fear of failure and a desire to keep going."
# The one answering (Ann Lee) called by their own name: words said to them.
CALLED_BY_OWN_NAME = "I went to the mall and bought some pizza, Ann. Then I spent all my money."
DAY = {"kind": "open", "text": "What happened in your day today?"}
WORRY = {"kind": "open", "text": "What worries you most right now?"}


@pytest.mark.parametrize(
    ("question", "text", "kind"),
    [
        (DAY, "./Bachelor", "copied_prompt"),  # SmolLM2's own: education=bachelor
        (DAY, "21:00: 21:00 relax at home (60 min)", "copied_prompt"),  # SmolLM2's: its plan
        (DAY, "Currently nothing good or bad is happening.", "copied_prompt"),
        (DAY, "Relax at home.", "copied_prompt"),  # the activity of the status line
        (DAY, "Good.", None),  # one word of a memory: a word, not a line read back
        (DAY, "Nothing good or bad happened.", None),
        (DAY, "I relaxed at home after work.", None),
        (DAY, "I relax at home (60 min)", None),  # as "I": the person's own
        ({"kind": "open", "text": "What did you study?"}, "Bachelor", None),  # may answer it
        ({"kind": "open", "text": "What did you study?"}, "education=bachelor", "copied_prompt"),
        (DAY, "Driving.", None),  # one word, no marks: it may be said
        # SmolLM2's own: the question put back, and asked of the interviewer
        (
            WORRY,
            "I'm not sure. What worries you most right now? How will you decide?",
            "copied_prompt",
        ),
        (WORRY, "What worries me most right now? The river.", None),  # the person's own words
        (  # SmolLM2's, re-asked and kept (pol-601): the question's words as a label
            {"kind": "likert", "scale": 5, "text": "How satisfied are you with your day so far?"},
            "Satisfied with your day so far is: 2\nReason: I am not satisfied about my days, as I "
            "have lost sleep and spent more than.",
            "copied_prompt",
        ),
        ({"kind": "open", "text": "How was your day so far?"}, "My day so far: good.", None),
        (WORRY, "Right now: the river.", None),  # two words of a label
        (WORRY, "What worries me most right now: the river.", None),  # words of its own
        ({**DAY, "attribute": "education"}, "Bachelor.", None),  # the attribute asked about
        (  # SmolLM2's own, kept first try: most of a memory, the "I" left out
            DID,
            "Heard but do not believe it, did so: Hurricane warning from the mayor: a "
            "hurricane will hit the town tonight. Evacuate.",
            "copied_prompt",
        ),
        (DID, "Went to the shelter: a hurricane will hit the town tonight, the mayor said.", None),
        (DID, "I heard but do not believe it: a hurricane will hit the town tonight.", None),
        (  # SmolLM2's, kept first try: an event read back in two runs, cut and joined
            DID,
            "The hurricane hits the town, flooding and emergency sirens",
            "copied_prompt",
        ),
        (DID, "Went to the shelter as the hurricane hit the town.", None),
        (  # SmolLM2's, kept first try (hur-21): a sentence read back, an order added
            DID,
            "The hurricane hits the town, flooding and emergency sirens. You have to evacuate "
            "to the shelter immediately.",
            "copied_prompt",
        ),
        (  # a sentence in runs from a memory, cut short of six words: the person's own
            DID,
            "The hurricane hits the town. Went to the shelter at once.",
            None,
        ),
    ],
)
def test_an_open_answer_that_reads_back_the_persons_data_is_copied(question, text, kind) -> None:
    ctx = {"question": question["text"], "name": "Paul Rossi", "status": STATUS,
           "memories": MEMORIES, **question}  # fmt: skip
    msgs = prompts.messages(
        "survey",
        system=persona_of(0, {"name": "Paul Rossi", "age": 18}, {}).system(),
        status=", ".join(f"{k}={v}" for k, v in STATUS.items()),
        memories="\n".join(f"- {m}" for m in MEMORIES),
        question=question["text"],
        instructions="Answer in one or two sentences; value = null.",
    )
    prompt = Prompt.of(msgs, schema_of(SurveyAnswer), ctx, "survey")
    failure = check("survey", SurveyAnswer(answer=text, value=None), prompt, ctx)
    assert (failure.kind if failure else None) == kind, failure


STEPPED_OUT = (
    "You are not a real person. You're a fictional character in a story, and I'm going to "
    "pretend for now."
)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (STEPPED_OUT, "out_of_character"),  # SmolLM2's own, as an interview answer
        ("I'm an AI, so I have no day.", "out_of_character"),
        ("I am not a chatbot; I could help with your story.", "out_of_character"),  # SmolLM2
        ("In this simulation I live near the harbour.", "out_of_character"),
        ("As a character in this story, I worry about the storm.", "out_of_character"),
        ("I pretend not to care about the tax.", None),  # a person may pretend
        ("I'm pretending to be brave for the children.", None),
        ("I read a novel about a fictitious town.", None),
        ("I am a real fan of the bakery.", None),
        # SmolLM2's own replies to a re-ask, kept: an assistant speaking of its reply or code
        ("You're right, I'll have to adjust the code", "out_of_character"),
        ("I'll try to make the answer more concise and a 3", "out_of_character"),
        ("The bakery changed the dress code, so I ironed my shirt.", None),
        ("My answer is short: I stayed home.", None),
        (  # SmolLM2's line after a re-ask, kept: an assistant promising a better reply
            "I will make sure to add more detail about the conversation. I'm looking forward "
            "to it.",
            "out_of_character",
        ),
        ("I want to add more detail to my garden this spring.", None),
        ("The person I'm responding to is from another location.", "out_of_character"),
        (  # SmolLM2's, after a re-ask: an assistant asking for its input
            "The response was incomplete. Please provide the entire story so that I can get "
            "everything.",
            "out_of_character",
        ),
        ("The bus schedule was incomplete, so I walked.", None),
        # SmolLM2's, kept after a re-ask: the model of its reply, not the person
        (
            "No response has been generated yet. You can try to reply again as requested.",
            "out_of_character",
        ),
        (
            "I'm going to work today. You can repeat that answer. It's 3 of your own.",
            "out_of_character",
        ),
        ("I asked the mayor to repeat the warning, and she did.", None),
        ("Please provide the shelter with more blankets, I asked the mayor.", None),
        (  # SmolLM2's line, kept after a re-ask (pol-902): a model waiting on its user
            "No one has responded to this message, as there is no reply from the user. No "
            "response has been received.",
            "out_of_character",
        ),
        ("No reply has come from the mayor, and no letter was received.", None),
    ],
)
def test_an_answer_that_steps_out_of_the_story_is_not_data(text, kind) -> None:
    failure = asked(OPEN, text, None)
    assert (failure.kind if failure else None) == kind, failure


def test_an_option_inside_a_longer_one_is_one_choice() -> None:
    both = {**CHOICE, "options": ["support", "strongly support"]}
    assert asked(both, "I strongly support it", 1) is None
    assert asked(both, "I strongly support it", 0).kind == "value_mismatch"


def _rows(run: Path) -> list[dict[str, Any]]:
    files = sorted((run / "results" / "surveys").glob("*/*.parquet"))
    return [row for f in files for row in pq.read_table(f).to_pylist()]


async def _survey_run(
    tmp_path: Path, bm25_embedder: Any, good: bool, remember: bool = False
) -> tuple[Any, list]:
    """A town whose survey a scripted model answers (the rest of its tasks it parrots)."""

    def say(body: dict[str, Any]) -> str:
        text = user_text(body)
        for spec, junk, fine in QUESTIONS.values():
            if f"Question: {spec['text']}" in text:
                return json.dumps(fine if good else junk)
        return parrot_answer(body, "example")

    async with chat_server(say) as (url, _):
        llm = {"endpoints": [endpoint(url)], "fallback_stop": {"enabled": False}}
        data = town(ticks=3, llm=llm, surveys=[{**SURVEY, "remember": remember}])
        run = await run_in_process(data, tmp_path, embedder=bm25_embedder, checkpoint_every=3)
    return run, _rows(tmp_path)


async def test_the_models_junk_survey_answers_fall_back_and_are_no_data(
    tmp_path, bm25_embedder
) -> None:
    run, rows = await _survey_run(tmp_path, bm25_embedder, good=False)
    assert len(rows) == 3 * len(QUESTIONS)
    for row in rows:
        assert row["answer_source"] == "fallback" and row["value"] is None, row
    meaning = split_counts(run.result.llm_tasks, MEANING_PREFIX)["survey"]
    assert set(meaning) == {"value_mismatch", "copied_prompt", "empty"}, meaning


async def test_a_remembered_survey_with_no_answer_is_remembered_as_asked_only(
    tmp_path, bm25_embedder
) -> None:
    from societas.cluster.report.memories import agent_memories

    await _survey_run(tmp_path, bm25_embedder, good=False, remember=True)
    texts = [m["text"] for m in agent_memories(tmp_path, 0) if m["topic"] == "survey"]
    assert len(texts) == len(QUESTIONS)
    assert all(t.startswith("I was asked: ") and "answered" not in t for t in texts), texts


async def test_answers_that_answer_are_kept_with_their_values(tmp_path, bm25_embedder) -> None:
    run, rows = await _survey_run(tmp_path, bm25_embedder, good=True)
    values = {(r["agent_id"], r["question_id"]): r for r in rows}
    for agent in (0, 1, 2):
        assert values[(agent, "life")]["value"] == 4
        assert values[(agent, "ubi")]["value"] == 1
        assert values[(agent, "cash")]["value"] == 2400
        assert values[(agent, "move")]["value"] == 1
        assert values[(agent, "day")]["value"] is None
    assert {r["answer_source"] for r in rows} == {"first_try"}
    assert "survey" not in split_counts(run.result.llm_tasks, MEANING_PREFIX)


async def test_the_rules_policys_survey_answers_pass_every_check(tmp_path, bm25_embedder) -> None:
    run = await run_in_process(town(ticks=3, surveys=[SURVEY]), tmp_path, embedder=bm25_embedder)
    tasks = run.result.llm_tasks
    assert split_counts(tasks, SOURCE_PREFIX)["survey"] == {"rules": 3 * len(QUESTIONS)}
    assert "survey" not in split_counts(tasks, MEANING_PREFIX)
    assert all(r["value"] is not None for r in _rows(tmp_path) if r["question_id"] != "day")


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (  # SmolLM2's, kept first try: a line to a neighbour, not the answer
            "Gia, welcome to our home. I'm so glad you're enjoying the meal.",
            "not_first_person",
        ),
        ("Umar Smith, I'm looking after things at home.", "not_first_person"),
        (  # SmolLM2's, kept first try: a transcript's line
            "Gia Park: In the evening, in a room with multiple people, she explained things.",
            "narrated",
        ),
        (  # SmolLM2's, kept first try to "How was your day?": a greeting to a neighbour
            "Hi Gia, I was thinking about basic. I wanted to make sure you had enough money.",
            "not_first_person",
        ),
        ("Hey Umar! I stayed home.", "not_first_person"),
        ("Hi, I went to work early.", None),
        ("Hello there, I went to work early.", None),
        ("Note: I went to work early.", None),
        ("Well, I went to work and then home.", None),
        ("Gia and I went to the park.", None),
        ("Honestly, I stayed home all morning.", None),
    ],
)
def test_an_answer_calling_someone_of_the_town_is_said_to_them(text: str, kind) -> None:
    question = "What did you do this morning?"
    people = Population(["Ann Lee", "Gia Park", "Umar Smith", "Eva Evans"])
    ctx = {"question": question, "name": "Ann Lee", "kind": "open", "people": people}
    prompt = Prompt.of([{"role": "user", "content": f"Question: {question}"}])
    failure = check("survey", SurveyAnswer(answer=text, value=None), prompt, ctx)
    assert (failure.kind if failure else None) == kind, failure


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # SmolLM2's, kept first try as the money at hand: the status line's keys and values
        ("1561.932, activity:relax after the meal, attitude:Hope.", "copied_prompt"),
        ("1561.932, activity = relax at home, education = bachelor", "copied_prompt"),
        ("About 1561; my activity today was relaxing at home.", None),
        ("1561, education: bachelor.", None),  # one label alone may be the person's own
    ],
)
def test_an_answer_in_the_status_lines_layout_is_copied(text: str, kind) -> None:
    status = {**STATUS, "attitude": {"basic income": 6.4}}
    ctx = {"question": NUMBER["text"], "name": "Paul Rossi", "status": status, **NUMBER}
    prompt = Prompt.of([{"role": "user", "content": f"Question: {NUMBER['text']}"}])
    failure = check("survey", SurveyAnswer(answer=text, value=1561.932), prompt, ctx)
    assert (failure.kind if failure else None) == kind, failure


async def test_a_report_says_which_tasks_a_model_answered(tmp_path, bm25_embedder) -> None:
    """Surveys on a model, the rest on the rules policy: the caveat names the survey only."""
    from societas.cluster.loop.local import run_local_async
    from societas.cluster.report.activity import llm_figure
    from societas.cluster.report.card import RULES_CAVEAT, rules_caveat, run_card
    from societas.cluster.report.data import RunData

    def say(body: dict[str, Any]) -> str:
        text = user_text(body)
        return next(json.dumps(fine) for s, _, fine in QUESTIONS.values() if s["text"] in text)

    async with chat_server(say) as (url, _):
        large = {**endpoint(url), "name": "large"}
        llm = {"endpoints": [large], "routes": {"survey": "large", "default": "rules"}}
        data = town(ticks=3, llm=llm, surveys=[SURVEY])
        await run_local_async(data, tmp_path, embedder=bm25_embedder)
    run = RunData(tmp_path)
    assert run.is_rules and run.model_tasks == ["survey"]
    caveat = rules_caveat(run)
    assert caveat.startswith("A language model (parrot) answered only these tasks: survey.")
    assert caveat != RULES_CAVEAT
    calls = run_card(run)["LLM calls"]
    assert "(parrot: " in calls and ", rules (not a language model): " in calls, calls
    figure, _ = llm_figure(run)
    assert figure is not None
    assert (
        figure.layout.yaxis.title.text
        == "tokens (the model's counted, the rules policy's estimated)"
    )
    rules_only = tmp_path / "rules"
    await run_local_async(town(ticks=3), rules_only, embedder=bm25_embedder)
    assert rules_caveat(RunData(rules_only)) == RULES_CAVEAT
    figure, _ = llm_figure(RunData(rules_only))
    assert figure is not None
    assert figure.layout.yaxis.title.text == "estimated tokens (rules policy: no model called)"
