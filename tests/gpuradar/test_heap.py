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
    assert settler.frozen and settler.fulls == 1  # this one: the first settle collected the young ones only


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


async def test_a_large_load_of_held_changes_is_frozen_soon_by_the_app(migrated_database_url: str) -> None:
    """gpuradar.app: a question that loaded many availability changes (a replica's first /when of a card) has them
    frozen within SETTLE_SOON of it, not at the next periodic settle; a small load waits for that one."""
    from gpuradar.app import App
    from gpuradar.heap import SETTLE_LOADED
    from gpuradar.settings import Settings
    from testkit.fake_telegram import FakeTelegram
    from testkit.waiting import until

    async with FakeTelegram() as tg:
        app = App(Settings(database_url=migrated_database_url, bot_token=tg.token, telegram_api_url=tg.base_url),
                  scrape=False, polling_timeout=1)
        await app.start()
        try:
            app.freeze_heap()
            cache = app.dispatcher["availability"]
            assert cache.on_load is not None
            settles = app.heap.settles
            cache.on_load(SETTLE_LOADED - 1)  # a few rows: nothing asked for
            assert app._settle_soon is not None and not app._settle_soon.is_set()
            held = [Change(float(i), True, 1.0, 80.0) for i in range(SETTLE_LOADED)]  # what a load holds
            cache.on_load(len(held))
            await until(lambda: app.heap.settles > settles, 50)  # well before the periodic settle (60 s)
            assert gc.get_freeze_count() >= len(held)  # the held rows among what was frozen
        finally:
            await app.stop()
        gc.unfreeze()
        gc.collect()


def test_a_settle_leaves_the_oldest_generation_to_the_full_ones(settler: HeapSettler) -> None:
    """A settle collects the young generations only: a cycle that died after reaching the oldest one is frozen with
    the rest (no full collection walks a reload's objects on the loop) and reclaimed by the next full settle."""
    settler.settle()
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    gone = weakref.ref(a)
    gc.collect(1)  # survived the young collections: in the oldest generation now
    del a, b
    settler.settle()
    assert gone() is not None
    settler.settle(full=True)
    assert gone() is None


def test_freeze_built_freezes_without_collecting(settler: HeapSettler) -> None:
    from core.slices import collector_paused

    with collector_paused():
        built = [Change(float(i), True, 1.0, 80.0) for i in range(1000)]
        settler.freeze_built()
    assert settler.frozen
    assert not any(o is built for o in gc.get_objects())  # frozen, out of every collection's walk


@pytest.fixture
def unfrozen() -> Iterator[None]:
    from scrapers.heap import freeze_what_is_built, freezing

    was = freezing()
    gc.unfreeze()
    freeze_what_is_built(False)
    try:
        yield
    finally:
        freeze_what_is_built(was)
        gc.unfreeze()
        gc.collect()


def _in(generation: int, obj: object) -> bool:
    return any(o is obj for o in gc.get_objects(generation))


def test_built_out_of_reach_puts_a_paused_build_in_the_oldest_generation_unfrozen(unfrozen: None) -> None:
    """gpuradar.heap.built_out_of_reach (the start-up's warm-up): in a process that has frozen nothing, what a paused
    build left young goes to the oldest generation, which no young collection walks, and nothing stays frozen."""
    from core.slices import collector_paused
    from gpuradar.heap import built_out_of_reach

    with collector_paused():
        built = [Change(float(i), True, 1.0, 80.0) for i in range(1000)]
        assert _in(0, built)
        built_out_of_reach()
    assert gc.get_freeze_count() == 0
    assert _in(2, built) and not _in(0, built) and not _in(1, built)
    assert gc.get_count()[0] < 100  # the allocations since the last young collection start again from none


def test_built_out_of_reach_freezes_in_a_process_that_freezes(unfrozen: None) -> None:
    from core.slices import collector_paused
    from gpuradar.heap import built_out_of_reach
    from scrapers.heap import freeze_what_is_built

    freeze_what_is_built(True)
    with collector_paused():
        built = [Change(float(i), True, 1.0, 80.0) for i in range(1000)]
        built_out_of_reach()
    assert gc.get_freeze_count() >= len(built)
    assert not any(o is built for o in gc.get_objects())


def test_built_out_of_reach_never_unfreezes_what_was_frozen(unfrozen: None) -> None:
    from core.slices import collector_paused
    from gpuradar.heap import built_out_of_reach

    earlier = [Change(float(i), True, 1.0, 80.0) for i in range(10)]
    gc.freeze()  # someone else's freeze, with the process not freezing what is built
    with collector_paused():
        built = [Change(float(i), True, 1.0, 80.0) for i in range(10)]
        built_out_of_reach()
    objects = gc.get_objects()
    assert not any(o is earlier for o in objects) and not any(o is built for o in objects)
