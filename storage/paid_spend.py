"""Paid broadcasts' budget, counted per period in the database (`paid_broadcast_spend`, migration 0016).

A sender takes paid attempts out of the period's budget BEFORE it sends them (`reserve_paid`, a few at a time), so
whatever happens next, a restarted sender, or another replica sending for the same bot, counts from what was taken:
the Stars asked for in a period never exceed its budget. A sender that stops cleanly gives back what it took and
did not use (`give_back_paid`); one that is killed leaves its unused attempts counted as spent (on the safe side:
at most one reservation's worth per kill).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Literal, cast

from sqlalchemy import select, update
from sqlalchemy.engine import CursorResult
from sqlalchemy.ext.asyncio import AsyncSession

from storage.alert_tables import PaidBroadcastSpend
from storage.upsert import upsert_insert

BudgetPeriod = Literal["month", "day"]


def period_key(now: datetime, period: BudgetPeriod) -> str:
    """The budget period `now` falls in, by UTC calendar: "2026-12" (month) or "2026-12-02" (day)."""
    return now.astimezone(UTC).strftime("%Y-%m" if period == "month" else "%Y-%m-%d")


def period_bounds(now: datetime, period: BudgetPeriod) -> tuple[datetime, datetime]:
    """Where the period `now` falls in starts and ends (UTC)."""
    now = now.astimezone(UTC)
    if period == "day":
        start = now.replace(hour=0, minute=0, second=0, microsecond=0)
        return start, start + timedelta(days=1)
    start = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    end = start.replace(year=start.year + 1, month=1) if start.month == 12 else start.replace(month=start.month + 1)
    return start, end


async def paid_spent(session: AsyncSession, period: str) -> int:
    """Paid attempts taken out of this period's budget so far."""
    return int(await session.scalar(select(PaidBroadcastSpend.attempts)
                                    .where(PaidBroadcastSpend.period == period)) or 0)


async def reserve_paid(session: AsyncSession, period: str, want: int, cap: int) -> int:
    """Take up to `want` paid attempts out of the period's `cap`, in the caller's transaction; returns how many were
    granted (0: the period's budget is spent). A compare-and-set on the count, so concurrent senders never take the
    same attempts twice."""
    if want <= 0:
        return 0
    t = PaidBroadcastSpend
    await session.execute(upsert_insert(session, t).on_conflict_do_nothing(index_elements=["period"]),
                          [{"period": period, "attempts": 0}])
    for _ in range(20):
        used = await paid_spent(session, period)
        n = min(want, cap - used)
        if n <= 0:
            return 0
        result = cast(CursorResult[tuple[()]], await session.execute(
            update(t).where(t.period == period, t.attempts == used).values(attempts=used + n)))
        if result.rowcount == 1:
            return n
    return 0  # contended all along: nothing taken this time (the caller goes at the free rate meanwhile)


async def give_back_paid(session: AsyncSession, period: str, n: int) -> None:
    """Return attempts taken and not used (a clean stop), in the caller's transaction."""
    if n <= 0:
        return
    t = PaidBroadcastSpend
    await session.execute(update(t).where(t.period == period, t.attempts >= n).values(attempts=t.attempts - n))
