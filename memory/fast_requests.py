"""Requests from the per-agent views without a pydantic pass for the common simple calls.

`stream.add(topic, text, importance)` and `stream.search(query, top_k=k)` run per agent per
tick; pydantic validation of their request costs ~4 µs each. When every argument is of the
plain type the model would accept unchanged (a non-blank str, a float in [0, 1], an int in
range, None), the same checks are made here and the request built directly; anything else
goes through the model, with its errors. A plain add is queued as a `PlainAdd` tuple with the
AddRequest's fields (the writer reads the same attributes): ~0.3 µs against ~1 µs for the
model's trusted construction; a plain search is a `PlainSearch` with SearchRequest's fields
(the search reads attributes; `search_model` gives the model where one is needed).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from societas.memory.records import AddRequest, SearchRequest, trusted

DEFAULT_TIERS = ("hot", "warm")
_SEARCH_FIELDS = set(SearchRequest.model_fields)


class PlainAdd(NamedTuple):
    """A checked `stream.add` with no typed-record fields: the AddRequest it equals, as a
    tuple with the same field names, order and defaults (`AddRequest(**add._asdict())`)."""

    agent_id: int
    topic: str
    description: str
    importance: float | None
    location: str | None
    type: str = "episodic"
    tags: tuple[str, ...] = ()
    metadata: None = None
    expires_at: None = None


class PlainSearch(NamedTuple):
    """A checked `stream.search(query, topic, top_k)` with nothing else: the SearchRequest it
    equals, as a tuple with the same field names, order and defaults."""

    agent_id: int
    query: str
    topic: str | None = None
    top_k: int = 3
    day_range: None = None
    time_range: None = None
    location: None = None
    tiers: tuple[str, ...] = DEFAULT_TIERS
    expand: bool = False
    types: None = None
    tags: None = None
    layers: None = None


_new_tuple = tuple.__new__
_UNSET_RANGES = (None, None, None)  # day_range, time_range, location
_UNSET_FILTERS = (None, None, None)  # types, tags, layers


def search_model(request: SearchRequest | PlainSearch) -> SearchRequest:
    """The request as the pydantic model (a `PlainSearch` made into the one it equals)."""
    if isinstance(request, PlainSearch):
        return trusted(SearchRequest, request._asdict(), _SEARCH_FIELDS)
    return request


def add_request(
    agent_id: int,
    topic: Any,
    description: Any,
    importance: Any,
    location: Any,
    record: dict[str, Any],
) -> AddRequest | PlainAdd:
    """An AddRequest equal to `AddRequest(...)` of the same arguments (a `PlainAdd` for the
    plain call)."""
    if (
        not record
        and type(topic) is str
        and 1 <= len(topic) <= 64
        and type(description) is str
        and description.strip()
        and (importance is None or (type(importance) is float and 0.0 <= importance <= 1.0))
        and (location is None or type(location) is str)
        and type(agent_id) is int
    ):
        return _new_tuple(  # the defaults spelled out: no Python-level __new__ call
            PlainAdd,
            (agent_id, topic, description, importance, location, "episodic", (), None, None),
        )
    return AddRequest(
        agent_id=agent_id,
        topic=topic,
        description=description,
        importance=importance,
        location=location,
        **record,
    )


def search_request(
    agent_id: Any,
    query: Any,
    topic: Any,
    top_k: Any,
    day_range: Any = None,
    time_range: Any = None,
    location: Any = None,
    tiers: Any = DEFAULT_TIERS,
    expand: Any = False,
    types: Any = None,
    tags: Any = None,
    layers: Any = None,
) -> SearchRequest | PlainSearch:
    """A SearchRequest equal to `SearchRequest(...)` of the same arguments (sequences taken
    as tuples; a `PlainSearch` for the plain call). Named parameters, not a keyword dict."""
    if (
        type(query) is str
        and query.strip()
        and (topic is None or type(topic) is str)
        and type(top_k) is int
        and 1 <= top_k <= 1000
        and type(agent_id) is int
        and tiers == DEFAULT_TIERS
        and expand is False
        and day_range is None
        and time_range is None
        and location is None
        and types is None
        and tags is None
        and layers is None
    ):
        return _new_tuple(  # the defaults spelled out: no Python-level __new__ call
            PlainSearch,
            (agent_id, query, topic, top_k, *_UNSET_RANGES, DEFAULT_TIERS, False, *_UNSET_FILTERS),
        )
    return SearchRequest(
        agent_id=agent_id,
        query=query,
        topic=topic,
        top_k=top_k,
        day_range=day_range,
        time_range=time_range,
        location=location,
        tiers=tuple(tiers),
        expand=expand,
        types=None if types is None else tuple(types),
        tags=None if tags is None else tuple(tags),
        layers=None if layers is None else tuple(layers),
    )
