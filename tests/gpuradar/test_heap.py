"""gpuradar.heap: what is loaded after start is frozen by a settle, and frozen cycles that die are reclaimed."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from core.availability import Change
from gpuradar.heap import YOUNG_THRESHOLD, HeapSettler


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


@pytest.fixture
def settler() -> Iterator[HeapSettler]:
    heap = HeapSettler(full_every=10**9)
    try:
        yield heap
    finally:
        heap.release()
        gc.unfreeze()
        gc.collect()


def test_a_settle_freezes_what_was_loaded_since(settler: HeapSettler) -> None:
    settler.settle()
    before = gc.get_freeze_count()
    loaded = [Change(float(i), True, 1.0, 80.0) for i in range(1000)]  # NamedTuples: tracked even of atoms
    assert all(gc.is_tracked(c) for c in loaded[:10])
    settler.settle()
    assert gc.get_freeze_count() >= before + len(loaded)
    assert not any(o is loaded for o in gc.get_objects())  # frozen: no collection walks it


def test_unreachable_is_collected_before_freezing(settler: HeapSettler) -> None:
    settler.settle()
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    gone = weakref.ref(a)
    del a, b
    assert settler.settle() >= 2  # found by the settle's own collection, not frozen
    assert gone() is None


def test_a_frozen_cycle_that_dies_is_reclaimed_by_a_full_settle(settler: HeapSettler) -> None:
    settler.settle()
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    gone = weakref.ref(a)
    settler.settle()  # frozen while alive
    del a, b
    settler.settle()  # not a full one: the dead cycle is frozen, out of reach
    assert gone() is not None
    settler.settle(full=True)
    assert gone() is None
    assert settler.frozen and settler.fulls == 2  # the first settle and this one


def test_release_hands_the_heap_back(settler: HeapSettler) -> None:
    settler.settle()
    assert gc.get_freeze_count() > 0
    settler.release()
    assert not settler.frozen
    assert gc.get_freeze_count() == 0


def test_a_settle_within_the_gap_does_nothing(settler: HeapSettler) -> None:
    settler.settle()
    assert settler.settle(gap=3600) is None
    assert settler.settles == 1
    assert settler.settle() is not None
    assert settler.settles == 2


def test_the_young_threshold_is_raised_while_settled_and_put_back() -> None:
    before = gc.get_threshold()
    heap = HeapSettler()
    try:
        heap.settle()
        assert gc.get_threshold()[0] >= YOUNG_THRESHOLD
        assert gc.get_threshold()[1:] == before[1:]
    finally:
        heap.release()
    assert gc.get_threshold() == before
