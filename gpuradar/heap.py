"""Keeping CPython's cyclic collector off the bot's event loop: long-lived state is frozen, again after each reload.

A full (generation 2) collection walks every tracked object it has not been told to skip, and the loop waits
meanwhile: with the offer cache, the availability cache's changes (`core.availability.Change` is a NamedTuple, and
a NamedTuple instance stays tracked even when it holds only atoms, where a plain tuple would be untracked by the
next collection: checked with `gc.is_tracked`) and the web app's prebuilt answers, bench/webapp.py measured 12-18
full collections per run of up to 175 ms each. `gc.freeze()` moves every tracked object into the permanent
generation, which no collection walks (https://docs.python.org/3/library/gc.html#gc.freeze); what is loaded after
start is frozen by `settle` once it is built: after each offer refresh (at most once per `AFTER_RELOAD_GAP`), and
every `SETTLE_EVERY` seconds for what questions loaded meanwhile (the availability cache, the prebuilt answers).

A settle collects only the young generations before it freezes (`gc.collect(1)`: what was allocated since the
latest collections, a few thousand objects), not the oldest: what reached it since the last settle is what a
reload built (100,000 offers, the start-up's imports), and a full collection walking that held the bot's loop for
it, 0.25-0.9 s at 100,000 configurations (bench/ingest_loop.py), the very stall freezing is for.

Memory: reference counting frees frozen objects as usual, so a replaced offer or answer (no cycles) goes at once.
Only a frozen object that ends up in an unreachable cycle stays until the heap is unfrozen (`gc.unfreeze()` moves
the permanent generation back into the oldest one) and collected: `settle` does that every `FULL_EVERY` seconds,
one full collection of the whole heap (what a process without freezing pays a dozen times a minute here; with
100,000 offers held it is itself a pause of the loop once an hour: 226-236 ms, 376,000 tracked objects of which
100,000 the cached offers, measured on the bot of bench/ingest_loop.py --configs 100000 after its three polls, 6 Dec
2026; 141-212 ms at bench/soak.py's scale). So does a cycle that died in the oldest generation between two settles:
it is frozen with the rest and reclaimed by the next full settle.
"""

from __future__ import annotations

import gc
import logging
import time
from dataclasses import dataclass

from scrapers.heap import freezing

log = logging.getLogger(__name__)

SETTLE_EVERY = 60.0  # seconds between settles when nothing asked for one (a reload's objects frozen by then)
AFTER_RELOAD_GAP = 10.0  # seconds: reloads closer together than this are frozen by one settle (back-to-back polls)
SETTLE_LOADED = 5000  # held availability changes loaded by one question that are frozen soon (not in SETTLE_EVERY)
SETTLE_SOON = 1.0  # seconds after such a load: the answer has gone out, and a burst of first questions is one settle
FULL_EVERY = 3600.0  # seconds between settles that unfreeze first (frozen cycles that died are reclaimed)
# Allocations less deallocations between young collections (CPython's default: 700). With the long-lived heap frozen
# a young collection walks only what is alive of the young, the in-flight work of a few requests, so ten times fewer
# of them cost less in all; and the oldest generation fills ten times slower (full collections: every 10 x 10 young
# ones). bench/webapp.py, interleaved runs: 2,131 young collections (1,367 ms of CPU) and 19 full ones (379 ms) at
# 700; 102 (736 ms) and 7 (112 ms) at 7,000.
YOUNG_THRESHOLD = 7000


