"""What an alert says and when it is sent: the typed alert payload and the alert policy (cooldown, re-arm).

Pure: storage persists `OfferAlertState` per offer key and `AlertEvent` per queued event; the sender asks
`suppressed(...)` per (subscription, event). No I/O, no Telegram.

The policy is kept per offer, not per (subscription, offer), so a poll's alert work is proportional to its
events, not to the number of subscriptions they reach:
- an event of an offer that was last alerted at least `cooldown` ago (or never) goes to everyone it matches;
- within the cooldown, a price at least `rearm_drop` under the last alerted price goes to everyone too (news);
- otherwise the event is "cooling": it reaches only the subscriptions that would not have heard the last alert —
  made after it, or whose price cap the last alerted price did not meet. Flapping stock then alerts nobody twice,
  while a subscriber whose cap is met only now still hears about it. The cooling alerts since are kept too (those
  no later one undercuts: a handful, cheapest first), so whoever one of them reached is not told again when the
  offer flaps back, at whatever price.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from core.changes import EventKind, OfferEvent
from core.offers import Offer

DEFAULT_COOLDOWN = timedelta(hours=3)
REARM_DROP = 0.05  # within the cooldown, a price at least 5 % under the last alerted one still alerts everyone
# Cooling alerts remembered per offer. Only a run of ever dearer ones inside one cooldown fills it (a cheaper or
# equal one replaces every dearer one before it); past it the oldest goes, and who only that one reached may hear
# the offer once more.
MAX_COOLING = 16


@dataclass(frozen=True)
class AlertPolicy:
    cooldown: timedelta = DEFAULT_COOLDOWN
    min_drop: float = 0.0  # price drops smaller than this (0.05 = 5 %) do not alert; detection has its own threshold
    rearm_drop: float = REARM_DROP


class CoolingAlert(BaseModel):
    """A cooling alert about an offer: when it was queued, and its prices per GPU-hour. It reached every subscription
    made by then whose cap its price met (those that had heard an alert already were skipped: they had heard it)."""

    model_config = ConfigDict(frozen=True)

    at: datetime
    price: float | None  # offer currency
    price_rub: float | None = None
    price_usd: float | None = None

    def undercut_by(self, later: CoolingAlert) -> bool:
        """Whether `later` (queued after this one) reached every subscription this one did: its price is at or under
        this one's in every form a cap is read in (`_heard`: the normalised price, or the offer's own where none)."""
        return _at_or_under(later.price, self.price) and all(
            (mine is None and theirs is None) or (mine is not None and _at_or_under(theirs, mine))
            for mine, theirs in ((self.price_rub, later.price_rub), (self.price_usd, later.price_usd)))


def _at_or_under(price: float | None, bound: float | None) -> bool:
    return bound is None or (price is not None and price <= bound)


class LastAlert(BaseModel):
    """The last alert everyone matching an offer heard: when, and at which prices per GPU-hour; and the cooling
    alerts about it since that no later one undercuts (`cooling`: oldest, so cheapest, first; each later one
    dearer), at most MAX_COOLING."""

    model_config = ConfigDict(frozen=True)

    at: datetime
    price: float | None  # offer currency
    price_rub: float | None = None
    price_usd: float | None = None
    # Every subscription made by a cooling alert whose cap its price met has heard an alert about the offer. Without
    # them, a subscriber whose cap is under `price` would hear every flap of the offer at a price they can pay; with
    # only the cheapest one kept, one made after it would hear every flap at a dearer price it can pay.
    cooling: tuple[CoolingAlert, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _from_cheapest(cls, data: Any) -> Any:
        """An event queued before migration 0020 carries the cheapest cooling alert alone (`cheapest_at`...)."""
        if not isinstance(data, dict) or "cheapest_at" not in data:
            return data
        data = dict(data)
        at, price = data.pop("cheapest_at"), data.pop("cheapest", None)
        rub, usd = data.pop("cheapest_rub", None), data.pop("cheapest_usd", None)
        if at is not None and "cooling" not in data:
            data["cooling"] = ({"at": at, "price": price, "price_rub": rub, "price_usd": usd},)
        return data


class AlertEvent(BaseModel):
    """One alerting offer change, frozen when it was queued: everything a message about it says, and (for a cooling
    event) the last alert, so the sender can tell who already heard it."""

    model_config = ConfigDict(frozen=True)

    kind: EventKind
    offer: Offer
    currency: str
    old_price: float | None = None  # per GPU-hour, offer currency
    new_price: float | None = None
    price_rub: float | None = None  # new price per GPU-hour, normalised
    price_usd: float | None = None
    old_price_rub: float | None = None
    old_price_usd: float | None = None
    cooling_since: LastAlert | None = None  # set when the event falls inside the offer's cooldown

    @classmethod
    def from_event(cls, event: OfferEvent, cooling_since: LastAlert | None = None) -> AlertEvent:
        return cls(kind=event.kind, offer=event.offer, currency=event.currency, old_price=event.old_price,
                   new_price=event.new_price, price_rub=event.new_price_rub, price_usd=event.new_price_usd,
                   old_price_rub=event.old_price_rub, old_price_usd=event.old_price_usd, cooling_since=cooling_since)

    def price_in(self, currency: str, *, old: bool = False) -> tuple[float | None, str]:
        """The price per GPU-hour in `currency`, or in the offer's own when no rate converted it."""
        value = (self.old_price_rub if old else self.price_rub) if currency == "RUB" else \
            (self.old_price_usd if old else self.price_usd)
        if value is not None:
            return value, currency
        return (self.old_price if old else self.new_price), self.currency


