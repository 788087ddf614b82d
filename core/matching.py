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

import contextlib
import math
import re
import sys
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import islice
from typing import TYPE_CHECKING, Any

from core.changes import EventKind, OfferEvent
from core.gpus import GPUS, get_gpu
from core.offers import Offer, PricedOffer
from core.places import AREA_PREFIX, area_countries, country_of

if TYPE_CHECKING:
    import numpy as np

# The events a subscriber hears about; sold-out and price-rise news never alerts.
ALERT_KINDS = frozenset({EventKind.APPEARED, EventKind.BACK_IN_STOCK, EventKind.PRICE_DROP})
# The news that makes an alert still waiting to be sent untrue: the offer sold out, or costs more than it said. Such
# an alert is withdrawn (storage.outbox): a user behind a backlog or in quiet hours is not told of an offer that has
# gone, or of a price that no longer exists.
WITHDRAWING_KINDS = frozenset({EventKind.SOLD_OUT, EventKind.PRICE_RISE})
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
    """A filter of countries or areas ("@RU", "@US,CA", "@EU") holds the offers whose location is in one of them
    (`core.places.country_of`: Selectel's 'msk-1', Lambda's 'us-east-1', Vast's 'US' alike; a location that names
    no country is not in any). Any other filter is a code: 'us' matches 'us-east-1' and 'US'; 'ru' does not match
    'europe' (whole tokens, not substrings)."""
    if region.startswith(AREA_PREFIX):
        return country_of(location) in _countries(region)
    want = region.strip().lower()
    have = location.strip().lower()
    if not want:
        return True
    if want == have:
        return True
    return want in {t for t in _TOKEN.split(have) if t}


@lru_cache(maxsize=256)
def _countries(region: str) -> frozenset[str]:
    return frozenset().union(*(area_countries(code) for code in region[len(AREA_PREFIX):].split(",") if code))


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

    def interned(self) -> Target:
        """This target with its names interned: many held at once (the alert sender's backlog) share one string per
        provider, card, billing, place and offer key instead of one each as read from JSON."""
        intern = sys.intern
        return Target(intern(self.key), intern(self.provider), None if self.gpu is None else intern(self.gpu),
                      self.gpu_count, intern(self.billing), intern(self.location), self.price_rub, self.price_usd,
                      self.fraction)

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
    # A serving target ("1000 requests a minute"): each card watched from the fewest GPUs of it that keep up with it
    # (core.answer.Answer.keeping_counts); a card absent, or fewer of it, is too slow. None: no target.
    min_count_by_gpu: Mapping[str, int] | None = None
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
        if self.min_count_by_gpu is not None:  # a slice shares its card's compute: never counted on for a target
            least = self.min_count_by_gpu.get(t.gpu)
            if least is None or t.gpu_count < least or t.fraction is not None:
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


# A run of matching watch ids: ids[start:] of one sorted array, kept as a view so a lookup costs bisects, not copies.
_Segment = tuple["array[int] | list[int]", int]


class Matches:
    """The watches one offer reaches: runs of indexed arrays plus a few re-checked ids; iterate or len() it."""

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
            out.extend(islice(ids, start, None) if start else ids)  # no copy of the array's tail first
        out.extend(self.extra)
        return out


_CapKey = tuple[str, str]  # (currency, basis)
_CAP_KEYS: tuple[_CapKey, ...] = tuple((c, b) for c in CURRENCIES for b in PRICE_BASES)


