"""Read side: in-stock offers cheapest first with filters, provider health, price history per GPU."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from core.offers import Offer, Period, Rates
from core.polls import PollResult, PollStatus
from storage.db import make_engine, make_sessionmaker
from storage.ingest import record_poll
from storage.queries import in_stock_offers, price_history, provider_health, unknown_gpu_offers

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
RATES = Rates(rub_per={"USD": 80.0})


def offer(provider: str, sku: str, gpu: str, price: float, *, count: int = 1, currency: str = "USD",
          period: Period = Period.HOUR, in_stock: bool = True) -> Offer:
    return Offer(provider=provider, sku=sku, gpu=gpu, gpu_name=gpu.upper(), gpu_count=count, price=price,
                 currency=currency, period=period, in_stock=in_stock)


def result(provider: str, minute: int, offers: list[Offer], status: PollStatus = PollStatus.OK,
           error: str | None = None) -> PollResult:
    at = T0 + timedelta(minutes=minute)
    return PollResult(provider=provider, status=status, offers=offers, error=error, started_at=at, finished_at=at)


@pytest.fixture
async def sm(migrated_database_url: str) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    engine = make_engine(migrated_database_url)
    sm = make_sessionmaker(engine)
    await record_poll(sm, result("runpod", 0, [
        offer("runpod", "h100", "h100-sxm", 2.5),
        offer("runpod", "h100x8", "h100-sxm", 16.0, count=8),  # 2.0 per GPU-hour
        offer("runpod", "4090", "rtx-4090", 0.5),
        offer("runpod", "a100", "a100-80gb", 1.2, in_stock=False),
    ]), rates=RATES)
    await record_poll(sm, result("selectel", 0, [
        offer("selectel", "s-h100", "h100-sxm", 146000, currency="RUB", period=Period.MONTH),  # 200 RUB/h
    ]), rates=RATES)
    yield sm
    await engine.dispose()


def skus(rows: list) -> list[str]:
    return [r.offer.sku for r in rows]


async def test_in_stock_cheapest_per_gpu_hour_first(sm: async_sessionmaker[AsyncSession]) -> None:
    async with sm() as s:
        rows = await in_stock_offers(s)
    assert skus(rows) == ["4090", "h100x8", "h100", "s-h100"]  # 40, 160, 200(USD 2.5), 200 RUB -> key order
    assert [r.price_per_gpu_hour_rub for r in rows] == [40.0, 160.0, 200.0, 200.0]
    assert rows[0].offer.url == "" and rows[0].first_seen == T0


async def test_filters(sm: async_sessionmaker[AsyncSession]) -> None:
    async with sm() as s:
        assert skus(await in_stock_offers(s, gpu="h100-sxm")) == ["h100x8", "h100", "s-h100"]
        assert skus(await in_stock_offers(s, gpu="h100-sxm", provider="selectel")) == ["s-h100"]
        assert skus(await in_stock_offers(s, min_count=2)) == ["h100x8"]
        assert skus(await in_stock_offers(s, where=lambda o: o.gpu_count == 1, limit=2)) == ["4090", "h100"]
        assert await in_stock_offers(s, gpu="a100-80gb") == []  # listed but not in stock


async def test_missing_offer_within_hysteresis_is_not_listed(sm: async_sessionmaker[AsyncSession]) -> None:
    await record_poll(sm, result("runpod", 1, [offer("runpod", "h100", "h100-sxm", 2.5),
                                               offer("runpod", "4090", "rtx-4090", 0.5),
                                               offer("runpod", "a100", "a100-80gb", 1.2, in_stock=False)]))
    async with sm() as s:
        assert "h100x8" not in skus(await in_stock_offers(s))


async def test_provider_health_list(sm: async_sessionmaker[AsyncSession]) -> None:
    await record_poll(sm, result("selectel", 1, [], PollStatus.FAILED, "timeout after 3 attempts"))
    async with sm() as s:
        health = await provider_health(s)
    assert [(h.provider, h.status, h.reason, h.last_offer_count) for h in health] == [
        ("runpod", "ok", None, 4), ("selectel", "degraded", "timeout after 3 attempts", 0)]
    assert health[1].last_success == T0
    assert health[1].last_error_at == T0 + timedelta(minutes=1)


async def test_price_history_cheapest_per_provider(sm: async_sessionmaker[AsyncSession]) -> None:
    runpod = [offer("runpod", "h100", "h100-sxm", 2.5), offer("runpod", "h100x8", "h100-sxm", 16.0, count=8),
              offer("runpod", "4090", "rtx-4090", 0.5), offer("runpod", "a100", "a100-80gb", 1.2, in_stock=False)]
    # minute 5: the 8x gets cheaper (1.5/GPU-h); minute 10: it sells out (listed unavailable); the 1x remains
    runpod[1] = offer("runpod", "h100x8", "h100-sxm", 12.0, count=8)
    await record_poll(sm, result("runpod", 5, runpod), rates=RATES)
    runpod[1] = offer("runpod", "h100x8", "h100-sxm", 12.0, count=8, in_stock=False)
    await record_poll(sm, result("runpod", 10, runpod), rates=RATES)
    async with sm() as s:
        series = await price_history(s, "h100-sxm")
        usd = await price_history(s, "h100-sxm", currency="USD", since=T0 + timedelta(minutes=7))
        eights = await price_history(s, "h100-sxm", min_count=8)
    got = {x.provider: [(int((p.at - T0).total_seconds() // 60), p.price) for p in x.points] for x in series}
    assert got == {"runpod": [(0, 160.0), (5, 120.0), (10, 200.0)], "selectel": [(0, 200.0)]}
    assert [(p.at, p.price) for p in usd[0].points] == [(T0 + timedelta(minutes=7), 1.5), (T0 + timedelta(minutes=10),
                                                                                            2.5)]
    assert [p.price for p in eights[0].points] == [160.0, 120.0, None]


async def test_unknown_gpu_names_follow_the_latest_listing_changed_or_not(
        sm: async_sessionmaker[AsyncSession]) -> None:
    """An unknown card listed again unchanged still counts; once a trusted poll no longer lists it, it does not; a
    failed poll changes nothing."""
    def polled(minute: int, unknown: int, status: PollStatus = PollStatus.OK) -> PollResult:
        offers = [offer("lium", "h100", "h100-sxm", 2.0)]  # a known card, unchanged throughout
        offers += [Offer(provider="lium", sku=f"mi-{i}", gpu=None, gpu_name="MI350X", gpu_count=1, price=3.0,
                         currency="USD", period=Period.HOUR, in_stock=True) for i in range(unknown)]
        return result("lium", minute, offers, status=status,
                      error=None if status is PollStatus.OK else "HTTP 502")

    async def counted() -> dict[str, int]:
        async with sm() as session:
            return (await unknown_gpu_offers(session)).get("lium", {})

    await record_poll(sm, polled(1, 2), rates=RATES)
    assert await counted() == {"MI350X": 2}
    await record_poll(sm, polled(2, 2), rates=RATES)  # the same listing again: nothing written but last_seen
    assert await counted() == {"MI350X": 2}
    await record_poll(sm, polled(3, 1), rates=RATES)
    assert await counted() == {"MI350X": 1}
    await record_poll(sm, polled(4, 0, PollStatus.FAILED), rates=RATES)  # not trusted: the last listing stands
    assert await counted() == {"MI350X": 1}
    await record_poll(sm, polled(5, 0), rates=RATES)
    assert await counted() == {}
