"""The cooldown's memory of an offer (core.alerts): the cooling alerts no later one undercuts are remembered, so
whom any of them reached counts as having heard the offer; the last alert everyone heard, and so the re-arm, stay
put."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from core.alerts import (
    MAX_COOLING,
    AlertEvent,
    AlertPolicy,
    CoolingAlert,
    LastAlert,
    Verdict,
    assess,
    next_last_alert,
    suppressed,
)
from core.changes import EventKind, OfferEvent
from core.offers import Billing, Offer, Period

T0 = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
POLICY = AlertPolicy(cooldown=timedelta(hours=3))


def change(price: float, *, count: int = 1, rub: float | None = None,
           kind: EventKind = EventKind.BACK_IN_STOCK) -> OfferEvent:
    offer = Offer(provider="selectel", sku="a100", gpu="a100-80gb", gpu_name="A100 80GB", gpu_count=count,
                  location="ru", billing=Billing.HOURLY, price=price * count, currency="USD", period=Period.HOUR,
                  in_stock=True, url="https://selectel.example/a100")
    return OfferEvent(kind=kind, key=offer.key, offer=offer, new_price=price, currency="USD",
                      new_price_usd=price, new_price_rub=rub)


def after(event: OfferEvent, last: LastAlert | None, at: datetime) -> tuple[Verdict, LastAlert | None]:
    verdict = assess(event, last, at, POLICY)
    return verdict, next_last_alert(event, last, verdict, at)


def test_a_cooling_alert_replaces_those_it_undercuts_and_the_last_alert_is_kept() -> None:
    verdict, last = after(change(2.50), None, T0)
    assert verdict is Verdict.FRESH and last is not None and last.cooling == ()
    verdict, cooled = after(change(2.45), last, T0 + timedelta(minutes=10))
    assert verdict is Verdict.COOLING and cooled is not None
    assert (cooled.at, cooled.price) == (T0, 2.50)  # the re-arm still runs from what everyone heard
    assert [(c.at, c.price) for c in cooled.cooling] == [(T0 + timedelta(minutes=10), 2.45)]
    _, dearer = after(change(2.48), cooled, T0 + timedelta(minutes=20))
    assert dearer is not None  # dearer: it reached subscriptions made since that 2.45 did not
    assert [c.price for c in dearer.cooling] == [2.45, 2.48]
    _, tie = after(change(2.45), dearer, T0 + timedelta(minutes=30))
    assert tie is not None  # reached everyone either of them did, and the subscriptions made since
    assert [(c.at, c.price) for c in tie.cooling] == [(T0 + timedelta(minutes=30), 2.45)]
    # 8 % under 2.50: everyone hears, and it starts the cooldown over
    verdict, rearmed = after(change(2.30, kind=EventKind.PRICE_DROP), tie, T0 + timedelta(minutes=40))
    assert verdict is Verdict.REARMED and rearmed is not None
    assert (rearmed.at, rearmed.price, rearmed.cooling) == (T0 + timedelta(minutes=40), 2.30, ())


def test_a_cooling_alert_undercuts_another_only_in_every_currency_a_cap_reads() -> None:
    _, last = after(change(2.50, rub=200.0), None, T0)
    _, one = after(change(2.40, rub=192.0), last, T0 + timedelta(minutes=10))
    # cheaper in dollars, dearer in roubles (the rate moved): a rouble cap 2.40 met may miss this one
    _, two = after(change(2.39, rub=195.0), one, T0 + timedelta(minutes=20))
    assert two is not None and [c.price for c in two.cooling] == [2.40, 2.39]
    # no rouble price then (no rate): a rouble cap read the offer's own there, and this one's rouble price now
    _, three = after(change(2.40, rub=None), last, T0 + timedelta(minutes=10))
    _, four = after(change(2.20, rub=170.0), three, T0 + timedelta(minutes=20))
    assert four is not None and [c.price for c in four.cooling] == [2.40, 2.20]
    _, five = after(change(2.10, rub=None), three, T0 + timedelta(minutes=20))  # both read the offer's own
    assert five is not None and [c.price for c in five.cooling] == [2.10]


def test_the_cooling_alerts_kept_are_bounded_oldest_going_first() -> None:
    last = LastAlert(at=T0, price=3.0, price_usd=3.0)
    for i in range(MAX_COOLING + 3):  # ever dearer: none undercuts another
        _, last = after(change(2.90 + i / 1000), last, T0 + timedelta(minutes=i + 1))
        assert last is not None
    assert len(last.cooling) == MAX_COOLING
    assert last.cooling[0].at == T0 + timedelta(minutes=4) and last.cooling[-1].price == 2.90 + 18 / 1000


def test_who_a_cooling_alert_reached_is_suppressed_in_their_currency_and_basis() -> None:
    cooled = CoolingAlert(at=T0 + timedelta(minutes=10), price=2.40, price_usd=2.40, price_rub=192.0)
    last = LastAlert(at=T0, price=2.50, price_usd=2.50, price_rub=200.0, cooling=(cooled,))
    flap = AlertEvent.from_event(change(2.40, count=2, rub=192.0), cooling_since=last)
    early, between, late = T0 - timedelta(days=1), T0 + timedelta(minutes=5), T0 + timedelta(minutes=15)
    assert suppressed(flap, early, None, "USD")  # heard the alert everyone heard
    assert suppressed(flap, between, None, "USD")  # made after it, reached by the cooling one
    assert not suppressed(flap, late, None, "USD")  # made after both: heard neither
    assert suppressed(flap, early, 2.45, "USD")  # 2.50 missed the cap, 2.40 met it
    assert not suppressed(flap, early, 2.35, "USD")  # neither met it
    assert suppressed(flap, early, 195.0, "RUB") and not suppressed(flap, early, 190.0, "RUB")
    assert suppressed(flap, early, 4.80, "USD", "total")  # two GPUs: the whole configuration at 4.80 an hour
    assert not suppressed(flap, early, 4.70, "USD", "total")


def test_a_subscription_made_after_the_cheapest_cooling_alert_hears_a_dearer_flap_once() -> None:
    _, last = after(change(2.50), None, T0)
    _, last = after(change(2.40), last, T0 + timedelta(minutes=10))  # the cheapest cooling alert
    made = T0 + timedelta(minutes=15)  # then this subscription, cap 2.45
    event = change(2.44)
    heard = AlertEvent.from_event(event, cooling_since=last)
    assert not suppressed(heard, made, 2.45, "USD")  # news to it: it hears the flap at 2.44
    _, last = after(event, last, T0 + timedelta(minutes=20))
    again = AlertEvent.from_event(change(2.44), cooling_since=last)
    assert suppressed(again, made, 2.45, "USD")  # the same flap back: already heard


def test_an_event_queued_before_the_list_reads_its_cheapest_cooling_alert_as_the_list() -> None:
    stored = {"at": T0.isoformat(), "price": 2.5, "price_rub": None, "price_usd": 2.5,
              "cheapest_at": (T0 + timedelta(minutes=10)).isoformat(), "cheapest": 2.4, "cheapest_rub": None,
              "cheapest_usd": 2.4}
    last = LastAlert.model_validate(stored)
    assert [(c.at, c.price, c.price_usd) for c in last.cooling] == [(T0 + timedelta(minutes=10), 2.4, 2.4)]
    assert LastAlert.model_validate({**stored, "cheapest_at": None}).cooling == ()


@pytest.mark.parametrize("seed", range(6))
def test_suppressed_says_exactly_whether_an_alert_since_the_last_one_reached_the_subscription(seed: int) -> None:
    """Against the record of every alert queued (who it reached: made by then, cap met): a run of flaps inside one
    cooldown at random prices, in dollars and roubles at a moving rate, asked for random subscriptions."""
    rng = random.Random(seed)
    _, last = after(change(3.0, rub=240.0), None, T0)
    assert last is not None
    sent: list[tuple[datetime, float, float]] = [(T0, 3.0, 240.0)]  # every alert: when, USD, RUB per GPU-hour
    for minute in range(1, 60):
        now = T0 + timedelta(minutes=minute)
        price = round(rng.uniform(2.86, 3.3), 2)  # never 5 % under 3.0: all cooling
        rub = round(price * rng.uniform(78, 82), 1)
        event = change(price, rub=rub)
        verdict, after_it = after(event, last, now)
        assert verdict is Verdict.COOLING and after_it is not None
        flap = AlertEvent.from_event(event, cooling_since=last)
        for _ in range(40):
            made = T0 + timedelta(minutes=rng.uniform(-5, minute))
            currency = rng.choice(("USD", "RUB"))
            cap = round(rng.uniform(2.8, 3.4), 2) if currency == "USD" else round(rng.uniform(220, 275), 0)
            heard = any(at >= made and (usd if currency == "USD" else r) <= cap for at, usd, r in sent)
            assert suppressed(flap, made, cap, currency) is heard
        assert len(after_it.cooling) < MAX_COOLING  # the bound never cut: the record above is exact
        last = after_it
        sent.append((now, price, rub))