class _CapList:
    """Watch ids by price cap: ascending caps per currency and basis (bisect) plus the uncapped ones, in packed
    arrays (8 bytes an id, 8 a cap). Kept sorted as watches come and go once the index is built."""

    __slots__ = ("caps", "ids", "uncapped")

    def __init__(self) -> None:
        self.caps: dict[_CapKey, array[float]] = {}
        self.ids: dict[_CapKey, array[int]] = {}
        self.uncapped: array[int] = array("q")

    def add(self, watch_id: int, w: Watch, *, in_order: bool) -> None:
        if w.max_price is None:
            self.uncapped.append(watch_id)
            return
        key = (w.currency, w.price_basis)
        caps = self.caps.get(key)
        if caps is None:
            caps = self.caps[key] = array("d")
            self.ids[key] = array("q")
        ids = self.ids[key]
        if in_order:
            i = bisect_right(caps, w.max_price)
            caps.insert(i, w.max_price)
            ids.insert(i, watch_id)
        else:
            caps.append(w.max_price)
            ids.append(watch_id)

    def remove(self, watch_id: int, w: Watch) -> None:
        if w.max_price is None:
            with contextlib.suppress(ValueError):
                self.uncapped.remove(watch_id)
            return
        key = (w.currency, w.price_basis)
        caps, ids = self.caps.get(key), self.ids.get(key)
        if caps is None or ids is None:
            return
        for i in range(bisect_left(caps, w.max_price), bisect_right(caps, w.max_price)):
            if ids[i] == watch_id:
                del caps[i]
                del ids[i]
                return

    def freeze(self) -> None:
        for key, caps in self.caps.items():
            # Positions by cap (a stable sort: equal caps keep the order they were added in), then both arrays
            # taken in that order: no (cap, id) tuple per watch.
            order = sorted(range(len(caps)), key=caps.__getitem__)
            ids = self.ids[key]
            self.caps[key] = array("d", map(caps.__getitem__, order))
            self.ids[key] = array("q", map(ids.__getitem__, order))

    def collect(self, t: Target, out: list[_Segment]) -> None:
        if self.uncapped:
            out.append((self.uncapped, 0))
        for key, caps in self.caps.items():
            if not caps:
                continue
            price = t.price_for(*key)
            if price is None:
                continue
            start = bisect_left(caps, price)
            if start < len(caps):
                out.append((self.ids[key], start))


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

    def place(self, where: tuple[str, Any]) -> _CapList:
        kind, value = where
        if kind == "gpu":
            caps = self.by_gpu.get(value)
            if caps is None:
                caps = self.by_gpu[value] = _CapList()
            return caps
        if kind == "level":
            found = self.by_level[value]
            if found is None:
                found = self.by_level[value] = _CapList()
            return found
        if self.any_gpu is None:
            self.any_gpu = _CapList()
        return self.any_gpu

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
# What a watch filters on, as one hashable tuple (gpu ids, needs by count, cap, currency, basis, providers, count,
# billing, region). The index keeps one per distinct filter set with the cap left out (None), a number per
# subscription pointing at it and the cap beside it in a packed array: caps make most filter sets distinct (80,000
# of 100,000 in bench/match.py's mix), the rest of a set comes from a few hundred.
Signature = tuple[Any, ...]
_ABSENT = -1


def signature(w: Watch) -> Signature:
    return (tuple(sorted(w.gpu_ids)) if w.gpu_ids is not None else None,
            tuple(sorted(w.min_gib_by_count.items())) if w.min_gib_by_count is not None else None,
            w.max_price, w.currency, w.price_basis,
            tuple(sorted(w.providers)) if w.providers is not None else None, w.gpu_count, w.billing, w.region,
            tuple(sorted(w.min_count_by_gpu.items())) if w.min_count_by_gpu is not None else None)


def watch_of(sig: Signature) -> Watch:
    """The Watch a signature stands for (its id is 0: the index passes ids beside it)."""
    gpu_ids, needs, max_price, currency, basis, providers, count, billing, region, least = sig
    return Watch(0, frozenset(gpu_ids) if gpu_ids is not None else None,
                 dict(needs) if needs is not None else None, max_price, currency, basis,
                 frozenset(providers) if providers is not None else None, count, billing, region,
                 dict(least) if least is not None else None)


