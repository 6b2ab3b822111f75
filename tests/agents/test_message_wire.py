"""Messages as the driver makes and Ray ships them: compact, and equal to validated ones."""

from __future__ import annotations

import pickle
import tracemalloc

from societas.agents.runtime.protocol import Message
from societas.cluster.loop.coordinator import Coordinator


def test_pickled_message_is_the_same_message() -> None:
    sent = Message(tick=3, sender=7, recipient=9, kind="chat", payload={"text": "hi", "n": [1, 2]})
    got = pickle.loads(pickle.dumps(sent))
    assert got == sent
    assert got.model_fields_set == sent.model_fields_set
    assert got.model_dump_json() == sent.model_dump_json()


def test_encounter_messages_equal_validated_ones_and_share_payloads() -> None:
    coordinator = Coordinator([], seed=5)
    positions = {i: f"place {i % 4}" for i in range(200)}
    made = coordinator.encounter_messages(positions, tick=2)
    assert made, "200 agents at 4 places meet"
    for m in made:
        assert m == Message(
            tick=2, sender=m.sender, recipient=m.recipient, kind="encounter",
            payload={"place": positions[m.sender]},
        )  # fmt: skip
        assert positions[m.recipient] == m.payload["place"]
    assert len({id(m.payload) for m in made}) == len({m.payload["place"] for m in made})
    shipped = pickle.loads(pickle.dumps(made))
    assert shipped == made
    assert len({id(m.payload) for m in shipped}) == len({m.payload["place"] for m in shipped})


def _bytes_of(make: object) -> int:
    tracemalloc.start()
    kept = make()  # type: ignore[operator]
    size = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert len(kept) == 5000
    return size


def test_trusted_messages_take_a_fraction_of_validated_ones() -> None:
    payload = {"place": "cafe"}
    validated = _bytes_of(
        lambda: [
            Message(tick=1, sender=i, recipient=i + 1, kind="encounter", payload={"place": "cafe"})
            for i in range(5000)
        ]
    )
    trusted = _bytes_of(
        lambda: [Message.trusted(1, i, i + 1, "encounter", payload) for i in range(5000)]
    )
    assert trusted < validated / 2.5
