"""The best offer for a workload: offers ranked by what the user pays for the configuration that runs it.

An offer's price is for the whole configuration it rents (`count` cards, or a slice of one), so two offers are
compared by that price per hour, and, when the dataset is known, by the job's cost there (hours on that
configuration x its price): eight H100s at 896 ₽/h never come before one A100 at 119 ₽/h because they are
cheaper per GPU-hour. On-demand offers come before spot / interruptible ones (a job that can be killed is not the
same purchase); spot offers carry `spot=True` for the front ends to label.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple, Protocol, TypeVar

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


# (card, count) -> hours of the job there, or None when unknown (no dataset, or a slice).
HoursOf = Callable[[str, int], float | None]


def _sort_key(r: Ranked) -> tuple[bool, int, float, float, str]:
    price = r.price_per_hour if r.price_per_hour is not None else float("inf")
    if r.job_cost is not None:
        return r.spot, 0, r.job_cost, price, r.offer.key
    return r.spot, 1, price, price, r.offer.key


def rank(offers: Iterable[OfferT], currency: str, hours_of: HoursOf | None = None) -> list[Ranked]:
    """Offers ranked for a workload: on-demand before spot; within each, the job's cost where it is known (before
    offers whose time is unknown), else the configuration's price per hour; offers without a price last."""
    memo: dict[tuple[str, int], float | None] = {}
    out: list[Ranked] = []
    for o in offers:
        price = o.per_hour(currency)
        hours = None
        if hours_of is not None and o.gpu is not None and o.fraction is None:
            pair = (o.gpu, o.gpu_count)
            if pair not in memo:
                memo[pair] = hours_of(o.gpu, o.gpu_count)
            hours = memo[pair]
        cost = hours * price if hours is not None and price is not None else None
        out.append(Ranked(o, price, hours, cost, o.billing == SPOT))
    out.sort(key=_sort_key)
    return out


def ranked_offers(offers: Iterable[OfferT], currency: str, hours_of: HoursOf | None = None) -> list[OfferT]:
    """`rank`, offers only."""
    return [r.offer for r in rank(offers, currency, hours_of)]  # type: ignore[misc]


def cheapest_per_config(ranked: Sequence[Ranked]) -> dict[tuple[str, int], Ranked]:
    """The best-ranked offer of each whole-card (card, count) configuration."""
    best: dict[tuple[str, int], Ranked] = {}
    for r in ranked:
        o = r.offer
        if o.gpu is not None and o.fraction is None:
            best.setdefault((o.gpu, o.gpu_count), r)
    return best
