"""The /history charts one dispatcher drew lately, with their captions, for a few minutes.

Owned by the dispatcher (injected as `charts`), not by the module: a cache per process would hand one bot's chart of
another database to the next dispatcher built in the same process (the tests build many), and its captions name the
cheapest provider and the shares of that moment."""

from __future__ import annotations

import time
from collections import OrderedDict

CACHE_TTL = 300.0
CACHE_SIZE = 32  # charts of ~50 KB each

ChartKey = tuple[object, ...]


class ChartCache:
    def __init__(self, ttl: float = CACHE_TTL, size: int = CACHE_SIZE) -> None:
        self.ttl = ttl
        self.size = size
        self._charts: OrderedDict[ChartKey, tuple[float, bytes, str]] = OrderedDict()  # expiry, PNG, caption

    def get(self, key: ChartKey) -> tuple[bytes, str] | None:
        hit = self._charts.get(key)
        if hit is None or hit[0] < time.monotonic():
            self._charts.pop(key, None)
            return None
        self._charts.move_to_end(key)
        return hit[1], hit[2]

    def keep(self, key: ChartKey, png: bytes, caption: str) -> None:
        self._charts[key] = (time.monotonic() + self.ttl, png, caption)
        while len(self._charts) > self.size:
            self._charts.popitem(last=False)
