"""House rules that a change can break silently: no private internals of CPython, pydantic,
pyarrow, Ray or asyncio in the package; memory/ within its size; the README and RESULTS.md
short enough to read."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ("societas", "cluster", "agents", "memory")
# Private layouts and APIs the package must not touch (CPython objects, pydantic models,
# random, pyarrow expressions, Ray's internals, an event loop's thread).
PRIVATE = re.compile(
    r"\bob_item\b|\bdk_indices\b|\bma_keys\b|__pydantic_fields_set__|__pydantic_private__"
    r"|_randbelow|Expression\._call|ray\._private|\._thread_id\b"
)
SOURCES = ("*.py", "*.pyx", "*.pxd", "*.c", "*.h", "*.cpp")


def _sources(*tops: str) -> list[Path]:
    return sorted(p for top in tops for pattern in SOURCES for p in (ROOT / top).rglob(pattern))


def test_the_package_reads_no_private_internals() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in _sources(*PACKAGE)
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if PRIVATE.search(line)
    ]
    assert found == []


def test_memory_holds_at_most_11000_lines() -> None:
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in _sources("memory"))
    assert lines <= 11_000, f"memory/ holds {lines} lines of code"


def test_the_readme_and_results_are_at_most_300_lines() -> None:
    for doc in ("README.md", "benchmarks/RESULTS.md"):
        lines = len((ROOT / doc).read_text(encoding="utf-8").splitlines())
        assert lines <= 300, f"{doc} has {lines} lines"


def test_the_private_name_check_would_see_one() -> None:
    """The pattern above matches each name it is meant to catch."""
    caught = (
        "items->ob_item",
        "obj.__pydantic_fields_set__",
        "rng._randbelow(3)",
        "ray._private.worker",
        "loop._thread_id",
        "pc.Expression._call('f', [])",
    )
    for name in caught:
        assert PRIVATE.search(name), name