@dataclass(slots=True)
class HeapSettler:
    """`settle()`: collect the young generations, then freeze what is left; every `full_every` seconds (from the
    first settle) unfreeze first and collect the whole heap.

    The first settle also raises the youngest generation's threshold to `YOUNG_THRESHOLD`. `frozen` says whether the
    heap is frozen; `release` hands it back to the collector, with its thresholds, at stop."""

    full_every: float = FULL_EVERY
    frozen: bool = False
    settles: int = 0
    fulls: int = 0
    last_ms: float = 0.0  # the latest settle's collection, ms (what the loop waited)
    longest_ms: float = 0.0
    reclaimed: int = 0  # unreachable objects found by the settles' collections, in all
    _last_full: float = 0.0
    _last: float = 0.0
    _thresholds: tuple[int, int, int] | None = None  # the collector's own, put back by `release`

    def settle(self, *, full: bool = False, gap: float = 0.0) -> int | None:
        """Returns the unreachable objects the collection found; None when the latest settle is under `gap` seconds
        old (nothing done: the next one freezes it). `full`: unfreeze first and collect everything, whatever the
        time."""
        t0 = time.monotonic()
        if gap and self.frozen and t0 - self._last < gap:
            return None
        self._raise_threshold()
        if not self.frozen and not self._last_full:
            self._last_full = t0  # the first full settle is `full_every` from now
        if full or t0 - self._last_full >= self.full_every:
            gc.unfreeze()
            self._last_full = t0
            self.fulls += 1
            found = gc.collect()
        else:
            found = gc.collect(1)  # the young ones only: see the module's docstring
        gc.freeze()
        self.frozen = True
        self.settles += 1
        self.reclaimed += found
        self._last = time.monotonic()
        self.last_ms = (self._last - t0) * 1000
        self.longest_ms = max(self.longest_ms, self.last_ms)
        if log.isEnabledFor(logging.DEBUG):  # counting the frozen objects walks them all: 50-80 ms at 100,000 offers
            log.debug("heap settled in %.1f ms: %d unreachable, %d frozen", self.last_ms, found, gc.get_freeze_count())
        return found

    def freeze_built(self) -> None:
        """Freeze now, collecting nothing first: for what was just built with the collector paused
        (`core.slices.collector_paused`), all of it in the youngest generation, where a collection would walk every
        object of it (the start-up's reading of 100,000 offers: 0.6-0.8 s). What else was young is frozen with it:
        a cycle among that which dies later waits for the next full settle, as in `settle`."""
        self._raise_threshold()
        if not self.frozen and not self._last_full:
            self._last_full = time.monotonic()
        gc.freeze()
        self.frozen = True

    def _raise_threshold(self) -> None:
        if self._thresholds is None:
            self._thresholds = gc.get_threshold()
            gc.set_threshold(max(YOUNG_THRESHOLD, self._thresholds[0]), *self._thresholds[1:])

    def release(self) -> None:
        """Hand the frozen objects back to the collector (at stop)."""
        if self.frozen:
            gc.unfreeze()
            self.frozen = False
        if self._thresholds is not None:
            gc.set_threshold(*self._thresholds)
            self._thresholds = None


def built_out_of_reach() -> None:
    """For the end of a build run with the collector paused (`core.slices.collector_paused`) before the heap was first
    frozen: what is alive now leaves the youngest generation without being walked. A process that freezes its heap
    (`scrapers.heap.freezing`), or has anything frozen already, freezes it (the settle to come would); one that has
    nothing frozen gets it in the oldest generation instead (`gc.freeze()` then `gc.unfreeze()`: two list splices),
    where the youngest collections' walks never reach it and a full collection, when one comes, walks it as it
    would have once it had survived the young ones.

    Why (issue 26): the start-up's warm-up (gpuradar/warm.py) allocates ~0.5 s of catalogs, compiled texts and
    Telegram types in a worker thread; the collector running meanwhile made two or three full collections of the
    whole young heap there, each holding the interpreter lock 115-125 ms while the bot's loop waited
    (bench/ingest_loop.py, a process's first start-up). Paused and left young, the first collection after would walk
    all of it instead. Never unfreezes what someone else froze: `gc.get_freeze_count()` walks only a frozen
    generation, empty where it is asked."""
    promote = not freezing() and gc.get_freeze_count() == 0
    gc.freeze()
    if promote:
        gc.unfreeze()  # all of it, and nothing else: the frozen generation was empty
