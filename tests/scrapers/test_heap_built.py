"""scrapers.heap.built_frozen: what a worker thread built for a poll is frozen only where the process freezes its
heap; the collector is on again afterwards either way."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from scrapers import heap


@pytest.fixture
def frozen_heap() -> Iterator[None]:
    heap.freeze_what_is_built(True)
    try:
        yield
    finally:
        heap.freeze_what_is_built(False)
        gc.unfreeze()
        gc.collect()


def test_nothing_is_frozen_where_the_process_does_not_freeze() -> None:
    assert not heap.freezing()
    with heap.built_frozen():
        assert not gc.isenabled()
        built = [[i] for i in range(100)]
    assert gc.isenabled()
    assert any(o is built for o in gc.get_objects())


def test_what_was_built_is_frozen_where_the_process_freezes(frozen_heap: None) -> None:
    with heap.built_frozen():
        built = [[i] for i in range(100)]
    assert gc.isenabled()
    assert not any(o is built for o in gc.get_objects())


class _Node:
    """A weak-referenceable object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


def test_dead_cycles_of_before_are_collected_not_frozen(frozen_heap: None) -> None:
    """What was garbage already when the build started goes, rather than stay frozen until the next full settle."""

    gc.collect()
    node = _Node()
    dead = weakref.ref(node)
    del node  # a cycle, unreachable, still young
    assert dead() is not None
    with heap.built_frozen():
        built = [[i] for i in range(100)]
    assert dead() is None
    assert not any(o is built for o in gc.get_objects())  # what was built is frozen all the same
