"""The scrapers run on exactly one replica: the holder of the "scrapers" leader lease (`storage.lease`).

`ScrapeLeadership.run(stop)` campaigns for the lease; while this replica holds it, the scheduler polls the
providers, and when leadership is lost (or the process stops) the scheduler is shut down. Another replica takes
over within the lease TTL after the leader dies.

Fencing: a leader that stalls (a long GC pause, a lost network) may still be finishing a poll after its lease has
passed to another replica. Its ingest would then record the same change as the new leader's, and the alert would
go out twice. So the ingest transaction checks, before it writes the outbox, that the lease row still names this
replica with the same term and is unexpired; on PostgreSQL the check locks the row (`FOR UPDATE`), so a takeover
waits for this transaction to end instead of overlapping it. On SQLite the ingest already holds the single write
lock when the check runs, so no takeover can commit in between either.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from core.changes import OfferEvent
from storage.ingest import OnEvents
from storage.lease import LeaderLease, db_now
from storage.lease_tables import LeaseRow

log = logging.getLogger(__name__)

SCRAPERS_LEASE = "scrapers"


class LeadershipLost(RuntimeError):
    """Raised inside an ingest transaction when this replica no longer leads: the transaction rolls back."""


async def still_leading(session: AsyncSession, lease: LeaderLease, term: int) -> bool:
    """True when, inside `session`'s transaction, the lease row still names us with `term` and has not expired."""
    row = LeaseRow.__table__.c
    stmt = select(row.term).where(row.name == lease.name, row.holder == lease.holder, row.term == term,
                                  row.expires_at >= db_now(session.get_bind().dialect.name))
    if session.get_bind().dialect.name == "postgresql":
        stmt = stmt.with_for_update()  # a takeover's UPDATE waits until our ingest commits
    return (await session.execute(stmt)).scalar_one_or_none() is not None


def fenced(on_events: OnEvents | None, lease: LeaderLease, term: int) -> OnEvents:
    """Wrap the alert hook so it writes only while this replica still holds the lease with `term`."""

    async def hook(session: AsyncSession, events: list[OfferEvent]) -> None:
        if not await still_leading(session, lease, term):
            raise LeadershipLost(f"lease {lease.name} term {term} is no longer ours")
        if on_events is not None:
            outcome = on_events(session, events)
            if asyncio.iscoroutine(outcome):
                await outcome

    return hook


# `start(term)` starts polling and returns a closer; the closer stops it (awaited when leadership ends).
StartScraping = Callable[[int], Awaitable[Callable[[], Awaitable[None]]]]


class ScrapeLeadership:
    """Campaign for the scrapers' lease and run the scheduler only while holding it."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], start_scraping: StartScraping, *,
                 ttl: float = 30.0, on_change: Callable[[bool], Any] | None = None,
                 holder: str | None = None) -> None:
        self.lease = LeaderLease(sessionmaker, SCRAPERS_LEASE, holder=holder, ttl=ttl)
        self._start_scraping = start_scraping
        self._on_change = on_change
        self.leading = False
        self.elections = 0

    @property
    def term(self) -> int | None:
        return self.lease.term

    def _changed(self, leading: bool, term: int) -> None:
        self.leading = leading
        if leading:
            self.elections += 1
        log.info("scrapers lease: %s (term %d, holder %s)", "leading" if leading else "not leading", term,
                 self.lease.holder)
        if self._on_change is not None:
            self._on_change(leading)

    async def _lead(self, term: int) -> None:
        close = await self._start_scraping(term)
        try:
            await asyncio.Event().wait()  # until run_while_leader cancels us (lost, or stopping)
        finally:
            with contextlib.suppress(Exception):
                await close()

    async def run(self, stop: asyncio.Event) -> None:
        await self.lease.run_while_leader(self._lead, stop=stop, on_change=self._changed)