class WatchIndex:
    """Subscriptions indexed by what they need; `match(target)` returns exactly the ids whose watch matches.

    Watches the buckets cannot fully decide (a region filter; a GPU list plus a memory need) live in their own
    buckets and are re-checked with `Watch.matches` on the way out, so the main buckets return runs as they are.

    It follows changes as they happen: `add`, `remove` and `set_owner` (one user's subscriptions replaced) keep
    every array sorted (a bisect and a move of the array's tail), so no change rebuilds it. Per subscription it
    holds its id in the arrays of the buckets it is filed under, its cap beside it, three 8-byte slots (its
    filter set's number, its cap, its owner) in arrays indexed by id, and an (owner, id) pair in two arrays sorted
    by owner; the filter sets themselves, caps left out, once per distinct set. No Python object is kept per
    subscription: at 100,000 of them (bench/match.py's mix, 10,500 distinct sets) the index holds ~27 MB of objects
    and arrays, where a signature tuple per cap and a tuple per owner held 48 MB.
    """

    def __init__(self) -> None:
        self._exact: dict[_BucketKey, _Bucket] = {}
        self._recheck: dict[_BucketKey, _Bucket] = {}
        self._ranges_for: dict[int, list[tuple[int, float]]] = {}
        self._ranges: set[tuple[int, float]] = set()
        self._sig_no: array[int] = array("q")  # by watch id: its uncapped signature's number, or -1
        self._cap: array[float] = array("d")  # by watch id: its price cap (NaN: none)
        self._owner: array[int] = array("q")  # by watch id: the owner given with it (a user id), or -1
        self._filters: list[Watch] = []  # by signature number: the filter set as a Watch (id 0, no cap)
        self._sig_ids: dict[Signature, int] = {}  # the distinct signatures, cap left out (None) -> their number
        # Who owns what, as (owner, watch id) pairs in two packed arrays sorted by owner: a user's watches are one
        # bisected run, and no object is kept per subscription (a tuple per user and an int per id held 10 MB).
        self._pair_owner: array[int] = array("q")
        self._pair_watch: array[int] = array("q")
        # The cap lists a watch is filed in, by its filters but the cap (`_lists_for`).
        self._lists: dict[tuple[Any, ...], tuple[_CapList, ...]] = {}
        self._count = 0
        self._in_order = False

    @classmethod
    def build(cls, watches: Iterable[Watch], owners: Mapping[int, int] | None = None) -> WatchIndex:
        """All at once (sorted once at the end); `owners`: watch id -> the user it belongs to."""
        index = cls()
        for w in watches:
            index._add(w, owners.get(w.id, _ABSENT) if owners is not None else _ABSENT)
        index.freeze()
        return index

    def freeze(self) -> None:
        """Sort what was added in bulk; from now on every change keeps the order itself."""
        for buckets in (self._exact, self._recheck):
            for bucket in buckets.values():
                for caps in bucket.lists():
                    caps.freeze()
        if not self._in_order:
            owners, watches = self._pair_owner, self._pair_watch
            order = sorted(range(len(owners)), key=owners.__getitem__)  # stable: each owner's ids as added
            self._pair_owner = array("q", map(owners.__getitem__, order))
            self._pair_watch = array("q", map(watches.__getitem__, order))
        self._in_order = True

    def __len__(self) -> int:
        return self._count

    def __contains__(self, watch_id: int) -> bool:
        return 0 <= watch_id < len(self._sig_no) and self._sig_no[watch_id] != _ABSENT

    def watch(self, watch_id: int) -> Watch:
        if watch_id not in self:
            raise KeyError(watch_id)
        return replace(self._stored(watch_id), id=watch_id)

    def _stored(self, watch_id: int) -> Watch:
        """The watch as filed (id 0): its filter set's, with its own cap."""
        w = self._filters[self._sig_no[watch_id]]
        cap = self._cap[watch_id]
        return w if cap != cap else replace(w, max_price=cap)  # NaN != NaN: no cap

    def owner(self, watch_id: int) -> int:
        return self._owner[watch_id] if watch_id in self else _ABSENT

    def owned(self, owner: int) -> tuple[int, ...]:
        if not self._in_order:
            return tuple(w for o, w in zip(self._pair_owner, self._pair_watch, strict=True) if o == owner)
        lo, hi = self._owned_run(owner)
        return tuple(self._pair_watch[lo:hi])

    def _owned_run(self, owner: int) -> tuple[int, int]:
        return bisect_left(self._pair_owner, owner), bisect_right(self._pair_owner, owner)

    def _matches(self, watch_id: int, t: Target) -> bool:
        return self._stored(watch_id).matches(t)

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

    def _places(self, w: Watch) -> Iterator[tuple[dict[_BucketKey, _Bucket], _BucketKey, tuple[str, Any]]]:
        """Every (buckets, key, slot) a watch is filed under."""
        recheck = (w.region is not None or (w.gpu_ids is not None and w.min_gib_by_count is not None)
                   or w.min_count_by_gpu is not None)
        buckets = self._recheck if recheck else self._exact
        providers: Iterable[str | None] = sorted(w.providers) if w.providers is not None else (None,)
        for lo, hi, need in self._count_ranges(w):
            level = 0
            if w.gpu_ids is None and need is not None:
                level = bisect_left(LEVELS, need)
                if level == len(LEVELS):
                    continue  # no card in the catalog is big enough at this count
            for provider in providers:
                key = (provider, w.billing, lo, hi)
                if w.gpu_ids is not None:
                    for gpu in sorted(w.gpu_ids):
                        yield buckets, key, ("gpu", gpu)
                elif need is not None:
                    yield buckets, key, ("level", level)
                else:
                    yield buckets, key, ("any", None)

    def _lists_for(self, w: Watch, sig: Signature) -> tuple[_CapList, ...]:
        """The cap lists `w` is filed in. They depend on its filters but the cap (a few hundred distinct sets at
        100,000 subscriptions, where the caps make 80,000 signatures distinct), and no bucket is ever dropped, so
        they are worked out once per such set, not per subscription."""
        where = (sig[0], sig[1], *sig[5:])  # the signature but its cap, currency and basis (`signature`)
        found = self._lists.get(where)
        if found is None:
            lists: list[_CapList] = []
            for buckets, key, slot in self._places(w):
                if (key[2], key[3]) not in self._ranges:
                    self._ranges.add((key[2], key[3]))
                    self._ranges_for.clear()
                bucket = buckets.get(key)
                if bucket is None:
                    bucket = buckets[key] = _Bucket()
                lists.append(bucket.place(slot))
            found = self._lists[where] = tuple(lists)
        return found

    @staticmethod
    def _grow(arr: array[Any], upto: int) -> None:
        if upto >= len(arr):
            arr.extend(array(arr.typecode, [_ABSENT]) * max(upto + 1 - len(arr), len(arr) // 2))

    def _add(self, w: Watch, owner: int = _ABSENT) -> None:
        if w.id < 0:
            raise ValueError(f"watch id {w.id} is negative")
        if w.id in self:
            raise ValueError(f"watch {w.id} indexed twice")
        sig = signature(w)
        uncapped = sig if sig[2] is None else (*sig[:2], None, *sig[3:])
        number = self._sig_ids.get(uncapped)
        if number is None:
            # Kept with interned strings: the row's copies it was read from go with the row.
            uncapped = tuple(sys.intern(v) if type(v) is str else v for v in uncapped)
            number = self._sig_ids[uncapped] = len(self._filters)
            self._filters.append(watch_of(uncapped))
        self._grow(self._sig_no, w.id)
        self._grow(self._cap, w.id)
        self._grow(self._owner, w.id)
        self._sig_no[w.id] = number
        self._cap[w.id] = math.nan if w.max_price is None else w.max_price
        self._owner[w.id] = owner
        if owner != _ABSENT:
            if self._in_order:
                at = bisect_right(self._pair_owner, owner)
                self._pair_owner.insert(at, owner)
                self._pair_watch.insert(at, w.id)
            else:
                self._pair_owner.append(owner)
                self._pair_watch.append(w.id)
        self._count += 1
        in_order = self._in_order
        for caps in self._lists_for(w, sig):
            caps.add(w.id, w, in_order=in_order)

    def add(self, w: Watch, owner: int = _ABSENT) -> None:
        """One more watch (a new subscription), filed in order at once."""
        self._add(w, owner)

    def remove(self, watch_id: int) -> None:
        """Take a watch out (paused, deleted, its owner blocked the bot); unknown ids are ignored."""
        if watch_id not in self:
            return
        w = self._stored(watch_id)
        for caps in self._lists_for(w, signature(w)):
            caps.remove(watch_id, w)
        owner = self._owner[watch_id]
        if owner != _ABSENT:
            self._unpair(owner, watch_id)
        self._sig_no[watch_id] = _ABSENT
        self._owner[watch_id] = _ABSENT
        self._count -= 1

    def _unpair(self, owner: int, watch_id: int) -> None:
        if self._in_order:
            lo, hi = self._owned_run(owner)
            at = lo + self._pair_watch[lo:hi].index(watch_id)
        else:
            at = next(i for i, (o, w) in enumerate(zip(self._pair_owner, self._pair_watch, strict=True))
                      if o == owner and w == watch_id)
        del self._pair_owner[at]
        del self._pair_watch[at]

    def set_owner(self, owner: int, watches: Iterable[Watch]) -> None:
        """Replace everything `owner` has indexed by `watches` (a user's subscriptions as they are now)."""
        for watch_id in self.owned(owner):
            self.remove(watch_id)
        for w in watches:
            if w.id in self:
                self.remove(w.id)  # it moved between owners (not expected: a subscription keeps its user)
            self._add(w, owner)

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
            return Matches([], [i for i in Matches(candidates, []) if self._matches(i, t)])
        segments: list[_Segment] = []
        self._collect(self._exact, t, ranges, segments)
        extra: list[int] = []
        if self._recheck:
            maybe: list[_Segment] = []
            self._collect(self._recheck, t, ranges, maybe)
            extra = [i for i in Matches(maybe, []) if self._matches(i, t)]
        return Matches(segments, extra)

    def match(self, t: Target) -> list[int]:
        return self.find(t).ids()

    def owners(self, t: Target) -> set[int]:
        """The owners (users) of the watches this offer reaches: the cost is the number of matching watches."""
        get = self._owner.__getitem__
        found = self.find(t)
        out: set[int] = set()
        for ids, start in found.segments:  # map over the packed runs: no Python frame per watch
            out.update(map(get, ids[start:] if start else ids))
        out.update(map(get, found.extra))
        return out

    def owner_pairs(self, targets: Iterable[tuple[int, Target]]) -> tuple[np.ndarray, np.ndarray]:
        """Every (owner, tag) pair the tagged targets reach, each once: two arrays (owners as int64, tags as uint32)
        sorted by owner, then by tag in the order the targets came (give tags ascending to have them sorted).

        What `owners(t)` says per target, for a batch at once, without a Python step per pair: the runs the lookups
        return are read where they are (the index's arrays as NumPy views), their owners gathered in one indexing
        step and the pairs sorted once. A poll reaching 47,000 users with 480 offers is 2.2 million pairs: the
        sender's matching took 1.5 s of CPU a poll one pair at a time (bench/sender_loop.py). NumPy is imported
        here, by the sender's first poll: the bot's own processes never pay its 15 MB."""
        import numpy as np

        watches: list[np.ndarray] = []
        tags: list[int] = []
        sizes: list[int] = []
        for tag, t in targets:
            found = self.find(t)
            size = 0
            for ids, start in found.segments:
                run = (np.frombuffer(ids, dtype=np.int64) if isinstance(ids, array) else
                       np.asarray(ids, dtype=np.int64))[start:]
                watches.append(run)
                size += len(run)
            if found.extra:
                watches.append(np.asarray(found.extra, dtype=np.int64))
                size += len(found.extra)
            if size:
                tags.append(tag)
                sizes.append(size)
        if not watches:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.uint32)
        watch = np.concatenate(watches)  # a copy: the views on the index's arrays end here (they may grow later)
        del watches
        users = np.frombuffer(self._owner, dtype=np.int64)[watch]
        del watch  # large arrays go back to the system when freed: a poll's peak, not a step in the RSS
        tagged = np.repeat(np.asarray(tags, dtype=np.uint32), sizes)
        known = users != _ABSENT
        if not known.all():
            users, tagged = users[known], tagged[known]
        order = np.argsort(users, kind="stable")  # stable: each owner's tags keep the targets' order
        users, tagged = users[order], tagged[order]
        del order
        if len(users) > 1:  # an owner with several watches reaching one target: one pair
            first = np.empty(len(users), dtype=bool)
            first[0] = True
            np.not_equal(users[1:], users[:-1], out=first[1:])
            first[1:] |= tagged[1:] != tagged[:-1]
            if not first.all():
                users, tagged = users[first], tagged[first]
        return users, tagged

    def match_many(self, targets: Iterable[Target]) -> dict[str, Matches]:
        """Offer key -> the watches it reaches (offers nobody watches are left out)."""
        result: dict[str, Matches] = {}
        for t in targets:
            found = self.find(t)
            if found:
                result[t.key] = found
        return result


class TargetColumns:
    """Many tagged targets as columns, to ask which of them one watch matches, for all at once: the other direction
    from `WatchIndex` (which watches one target reaches). The alert sender asks it for a user whose unheard events
    it stopped listing one by one (storage.outbox.FanOut: PENDING_CAP): their next message is worked out from the
    events themselves, so their memory is one id, not one per event. `matches(w, after)` is `Watch.matches` over
    every target tagged above `after`, to the bit (tests/core/test_matching.py compares them): the same filters,
    the same comparisons (a missing figure never matches), in NumPy. Immutable: build a new one when the targets
    change. NumPy is imported here, by the sender: the bot's processes never build one."""

    def __init__(self, tagged: Iterable[tuple[int, Target]]) -> None:
        import numpy as np

        codes: dict[str, dict[str, int]] = {"provider": {}, "billing": {}, "location": {}, "gpu": {}}

        def code(kind: str, value: str) -> int:
            return codes[kind].setdefault(value, len(codes[kind]))

        rows = [(tag, code("provider", t.provider), code("billing", t.billing), code("location", t.location),
                 -1 if t.gpu is None else code("gpu", t.gpu), t.gpu_count, t.fraction is None,
                 math.nan if (u := t.usable) is None else u,
                 math.nan if t.price_rub is None else t.price_rub, math.nan if t.price_usd is None else t.price_usd)
                for tag, t in tagged]
        self._codes = codes
        self._regions: dict[str, np.ndarray] = {}
        n = len(rows)
        cols = list(zip(*rows, strict=True)) if rows else [()] * 10
        self.tags = np.fromiter(cols[0], dtype=np.int64, count=n)
        order = np.argsort(self.tags, kind="stable")
        self.tags = self.tags[order]
        self._provider, self._billing, self._location, self._gpu, self._count = (
            np.fromiter(c, dtype=np.int64, count=n)[order] for c in cols[1:6])
        self._whole = np.fromiter(cols[6], dtype=bool, count=n)[order]
        self._usable, self._rub, self._usd = (np.fromiter(c, dtype=np.float64, count=n)[order] for c in cols[7:10])
        self._max_count = int(self._count.max()) if n else 0

    def __len__(self) -> int:
        return len(self.tags)

    def _region(self, region: str) -> np.ndarray:
        """Which of the locations a region filter accepts (region_matches, once per distinct location)."""
        import numpy as np

        mask = self._regions.get(region)
        if mask is None:
            mask = self._regions[region] = np.fromiter(
                (region_matches(region, loc) for loc in self._codes["location"]), dtype=bool,
                count=len(self._codes["location"]))
        return mask

    def _in(self, kind: str, values: Iterable[str]) -> list[int]:
        known = self._codes[kind]
        return [known[v] for v in values if v in known]

    def matches(self, w: Watch, after: int = -1) -> np.ndarray:
        """The tags above `after` (ascending) whose targets `w` matches."""
        import numpy as np

        lo = int(np.searchsorted(self.tags, after, side="right"))
        if lo >= len(self.tags):
            return self.tags[lo:]
        gpu = self._gpu[lo:]
        count = self._count[lo:]
        mask = gpu >= 0  # a card the catalog cannot name reaches no one
        if w.providers is not None:
            mask &= np.isin(self._provider[lo:], self._in("provider", w.providers))
        if w.billing is not None:
            mask &= np.isin(self._billing[lo:], self._in("billing", (w.billing,)))
        if w.gpu_count is not None:
            mask &= count == w.gpu_count
        if w.region is not None:
            mask &= self._region(w.region)[self._location[lo:]]
        if w.gpu_ids is not None:
            mask &= np.isin(gpu, self._in("gpu", w.gpu_ids)) & self._whole[lo:]
        if w.min_count_by_gpu is not None:  # each card from its fewest GPUs that keep up; others and slices never
            codes = self._codes["gpu"]
            least = np.full(len(codes) + 1, np.iinfo(np.int64).max, dtype=np.int64)
            for g, n in w.min_count_by_gpu.items():
                if g in codes:
                    least[codes[g]] = n
            mask &= (count >= least[gpu]) & self._whole[lo:]  # gpu -1 (unknown) reads the last slot: never
        if w.min_gib_by_count is not None:
            needs = [w.need_for(c) for c in range(self._max_count + 1)]
            need = np.array([math.nan if x is None else x for x in needs], dtype=np.float64)[count]
            mask &= self._usable[lo:] >= need  # NaN on either side (no entry, an unknown card) never matches
        if w.max_price is not None:
            price = (self._rub if w.currency == "RUB" else self._usd)[lo:]
            if w.price_basis != "gpu":
                price = price * count
            mask &= price <= w.max_price  # NaN (no rate converts it) never matches
        return self.tags[lo:][mask]


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
    min_count_by_gpu: Mapping[str, Any] | None = None,
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
        min_count_by_gpu={str(k): int(v) for k, v in min_count_by_gpu.items()} if min_count_by_gpu is not None
        else None,
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
