"""Gauges read from the shared database just before each `/metrics` scrape (see `gpuradar.metrics`).

They describe shared state, so every replica reports the same values whichever replica wrote the rows.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gpuradar.metrics import Metrics, Refresher
from storage.alert_tables import AlertOutbox, OutboxState

# Rows not yet delivered: waiting to be claimed, or claimed into a message not yet sent.
UNSENT = (OutboxState.PENDING, OutboxState.CLAIMED)


def outbox_refresher(sessionmaker: async_sessionmaker[AsyncSession], metrics: Metrics) -> Refresher:
    """Pending alerts and the age of the oldest one: a growing age is the first sign that sending is stuck."""

    async def refresh_outbox() -> None:
        async with sessionmaker() as session:
            pending, oldest = (await session.execute(
                select(func.count(), func.min(AlertOutbox.created_at)).where(AlertOutbox.state.in_(UNSENT)))).one()
        if oldest is not None and oldest.tzinfo is None:  # stored as UTC; a driver may hand it back naive
            oldest = oldest.replace(tzinfo=UTC)
        age = (datetime.now(UTC) - oldest).total_seconds() if oldest is not None else None
        metrics.set_outbox(int(pending), age)

    return refresh_outbox
