"""The /history data path on a real database: an indexed range read plus the state at its start, aggregated to a
bounded number of points; periods as users write them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import insert

from bot.handlers.history import DEFAULT_DAYS, MAX_DAYS, split_period
from storage.offer_tables import PricePoint
from storage.queries import price_history

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def point(key: str, at: datetime, price: float, in_stock: bool = True) -> dict:
    return {"offer_key": key, "provider": "vastai", "gpu": "h100-sxm", "gpu_count": 1, "at": at, "price": price,
            "currency": "USD", "period": "hour", "price_per_gpu_hour_rub": price * 80,
            "price_per_gpu_hour_usd": price, "in_stock": in_stock, "available": 1}


async def test_a_range_starts_from_the_state_before_it_and_is_aggregated(sm) -> None:
    rows = [point("a", T0 - timedelta(days=40), 3.0), point("b", T0 - timedelta(days=35), 2.0)]
    # then 6,000 changes of "a" inside the range, cheapest at minute 3,000
    rows += [point("a", T0 + timedelta(minutes=m), 1.0 if m == 3000 else 1.2 + (m % 7) / 10) for m in range(6000)]
    async with sm() as s, s.begin():
        await s.execute(insert(PricePoint), rows)
    async with sm() as s:
        (full,) = await price_history(s, "h100-sxm", currency="USD", since=T0 - timedelta(days=1))
        (chart,) = await price_history(s, "h100-sxm", currency="USD", since=T0 - timedelta(days=1), buckets=100)
    # the state at the start comes from the points before the range: "b" at 2.0 was the cheapest then
    assert full.points[0].at == T0 - timedelta(days=1) and full.points[0].price == 2.0
    assert len(full.points) > 1000
    assert len(chart.points) <= 102  # bounded, whatever the number of changes
    assert min(p.price for p in chart.points if p.price is not None) == 1.0  # the dip survives aggregation
    assert chart.points[-1] == full.points[-1]  # and the line reaches the end


def test_periods_as_users_write_them() -> None:
    assert split_period("H100") == ("H100", DEFAULT_DAYS)
    assert split_period("A100 80GB 7d") == ("A100 80GB", 7)
    assert split_period("H100 2w") == ("H100", 14)
    assert split_period("H100 3м") == ("H100", 90)
    assert split_period("H100 1г") == ("H100", 365)
    assert split_period("H100 99y") == ("H100", MAX_DAYS)
    assert split_period("RTX 4090") == ("RTX 4090", DEFAULT_DAYS)  # a model number is not a period
