"""The best offer for a workload: offers ranked by what the user pays for the configuration that runs it.

An offer's price is for the whole configuration it rents (`count` cards, or a slice of one), so two offers are
compared by that price per hour, and, when the dataset is known, by the job's cost there (hours on that
configuration x its price): eight H100s at 896 ₽/h never come before one A100 at 119 ₽/h because they are
cheaper per GPU-hour. On-demand offers come before spot / interruptible ones (a job that can be killed is not the
same purchase); spot offers carry `spot=True` for the front ends to label. Within each, whole cards come before
slices of one (a 4 GB share of an A100 is not the cheapest A100: it is another, smaller purchase).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import itemgetter
from typing import NamedTuple, Protocol, TypeVar, overload

SPOT = "spot"


class RankableOffer(Protocol):
    """What ranking reads of an offer (the bot's cached offers and the command line's stored ones provide it)."""

    @property
    def key(self) -> str: ...
    @property
    def gpu(self) -> str | None: ...
    @property
    def gpu_count(self) -> int: ...
    @property
    def billing(self) -> str: ...
    @property
    def fraction(self) -> float | None: ...
    def per_hour(self, currency: str) -> float | None: ...


OfferT = TypeVar("OfferT", bound=RankableOffer)


class Ranked(NamedTuple):
    offer: RankableOffer
    price_per_hour: float | None  # the whole configuration, in the asked currency
    hours: float | None  # the job on this configuration, when the dataset is known
    job_cost: float | None  # hours x price_per_hour
    spot: bool
    tight: bool = False  # the workload fits this configuration only without the safety margin (front ends mark it)


# (card, count) -> hours of the job there, or None when unknown (no dataset, or a slice).
HoursOf = Callable[[str, int], float | None]
# (card, count, slice fraction) -> whether the workload fits there only without its safety margin.
TightOf = Callable[[str, int, float | None], bool]


class _Tight:
    """`tight_of` asked once per (card, count, slice): it depends on nothing else, and asked per offer it was a
    third of ranking 10,000 offers (bench/ranking.py)."""

    __slots__ = ("memo", "tight_of")

    def __init__(self, tight_of: TightOf | None) -> None:
        self.tight_of = tight_of
        self.memo: dict[tuple[str, int, float | None], bool] = {}

    def __call__(self, o: RankableOffer) -> bool:
        if self.tight_of is None or o.gpu is None:
            return False
        config = (o.gpu, o.gpu_count, o.fraction)
        known = self.memo.get(config)
        if known is None:
            known = self.memo[config] = self.tight_of(*config)
        return known


_MISSING = object()
_Key = tuple[bool, bool, int, float, float, str]  # (spot, slice, known cost first, cost or price, price, key)


def rank(offers: Iterable[OfferT], currency: str, hours_of: HoursOf | None = None,
         tight_of: TightOf | None = None) -> list[Ranked]:
    """Offers ranked for a workload: on-demand before spot; within each, the job's cost where it is known (before
    offers whose time is unknown), else the configuration's price per hour; offers without a price last.

    Thousands of offers per answer: the order is a tuple sort done in C (no Python key function), and the hours of
    each (card, count) are asked once."""
    memo: dict[tuple[str, int], float | None] = {}
    inf = float("inf")
    keyed: list[tuple[bool, bool, int, float, float, str, int, RankableOffer, float | None, float | None,
                      float | None]] = []
    append = keyed.append
    for i, o in enumerate(offers):
        price = o.per_hour(currency)
        p = inf if price is None else price
        spot = o.billing == SPOT
        part = o.fraction is not None
        if hours_of is not None and price is not None and o.fraction is None and o.gpu is not None:
            pair = (o.gpu, o.gpu_count)
            hours = memo.get(pair, _MISSING)
            if hours is _MISSING:
                hours = memo[pair] = hours_of(o.gpu, o.gpu_count)
            if hours is not None:
                cost = hours * price  # type: ignore[operator]
                append((spot, part, 0, cost, p, o.key, i, o, price, hours, cost))  # type: ignore[arg-type]
                continue
        append((spot, part, 1, p, p, o.key, i, o, price, None, None))
    # (spot, slice, known cost first, cost or price, price, key, position): never reaches the offer itself
    keyed.sort()
    tight = _Tight(tight_of)
    return [Ranked(k[7], k[8], k[9], k[10], k[0], tight(k[7])) for k in keyed]


class _Ranker:
    """Turns one offer into its `Ranked` for a currency, asking the job's hours once per (card, count)."""

    __slots__ = ("currency", "hours", "hours_of", "tight")

    def __init__(self, currency: str, hours_of: HoursOf | None, tight_of: TightOf | None) -> None:
        self.currency = currency
        self.hours_of = hours_of
        self.tight = _Tight(tight_of)
        self.hours: dict[tuple[str, int], float | None] = {}

    def hours_for(self, o: RankableOffer) -> float | None:
        if self.hours_of is None or o.fraction is not None or o.gpu is None:
            return None
        pair = (o.gpu, o.gpu_count)
        if pair not in self.hours:
            self.hours[pair] = self.hours_of(o.gpu, o.gpu_count)
        return self.hours[pair]

    def ranked(self, o: RankableOffer) -> Ranked:
        price = o.per_hour(self.currency)
        hours = self.hours_for(o) if price is not None else None
        cost = hours * price if hours is not None and price is not None else None
        return Ranked(o, price, hours, cost, o.billing == SPOT, self.tight(o))


