"""The driver's replay log: finished ticks packed in RAM (checkpoints on) or spilled to disk
(checkpoints off), and read back exactly as they were logged."""

from __future__ import annotations

import asyncio
import random
import tracemalloc

from societas.agents.runtime.protocol import Message, TurnRequest
from societas.cluster.observe.replay_log import ReplayLog


def _inbox(tick: int, n: int, seed: int = 0) -> list[Message]:
    rng = random.Random(seed + tick)
    return [
        Message(
            tick=tick,
            sender=rng.randrange(10**5),
            recipient=rng.randrange(10**5),
            kind="encounter",
            payload={"place": f"home {rng.randrange(3000)}"},
        )
        for _ in range(n)
    ]


def _round(tick: int) -> list[TurnRequest]:
    return [
        TurnRequest(
            conversation_id=f"c{tick}", tick=tick, kind="turn", speaker=1, listener=2, initiator=1
        )
    ]


def test_finished_ticks_are_packed_and_read_back_unchanged(tmp_path) -> None:
    async def go() -> None:
        log = ReplayLog()
        inboxes = {t: _inbox(t, 500) for t in range(4)}
        for t, inbox in inboxes.items():
            log.start(t, inbox)
            log.add_round(t, _round(t))
            if t < 3:
                await log.finished(t)
        assert log.in_ram == 4 and log.on_disk == 0 and log.first() == 0
        assert sorted(log._packed) == [0, 1, 2] and list(log._ram) == [3]  # objects: current
        for t, inbox in inboxes.items():
            back = await log.load(t)
            assert back.inbox == inbox and back.rounds == [_round(t)]
        log.start(1, inboxes[1])  # a redo of tick 1 starts it afresh
        assert 1 in log._ram and 1 not in log._packed and log.rounds_done(1) == 0
        log.drop_before(3)
        assert log.first() == 3 and log.in_ram == 1
        log.close()
        assert log.in_ram == 0 and log.first() is None

    asyncio.run(go())


def test_a_packed_tick_takes_a_small_fraction_of_its_objects() -> None:
    """What it is for: ~1.25 KB a message as pydantic objects, tens of bytes packed."""

    async def go() -> tuple[int, int]:
        log = ReplayLog()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        log.start(0, _inbox(0, 20_000))
        objects = tracemalloc.get_traced_memory()[0] - before
        await log.finished(0)
        packed = len(log._packed[0])
        tracemalloc.stop()
        return objects, packed

    objects, packed = asyncio.run(go())
    assert packed * 20 < objects, (packed, objects)


def test_spilled_ticks_leave_ram_and_come_back_from_disk(tmp_path) -> None:
    async def go() -> None:
        log = ReplayLog()
        log.spill_to(tmp_path / "replay" / "group-0000")
        inbox = _inbox(0, 100)
        log.start(0, inbox)
        await log.finished(0)
        assert log.in_ram == 0 and log.on_disk == 1
        assert (await log.load(0)).inbox == inbox
        log.close()
        assert not (tmp_path / "replay").exists()

    asyncio.run(go())
