"""Which subscriptions a cycle's offer changes reach — without looping over every subscription for every offer.

A subscription is matched in its `Watch` form: the GPUs it names, or the per-GPU memory its workload needs at each
GPU count (`core.fit.requirement(...).min_gib_by_count`), plus filters (price cap in RUB or USD, per hour for the
whole configuration or per GPU-hour as the user said it, providers, GPU count, billing, region). An offer is matched
in its `Target` form (provider, catalog GPU, count, billing, location, price per GPU-hour in RUB and USD).

`WatchIndex` files every watch under what it needs, so a lookup costs bisects, not a scan:
  provider (or "any") x billing (or "any") x the range of GPU counts the need applies to
    -> the GPU id it names, or the lowest catalog memory level that satisfies it (levels are the sorted distinct
       usable-GiB values of the catalog, so "fits an offer's GPU" is "level <= the offer's level")
      -> price caps sorted ascending per currency and basis (whole configuration per hour, or per GPU-hour), so
         "cap >= the offer's price" is one bisect and a slice.
Everything a lookup returns is a match (only the rare region filter and GPU-plus-memory watches are re-checked),
so the cost follows the number of matches, not the number of subscriptions.

Pure: no I/O. `Watch.matches` is the readable definition; the index must agree with it (tested with hypothesis).
"""

from __future__ import annotations

import math
import re
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from core.changes import EventKind, OfferEvent
from core.gpus import GPUS, get_gpu
from core.offers import Offer, PricedOffer

# The events a subscriber hears about; sold-out and price-rise news never alerts.
ALERT_KINDS = frozenset({EventKind.APPEARED, EventKind.BACK_IN_STOCK, EventKind.PRICE_DROP})
CURRENCIES = ("RUB", "USD")
# What a price cap bounds: what the user pays per hour for the whole configuration ("до 80 ₽/ч", "under $3/h"), or
# the price per GPU-hour when they said so ("$2/GPU-h", "за карту"). Subscriptions from before the basis was stored
# keep "gpu", the meaning they were stored with (migration 0012).
PRICE_BASES = ("total", "gpu")

# Memory levels: every distinct usable-GiB value in the catalog, ascending. An offer's GPU sits exactly on one.
LEVELS: tuple[float, ...] = tuple(sorted({g.usable_gib for g in GPUS}))
_USABLE: dict[str, float] = {g.id: g.usable_gib for g in GPUS}
_TOKEN = re.compile(r"[^a-z0-9]+")


def usable_gib(gpu_id: str | None) -> float | None:
    """What the offer's card really gives (core.gpus), or None for an unknown card (never guessed)."""
    return _USABLE.get(gpu_id) if gpu_id else None


def region_matches(region: str, location: str) -> bool:
    """'us' matches 'us-east-1' and 'US'; 'ru' does not match 'europe' (whole tokens, not substrings)."""
    want = region.strip().lower()
    have = location.strip().lower()
    if not want:
        return True
    if want == have:
        return True
    return want in {t for t in _TOKEN.split(have) if t}


