"""What a worker thread builds for a poll (a provider's JSON decoded, parsed into offers), out of the cyclic
collector's reach in a process that freezes its heap (gpuradar/heap.py: the bot, once started)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

from core.slices import collector_paused

_freezing = False  # whether `built_frozen` freezes: see `freeze_what_is_built`


def freeze_what_is_built(on: bool) -> None:
    """Say whether this process freezes its heap (gpuradar.heap: the bot does once started, and stops at stop), and
    so whether `built_frozen` freezes what a worker thread built. A process that does not (a test, a command) leaves
    its collector alone."""
    global _freezing
    _freezing = on


def freezing() -> bool:
    """Whether this process freezes what is built (`freeze_what_is_built`)."""
    return _freezing


@contextlib.contextmanager
def built_frozen() -> Iterator[None]:
    """`core.slices.collector_paused` for a worker thread building a big structure free of cycles (a provider's JSON
    decoded, parsed into offers), and, in a process that freezes its heap (`freeze_what_is_built`), what is alive at
    the end of the block frozen too. Pausing alone only defers the walk: everything the block allocated is then in
    the youngest generation, and the next young collection walks it all while holding the interpreter lock
    (0.12-0.26 s at 100,000 configurations, the bot's loop waiting), then the next older one its survivors
    (0.2-0.3 s). Frozen, no collection walks it; reference counting frees it when the poll is done. What else was
    young at that moment (the loop's own objects) is frozen with it: a cycle among those that dies later waits for
    the next full settle (gpuradar.heap.FULL_EVERY).

    So the young generations are collected first, before the pause: a young collection walks only what is young
    now (the loop's in-flight work, a few thousand objects), and the reference cycles already dead among it (a
    SQLAlchemy statement, an httpx exchange, both cyclic by construction) are freed instead of frozen. In the
    bench's soak, frozen between two full settles 2 minutes apart: statements' cycles 100 -> 14-24, httpx
    exchanges 10 -> 1 (what the loop made during the pause is still frozen: the collector cannot run then)."""
    if _freezing:
        gc.collect(1)
    with collector_paused():
        yield
        if _freezing:
            gc.freeze()
