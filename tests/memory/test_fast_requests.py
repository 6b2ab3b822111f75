"""Requests built without pydantic equal the validated ones; bad input still fails clearly."""

from __future__ import annotations

import math

import pydantic
import pytest

from societas.memory.fast_requests import (
    PlainAdd,
    PlainSearch,
    add_request,
    search_model,
    search_request,
)
from societas.memory.records import AddRequest, SearchRequest

ADDS = [
    ("event", "a storm came", None, None, {}),
    ("event", "a storm came", 0.25, "park", {}),
    ("e" * 64, "text", 1.0, None, {}),
    ("event", "text", 1, None, {}),  # int importance: the model makes it 1.0
    ("event", "text", 0.5, None, {"tags": ["a", "a", "b"], "metadata": {"k": 1}}),
    ("event", "text", None, None, {"type": "semantic", "expires_at": 10.0}),
]


@pytest.mark.parametrize(("topic", "text", "importance", "location", "record"), ADDS)
def test_add_request_equals_the_validated_model(topic, text, importance, location, record):
    fast = add_request(3, topic, text, importance, location, dict(record))
    slow = AddRequest(
        agent_id=3,
        topic=topic,
        description=text,
        importance=importance,
        location=location,
        **record,
    )
    plain = not record and type(importance) is not int  # an int importance: the model's 1.0
    assert type(fast) is (PlainAdd if plain else AddRequest)
    if plain:  # every field of the model, same values, same order
        assert fast._asdict() == slow.model_dump() == slow.__dict__
        assert list(fast._fields) == list(AddRequest.model_fields)
        return
    assert fast == slow and fast.model_dump() == slow.model_dump()
    with pytest.raises(pydantic.ValidationError):
        fast.topic = "frozen"  # type: ignore[misc]


def test_a_plain_add_is_immutable():
    with pytest.raises(AttributeError):
        add_request(3, "event", "text", None, None, {}).topic = "x"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("topic", "text", "importance", "field"),
    [
        ("", "text", None, "topic"),
        ("e" * 65, "text", None, "topic"),
        ("event", "   ", None, "description"),
        ("event", 42, None, "description"),
        ("event", "text", 1.5, "importance"),
        ("event", "text", math.nan, "importance"),
        ("event", "text", -0.1, "importance"),
    ],
)
def test_bad_add_arguments_fail_as_the_model_does(topic, text, importance, field):
    with pytest.raises(pydantic.ValidationError, match=field):
        add_request(3, topic, text, importance, None, {})


SEARCH_DEFAULTS = {
    "day_range": None,
    "time_range": None,
    "location": None,
    "tiers": ("hot", "warm"),
    "expand": False,
    "types": None,
    "tags": None,
    "layers": None,
}


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"topic": "social"},
        {"top_k": 1000},
        {"day_range": (1, 2)},
        {"tiers": ("hot",)},
        {"tags": ("a",)},
        {"expand": True, "location": "park"},
    ],
)
def test_search_request_equals_the_validated_model(changes):
    args = {"topic": None, "top_k": 3, **SEARCH_DEFAULTS, **changes}
    fast = search_request(5, "storm market", **args)
    slow = SearchRequest(agent_id=5, query="storm market", **args)
    plain = not changes or set(changes) <= {"topic", "top_k"}
    _assert_equal(fast, slow, plain)


def _assert_equal(fast, slow: SearchRequest, plain: bool) -> None:
    """`fast` is the request `slow` is: a PlainSearch with its fields, values and order (and
    the very model through `search_model`) for the plain call, else the model itself."""
    assert type(fast) is (PlainSearch if plain else SearchRequest)
    if plain:
        assert fast._asdict() == slow.model_dump() == slow.__dict__
        assert list(fast._fields) == list(SearchRequest.model_fields)
        model = search_model(fast)
        assert type(model) is SearchRequest and model == slow
        assert model.model_dump() == slow.model_dump()
        assert model.model_fields_set == slow.model_fields_set | set(SearchRequest.model_fields)
        with pytest.raises(AttributeError):
            fast.top_k = 7  # type: ignore[misc]
        return
    assert fast == slow and fast.model_dump() == slow.model_dump()
    assert search_model(fast) is fast


