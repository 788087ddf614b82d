"""Paid broadcasts' Stars budget, shared by restarts and replicas through the database (`storage.paid_spend`).

The budget is per period, by UTC calendar (SENDER__PAID_BROADCAST_BUDGET_PERIOD: "month", the default, or "day"):
every sender of the bot, and every restart of one, counts against the same period's row. A sender takes attempts
from it a slice at a time (a tenth of a second's worth at the paid rate) before sending them, so checking the
budget on the hot path is a decrement in memory, and one write buys a hundred sends at 1,000 a second. What a
clean stop did not use goes back; a kill leaves at most one slice counted but unsent (never the other way round).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.delivery.claims import WriteSession
from storage.paid_spend import BudgetPeriod, give_back_paid, paid_spent, period_bounds, period_key, reserve_paid

log = logging.getLogger(__name__)


class StarsBudget:
    """`cap` paid attempts per period; `take()` spends one already reserved, `refill()` reserves more."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], write: WriteSession, *, cap: int,
                 slice_size: int, period: BudgetPeriod, clock: Callable[[], datetime]) -> None:
        self.sessionmaker = sessionmaker
        self._write = write
        self.cap = cap
        self.slice = max(1, slice_size)
        self.period = period
        self.clock = clock
        self.left = 0  # attempts reserved in the database for `key` and not used yet
        self.key: str | None = None  # the period they were reserved in
        self.spent_key: str | None = None  # a period whose budget was found spent
        self._key = ""
        self._key_from = self._key_until = datetime.min.replace(tzinfo=UTC)
        self._lock = asyncio.Lock()
        self._topping: asyncio.Task[bool] | None = None

    def current(self) -> str:
        now = self.clock()
        if not self._key_from <= now < self._key_until:  # strftime once per period, not once per send
            self._key = period_key(now, self.period)
            self._key_from, self._key_until = period_bounds(now, self.period)
        return self._key

    def take(self) -> bool:
        """Spend one reserved attempt of the current period; False when none is reserved (call `refill`)."""
        if self.left <= 0 or self.key != self.current():
            return False
        self.left -= 1
        if self.left < self.slice // 2 and self._topping is None:
            # Reserve the next slice while this one is still being spent, so a send seldom waits for the write.
            self._topping = asyncio.get_running_loop().create_task(self._top_up())
        return True

    async def _top_up(self) -> bool:
        try:
            return await self.refill()
        except Exception:  # the database is away: the next take() finds nothing and refill() tries again
            log.warning("reserving paid broadcast Stars failed", exc_info=True)
            return False
        finally:
            self._topping = None

    async def refill(self) -> bool:
        """Reserve up to a slice more; False when the current period's budget is spent (nothing is reserved)."""
        async with self._lock:
            key = self.current()
            if self.key != key and self.left:
                await self.give_back()  # a new period: the old one's unused attempts go back to it
            if self.left >= self.slice:
                return True
            if self.spent_key == key:
                return self.left > 0
            async with self._write() as session:
                got = await reserve_paid(session, key, self.slice - self.left, self.cap)
            if got:
                self.key, self.left = key, self.left + got
            elif self.left <= 0:
                self.spent_key = key
            return self.left > 0

    def period_changed(self) -> bool:
        """A new period began since this period's budget was found spent (paid broadcasts may start again)."""
        return self.spent_key is not None and self.spent_key != self.current()

    async def give_back(self) -> None:
        """Return the reserved attempts not used (a clean stop, or a new period)."""
        if self.left and self.key is not None:
            async with self._write() as session:
                await give_back_paid(session, self.key, self.left)
        self.left = 0

    async def spent(self) -> int:
        """Attempts of the current period taken so far by every sender (for the log and tests)."""
        async with self.sessionmaker() as session:
            return await paid_spent(session, self.current())

    async def close(self) -> None:
        if self._topping is not None:
            self._topping.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._topping
        async with self._lock:
            await self.give_back()

