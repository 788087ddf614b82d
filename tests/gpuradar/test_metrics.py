"""Prometheus metrics: recorded values appear in the exposition, database gauges refresh from a real store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gpuradar import metrics as metrics_module
from gpuradar.metrics import Metrics, offers_refresher
from storage.db import Base, make_engine, make_sessionmaker
from storage.offer_tables import CurrentOffer, ProviderHealth


def samples(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Parse our own exposition the way Prometheus would: (sample name, sorted labels) -> value."""
    out = {}
    for family in text_string_to_metric_families(metrics.render().decode()):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_scrape_observations_by_provider_and_verdict() -> None:
    m = Metrics(process=False)
    m.observe_scrape("vast", 0.3, "ok", offers=120)
    m.observe_scrape("vast", 2.0, "suspect", offers=0)  # a captcha page: must not zero the offer count
    m.observe_scrape("runpod", 0.1, "FAILED")
    s = samples(m)
    assert s[("gpuradar_scrapes_total", (("provider", "vast"), ("status", "ok")))] == 1
    assert s[("gpuradar_scrapes_total", (("provider", "vast"), ("status", "suspect")))] == 1
    assert s[("gpuradar_scrapes_total", (("provider", "runpod"), ("status", "failed")))] == 1
    assert s[("gpuradar_scrape_offers", (("provider", "vast"),))] == 120
    assert ("gpuradar_scrape_offers", (("provider", "runpod"),)) not in s
    assert s[("gpuradar_scrape_duration_seconds_count", (("provider", "vast"),))] == 2
    assert s[("gpuradar_scrape_duration_seconds_sum", (("provider", "vast"),))] == pytest.approx(2.3)
    assert s[("gpuradar_scrape_duration_seconds_bucket", (("le", "0.5"), ("provider", "vast")))] == 1
    assert s[("gpuradar_scrape_last_success_timestamp_seconds", (("provider", "vast"),))] > 0
    with pytest.raises(ValueError):
        m.observe_scrape("vast", 1.0, "maybe")


def test_alert_counters_outbox_and_leader() -> None:
    m = Metrics(process=False)
    m.alert_sent()
    m.alert_sent(4)
    m.alert_failed("blocked")
    m.telegram_rate_limited()
    m.telegram_rate_limited("sendPhoto")
    m.set_outbox(pending=7, oldest_age_seconds=42.5)
    m.set_leader("scrapers", True)
    s = samples(m)
    assert s[("gpuradar_alerts_sent_total", ())] == 5
    assert s[("gpuradar_alerts_failed_total", (("reason", "blocked"),))] == 1
    assert s[("gpuradar_telegram_429_total", (("method", "sendMessage"),))] == 1
    assert s[("gpuradar_telegram_429_total", (("method", "sendPhoto"),))] == 1
    assert s[("gpuradar_alerts_pending", ())] == 7
    assert s[("gpuradar_outbox_oldest_pending_age_seconds", ())] == 42.5
    assert s[("gpuradar_leader", (("lease", "scrapers"),))] == 1
    m.set_outbox(pending=0, oldest_age_seconds=None)  # an empty outbox has no oldest row
    m.set_leader("scrapers", False)
    s = samples(m)
    assert s[("gpuradar_outbox_oldest_pending_age_seconds", ())] == 0
    assert s[("gpuradar_leader", (("lease", "scrapers"),))] == 0


def test_module_functions_record_into_the_process_registry() -> None:
    before = samples(metrics_module.METRICS).get(("gpuradar_alerts_sent_total", ()), 0)
    metrics_module.alert_sent(2)
    metrics_module.observe_scrape("selectel", 0.2, "ok", offers=3)
    after = samples(metrics_module.METRICS)
    assert after[("gpuradar_alerts_sent_total", ())] == before + 2
    assert after[("gpuradar_scrape_offers", (("provider", "selectel"),))] == 3


async def test_failing_refresher_is_counted_and_others_still_run() -> None:
    m = Metrics(process=False)

    async def broken() -> None:
        raise ConnectionError("database gone")

    async def outbox() -> None:
        m.set_outbox(3, 10.0)

    m.add_refresher(broken)
    m.add_refresher(outbox)
    await m.refresh()
    s = samples(m)
    assert s[("gpuradar_metrics_refresh_errors_total", ())] == 1
    assert s[("gpuradar_alerts_pending", ())] == 3


def _offer(key: str, provider: str, in_stock: bool) -> CurrentOffer:
    now = datetime.now(UTC)
    return CurrentOffer(
        key=key, provider=provider, sku=key, gpu="a100-80gb", gpu_name="A100 80GB", gpu_count=1, gpu_memory_gb=80.0,
        location="x", billing="hourly", price=100.0, currency="RUB", period="hour", listed_in_stock=in_stock,
        available=None, url="", price_per_gpu_hour_rub=100.0, price_per_gpu_hour_usd=1.2, in_stock=in_stock,
        missing=0, ref_price=100.0, first_seen=now, last_seen=now, updated_at=now,
    )  # fmt: skip


