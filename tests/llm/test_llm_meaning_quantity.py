"""A survey number is data only when it stands for what its question asks: money for "How much
money do you have?", not a household's size ("a family of 2"), a count of kids or years; an
age, not money; a count of people, not money or hours. The number is judged by the words
around it where the answer writes it; a bare number, or one nothing around it names, stands."""

from __future__ import annotations

from typing import Any

import pytest

from societas.agents.llm.survey_checks import answer_problem, number_use

MONEY = {
    "kind": "number",
    "min": 0,
    "attribute": "currency",
    "question": "How much money do you have at hand?",
}
INCOME = {
    "kind": "number",
    "min": 0,
    "attribute": "income",
    "question": "What is your monthly income?",
}
AGE = {"kind": "number", "min": 0, "max": 120, "attribute": "age", "question": "How old are you?"}
PEOPLE = {"kind": "number", "min": 0, "question": "How many people did you talk to today?"}
SPEND = {"kind": "number", "question": "How many euros a month would the tax cost you?"}


@pytest.mark.parametrize(
    ("ctx", "text", "value", "kind"),
    [
        (  # SmolLM2's, kept first try with the value 2
            MONEY,
            "Nia told me, I have a family of 2. I will just make it my job to be happy.",
            2,
            "value_mismatch",
        ),
        (  # SmolLM2's, kept first try with the value 40
            MONEY,
            "Soccer team: Ivo has 40 points, I have a gold medal.",
            40,
            "value_mismatch",
        ),
        (MONEY, "I have a family of 2.", 2, "value_mismatch"),
        (MONEY, "I have a family of 2.", None, "value_mismatch"),  # the survey would read 2
        (MONEY, "I have 2 kids and a small flat.", 2, "value_mismatch"),
        (MONEY, "I have worked here for 2 years.", 2, "value_mismatch"),
        (MONEY, "I'm 34 and I have 500 saved.", 34, "value_mismatch"),
        (INCOME, "I earn 2,000 a month, enough for my family of 2", 2, "value_mismatch"),
        (AGE, "I have 2 kids.", 2, "value_mismatch"),
        (AGE, "I make $34 an hour.", 34, "value_mismatch"),
        (AGE, "We are a household of 4.", None, "value_mismatch"),
        (PEOPLE, "I spent $5 at the cafe.", 5, "value_mismatch"),
        (SPEND, "About 3 times a week I drive, so not much.", 3, "value_mismatch"),
        (MONEY, "We spent $2 on bread", 2, None),
        (MONEY, "2", 2, None),  # a bare number is the answer
        (MONEY, "I have 250 in my wallet.", 250, None),
        (MONEY, "About 300, I think.", 300, None),
        (MONEY, "I have 1,200 saved for my 2 kids.", 1200, None),
        (MONEY, "I'm 500 in debt.", 500, None),
        (MONEY, "I'm 500 short this month.", 500, None),  # "I'm N" then more: not an age
        (MONEY, "I have a family of 2 and $300 at hand.", 300, None),
        (INCOME, "I earn 2,000 a month, enough for my family of 2", 2000, None),
        (INCOME, "I earn 2,000 a month, enough for my family of 2", None, None),
        (INCOME, "3000 dollars before tax.", 3000, None),
        (AGE, "I am 34.", 34, None),
        (AGE, "34 years old, with 2 kids.", 34, None),
        (AGE, "I turned 34 last spring.", 34, None),
        (PEOPLE, "I talked to my 2 kids.", 2, None),
        (PEOPLE, "I talked to my family of 4 at lunch.", 4, None),
        (PEOPLE, "2 of my coworkers.", 2, None),
        (SPEND, "About 30 euros.", 30, None),
    ],
)
def test_a_number_answer_must_count_what_its_question_asks(
    ctx: dict[str, Any], text: str, value: float | None, kind: str | None
) -> None:
    found = answer_problem(text, value, ctx)
    assert (found[0] if found else None) == kind, found


@pytest.mark.parametrize(
    ("before", "after", "use"),
    [
        ("We spent $", " on bread", "money"),
        ("I earn ", " a month", "money"),
        ("I have ", "k saved", "money"),
        ("a family of ", ".", "group"),
        ("I'm ", " and single", "age"),
        ("my ", "-year-old son", "age"),
        ("I have ", " kids", "kid"),
        ("I have ", " children", "child"),
        ("for ", " years", "year"),
        ("I have ", " apples", "apple"),
        ("I have ", " in the bank", "money"),
        ("I have ", " plus tips", None),
        ("I have ", " left", None),
    ],
)
def test_what_a_number_stands_for_is_read_from_the_words_around_it(
    before: str, after: str, use: str | None
) -> None:
    assert number_use(before, after) == use