class Verdict(StrEnum):
    FRESH = "fresh"  # first alert about the offer, or the cooldown is over: everyone matching hears it
    REARMED = "rearmed"  # inside the cooldown, but a real price drop: everyone matching hears it
    COOLING = "cooling"  # inside the cooldown: only who did not hear the last alert


def assess(event: OfferEvent, last: LastAlert | None, now: datetime, policy: AlertPolicy) -> Verdict:
    if last is None or now - last.at >= policy.cooldown:
        return Verdict.FRESH
    if event.kind is EventKind.PRICE_DROP and last.price and event.new_price is not None \
            and event.new_price <= last.price * (1 - policy.rearm_drop):
        return Verdict.REARMED
    return Verdict.COOLING


def next_last_alert(event: OfferEvent, last: LastAlert | None, verdict: Verdict, now: datetime) -> LastAlert | None:
    """The offer's state after this event: a fresh or re-armed alert becomes the last alert; a cooling one does not
    (the cooldown and the re-arm run from the alert everyone heard) but joins the cooling alerts, replacing those it
    undercuts (at a tie too: it also reached the subscriptions made in between)."""
    if verdict is Verdict.COOLING:
        if last is None or event.new_price is None:
            return last
        new = CoolingAlert(at=now, price=event.new_price, price_rub=event.new_price_rub,
                           price_usd=event.new_price_usd)
        kept = tuple(c for c in last.cooling if not c.undercut_by(new))
        return last.model_copy(update={"cooling": (*kept, new)[-MAX_COOLING:]})
    return LastAlert(at=now, price=event.new_price, price_rub=event.new_price_rub, price_usd=event.new_price_usd)


def suppressed(event: AlertEvent, subscribed_at: datetime, cap: float | None, cap_currency: str,
               cap_basis: str = "gpu") -> bool:
    """True when this subscription already heard an alert about this offer inside its cooldown (a cooling event
    only): it existed at the last alert and that alert's price met its cap, or it existed at one of the cooling
    alerts since and that one's price met its cap. Everything else about a match (GPU, count, provider, billing,
    location) is fixed by the offer's key, so the price is the only thing that could have differed."""
    last = event.cooling_since
    if last is None:
        return False
    if _heard(event, subscribed_at, cap, cap_currency, cap_basis, last.at, last.price, last.price_rub,
              last.price_usd):
        return True
    for c in last.cooling:  # per (subscription, event) pair in the sender's matching: a plain loop, no generator
        if _heard(event, subscribed_at, cap, cap_currency, cap_basis, c.at, c.price, c.price_rub, c.price_usd):
            return True
    return False


def _heard(event: AlertEvent, subscribed_at: datetime, cap: float | None, cap_currency: str, cap_basis: str,
           at: datetime, price: float | None, price_rub: float | None, price_usd: float | None) -> bool:
    """Whether an alert about the event's offer sent at `at` for these prices per GPU-hour reached the subscription."""
    if subscribed_at > at:
        return False
    if cap is None:
        return True
    mine = price_rub if cap_currency == "RUB" else price_usd
    if mine is None and event.currency.upper() == cap_currency:
        mine = price
    if mine is not None and cap_basis == "total":  # the cap bounds the whole configuration's price per hour
        mine *= event.offer.gpu_count
    return mine is not None and mine <= cap


@dataclass(frozen=True, slots=True)
class Reason:
    """Why one offer reaches one subscription: shown under the offer, one line per subscription."""

    subscription_id: int
    kind: str
    query_text: str
    max_price: float | None
    max_price_currency: str
    need_gib: float | None
    usable_gib: float | None
    gpu_name: str | None
    price_basis: str = "gpu"  # what max_price bounds: "total" (whole configuration per hour) or "gpu" (per GPU-hour)
    tight: bool = False  # the workload fits this offer only without its safety margin
    keeps_up: bool = False  # the subscription has a serving target, and this configuration keeps up with it