@pytest.mark.parametrize(
    ("query", "top_k", "field"),
    [("  ", 3, "query"), (None, 3, "query"), ("q", 0, "top_k"), ("q", 1001, "top_k")],
)
def test_bad_search_arguments_fail_as_the_model_does(query, top_k, field):
    with pytest.raises(pydantic.ValidationError, match=field):
        search_request(5, query, None, top_k, **SEARCH_DEFAULTS)


@pytest.mark.parametrize(("topic", "top_k"), [(None, 3), ("social", 1), (None, 1000)])
def test_the_plain_search_call_equals_the_validated_model(topic, top_k):
    """`stream.search(query, topic, top_k)` with nothing else: the request built directly."""
    fast = search_request(5, "storm market", topic, top_k)
    slow = SearchRequest(agent_id=5, query="storm market", topic=topic, top_k=top_k)
    _assert_equal(fast, slow, plain=True)


@pytest.mark.parametrize(("query", "top_k", "field"), [("  ", 3, "query"), ("q", 0, "top_k")])
def test_bad_plain_search_arguments_fail_as_the_model_does(query, top_k, field):
    with pytest.raises(pydantic.ValidationError, match=field):
        search_request(5, query, None, top_k)


def test_requests_sharing_a_fields_set_do_not_change_each_other():
    """The fast requests share one set of field names; copying one with changes leaves
    that set, and so every other request, as it was."""
    first = search_model(search_request(5, "storm", None, 3))
    second = search_model(search_request(6, "market", None, 3))
    before = set(second.model_fields_set)
    changed = first.model_copy(update={"top_k": 7})
    assert changed.top_k == 7 and first.top_k == 3
    assert second.model_fields_set == before


def test_a_plain_batch_transposed_in_c_equals_the_python_pass(tmp_path):
    """A writer batch of PlainAdds (some with no importance, a reflection, a location, a
    tag) gives the same columns through the C transpose as through the pass a request."""
    import random

    from societas.memory import GroupMemory, GroupMemoryConfig
    from societas.memory.stream_write import PLAIN_COLUMNS_AT, _columns, _plain_columns

    group = GroupMemory(GroupMemoryConfig(), root=tmp_path)
    group._agents.update(range(50))
    rng = random.Random(7)
    batch = [
        add_request(
            rng.randrange(50),
            rng.choice(["event", "social", "reflection"]),
            f"memory {i}",
            rng.choice([None, 0.0, 0.5, 1.0]),
            rng.choice([None, "park"]),
            {},
        )
        for i in range(3 * PLAIN_COLUMNS_AT)
    ]
    assert {type(r) for r in batch} == {PlainAdd}
    fast, slow = _plain_columns(group, batch), _columns(group, batch)
    assert fast is not None
    *fast_columns, fast_expiries, fast_typed = fast
    *slow_columns, slow_expiries, slow_typed = slow
    assert [list(c) for c in fast_columns] == [list(c) for c in slow_columns]
    assert fast_expiries is None and slow_expiries == [None] * len(batch)  # both: never
    assert fast_typed == slow_typed == []
    tagged = [*batch[:5], batch[5]._replace(tags=("x",)), *batch[6:]]  # a tag: kept aside
    assert _plain_columns(group, tagged)[-1] == _columns(group, tagged)[-1] == [5]
    mixed = [*batch[:-1], AddRequest(**batch[-1]._asdict())]  # a model: the Python pass
    assert _plain_columns(group, mixed) is None
    assert _plain_columns(group, batch[: PLAIN_COLUMNS_AT - 1]) is None  # small: Python
    group._agents.discard(batch[3].agent_id)
    with pytest.raises(KeyError, match=f"unknown agent {batch[3].agent_id}"):
        _plain_columns(group, batch)
