"""Bounded storage: what is kept, for how long, and at which resolution. Run by the scraper leader (one replica),
in short batched transactions, on SQLite and PostgreSQL alike.

- Price history: raw points (one per price or availability change) for `raw_days`; older ones are thinned to the
  last point of each hour per configuration until `hourly_days`, then to the last point of each day until
  `daily_days`, then deleted. A configuration's history is a step function, so the last point of a bucket is its
  state at the bucket's end: charts over weeks and months keep their shape with a bounded number of points.
  Progress is kept in `retention_marks`, so each run thins only the time it has not thinned yet.
- Offer events and scrape runs after `events_days` / `runs_days` (the last runs of each provider are always kept:
  the shrink verdict reads them); queued alert events after `alert_events_days` (longer than a sender ever owes
  anyone one, see storage.outbox.MAX_EVENT_AGE); sent and failed alert deliveries after `deliveries_days`; the
  cooldown memory of offers not alerted for `events_days`; the subscription change log after a day; the users owed
  a withdrawn alert after MAX_EVENT_AGE (a sender reads none older).
- Availability statistics' changes and observed stretches after 31 days (storage/availability.py), each series
  keeping the change in force at the cut.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from sqlalchemy import Table, delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from storage.alert_tables import AlertDelivery, AlertEventRow, AlertOwed, DeliveryState, OfferAlertState
from storage.availability import prune_availability
from storage.ingest import HISTORY_RUNS
from storage.offer_tables import OfferEventRow, PricePoint, ScrapeRun
from storage.outbox import MAX_EVENT_AGE
from storage.retention_settings import RetentionSettings
from storage.retention_tables import RetentionMark
from storage.user_tables import SubscriptionChange

log = logging.getLogger(__name__)
CHANGES_KEPT = 86_400.0  # seconds of the subscription change log kept


@dataclass
class RetentionReport:
    deleted: dict[str, int] = field(default_factory=dict)

    def add(self, what: str, n: int) -> None:
        self.deleted[what] = self.deleted.get(what, 0) + n


async def _delete_ids(sm: async_sessionmaker[AsyncSession], table: Any, ids: Sequence[int], batch: int) -> int:
    done = 0
    for i in range(0, len(ids), batch):
        chunk = list(ids[i:i + batch])
        async with sm() as s, s.begin():
            await s.execute(delete(table).where(table.c.id.in_(chunk)))
        done += len(chunk)
    return done


async def _delete_where(sm: async_sessionmaker[AsyncSession], table: Any, condition: Any, batch: int) -> int:
    """Delete matching rows `batch` at a time, each batch its own transaction (writers are never held long)."""
    done = 0
    while True:
        async with sm() as s, s.begin():
            ids = (await s.scalars(select(table.c.id).where(condition).limit(batch))).all()
            if not ids:
                return done
            await s.execute(delete(table).where(table.c.id.in_(ids)))
        done += len(ids)
        if len(ids) < batch:
            return done


async def _mark(sm: async_sessionmaker[AsyncSession], name: str) -> datetime | None:
    async with sm() as s:
        mark = await s.get(RetentionMark, name)
        return None if mark is None else mark.upto


async def _set_mark(sm: async_sessionmaker[AsyncSession], name: str, upto: datetime) -> None:
    async with sm() as s, s.begin():
        mark = await s.get(RetentionMark, name)
        if mark is None:
            s.add(RetentionMark(name=name, upto=upto))
        else:
            mark.upto = upto


def _floor(at: datetime, unit: str) -> datetime:
    at = at.replace(minute=0, second=0, microsecond=0)
    return at.replace(hour=0) if unit == "day" else at


async def _thin(sm: async_sessionmaker[AsyncSession], unit: str, until: datetime, batch: int) -> int:
    """Keep only the last point of each `unit` per configuration for points older than `until` (and newer than what
    an earlier run already thinned), a day of history at a time, whole buckets only."""
    name = f"price_history_{unit}"
    t = cast(Table, PricePoint.__table__)
    until = _floor(until, unit)
    start = await _mark(sm, name)
    if start is None:
        async with sm() as s:
            start = await s.scalar(select(func.min(t.c.at)))
        if start is None:
            return 0
    start = _floor(start if start.tzinfo else start.replace(tzinfo=UTC), "day")
    if start >= until:
        return 0
    deleted = 0
    day = start
    while day < until:
        end = min(day + timedelta(days=1), until)
        async with sm() as s:
            rows = (await s.execute(select(t.c.id, t.c.offer_key, t.c.at)
                                    .where(t.c.at >= day, t.c.at < end))).all()
        last: dict[tuple[str, datetime], tuple[datetime, int]] = {}
        for r in rows:
            bucket = (r.offer_key, _floor(r.at, unit))
            mark = (r.at, r.id)
            if bucket not in last or mark > last[bucket]:
                last[bucket] = mark
        keep = {i for _, i in last.values()}
        deleted += await _delete_ids(sm, t, [r.id for r in rows if r.id not in keep], batch)
        day = end
    await _set_mark(sm, name, until)
    return deleted


async def run_retention(sm: async_sessionmaker[AsyncSession], settings: RetentionSettings,
                        now: datetime | None = None) -> RetentionReport:
    """One pass over every table; safe to repeat and to interrupt (each batch commits on its own)."""
    now = now or datetime.now(UTC)
    s = settings
    report = RetentionReport()
    days = timedelta(days=1)

    if s.raw_days:
        report.add("price_history (to hourly)", await _thin(sm, "hour", now - s.raw_days * days, s.batch))
    if s.hourly_days:
        report.add("price_history (to daily)", await _thin(sm, "day", now - s.hourly_days * days, s.batch))
    if s.daily_days:
        t = cast(Table, PricePoint.__table__)
        report.add("price_history", await _delete_where(sm, t, t.c.at < now - s.daily_days * days, s.batch))
    if s.events_days:
        t = cast(Table, OfferEventRow.__table__)
        report.add("offer_events", await _delete_where(sm, t, t.c.at < now - s.events_days * days, s.batch))
        a = cast(Table, OfferAlertState.__table__)
        async with sm() as session, session.begin():
            result = await session.execute(delete(a).where(a.c.last_alert_at < now - s.events_days * days))
        report.add("alert_offer_state", int(result.rowcount or 0))  # type: ignore[attr-defined]
    if s.runs_days:
        report.add("scrape_runs", await _prune_runs(sm, now - s.runs_days * days, s.batch))
    # Availability statistics' aggregates keep their own window (31 days), whatever the raw history keeps.
    report.add("availability", await prune_availability(sm, now, batch=s.batch))
    t = cast(Table, AlertEventRow.__table__)
    report.add("alert_events", await _delete_where(sm, t, t.c.created_at < now - s.alert_events_days * days,
                                                   s.batch))
    t = cast(Table, AlertOwed.__table__)
    async with sm() as session, session.begin():  # few rows (a user per offer they were planned past): one statement
        result = await session.execute(delete(t).where(t.c.created_at < now - MAX_EVENT_AGE))
    report.add("alert_owed", int(result.rowcount or 0))  # type: ignore[attr-defined]
    if s.deliveries_days:
        t = cast(Table, AlertDelivery.__table__)
        done = t.c.state.in_((DeliveryState.SENT, DeliveryState.FAILED))
        report.add("alert_deliveries", await _delete_where(
            sm, t, done & (t.c.created_at < now - s.deliveries_days * days), s.batch))
    # The subscription change log (storage.outbox.FanOut reads seconds-old rows; a sender that finds its position
    # trimmed rebuilds its index): a day of it.
    t = cast(Table, SubscriptionChange.__table__)
    report.add("subscription_changes", await _delete_where(sm, t, t.c.at < now.timestamp() - CHANGES_KEPT, s.batch))
    if any(report.deleted.values()):
        log.info("retention: %s", ", ".join(f"{k} -{v}" for k, v in report.deleted.items() if v))
    return report


async def _prune_runs(sm: async_sessionmaker[AsyncSession], before: datetime, batch: int) -> int:
    """Runs older than `before`, except each provider's last HISTORY_RUNS (their events go with them)."""
    t = cast(Table, ScrapeRun.__table__)
    async with sm() as s:
        providers = (await s.scalars(select(t.c.provider).distinct())).all()
        floors = {}
        for p in providers:
            ids = (await s.scalars(select(t.c.id).where(t.c.provider == p).order_by(t.c.id.desc())
                                   .limit(HISTORY_RUNS))).all()
            floors[p] = min(ids) if ids else 0
    done = 0
    for p, floor in floors.items():
        done += await _delete_where(sm, t, (t.c.provider == p) & (t.c.id < floor) & (t.c.started_at < before), batch)
    return done


async def storage_figures(sm: async_sessionmaker[AsyncSession]) -> dict[str, int]:
    """Rows per table (benches and the admin)."""
    out = {}
    async with sm() as s:
        for table in (PricePoint, OfferEventRow, ScrapeRun, AlertEventRow, AlertDelivery):
            out[table.__tablename__] = int(await s.scalar(select(func.count()).select_from(table)) or 0)
    return out

