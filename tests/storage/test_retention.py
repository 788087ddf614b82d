"""Bounded storage on a real database (SQLite file, or PostgreSQL with TEST_DATABASE_URL): raw price points kept for
days, then the last point of each hour, then of each day, then none; old events, runs (but never a provider's last
ones), queued alert events and finished deliveries pruned; a second run has nothing left to do."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import func, insert, select

from storage.alert_tables import AlertDelivery, AlertEventRow, AlertOwed
from storage.ingest import HISTORY_RUNS
from storage.offer_tables import OfferEventRow, PricePoint, ScrapeRun
from storage.outbox import MAX_EVENT_AGE
from storage.retention import run_retention
from storage.retention_settings import RetentionSettings
from storage.user_tables import User

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
SETTINGS = RetentionSettings(raw_days=7, hourly_days=30, daily_days=90, events_days=30, runs_days=30,
                             alert_events_days=3, deliveries_days=7, batch=100)


def point(key: str, at: datetime, price: float) -> dict:
    return {"offer_key": key, "provider": "vastai", "gpu": "h100-sxm", "gpu_count": 1, "at": at, "price": price,
            "currency": "USD", "period": "hour", "price_per_gpu_hour_rub": price * 80, "price_per_gpu_hour_usd": price,
            "in_stock": True, "available": 1}


async def test_price_history_is_thinned_by_age_and_old_rows_pruned(sm) -> None:
    rows = []
    # Every 10 minutes for 100 days, two configurations: 14,400 points each.
    for key in ("a", "b"):
        for i in range(100 * 24 * 6):
            rows.append(point(key, NOW - timedelta(minutes=10 * i), 1.0 + i / 100_000))
    async with sm() as s, s.begin():
        await s.execute(insert(PricePoint), rows)
        s.add(User(id=1, chat_id=1))
        await s.flush()
        run_ids = []
        for day in reversed(range(60)):  # a run a day for 60 days (oldest first, as ids grow), one event each
            run = ScrapeRun(provider="vastai", started_at=NOW - timedelta(days=day), finished_at=NOW,
                            reported_status="ok", status="ok", offer_count=1, event_count=1)
            s.add(run)
            await s.flush()
            run_ids.append(run.id)
            s.add(OfferEventRow(run_id=run.id, offer_key="a", kind="appeared", provider="vastai", gpu="h100-sxm",
                                gpu_count=1, at=NOW - timedelta(days=day), currency="USD", offer={}))
        for day in range(6):
            s.add(AlertEventRow(dedup_key=f"a|appeared|{day}", offer_key="a", event_kind="appeared", payload={},
                                created_at=NOW - timedelta(days=day)))
            if day < 3:
                s.add(AlertOwed(user_id=1, offer_key=f"o{day}", withdrawal_id=day,
                                created_at=NOW - MAX_EVENT_AGE + timedelta(hours=1 - 2 * day)))
            for state in ("sent", "failed", "queued"):
                s.add(AlertDelivery(user_id=1, chat_id=1, text="x", state=state, attempts=1,
                                    not_before=NOW, created_at=NOW - timedelta(days=day * 3)))

    report = await run_retention(sm, SETTINGS, NOW)

    async with sm() as s:
        ats = [a if a.tzinfo else a.replace(tzinfo=UTC) for a in
               (await s.scalars(select(PricePoint.at).where(PricePoint.offer_key == "a"))).all()]
        # Thinning works in whole buckets: the hourly cut is NOW - 7 days (12:00), the daily cut that day's midnight.
        daily_cut = (NOW - timedelta(days=30)).replace(hour=0)
        raw = [a for a in ats if a >= NOW - timedelta(days=7)]
        hourly = [a for a in ats if daily_cut <= a < NOW - timedelta(days=7)]
        daily = [a for a in ats if a < daily_cut]
        assert len(raw) == 7 * 24 * 6 + 1  # untouched
        assert len(hourly) == int(23.5 * 24)  # one point per hour
        assert len({(a.date(), a.hour) for a in hourly}) == len(hourly)
        assert all(a.minute == 50 for a in hourly)  # the hour's last point: its state at the hour's end
        assert len(daily) == 60  # one point per day, none older than 90 days
        assert min(daily) >= NOW - timedelta(days=90)
        assert all((a.hour, a.minute) == (23, 50) for a in daily)
        runs = (await s.scalars(select(ScrapeRun.id))).all()
        assert len(runs) == 31  # 30 days (started at NOW - 0..30 days is >= the cut) ...
        assert len(runs) >= HISTORY_RUNS  # ...and never fewer than the shrink verdict reads
        events = (await s.scalars(select(OfferEventRow.at))).all()
        assert len(events) == 31
        assert await s.scalar(select(func.count()).select_from(AlertEventRow)) == 4  # not older than 3 days
        # owed users are read for MAX_EVENT_AGE: the one an hour inside it kept, those past it gone
        assert (await s.scalars(select(AlertOwed.offer_key))).all() == ["o0"]
        states = sorted((await s.scalars(select(AlertDelivery.state))).all())
        # finished deliveries older than 7 days are gone; queued ones are never deleted
        assert states.count("queued") == 6 and states.count("sent") == states.count("failed") == 3
    assert report.deleted["price_history (to hourly)"] > 0

    again = await run_retention(sm, SETTINGS, NOW)
    assert not any(again.deleted.values())  # idempotent: nothing left to do


async def test_a_providers_last_runs_are_kept_however_old(sm) -> None:
    async with sm() as s, s.begin():
        for day in reversed(range(HISTORY_RUNS + 5)):
            s.add(ScrapeRun(provider="selectel", started_at=NOW - timedelta(days=400 + day), finished_at=NOW,
                            reported_status="ok", status="ok", offer_count=1, event_count=0))
    await run_retention(sm, SETTINGS, NOW)
    async with sm() as s:
        assert await s.scalar(select(func.count()).select_from(ScrapeRun)) == HISTORY_RUNS