@dataclass(frozen=True, slots=True)
class Target:
    """The matchable form of an offer after a change: who sells what, how many, where, for how much per GPU-hour."""

    key: str
    provider: str
    gpu: str | None
    gpu_count: int
    billing: str
    location: str
    price_rub: float | None  # per GPU-hour; None when no rate converts it
    price_usd: float | None
    # A slice of one card (vGPU / MIG): it gives that share of the card's memory, and it is not the card, so a
    # watch naming the card does not match it (a workload that fits the share does).
    fraction: float | None = None

    @property
    def usable(self) -> float | None:
        """Usable GiB per GPU this offer gives: the card's, or its share of it for a slice."""
        have = usable_gib(self.gpu)
        return have if have is None or self.fraction is None else have * self.fraction

    def price_in(self, currency: str) -> float | None:
        return self.price_rub if currency == "RUB" else self.price_usd

    def price_for(self, currency: str, basis: str) -> float | None:
        """The price a cap of this basis is compared with: per GPU-hour, or for the whole configuration per hour."""
        price = self.price_in(currency)
        return price if price is None or basis == "gpu" else price * self.gpu_count

    @classmethod
    def from_offer(cls, offer: Offer, price_rub: float | None, price_usd: float | None) -> Target:
        # Without exchange rates the offer's own currency still compares against a cap in that currency.
        own = offer.price_per_gpu_hour
        if price_rub is None and offer.currency.upper() in ("RUB", "RUR"):
            price_rub = own
        if price_usd is None and offer.currency.upper() == "USD":
            price_usd = own
        return cls(offer.key, offer.provider, offer.gpu, offer.gpu_count, offer.billing.value, offer.location,
                   price_rub, price_usd, offer.fraction)

    @classmethod
    def from_event(cls, event: OfferEvent) -> Target:
        return cls.from_offer(event.offer, event.new_price_rub, event.new_price_usd)

    @classmethod
    def from_priced(cls, priced: PricedOffer) -> Target:
        return cls.from_offer(priced.offer, priced.price_per_gpu_hour_rub, priced.price_per_gpu_hour_usd)


