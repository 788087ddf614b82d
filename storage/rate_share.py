"""Replicas split Telegram's overall rate limit between them.

Telegram counts about 30 messages a second per bot, however many processes send for it. Each sending replica keeps
a row in `rate_shares` alive (renewed every third of `ttl`, by the database's clock, as the leader lease is) and
paces itself at its equal part of the limit: the overall rate divided by the replicas whose rows have not expired.
One short transaction per renewal, never one per message. A replica that stops deletes its row, so the others take
its part back at their next renewal; one that dies leaves a row that expires after `ttl`. Until a newcomer is seen
(at most a third of `ttl`), the replicas together may exceed the limit; Telegram then answers 429 with a
`retry_after`, which every sending path waits out and retries (bot.pacing), so nothing is lost.

    share = RateShare(sessionmaker, pacer, ttl=15)
    task = asyncio.create_task(share.run(stop_event))   # returns after checking out once `stop_event` is set
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Protocol

from sqlalchemy import Table
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from storage import members
from storage.lease import default_holder_id
from storage.lease_tables import RateShareRow

log = logging.getLogger(__name__)

_TABLE: Table = RateShareRow.__table__  # type: ignore[assignment]


class Paced(Protocol):
    """What paces this replica's sends (`bot.pacing.Pacer`)."""

    replicas: int

    def share(self, replicas: int) -> None: ...


async def check_in(sessionmaker: async_sessionmaker[AsyncSession], replica: str, ttl: float) -> int:
    """Say `replica` sends for the next `ttl` seconds; returns how many replicas do (itself included)."""
    return len(await members.check_in(sessionmaker, _TABLE, replica, ttl))


async def check_out(sessionmaker: async_sessionmaker[AsyncSession], replica: str) -> None:
    await members.check_out(sessionmaker, _TABLE, replica)


class RateShare:
    """Keeps this replica's row alive and its `Pacer` at its part of the overall limit."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], pacer: Paced, *, ttl: float = 15.0,
                 replica: str | None = None) -> None:
        if ttl <= 0:
            raise ValueError("ttl must be positive")
        self.sessionmaker = sessionmaker
        self.pacer = pacer
        self.ttl = ttl
        self.replica = replica or default_holder_id()

    async def renew(self) -> int:
        replicas = await check_in(self.sessionmaker, self.replica, self.ttl)
        if replicas != self.pacer.replicas:
            log.info("%d replica(s) send to Telegram: this one keeps 1/%d of the overall limit", replicas, replicas)
        self.pacer.share(replicas)
        return replicas

    async def run(self, stop: asyncio.Event) -> None:
        try:
            while not stop.is_set():
                try:
                    await self.renew()
                except Exception:  # keep the last share: a database hiccup must not stop the sending
                    log.warning("could not renew this replica's share of Telegram's rate limit", exc_info=True)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.ttl / 3)
        finally:
            try:
                await check_out(self.sessionmaker, self.replica)
            except Exception:  # the row expires by itself
                log.warning("could not give back this replica's share of Telegram's rate limit", exc_info=True)
