"""In-memory view of the offers in stock, so inline queries (one per keystroke) never wait on the database.

The whole in-stock set is small (thousands of configurations at most) and changes only when a poll is ingested,
so it is reloaded after each ingest (and on start); between reloads every read is a list scan in memory.
Offers are grouped by (GPU, count) because fitting depends only on that pair: a workload is checked once per
distinct pair, not once per offer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from core.matching import Target


@dataclass(frozen=True, slots=True)
class CachedOffer:
    key: str
    provider: str
    gpu: str | None  # catalog id
    gpu_name: str
    gpu_count: int
    location: str
    billing: str
    price_per_gpu_hour_rub: float | None
    price_per_gpu_hour_usd: float | None
    url: str
    available: int | None = None
    fraction: float | None = None  # share of one card when the offer is a slice of it (vGPU / MIG)
    # The whole configuration per hour (what the user pays), worked out once: ranking reads it for every offer.
    per_hour_rub: float | None = field(init=False, default=None)
    per_hour_usd: float | None = field(init=False, default=None)
    sort_rub: float = field(init=False, default=float("inf"))  # per_hour_rub, unknown prices last
    sort_usd: float = field(init=False, default=float("inf"))

    def __post_init__(self) -> None:
        rub, usd, n = self.price_per_gpu_hour_rub, self.price_per_gpu_hour_usd, self.gpu_count
        object.__setattr__(self, "per_hour_rub", None if rub is None else rub * n)
        object.__setattr__(self, "per_hour_usd", None if usd is None else usd * n)
        object.__setattr__(self, "sort_rub", float("inf") if rub is None else rub * n)
        object.__setattr__(self, "sort_usd", float("inf") if usd is None else usd * n)

    def per_gpu_hour(self, currency: str) -> float | None:
        return self.price_per_gpu_hour_usd if currency == "USD" else self.price_per_gpu_hour_rub

    def per_hour(self, currency: str) -> float | None:
        return self.per_hour_usd if currency == "USD" else self.per_hour_rub

    def target(self) -> Target:
        """The matchable form core's matcher uses, so "what matches now" agrees with what alerts will say."""
        return Target(self.key, self.provider, self.gpu, self.gpu_count, self.billing, self.location,
                      self.price_per_gpu_hour_rub, self.price_per_gpu_hour_usd)

    @classmethod
    def from_stored(cls, stored: Any) -> CachedOffer:
        """From a `storage.queries.StoredOffer` (the offer as listed plus its normalised prices)."""
        o = stored.offer
        return cls(key=o.key, provider=o.provider, gpu=o.gpu, gpu_name=o.gpu_name, gpu_count=o.gpu_count,
                   location=o.location or "", billing=o.billing.value, url=o.url or "", available=o.available,
                   fraction=o.fraction,
                   price_per_gpu_hour_rub=stored.price_per_gpu_hour_rub,
                   price_per_gpu_hour_usd=stored.price_per_gpu_hour_usd)


Loader = Callable[[], Awaitable[Iterable[CachedOffer]]]


class OfferCache:
    """The current in-stock offers, cheapest configuration per hour first, reloaded by `refresh()`."""

    def __init__(self, loader: Loader) -> None:
        self._loader = loader
        self._offers: tuple[CachedOffer, ...] = ()
        self._by_config: dict[tuple[str | None, int, float | None], tuple[CachedOffer, ...]] = {}
        # (card, count, fraction, spot) -> offers by whole-configuration price, once per currency: `groups()`
        self._groups: dict[str, dict[tuple[str | None, int, float | None, bool], tuple[CachedOffer, ...]]] = {}
        self._lock = asyncio.Lock()
        self.loaded_at: float | None = None  # monotonic time of the last refresh
        self.version = 0  # bumps on every refresh: estimate caches keyed on it stay coherent

    async def refresh(self) -> int:
        async with self._lock:  # two ingests finishing together reload once each, never interleaved
            offers = sorted(await self._loader(), key=_price_key)
            by_config: dict[tuple[str | None, int, float | None], list[CachedOffer]] = {}
            for offer in offers:
                by_config.setdefault((offer.gpu, offer.gpu_count, offer.fraction), []).append(offer)
            self._offers = tuple(offers)
            self._by_config = {k: tuple(v) for k, v in by_config.items()}
            groups: dict[tuple[str | None, int, float | None, bool], list[CachedOffer]] = {}
            for offer in offers:
                groups.setdefault((offer.gpu, offer.gpu_count, offer.fraction, offer.billing == "spot"),
                                  []).append(offer)
            self._groups = {"RUB": {k: tuple(v) for k, v in groups.items()},
                            "USD": {k: tuple(sorted(v, key=_usd_key)) for k, v in groups.items()}}
            self.loaded_at = time.monotonic()
            self.version += 1
            return len(offers)

    def __len__(self) -> int:
        return len(self._offers)

    def all(self) -> tuple[CachedOffer, ...]:
        return self._offers

    def filter(self, *, gpu_ids: Iterable[str] | None = None,
               fits: Callable[[str, int, float | None], bool] | None = None) -> list[CachedOffer]:
        """In-stock offers, cheapest configuration per hour first, of the given GPUs and/or whose (GPU, count,
        slice fraction) `fits`."""
        wanted = set(gpu_ids) if gpu_ids else None
        keep: list[CachedOffer] = []
        for (gpu, count, fraction), offers in self._by_config.items():
            if gpu is None:
                continue  # an unknown card can be neither named nor fitted
            if wanted is not None and gpu not in wanted:
                continue
            if fits is not None and not fits(gpu, count, fraction):
                continue
            keep.extend(offers)
        keep.sort(key=_price_key)
        return keep


    def groups(self, currency: str, *, gpu_ids: Iterable[str] | None = None,
               fits: Callable[[str, int, float | None], bool] | None = None,
               unknown: bool = False) -> list[tuple[CachedOffer, ...]]:
        """Like `filter`, as groups of one (card, count, slice, spot) each, every group by whole-configuration price
        in `currency`: what `core.ranking.rank_groups` merges without sorting thousands of offers per answer."""
        wanted = set(gpu_ids) if gpu_ids else None
        out: list[tuple[CachedOffer, ...]] = []
        for (gpu, count, fraction, _spot), offers in self._groups.get(currency, self._groups.get("RUB", {})).items():
            if gpu is None:
                if unknown and wanted is None and fits is None:  # the whole list: cards we cannot name too
                    out.append(offers)
                continue
            if wanted is not None and gpu not in wanted:
                continue
            if fits is not None and not fits(gpu, count, fraction):
                continue
            out.append(offers)
        return out


# What the whole configuration costs per hour, unknown prices last; then the key, for a stable order.
_price_key = attrgetter("sort_rub", "key")
_usd_key = attrgetter("sort_usd", "key")