def _keyed(group: Sequence[RankableOffer], ranker: _Ranker) -> Iterator[tuple[_Key, Ranked]]:
    # A free function of the ranker, not a method of RankedGroups: a generator holding the object that holds it
    # is a reference cycle, and every answer's merge (a generator per offer group) would then wait for the cyclic
    # collector, frozen heap and all (gpuradar/heap.py), instead of going with its last reference (bench/memory.py).
    for o in group:
        r = ranker.ranked(o)
        yield _key(r), r


class RankedGroups(Sequence[Ranked]):
    """`rank`'s order over offers that come in groups of one (card, count, slice, billing kind), each group already
    by price: a lazy k-way merge. Within a group the job's hours are the same, so cost follows price and the group
    stays in order; only as many offers as a page needs are ever ranked, and the length is the groups' sizes.
    Nothing it holds refers back to it (no reference cycle): it is freed as soon as the answer drops it."""

    def __init__(self, groups: Iterable[Sequence[RankableOffer]], currency: str, hours_of: HoursOf | None,
                 tight_of: TightOf | None = None) -> None:
        self._groups = [g for g in groups if g]
        self._ranker = _Ranker(currency, hours_of, tight_of)
        self._len = sum(len(g) for g in self._groups)
        self._done: list[Ranked] = []
        self._merged: Iterator[tuple[_Key, Ranked]] = heapq.merge(
            *(_keyed(g, self._ranker) for g in self._groups), key=itemgetter(0))

    def ranked(self, o: RankableOffer) -> Ranked:
        return self._ranker.ranked(o)

    def _fill(self, upto: int) -> None:
        while len(self._done) < upto:
            nxt = next(self._merged, None)
            if nxt is None:
                return
            self._done.append(nxt[1])

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, i: int) -> Ranked: ...
    @overload
    def __getitem__(self, i: slice) -> list[Ranked]: ...
    def __getitem__(self, i: int | slice) -> Ranked | list[Ranked]:
        if isinstance(i, slice):
            self._fill(max(i.indices(self._len)[:2]))
            return self._done[i]
        if i < 0:
            i += self._len
        self._fill(i + 1)
        return self._done[i]

    def __iter__(self) -> Iterator[Ranked]:
        self._fill(self._len)
        return iter(self._done)

    def best_per_config(self) -> dict[tuple[str, int], Ranked]:
        """`cheapest_per_config` from the groups' heads: one offer looked at per group."""
        best: dict[tuple[str, int], Ranked] = {}
        for g in self._groups:
            o = g[0]
            if o.gpu is None or o.fraction is not None:
                continue
            r = self.ranked(o)
            pair = (o.gpu, o.gpu_count)
            if pair not in best or _key(r) < _key(best[pair]):
                best[pair] = r
        return best


def _key(r: Ranked) -> _Key:
    price = r.price_per_hour if r.price_per_hour is not None else float("inf")
    part = r.offer.fraction is not None
    if r.job_cost is not None:
        return r.spot, part, 0, r.job_cost, price, r.offer.key
    return r.spot, part, 1, price, price, r.offer.key


def rank_groups(groups: Iterable[Sequence[RankableOffer]], currency: str,
                hours_of: HoursOf | None = None, tight_of: TightOf | None = None) -> RankedGroups:
    """`rank` for offers grouped by (card, count, slice, spot), each group by price in `currency` (lazy)."""
    return RankedGroups(groups, currency, hours_of, tight_of)


def ranked_offers(offers: Iterable[OfferT], currency: str, hours_of: HoursOf | None = None) -> list[OfferT]:
    """`rank`, offers only."""
    return [r.offer for r in rank(offers, currency, hours_of)]  # type: ignore[misc]


def cheapest_per_config(ranked: Sequence[Ranked]) -> dict[tuple[str, int], Ranked]:
    """The best-ranked offer of each whole-card (card, count) configuration."""
    if isinstance(ranked, RankedGroups):
        return ranked.best_per_config()
    best: dict[tuple[str, int], Ranked] = {}
    for r in ranked:
        o = r.offer
        if o.gpu is not None and o.fraction is None:
            best.setdefault((o.gpu, o.gpu_count), r)
    return best
