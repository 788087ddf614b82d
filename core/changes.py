"""Change detection: what changed between the stored state of a provider's offers and its latest TRUSTED snapshot.

Only trusted snapshots come here (a suspect or failed poll never reaches this module), and even then one poll is
not believed on its own when it says something vanished: a configuration counts as sold out only after it has been
missing (or listed with nothing available) for `hysteresis` consecutive trusted polls, so a provider that flaps a
listing in and out does not spam "sold out / back in stock". "Back in stock" follows only a confirmed sell-out.
Prices are compared per GPU-hour in the offer's own currency (so an exchange-rate move is not a "price drop"),
against the price last announced (so a slow drift of 1 % a poll still fires once it passes the threshold).

Pure: no I/O, no clock unless the caller passes one. 50,000 configurations take a fraction of a second.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from enum import StrEnum
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from core.offers import Offer, Rates

DEFAULT_HYSTERESIS = 2  # consecutive trusted polls missing before "sold out"
DEFAULT_PRICE_THRESHOLD = 0.02  # relative change per GPU-hour before a price event (2 %)
_EPS = 1e-9  # float noise: 100 -> 102 is exactly 2 %, not "beyond" it


class EventKind(StrEnum):
    APPEARED = "appeared"  # a configuration never seen before, in stock
    BACK_IN_STOCK = "back_in_stock"  # in stock again after a confirmed sell-out
    SOLD_OUT = "sold_out"  # missing / zero for `hysteresis` consecutive trusted polls
    PRICE_DROP = "price_drop"
    PRICE_RISE = "price_rise"


class OfferState(NamedTuple):
    """What is remembered about one configuration between polls (a row of the current-offers table).

    `in_stock` is the CONFIRMED state: it turns False only after a confirmed sell-out (or when the configuration
    was first seen listed as unavailable). `missing` counts consecutive trusted polls in which it was absent or at
    zero while still believed in stock. `price` is the reference price per GPU-hour in `offer.currency`: the one
    last announced (or the baseline), not necessarily the latest one seen (that is `offer.price_per_gpu_hour`).
    """

    key: str
    offer: Offer  # latest listing seen (for a missing configuration: the last one)
    price: float
    in_stock: bool
    missing: int = 0

    @property
    def listed(self) -> bool:
        """In stock and present in the latest trusted snapshot (not within a hysteresis window)."""
        return self.in_stock and self.missing == 0


class OfferEvent(BaseModel):
    """One change of one configuration between trusted snapshots."""

    model_config = ConfigDict(frozen=True)

    kind: EventKind
    key: str
    offer: Offer
    old_price: float | None = None  # per GPU-hour, offer currency
    new_price: float | None = None  # per GPU-hour, offer currency
    currency: str
    # The same prices normalised, when the caller gave exchange rates (None when a rate is missing).
    old_price_rub: float | None = None
    new_price_rub: float | None = None
    old_price_usd: float | None = None
    new_price_usd: float | None = None
    at: datetime | None = None
    id: int | None = None  # the stored event's id, set by storage once written

    @property
    def provider(self) -> str:
        return self.offer.provider

    @property
    def change(self) -> float | None:
        """Relative price change (-0.1 = 10 % cheaper), for price events."""
        if self.old_price and self.new_price is not None:
            return (self.new_price - self.old_price) / self.old_price
        return None


def is_available(offer: Offer) -> bool:
    """Present AND rentable: listed in stock and not explicitly at zero."""
    return offer.in_stock and (offer.available is None or offer.available > 0)


def dedupe(snapshot: Iterable[Offer]) -> dict[str, Offer]:
    """One offer per key; when a provider lists the same configuration twice, prefer available, then cheaper."""
    out: dict[str, Offer] = {}
    for offer in snapshot:
        key = offer.key
        seen = out.get(key)
        if seen is None:
            out[key] = offer
            continue
        a, b = is_available(offer), is_available(seen)
        if (a and not b) or (a == b and offer.price_per_gpu_hour < seen.price_per_gpu_hour):
            out[key] = offer
    return out


def _convert(rates: Rates | None, amount: float | None, currency: str, to: str) -> float | None:
    if rates is None or amount is None:
        return None
    try:
        return round(rates.convert(amount, currency, to), 4)
    except KeyError:
        return None


def _event(kind: EventKind, key: str, offer: Offer, old: float | None, new: float | None,
           rates: Rates | None, at: datetime | None) -> OfferEvent:
    cur = offer.currency
    return OfferEvent(
        kind=kind, key=key, offer=offer, old_price=old, new_price=new, currency=cur,
        old_price_rub=_convert(rates, old, cur, "RUB"), new_price_rub=_convert(rates, new, cur, "RUB"),
        old_price_usd=_convert(rates, old, cur, "USD"), new_price_usd=_convert(rates, new, cur, "USD"),
        at=at,
    )


def detect_changes(
    previous_states: Mapping[str, OfferState],
    snapshot: Iterable[Offer],
    *,
    hysteresis: int = DEFAULT_HYSTERESIS,
    price_threshold: float = DEFAULT_PRICE_THRESHOLD,
    baseline: bool | None = None,
    rates: Rates | None = None,
    now: datetime | None = None,
) -> tuple[dict[str, OfferState], list[OfferEvent]]:
    """Compare one provider's trusted snapshot with its stored states.

    Returns every state after this poll (unchanged ones included, so the caller may diff) and the events, in a
    stable order: by kind as declared, then by key. `baseline=None` means "baseline when nothing is stored": the
    very first poll of a provider records what exists and announces nothing. Callers that know better (a provider
    whose first trusted poll was empty has no states but does have a baseline) pass it explicitly.
    """
    if hysteresis < 1:
        raise ValueError("hysteresis must be at least 1 poll")
    if price_threshold < 0:
        raise ValueError("price threshold must not be negative")
    if baseline is None:
        baseline = not previous_states

    current = dedupe(snapshot)
    states: dict[str, OfferState] = {}
    events: list[OfferEvent] = []
    # On a baseline poll the states move exactly as usual but nothing is announced.
    out: list[OfferEvent] | None = None if baseline else events

    for key, offer in current.items():
        old = previous_states.get(key)
        available = offer.in_stock and (offer.available is None or offer.available > 0)
        if old is not None and available and old.in_stock and not old.missing:
            seen = old.offer
            if (offer.price == seen.price and offer.currency == seen.currency and offer.period is seen.period
                    and offer.gpu_count == seen.gpu_count):
                # The common case: listed as before at the same price; last poll's comparison stands.
                states[key] = OfferState(key, offer, old.price, True)
                continue
        price = offer.price_per_gpu_hour
        if old is None:
            # New configuration. Listed but unavailable counts as already sold out, so it "comes back" later.
            states[key] = OfferState(key, offer, price, in_stock=available)
            if available and out is not None:
                out.append(_event(EventKind.APPEARED, key, offer, None, price, rates, now))
            continue
        if not available:
            states[key] = _missing(old, offer, hysteresis, out, rates, now)
            continue
        if not old.in_stock:
            states[key] = OfferState(key, offer, price, in_stock=True)
            if out is not None:
                out.append(_event(EventKind.BACK_IN_STOCK, key, offer, old.price, price, rates, now))
            continue
        ref = old.price
        if offer.currency != old.offer.currency or ref <= 0:
            # A currency switch is not a price move; re-anchor quietly.
            states[key] = OfferState(key, offer, price, in_stock=True)
            continue
        if abs(price - ref) > price_threshold * ref + _EPS:
            if out is not None:
                kind = EventKind.PRICE_DROP if price < ref else EventKind.PRICE_RISE
                out.append(_event(kind, key, offer, ref, price, rates, now))
            ref = price
        states[key] = OfferState(key, offer, ref, in_stock=True)

    for key, old in previous_states.items():
        if key not in current:
            states[key] = _missing(old, None, hysteresis, out, rates, now)

    order = {kind: i for i, kind in enumerate(EventKind)}
    events.sort(key=lambda e: (order[e.kind], e.key))
    return states, events


def _missing(old: OfferState, seen: Offer | None, hysteresis: int, events: list[OfferEvent] | None,
             rates: Rates | None, now: datetime | None) -> OfferState:
    """One more trusted poll without this configuration available (absent, or listed at zero)."""
    offer = seen or old.offer
    if not old.in_stock:
        # Already sold out: keep following the listing (its price re-anchors silently), nothing to say.
        price = seen.price_per_gpu_hour if seen is not None else old.price
        return old._replace(offer=offer, price=price, missing=0)
    missing = old.missing + 1
    if missing >= hysteresis:
        if events is not None:
            events.append(_event(EventKind.SOLD_OUT, old.key, offer, old.price, None, rates, now))
        return OfferState(old.key, offer, old.price, in_stock=False, missing=0)
    return old._replace(offer=offer, missing=missing)
