"""Work done in slices, so an event loop that runs it keeps answering (issue 26: no stall over 50 ms).

A long computation is written once, as a generator that does its work and yields (nothing) wherever it may be
interrupted, then returns its result. `run_steps` runs it to the end at once (what a caller without a loop, or a
test, wants); `run_in_slices` runs it on the event loop, handing the loop back (`await asyncio.sleep(0)`: every
ready callback runs) once a slice has taken `budget` seconds. Both give exactly the same result: it is one piece of
code, driven two ways.

    def building(rows) -> Steps[dict]:
        out = {}
        for i, row in enumerate(rows):
            out[row.key] = row
            if i % 500 == 499:
                yield
        return out

    table = run_steps(building(rows))                 # all at once
    table = await run_in_slices(building(rows))       # on the loop, at most ~5 ms at a time

Threads do not help here: CPython runs one thread's bytecode at a time, and a C call over a long list (`map`,
`pickle.dumps`, `sorted`) holds the interpreter lock until it returns, whichever thread makes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
import time
from collections.abc import Generator, Iterator
from typing import TypeVar

T = TypeVar("T")
Steps = Generator[None, None, T]

BUDGET = 0.004  # seconds of work between two hand-backs to the loop
CHUNK = 1000  # items a step of a list-wide computation handles between two points where it may yield


def run_steps(steps: Steps[T]) -> T:
    """Run `steps` to the end, here and now; its result."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


async def run_in_slices(steps: Steps[T], budget: float = BUDGET) -> T:
    """Run `steps` on the running loop, yielding to it whenever a slice has run `budget` seconds; its result."""
    clock = time.perf_counter
    started = clock()
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value
        if clock() - started >= budget:
            await asyncio.sleep(0)
            started = clock()


def chunks(count: int, size: int = CHUNK) -> range:
    """The starts of `size`-long chunks of a list of `count` items."""
    return range(0, count, size)


_paused = 0
_was_enabled = False
_pause_lock = threading.Lock()


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """CPython's cyclic collector off while the block runs (nested and from any thread: on again when the last one
    ends, if it was on before the first). For a worker thread that allocates a big structure free of cycles (a
    provider's JSON decoded, parsed into offers): a full collection meanwhile walks all of it while holding the
    interpreter lock, and the event loop waits the whole time (measured at 100,000 configurations: collections of
    0.3-0.7 s during a parse). What the block leaves unreachable is freed by reference counting as usual."""
    global _paused, _was_enabled
    with _pause_lock:
        if _paused == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _pause_lock:
            _paused -= 1
            if _paused == 0 and _was_enabled:
                gc.enable()
