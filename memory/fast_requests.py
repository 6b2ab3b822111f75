"""Requests from the per-agent views without a pydantic pass for the common simple calls.

`stream.add(topic, text, importance)` and `stream.search(query, top_k=k)` run per agent per
tick; pydantic validation of their request costs ~4 µs each. When every argument is of the
plain type the model would accept unchanged (a non-blank str, a float in [0, 1], an int in
range, None), the same checks are made here and the request built directly; anything else
goes through the model, with its errors.
"""

from __future__ import annotations

from typing import Any

from societas.memory.records import AddRequest, SearchRequest, trusted

DEFAULT_TIERS = ("hot", "warm")
_ADD_FIELDS = set(AddRequest.model_fields)  # every field: shared by the requests made here
_SEARCH_FIELDS = set(SearchRequest.model_fields)
_NONE_ONLY = ("day_range", "time_range", "location", "types", "tags", "layers")


def add_request(
    agent_id: int,
    topic: Any,
    description: Any,
    importance: Any,
    location: Any,
    record: dict[str, Any],
) -> AddRequest:
    """An AddRequest equal to `AddRequest(...)` of the same arguments."""
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
        return trusted(
            AddRequest,
            {
                "agent_id": agent_id,
                "topic": topic,
                "description": description,
                "importance": importance,
                "location": location,
                "type": "episodic",
                "tags": (),
                "metadata": None,
                "expires_at": None,
            },
            _ADD_FIELDS,
        )
    return AddRequest(
        agent_id=agent_id,
        topic=topic,
        description=description,
        importance=importance,
        location=location,
        **record,
    )


def simple_search_request(agent_id: Any, query: Any, topic: Any, top_k: Any) -> SearchRequest:
    """`search_request` of a call that left every other argument at its default."""
    if (
        type(query) is str
        and query.strip()
        and (topic is None or type(topic) is str)
        and type(top_k) is int
        and 1 <= top_k <= 1000
        and type(agent_id) is int
    ):
        return trusted(
            SearchRequest,
            {
                "agent_id": agent_id,
                "query": query,
                "topic": topic,
                "top_k": top_k,
                "day_range": None,
                "time_range": None,
                "location": None,
                "tiers": DEFAULT_TIERS,
                "expand": False,
                "types": None,
                "tags": None,
                "layers": None,
            },
            _SEARCH_FIELDS,
        )
    return SearchRequest(agent_id=agent_id, query=query, topic=topic, top_k=top_k)


def search_request(agent_id: Any, query: Any, topic: Any, top_k: Any, **rest: Any) -> SearchRequest:
    """A SearchRequest equal to `SearchRequest(...)` of the same arguments."""
    if (
        rest["tiers"] == DEFAULT_TIERS
        and rest["expand"] is False
        and all(rest[k] is None for k in _NONE_ONLY)
    ):
        return simple_search_request(agent_id, query, topic, top_k)
    return SearchRequest(agent_id=agent_id, query=query, topic=topic, top_k=top_k, **rest)
