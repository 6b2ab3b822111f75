"""The running loop and task without a system call: the same answers as asyncio's own
functions in a loop, across loops run one after another, in two threads each running its
own loop, outside any loop, and in a forked child."""

from __future__ import annotations

import asyncio
import os
import sys
import threading

import pytest

from societas.memory import running_loop as module
from societas.memory.running_loop import current_task, running_loop


async def _same_as_asyncio() -> None:
    for _ in range(3):  # the first call fills the cache, the others read it
        assert running_loop() is asyncio.get_running_loop()
        assert current_task() is asyncio.current_task()


def test_the_same_loop_and_task_as_asyncio_in_loops_run_one_after_another():
    for _ in range(3):
        asyncio.run(_same_as_asyncio())


def test_outside_a_loop_it_raises_as_asyncio_does_even_after_one_ran():
    asyncio.run(_same_as_asyncio())
    with pytest.raises(RuntimeError, match="no running event loop"):
        running_loop()


def test_two_threads_each_get_their_own_loop():
    seen: dict[str, tuple[object, object]] = {}
    gate = threading.Barrier(2)

    async def body(name: str) -> None:
        for _ in range(50):
            seen[name] = (running_loop(), asyncio.get_running_loop())
            assert seen[name][0] is seen[name][1]
            await asyncio.sleep(0)
        gate.wait()  # both loops run at once here

    threads = [threading.Thread(target=asyncio.run, args=(body(name),)) for name in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen["a"][0] is not seen["b"][0]


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12+: asyncio's own functions")
@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_forgets_the_parents_loop():
    async def fork_inside() -> int:  # returns the child's pid
        assert running_loop() is asyncio.get_running_loop()
        pid = os.fork()
        if pid == 0:  # the child: its copy of the loop is not running here
            try:
                forgot = module._last is None
                running_loop()
                os._exit(3)  # should have raised
            except RuntimeError:
                os._exit(0 if forgot else 4)
        return pid

    pid = asyncio.run(fork_inside())
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