@dataclass(frozen=True, slots=True)
class Watch:
    """The matchable form of a subscription. None in a filter means "any"."""

    id: int
    gpu_ids: frozenset[str] | None = None
    # Per-GPU memory a workload needs (GiB) by GPU count; an offer with n GPUs uses the entry for the largest count
    # <= n (more GPUs never need more per GPU, so this errs towards silence, never towards a false alert).
    min_gib_by_count: Mapping[int, float] | None = None
    max_price: float | None = None  # in `currency`, per `price_basis`
    currency: str = "RUB"
    price_basis: str = "gpu"  # "total": whole configuration per hour; "gpu": per GPU-hour (PRICE_BASES)
    providers: frozenset[str] | None = None
    gpu_count: int | None = None
    billing: str | None = None
    region: str | None = None
    _counts: tuple[int, ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.currency not in CURRENCIES:
            raise ValueError(f"price cap currency must be one of {CURRENCIES}, not {self.currency!r}")
        if self.price_basis not in PRICE_BASES:
            raise ValueError(f"price cap basis must be one of {PRICE_BASES}, not {self.price_basis!r}")
        if self.min_gib_by_count is not None:
            object.__setattr__(self, "_counts", tuple(sorted(self.min_gib_by_count)))

    def need_for(self, count: int) -> float | None:
        """Per-GPU GiB the workload needs on `count` GPUs, or None when no entry applies (or no workload)."""
        if self.min_gib_by_count is None:
            return None
        i = bisect_right(self._counts, count)
        return self.min_gib_by_count[self._counts[i - 1]] if i else None

    def matches(self, t: Target) -> bool:
        """The definition the index implements, one filter at a time."""
        if t.gpu is None:
            return False  # a card the catalog cannot name reaches no watcher until it is mapped
        if self.providers is not None and t.provider not in self.providers:
            return False
        if self.billing is not None and t.billing != self.billing:
            return False
        if self.gpu_count is not None and t.gpu_count != self.gpu_count:
            return False
        if self.region is not None and not region_matches(self.region, t.location):
            return False
        if self.gpu_ids is not None and (t.gpu not in self.gpu_ids or t.fraction is not None):
            return False
        if self.min_gib_by_count is not None:
            need, have = self.need_for(t.gpu_count), t.usable
            if need is None or have is None or have < need:
                return False
        if self.max_price is not None:
            price = t.price_for(self.currency, self.price_basis)
            if price is None or price > self.max_price:
                return False
        return True


# A run of matching watch ids: ids[start:] of one sorted list, kept as a view so a lookup costs bisects, not copies.
_Segment = tuple[list[int], int]


class Matches:
    """The watches one offer reaches: runs of indexed lists plus a few re-checked ids; iterate or len() it."""

    __slots__ = ("extra", "segments")

    def __init__(self, segments: list[_Segment], extra: list[int]) -> None:
        self.segments = segments
        self.extra = extra

    def __len__(self) -> int:
        return sum(len(ids) - start for ids, start in self.segments) + len(self.extra)

    def __bool__(self) -> bool:
        return bool(self.segments or self.extra)

    def __iter__(self) -> Iterator[int]:
        for ids, start in self.segments:
            yield from islice(ids, start, None) if start else ids
        yield from self.extra

    def ids(self) -> list[int]:
        out: list[int] = []
        for ids, start in self.segments:
            out.extend(ids[start:] if start else ids)
        out.extend(self.extra)
        return out


_CapKey = tuple[str, str]  # (currency, basis)
_CAP_KEYS: tuple[_CapKey, ...] = tuple((c, b) for c in CURRENCIES for b in PRICE_BASES)


class _CapList:
    """Watch ids by price cap: ascending caps per currency and basis (bisect) plus the uncapped ones."""

    __slots__ = ("caps", "ids", "uncapped")

    def __init__(self) -> None:
        self.caps: dict[_CapKey, list[float] | array[float]] = {k: [] for k in _CAP_KEYS}
        self.ids: dict[_CapKey, list[int]] = {k: [] for k in _CAP_KEYS}
        self.uncapped: list[int] = []

    def add(self, w: Watch) -> None:
        if w.max_price is None:
            self.uncapped.append(w.id)
        else:
            key = (w.currency, w.price_basis)
            self.caps[key].append(w.max_price)
            self.ids[key].append(w.id)

    def freeze(self) -> None:
        for key in _CAP_KEYS:
            pairs = sorted(zip(self.caps[key], self.ids[key], strict=True))
            # A packed array keeps the bisect's probes in a few cache lines instead of chasing float objects.
            self.caps[key] = array("d", [p[0] for p in pairs])
            self.ids[key] = [p[1] for p in pairs]

    def collect(self, t: Target, out: list[_Segment]) -> None:
        if self.uncapped:
            out.append((self.uncapped, 0))
        for key in _CAP_KEYS:
            ids = self.ids[key]
            if not ids:
                continue
            price = t.price_for(*key)
            if price is None:
                continue
            start = bisect_left(self.caps[key], price)
            if start < len(ids):
                out.append((ids, start))


class _Bucket:
    """Watches sharing provider, billing and count range: by named GPU, by memory level, or GPU-agnostic."""

    __slots__ = ("any_gpu", "by_gpu", "by_level")

    def __init__(self) -> None:
        self.by_gpu: dict[str, _CapList] = {}
        self.by_level: list[_CapList | None] = [None] * len(LEVELS)
        self.any_gpu: _CapList | None = None

    def lists(self) -> Iterable[_CapList]:
        yield from self.by_gpu.values()
        yield from (c for c in self.by_level if c is not None)
        if self.any_gpu is not None:
            yield self.any_gpu

    def collect(self, t: Target, out: list[_Segment], lenient: bool = False) -> None:
        """`lenient`: also the level just above the offer's memory (a superset, for the caller to re-check): a
        slice's share of a card sits between the catalog's levels, and that level's needs may be under it."""
        if t.gpu is None:
            return  # a card the catalog cannot name reaches nobody, not even "any GPU" watchers, until it is mapped
        if self.any_gpu is not None:
            self.any_gpu.collect(t, out)
        named = self.by_gpu.get(t.gpu) if t.fraction is None else None  # a slice is not the card it is cut from
        if named is not None:
            named.collect(t, out)
        have = _USABLE.get(t.gpu)
        if have is None:
            return
        if t.fraction is not None:
            have *= t.fraction
        top = bisect_right(LEVELS, have)  # levels 0..top-1 need no more than the card gives
        if lenient:
            top += 1
        for caps in self.by_level[:top]:
            if caps is not None:
                caps.collect(t, out)


_INF = math.inf
_BucketKey = tuple[str | None, str | None, int, float]


@dataclass
class WatchIndex:
    """Subscriptions indexed by what they need; `match(target)` returns exactly the ids whose watch matches.

    Watches the buckets cannot fully decide (a region filter; a GPU list plus a memory need) live in their own
    buckets and are re-checked with `Watch.matches` on the way out, so the main buckets return runs as they are.
    """

    _exact: dict[_BucketKey, _Bucket] = field(default_factory=dict)
    _recheck: dict[_BucketKey, _Bucket] = field(default_factory=dict)
    _watches: dict[int, Watch] = field(default_factory=dict)
    _ranges_for: dict[int, list[tuple[int, float]]] = field(default_factory=dict)
    _ranges: set[tuple[int, float]] = field(default_factory=set)

    @classmethod
    def build(cls, watches: Iterable[Watch]) -> WatchIndex:
        index = cls()
        for w in watches:
            index._add(w)
        for buckets in (index._exact, index._recheck):
            for bucket in buckets.values():
                for caps in bucket.lists():
                    caps.freeze()
        return index

    def __len__(self) -> int:
        return len(self._watches)

    def watch(self, watch_id: int) -> Watch:
        return self._watches[watch_id]

    @staticmethod
    def _count_ranges(w: Watch) -> list[tuple[int, float, float | None]]:
        """[lo, hi) ranges of offer GPU counts with the per-GPU need that applies there (None: no memory need)."""
        if w.min_gib_by_count is None:
            if w.gpu_count is not None:
                return [(w.gpu_count, w.gpu_count + 1, None)]
            return [(1, _INF, None)]
        if w.gpu_count is not None:
            need = w.need_for(w.gpu_count)
            return [] if need is None else [(w.gpu_count, w.gpu_count + 1, need)]
        counts = w._counts
        bounds: list[float] = [*counts[1:], _INF]
        return [(c, hi, w.min_gib_by_count[c]) for c, hi in zip(counts, bounds, strict=True)]

    def _add(self, w: Watch) -> None:
        if w.id in self._watches:
            raise ValueError(f"watch {w.id} indexed twice")
        self._watches[w.id] = w
        recheck = w.region is not None or (w.gpu_ids is not None and w.min_gib_by_count is not None)
        buckets = self._recheck if recheck else self._exact
        providers: Iterable[str | None] = w.providers if w.providers is not None else (None,)
        for lo, hi, need in self._count_ranges(w):
            if w.gpu_ids is None and need is not None:
                level = bisect_left(LEVELS, need)
                if level == len(LEVELS):
                    continue  # no card in the catalog is big enough at this count
            self._ranges.add((lo, hi))
            for provider in providers:
                key = (provider, w.billing, lo, hi)
                bucket = buckets.get(key)
                if bucket is None:
                    bucket = buckets[key] = _Bucket()
                if w.gpu_ids is not None:
                    for gpu in w.gpu_ids:
                        caps = bucket.by_gpu.get(gpu)
                        if caps is None:
                            caps = bucket.by_gpu[gpu] = _CapList()
                        caps.add(w)
                elif need is not None:
                    caps = bucket.by_level[level]
                    if caps is None:
                        caps = bucket.by_level[level] = _CapList()
                    caps.add(w)
                else:
                    if bucket.any_gpu is None:
                        bucket.any_gpu = _CapList()
                    bucket.any_gpu.add(w)

    def _ranges_containing(self, n: int) -> list[tuple[int, float]]:
        found = self._ranges_for.get(n)
        if found is None:
            found = self._ranges_for[n] = [r for r in self._ranges if r[0] <= n < r[1]]
        return found

    def _collect(self, buckets: dict[_BucketKey, _Bucket], t: Target, ranges: list[tuple[int, float]],
                 out: list[_Segment], lenient: bool = False) -> None:
        if not buckets:
            return
        for provider in (t.provider, None):
            for billing in (t.billing, None):
                for lo, hi in ranges:
                    bucket = buckets.get((provider, billing, lo, hi))
                    if bucket is not None:
                        bucket.collect(t, out, lenient)

    def find(self, t: Target) -> Matches:
        """The watches this offer reaches, as runs of the index (no per-subscription work for the exact ones)."""
        ranges = self._ranges_containing(t.gpu_count)
        if t.fraction is not None:  # a slice (rare): a superset from every bucket, each id re-checked
            candidates: list[_Segment] = []
            for buckets in (self._exact, self._recheck):
                self._collect(buckets, t, ranges, candidates, lenient=True)
            return Matches([], [i for i in Matches(candidates, []) if self._watches[i].matches(t)])
        segments: list[_Segment] = []
        self._collect(self._exact, t, ranges, segments)
        extra: list[int] = []
        if self._recheck:
            maybe: list[_Segment] = []
            self._collect(self._recheck, t, ranges, maybe)
            extra = [i for i in Matches(maybe, []) if self._watches[i].matches(t)]
        return Matches(segments, extra)

    def match(self, t: Target) -> list[int]:
        return self.find(t).ids()

    def match_many(self, targets: Iterable[Target]) -> dict[str, Matches]:
        """Offer key -> the watches it reaches (offers nobody watches are left out)."""
        result: dict[str, Matches] = {}
        for t in targets:
            found = self.find(t)
            if found:
                result[t.key] = found
        return result


def naive_match(watches: Iterable[Watch], targets: Iterable[Target]) -> dict[str, list[int]]:
    """Every watch against every target: the reference the index is measured and tested against."""
    ws = list(watches)
    result: dict[str, list[int]] = {}
    for t in targets:
        ids = [w.id for w in ws if w.matches(t)]
        if ids:
            result[t.key] = ids
    return result


def alerting_events(events: Iterable[OfferEvent], *, min_drop: float = 0.0) -> list[OfferEvent]:
    """The events worth a message: appeared, back in stock, and price drops of at least `min_drop` (0.05 = 5 %).

    Change detection already applies its own price threshold; `min_drop` lets alerts ask for a bigger one.
    """
    out: list[OfferEvent] = []
    for e in events:
        if e.kind not in ALERT_KINDS:
            continue
        if e.kind is EventKind.PRICE_DROP and min_drop > 0:
            change = e.change
            if change is None or -change < min_drop:
                continue
        out.append(e)
    return out


def watch_from_row(
    *,
    id: int,
    gpu_ids: list[str] | None,
    min_gib_by_count: Mapping[Any, float] | None,
    max_price: float | None,
    price_currency: str | None,
    price_basis: str | None,
    providers: list[str] | None,
    gpu_count: int | None,
    billing: str | None,
    region: str | None,
) -> Watch:
    """A Watch from a stored subscription's columns (JSON keys arrive as strings; empty lists mean "any")."""
    needs = {int(k): float(v) for k, v in min_gib_by_count.items()} if min_gib_by_count else None
    currency = (price_currency or "RUB").upper()
    if currency == "RUR":
        currency = "RUB"
    return Watch(
        id=id,
        gpu_ids=frozenset(gpu_ids) if gpu_ids else None,
        min_gib_by_count=needs,
        max_price=max_price,
        currency=currency,
        price_basis=price_basis or "gpu",
        providers=frozenset(p.lower() for p in providers) if providers else None,
        gpu_count=gpu_count,
        billing=billing or None,
        region=region or None,
    )


def tight_at(rec_gib_by_count: Mapping[Any, float] | None, count: int, usable: float | None) -> bool:
    """Whether a fitting offer gives less per GPU than the workload's comfortable figure at its count (the entry for
    the largest count <= it, as `Watch.need_for` reads needs): the fit table's "tight"."""
    if not rec_gib_by_count or usable is None:
        return False
    counts = sorted(int(k) for k in rec_gib_by_count if int(k) <= count)
    if not counts:
        return False
    rec = rec_gib_by_count.get(str(counts[-1]), rec_gib_by_count.get(counts[-1]))
    return rec is not None and usable < float(rec)


def fit_reason_data(w: Watch, t: Target) -> dict[str, Any]:
    """What the alert needs to say why this offer fits: the need at the offer's count and what the card gives."""
    gpu = get_gpu(t.gpu) if t.gpu and t.gpu in _USABLE else None
    return {
        "need_gib": w.need_for(t.gpu_count),
        "usable_gib": t.usable if gpu else None,
        "gpu_name": gpu.name if gpu else None,
    }
