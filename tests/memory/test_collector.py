"""The garbage collector of a group's process: young collections rare, startup heap frozen."""

from __future__ import annotations

import gc
import weakref

import pytest

from societas.memory import collector
from societas.memory.collector import YOUNG_THRESHOLD, tune_collector


@pytest.fixture
def thresholds():
    """The process's collector thresholds, put back after the test."""
    saved = gc.get_threshold()
    yield
    gc.set_threshold(*saved)


class _Node:
    """An object that can be made part of a reference cycle."""

    link: object = None


def test_a_group_raises_the_young_threshold(group_factory, thresholds):
    gc.set_threshold(700, 10, 10)  # CPython's default
    group_factory("edge")
    assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
    assert gc.get_freeze_count() > 0  # the heap before the first group, frozen


def test_the_heap_is_collected_then_frozen_once(monkeypatch, thresholds):
    monkeypatch.setattr(collector, "_frozen", False)  # as in a fresh process
    cycle = _Node()
    cycle.link = cycle
    garbage = weakref.ref(cycle)
    del cycle
    tune_collector()
    assert garbage() is None  # freed before the freeze, not kept forever
    frozen = gc.get_freeze_count()
    assert frozen > 0
    tune_collector()  # a second group in the same process freezes nothing more
    assert gc.get_freeze_count() == frozen


def test_a_higher_or_disabled_threshold_is_left_alone(thresholds):
    gc.set_threshold(10**6, 5, 5)
    tune_collector()
    assert gc.get_threshold() == (10**6, 5, 5)
    gc.set_threshold(0, 10, 10)  # automatic collection off: the user's choice
    tune_collector()
    assert gc.get_threshold() == (0, 10, 10)
