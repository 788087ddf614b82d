"""The cooldown's memory of an offer (core.alerts): a cooling alert as cheap as any before it is remembered, so
whom it reached counts as having heard the offer; the last alert everyone heard, and so the re-arm, stay put."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.alerts import AlertEvent, AlertPolicy, LastAlert, Verdict, assess, next_last_alert, suppressed
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


def test_a_cooling_alert_at_or_under_the_cheapest_so_far_is_remembered_and_the_last_alert_is_kept() -> None:
    verdict, last = after(change(2.50), None, T0)
    assert verdict is Verdict.FRESH and last is not None and last.cheapest_at is None
    verdict, cooled = after(change(2.45), last, T0 + timedelta(minutes=10))
    assert verdict is Verdict.COOLING and cooled is not None
    assert (cooled.at, cooled.price) == (T0, 2.50)  # the re-arm still runs from what everyone heard
    assert (cooled.cheapest_at, cooled.cheapest) == (T0 + timedelta(minutes=10), 2.45)
    _, dearer = after(change(2.48), cooled, T0 + timedelta(minutes=20))
    assert dearer is cooled  # dearer than the cheapest: nothing new was learnt by anyone
    _, tie = after(change(2.45), cooled, T0 + timedelta(minutes=30))
    assert tie is not None and tie.cheapest_at == T0 + timedelta(minutes=30)  # it reached subscriptions made since
    # 8 % under 2.50: everyone hears, and it starts the cooldown over
    verdict, rearmed = after(change(2.30, kind=EventKind.PRICE_DROP), tie, T0 + timedelta(minutes=40))
    assert verdict is Verdict.REARMED and rearmed is not None
    assert (rearmed.at, rearmed.price, rearmed.cheapest_at) == (T0 + timedelta(minutes=40), 2.30, None)


def test_who_the_cheapest_cooling_alert_reached_is_suppressed_in_their_currency_and_basis() -> None:
    last = LastAlert(at=T0, price=2.50, price_usd=2.50, price_rub=200.0,
                     cheapest_at=T0 + timedelta(minutes=10), cheapest=2.40, cheapest_usd=2.40, cheapest_rub=192.0)
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
