"""Change detection: exact events for baseline, appearance, hysteresis, flapping, thresholds and prices."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.changes import EventKind, OfferState, detect_changes
from core.offers import Billing, Offer, Period, Rates

NOW = datetime(2025, 1, 1, tzinfo=UTC)


def offer(sku: str, price: float = 100.0, *, in_stock: bool = True, available: int | None = None,
          count: int = 1, currency: str = "USD", period: Period = Period.HOUR) -> Offer:
    return Offer(provider="prov", sku=sku, gpu="h100-sxm", gpu_name="H100", gpu_count=count, price=price,
                 currency=currency, period=period, in_stock=in_stock, available=available, location="eu",
                 billing=Billing.HOURLY)


def run(polls: list[list[Offer]], **kw) -> list[list[tuple[str, str]]]:
    """Feed polls one after another; return each poll's events as (kind, sku) pairs."""
    states: dict[str, OfferState] = {}
    out = []
    for i, snap in enumerate(polls):
        states, events = detect_changes(states, snap, baseline=(i == 0), **kw)
        out.append([(e.kind.value, e.offer.sku) for e in events])
    return out


def test_first_poll_is_baseline_and_silent() -> None:
    states, events = detect_changes({}, [offer("a"), offer("b", in_stock=False)])
    assert events == []
    assert states["prov|a|1|eu|hourly"].in_stock is True
    assert states["prov|b|1|eu|hourly"].in_stock is False


def test_appeared_after_baseline() -> None:
    assert run([[offer("a")], [offer("a"), offer("b")]]) == [[], [("appeared", "b")]]


def test_empty_first_poll_still_sets_baseline_when_told() -> None:
    _, events = detect_changes({}, [offer("a")], baseline=False)
    assert [e.kind for e in events] == [EventKind.APPEARED]


def test_sold_out_needs_two_consecutive_misses_by_default() -> None:
    assert run([[offer("a")], [], [], [], [offer("a")]]) == [
        [], [], [("sold_out", "a")], [], [("back_in_stock", "a")]]


def test_flapping_within_hysteresis_emits_nothing() -> None:
    polls = [[offer("a")], [], [offer("a")], [], [offer("a")], [offer("a", available=0)], [offer("a")]]
    assert run(polls) == [[]] * len(polls)


def test_hysteresis_is_configurable() -> None:
    assert run([[offer("a")], []], hysteresis=1) == [[], [("sold_out", "a")]]
    assert run([[offer("a")], [], [], []], hysteresis=3) == [[], [], [], [("sold_out", "a")]]
    with pytest.raises(ValueError):
        detect_changes({}, [], hysteresis=0)


def test_zero_available_and_out_of_stock_listing_count_as_missing() -> None:
    polls = [[offer("a"), offer("b")], [offer("a", available=0), offer("b", in_stock=False)],
             [offer("a", available=0), offer("b", in_stock=False)], [offer("a", available=3), offer("b")]]
    assert run(polls) == [[], [], [("sold_out", "a"), ("sold_out", "b")],
                          [("back_in_stock", "a"), ("back_in_stock", "b")]]


def test_back_in_stock_only_after_confirmed_sell_out() -> None:
    # listed as unavailable on first sight is a confirmed "not in stock": coming in is "back in stock"
    assert run([[offer("a")], [offer("a"), offer("n", in_stock=False)], [offer("a"), offer("n")]]) == [
        [], [], [("back_in_stock", "n")]]


def test_price_threshold_default_two_percent() -> None:
    polls = [[offer("a", 100)], [offer("a", 102)], [offer("a", 97.9)], [offer("a", 100.0)], [offer("a", 110)]]
    # 102 is exactly 2 %: not beyond. 97.9 is 2.1 % below the reference 100 -> drop; the reference becomes 97.9;
    # 100 is +2.1 % -> rise; 110 -> rise.
    assert run(polls) == [[], [], [("price_drop", "a")], [("price_rise", "a")], [("price_rise", "a")]]


def test_slow_drift_accumulates_against_last_announced_price() -> None:
    polls = [[offer("a", 100)], [offer("a", 99)], [offer("a", 98.5)], [offer("a", 97.5)]]
    assert run(polls) == [[], [], [], [("price_drop", "a")]]


