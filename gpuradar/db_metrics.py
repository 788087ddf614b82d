"""Gauges read from the shared database just before each `/metrics` scrape (see `gpuradar.metrics`).

They describe shared state, so every replica reports the same values whichever replica wrote the rows.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gpuradar.metrics import Metrics, Refresher
from storage.alert_tables import ALERT_ROW_KINDS, AlertDelivery, AlertEventRow, DeliveryState
from storage.user_tables import User

UNSENT = (DeliveryState.QUEUED, DeliveryState.SENDING)


def outbox_refresher(sessionmaker: async_sessionmaker[AsyncSession], metrics: Metrics) -> Refresher:
    """Alerts waiting and the age of the oldest: messages written but not yet sent, plus queued events no sender
    has started on yet (newer than every user's cursor). A growing age is the first sign that sending is stuck."""

    async def refresh_outbox() -> None:
        async with sessionmaker() as session:
            unsent, oldest_unsent = (await session.execute(
                select(func.count(), func.min(AlertDelivery.created_at))
                .where(AlertDelivery.state.in_(UNSENT)))).one()
            started = select(func.coalesce(func.max(User.alert_cursor), 0)).scalar_subquery()
            fresh, oldest_fresh = (await session.execute(
                select(func.count(), func.min(AlertEventRow.created_at))
                .where(AlertEventRow.id > started, AlertEventRow.event_kind.in_(ALERT_ROW_KINDS)))).one()
        ages = [_age(t) for t in (oldest_unsent, oldest_fresh) if t is not None]
        metrics.set_outbox(int(unsent) + int(fresh), max(ages) if ages else None)

    return refresh_outbox


def _age(t: datetime) -> float:
    if t.tzinfo is None:  # stored as UTC; a driver may hand it back naive
        t = t.replace(tzinfo=UTC)
    return (datetime.now(UTC) - t).total_seconds()
