"""Keeping CPython's cyclic collector off the bot's event loop: long-lived state is frozen, again after each reload.

A full (generation 2) collection walks every tracked object it has not been told to skip, and the loop waits
meanwhile: with the offer cache, the availability cache's changes (`core.availability.Change` is a NamedTuple, and
a NamedTuple instance stays tracked even when it holds only atoms, where a plain tuple would be untracked by the
next collection: checked with `gc.is_tracked`) and the web app's prebuilt answers, bench/webapp.py measured 12-18
full collections per run of up to 175 ms each. `gc.freeze()` moves every tracked object into the permanent
generation, which no collection walks (https://docs.python.org/3/library/gc.html#gc.freeze); what is loaded after
start is frozen by `settle` once it is built: after each offer refresh (at most once per `AFTER_RELOAD_GAP`), and
every `SETTLE_EVERY` seconds for what questions loaded meanwhile (the availability cache, the prebuilt answers).

Memory: reference counting frees frozen objects as usual, so a replaced offer or answer (no cycles) goes at once.
Only a frozen object that ends up in an unreachable cycle stays until the heap is unfrozen (`gc.unfreeze()` moves
the permanent generation back into the oldest one) and collected: `settle` does that every `FULL_EVERY` seconds,
one full collection of the whole heap (what a process without freezing pays a dozen times a minute here). Each
`settle` collects first what is not frozen, so nothing already unreachable is frozen.
"""

from __future__ import annotations

import gc
import logging
import time
from dataclasses import dataclass

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
    """`settle()`: collect what is not frozen, then freeze what is left; every `full_every` seconds unfreeze first.

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
        old (nothing done: the next one freezes it). `full`: unfreeze first whatever the time."""
        t0 = time.monotonic()
        if gap and self.frozen and t0 - self._last < gap:
            return None
        if self._thresholds is None:
            self._thresholds = gc.get_threshold()
            gc.set_threshold(max(YOUNG_THRESHOLD, self._thresholds[0]), *self._thresholds[1:])
        if full or not self.frozen or t0 - self._last_full >= self.full_every:
            gc.unfreeze()
            self._last_full = t0
            self.fulls += 1
        found = gc.collect()
        gc.freeze()
        self.frozen = True
        self.settles += 1
        self.reclaimed += found
        self._last = time.monotonic()
        self.last_ms = (self._last - t0) * 1000
        self.longest_ms = max(self.longest_ms, self.last_ms)
        log.debug("heap settled in %.1f ms: %d unreachable, %d frozen", self.last_ms, found, gc.get_freeze_count())
        return found

    def release(self) -> None:
        """Hand the frozen objects back to the collector (at stop)."""
        if self.frozen:
            gc.unfreeze()
            self.frozen = False
        if self._thresholds is not None:
            gc.set_threshold(*self._thresholds)
            self._thresholds = None