async def test_offers_in_stock_refresh_from_the_store(database_url: str) -> None:
    engine = make_engine(database_url)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(Base.metadata.create_all, tables=[CurrentOffer.__table__, ProviderHealth.__table__])
        sm: async_sessionmaker[AsyncSession] = make_sessionmaker(engine)
        async with sm() as session, session.begin():
            session.add_all([
                _offer("v1", "vast", True), _offer("v2", "vast", True), _offer("v3", "vast", False),
                _offer("s1", "selectel", True),
            ])  # fmt: skip
        m = Metrics(process=False)
        m.add_refresher(offers_refresher(sm, m))
        await m.refresh()
        s = samples(m)
        assert s[("gpuradar_offers_in_stock", (("provider", "vast"),))] == 2
        assert s[("gpuradar_offers_in_stock", (("provider", "selectel"),))] == 1
        async with sm() as session, session.begin():
            await session.delete(await session.get(CurrentOffer, "s1"))
        await m.refresh()
        s = samples(m)
        assert ("gpuradar_offers_in_stock", (("provider", "selectel"),)) not in s  # gone from the store, gone here
        assert s[("gpuradar_metrics_refresh_errors_total", ())] == 0
    finally:
        await engine.dispose()


async def test_offers_with_an_unknown_gpu_are_a_metric_per_provider(database_url: str) -> None:
    engine = make_engine(database_url)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(Base.metadata.create_all, tables=[CurrentOffer.__table__, ProviderHealth.__table__])
        sm: async_sessionmaker[AsyncSession] = make_sessionmaker(engine)
        now = datetime.now(UTC)
        rows = [_offer("h1", "hyperstack", True), _offer("h2", "hyperstack", False), _offer("h3", "hyperstack", True),
                _offer("old", "hyperstack", False), _offer("v1", "vast", True)]
        for row in rows:
            row.last_seen = now  # one poll listed them all
        for row in rows[:3]:
            row.gpu, row.gpu_name = None, "H100-80G-PCIe-NVLink-X"
        rows[3].gpu, rows[3].gpu_name, rows[3].last_seen = None, "Gone-GPU", now - timedelta(days=1)
        async with sm() as session, session.begin():
            session.add_all(rows)
            # that poll was each provider's latest trusted one
            session.add_all([ProviderHealth(provider=p, status="ok", since=now, last_poll=now, last_success=now)
                             for p in ("hyperstack", "vast")])
        m = Metrics(process=False)
        m.add_refresher(offers_refresher(sm, m))
        await m.refresh()
        s = samples(m)
        # in stock or not, as long as the latest trusted poll listed it; the one no longer listed does not count
        assert s[("gpuradar_offers_unknown_gpu", (("provider", "hyperstack"),))] == 3
        assert ("gpuradar_offers_unknown_gpu", (("provider", "vast"),)) not in s
    finally:
        await engine.dispose()


def test_a_trusted_poll_reports_its_offers_with_an_unknown_gpu_at_once() -> None:
    m = Metrics(process=False)
    m.observe_scrape("hyperstack", 0.2, "ok", offers=40, unknown_gpu=3)
    m.observe_scrape("lium", 0.2, "suspect", offers=0, unknown_gpu=9)  # an untrusted poll says nothing
    s = samples(m)
    assert s[("gpuradar_scrape_unknown_gpu_offers", (("provider", "hyperstack"),))] == 3
    assert ("gpuradar_scrape_unknown_gpu_offers", (("provider", "lium"),)) not in s


async def test_the_outbox_gauge_counts_alerts_not_their_withdrawals(sm) -> None:
    """An offer alerted on, then sold out before anyone heard it: one alert row and one withdrawal row; the gauge
    of alerts pending counts the alert only."""
    from core.changes import EventKind
    from gpuradar.db_metrics import outbox_refresher
    from storage.outbox import OutboxWriter
    from tests.storage.test_outbox_helpers import T0, add_sub, add_user, enqueue, event, offer, queued

    await add_user(sm, 1)
    await add_sub(sm, 1)
    writer = OutboxWriter()
    await enqueue(sm, writer, [event(offer())])
    await enqueue(sm, writer, [event(offer(in_stock=False), EventKind.SOLD_OUT, at=T0 + timedelta(minutes=5))],
                  T0 + timedelta(minutes=5))
    assert len(await queued(sm)) == 2
    m = Metrics(process=False)
    await outbox_refresher(sm, m)()
    assert samples(m)[("gpuradar_alerts_pending", ())] == 1