def test_custom_threshold_and_event_prices() -> None:
    states, _ = detect_changes({}, [offer("a", 200, count=2)])
    rates = Rates(rub_per={"USD": 80.0})
    _, events = detect_changes(states, [offer("a", 180, count=2)], price_threshold=0.05, rates=rates, now=NOW)
    (e,) = events
    assert e.kind is EventKind.PRICE_DROP
    assert (e.old_price, e.new_price, e.currency) == (100.0, 90.0, "USD")
    assert (e.old_price_rub, e.new_price_rub) == (8000.0, 7200.0)
    assert e.change == pytest.approx(-0.1)
    assert e.at == NOW
    _, events = detect_changes(states, [offer("a", 195, count=2)], price_threshold=0.05)
    assert events == []


def test_monthly_prices_compare_per_gpu_hour() -> None:
    states, _ = detect_changes({}, [offer("m", 73000, currency="RUB", period=Period.MONTH)])
    assert states["prov|m|1|eu|hourly"].price == pytest.approx(100.0)
    _, events = detect_changes(states, [offer("m", 65700, currency="RUB", period=Period.MONTH)])
    assert [(e.kind, round(e.new_price, 2)) for e in events] == [(EventKind.PRICE_DROP, 90.0)]


def test_currency_change_is_not_a_price_event() -> None:
    states, _ = detect_changes({}, [offer("a", 100, currency="USD")])
    states, events = detect_changes(states, [offer("a", 8000, currency="RUB")])
    assert events == []
    assert states["prov|a|1|eu|hourly"].price == 8000


def test_no_price_event_while_sold_out_and_back_carries_new_price() -> None:
    states, _ = detect_changes({}, [offer("a", 100)])
    for _ in range(2):
        states, events = detect_changes(states, [offer("a", 50, in_stock=False)])
    assert [e.kind for e in events] == [EventKind.SOLD_OUT]
    states, events = detect_changes(states, [offer("a", 60, in_stock=False)])
    assert events == []
    states, events = detect_changes(states, [offer("a", 70)])
    assert [(e.kind, e.old_price, e.new_price) for e in events] == [(EventKind.BACK_IN_STOCK, 60.0, 70.0)]


def test_duplicates_in_a_snapshot_collapse_to_best() -> None:
    states, _ = detect_changes({}, [offer("a", 100)])
    _, events = detect_changes(states, [offer("a", 100, in_stock=False), offer("a", 90), offer("a", 95)])
    assert [(e.kind, e.new_price) for e in events] == [(EventKind.PRICE_DROP, 90.0)]


def test_state_tracks_missing_counter_and_listed() -> None:
    states, _ = detect_changes({}, [offer("a")])
    states, _ = detect_changes(states, [])
    st = states["prov|a|1|eu|hourly"]
    assert (st.in_stock, st.missing, st.listed) == (True, 1, False)
    states, _ = detect_changes(states, [offer("a")])
    assert states["prov|a|1|eu|hourly"].listed


def test_baseline_with_stored_states_announces_nothing_but_moves_state() -> None:
    states, _ = detect_changes({}, [offer("a")])
    states, events = detect_changes(states, [], baseline=True, hysteresis=1)
    assert events == []
    assert states["prov|a|1|eu|hourly"].in_stock is False


def test_events_are_ordered_by_kind_then_key() -> None:
    states, _ = detect_changes({}, [offer("z", 100), offer("y")])
    _, events = detect_changes(states, [offer("b"), offer("a"), offer("z", 50)], hysteresis=1)
    assert [(e.kind.value, e.offer.sku) for e in events] == [
        ("appeared", "a"), ("appeared", "b"), ("sold_out", "y"), ("price_drop", "z")]


def test_fifty_thousand_configurations() -> None:
    snap = [offer(f"s{i}", 100 + i % 7) for i in range(50_000)]
    states, _ = detect_changes({}, snap)
    changed = [offer(f"s{i}", 50) if i % 100 == 0 else snap[i] for i in range(49_000)]
    states, events = detect_changes(states, changed, hysteresis=1)
    kinds = [e.kind for e in events]
    assert kinds.count(EventKind.PRICE_DROP) == 490
    assert kinds.count(EventKind.SOLD_OUT) == 1000
    assert len(states) == 50_000
