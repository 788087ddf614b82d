"""A leader lease on a database row: exactly one replica at a time does the work that must not run twice (scraping).

Works on SQLite and PostgreSQL alike, with one conditional UPDATE (take over an expired lease or extend one's own)
and an INSERT … ON CONFLICT DO NOTHING for the first holder; the row decides, so no advisory lock is needed.
All times come from the database's clock inside the statement, so replicas on different hosts never disagree
about expiry. If the leader dies, its lease simply expires and another replica takes it within `ttl` plus one
retry interval.

The holder also keeps a local, conservative deadline (measured from *before* each renewal was sent): once it passes
without a confirmed renewal, the holder stops leading even if the database is unreachable, because from then on
another replica may legitimately have taken over.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel
from sqlalchemy import ColumnElement, Float, case, cast, extract, func, literal, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from storage.lease_tables import LeaseRow
from storage.upsert import upsert_insert

_T = TypeVar("_T")
STUCK_AFTER = 60.0  # seconds a late lease statement may run on before it is taken for hung and cancelled

log = logging.getLogger(__name__)

# Julian day number of 1970-01-01 00:00 UTC: SQLite's julianday('now') minus this, in days, is Unix time.
_UNIX_EPOCH_JULIAN_DAY = 2440587.5


def default_holder_id() -> str:
    """Unique per process: a restarted replica on the same host must not inherit its predecessor's term."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def db_now(dialect_name: str) -> ColumnElement[float]:
    """The database's current Unix time in seconds, as a SQL expression."""
    if dialect_name == "postgresql":
        # clock_timestamp(), not now(): now() is frozen at transaction start.
        return cast(extract("epoch", func.clock_timestamp()), Float)
    if dialect_name == "sqlite":
        return (func.julianday("now") - _UNIX_EPOCH_JULIAN_DAY) * 86400.0
    # Any other backend: the application's clock, bound as a parameter.
    return literal(time.time(), Float)


class LeaseState(BaseModel):
    """What the lease row says right now (for health pages, logs and tests)."""

    name: str
    holder: str
    term: int
    expires_in: float  # seconds; negative once expired


class LeaderLease:
    """One replica's handle on the named lease.

    `ttl` is how long a taken or renewed lease stays valid without another renewal; `run_while_leader` renews
    every `ttl / 3` so that two renewals can fail before leadership is at risk.
    """

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        name: str,
        holder: str | None = None,
        ttl: float = 30.0,
    ) -> None:
        if ttl <= 0:
            raise ValueError("ttl must be positive")
        self.sessionmaker = sessionmaker
        self.name = name
        self.holder = holder or default_holder_id()
        self.ttl = float(ttl)
        self._term: int | None = None
        self._deadline = 0.0  # time.monotonic() after which we no longer trust our own leadership
        self._in_flight: asyncio.Future[Any] | None = None  # a statement given up on, still running (`_within`)
        self._in_flight_since = 0.0

    # -- state ---------------------------------------------------------------------------------------------

    @property
    def term(self) -> int | None:
        """The fencing token of our current leadership, or None when we do not (knowingly) lead."""
        return self._term if self.is_leader else None

    @property
    def is_leader(self) -> bool:
        return self._term is not None and time.monotonic() < self._deadline

    def _lost(self) -> None:
        self._term = None
        self._deadline = 0.0

    # -- one statement each ---------------------------------------------------------------------------------

    async def try_acquire(self) -> bool:
        """Take the lease if it is free or expired, or extend it if it is already ours. True when we now hold it."""
        started = time.monotonic()
        async with self.sessionmaker() as session, session.begin():
            now = db_now(session.get_bind().dialect.name)
            row = LeaseRow.__table__.c
            mine = row.holder == self.holder
            # Extending our own live lease keeps the term; anything else (another holder's expired lease, or our
            # own after it lapsed or was released) starts a new leadership period, so a new fencing term.
            extending = mine & (row.expires_at >= now)
            stmt = (
                update(LeaseRow)
                .where(row.name == self.name, mine | (row.expires_at < now))
                .values(
                    term=case((extending, row.term), else_=row.term + 1),
                    acquired_at=case((extending, row.acquired_at), else_=now),
                    holder=self.holder,
                    renewed_at=now,
                    expires_at=now + self.ttl,
                )
                .returning(row.term)
            )
            term = (await session.execute(stmt)).scalar_one_or_none()
            if term is None:
                term = await self._insert_first(session, now)
        if term is None:
            self._lost()
            return False
        if self._term != term:
            log.info("lease %s acquired by %s (term %d)", self.name, self.holder, term)
        self._term = term
        self._deadline = started + self.ttl
        return True

    async def _insert_first(self, session: AsyncSession, now: ColumnElement[float]) -> int | None:
        """Create the row when nobody has ever held this lease; None when another replica got there first."""
        values = {
            "name": self.name,
            "holder": self.holder,
            "term": 1,
            "acquired_at": now,
            "renewed_at": now,
            "expires_at": now + self.ttl,
        }
        stmt = upsert_insert(session, LeaseRow).values(values).on_conflict_do_nothing(index_elements=["name"])
        return (await session.execute(stmt.returning(LeaseRow.term))).scalar_one_or_none()

    async def renew(self) -> bool:
        """Extend our lease. False (and we stop leading) when it has meanwhile passed to another replica."""
        if self._term is None:
            return False
        started = time.monotonic()
        async with self.sessionmaker() as session, session.begin():
            now = db_now(session.get_bind().dialect.name)
            row = LeaseRow.__table__.c
            stmt = (
                update(LeaseRow)
                # The term check matters: if another replica took over and we re-took it since, that is a new term.
                .where(row.name == self.name, row.holder == self.holder, row.term == self._term)
                .values(renewed_at=now, expires_at=now + self.ttl)
                .returning(row.term)
            )
            term = (await session.execute(stmt)).scalar_one_or_none()
        if term is None:
            log.warning("lease %s lost by %s (term %s)", self.name, self.holder, self._term)
            self._lost()
            return False
        self._deadline = started + self.ttl
        return True

    async def release(self) -> bool:
        """Give the lease up now so another replica need not wait for it to expire. True if we held it."""
        if self._term is None:
            return False
        term, self._term, self._deadline = self._term, None, 0.0
        async with self.sessionmaker() as session, session.begin():
            row = LeaseRow.__table__.c
            result = await session.execute(
                update(LeaseRow)
                .where(row.name == self.name, row.holder == self.holder, row.term == term)
                .values(expires_at=0.0)  # long expired: the next try_acquire anywhere succeeds
                .returning(row.term)
            )
            released = result.scalar_one_or_none() is not None
        if released:
            log.info("lease %s released by %s (term %d)", self.name, self.holder, term)
        return released

    async def state(self) -> LeaseState | None:
        """The lease row as the database sees it, or None if nobody has ever held it."""
        async with self.sessionmaker() as session:
            now = db_now(session.get_bind().dialect.name)
            row = LeaseRow.__table__.c
            found = (
                await session.execute(
                    select(row.holder, row.term, (row.expires_at - now).label("left")).where(row.name == self.name)
                )
            ).one_or_none()
        if found is None:
            return None
        return LeaseState(name=self.name, holder=found.holder, term=found.term, expires_in=float(found.left))

    # -- bounded waits -------------------------------------------------------------------------------------

    async def _within(self, make: Callable[[], Awaitable[_T]], timeout: float) -> _T:
        """`make()`'s result if it comes within `timeout` seconds, else TimeoutError; the statement itself is never
        cancelled. A statement cancelled in flight can leave its connection inside a write transaction that nobody
        will commit: on SQLite (aiosqlite) a campaigning replica whose attempt timed out under contention was seen
        holding the database's write lock for minutes, and every replica's writes, its own included, failed as
        "locked". So a statement that is late runs on to its end (SQLite's busy timeout bounds it), and the next
        call waits for it before it sends its own. A late `try_acquire` that took the lease is harmless: its
        deadline is counted from before it was sent, and the next campaign attempt extends it as ours."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        late = self._in_flight
        if late is not None and not late.done():
            await asyncio.wait({late}, timeout=timeout)
            if not late.done():
                if loop.time() - self._in_flight_since < STUCK_AFTER:
                    raise TimeoutError
                # Hung, not slow (SQLite's busy timeout ends a waiting statement far sooner; a PostgreSQL
                # connection across a network partition may not end at all): cancelled, as the only way on.
                late.cancel()
        task = asyncio.ensure_future(make())
        task.add_done_callback(_retrieve)
        self._in_flight, self._in_flight_since = task, loop.time()
        await asyncio.wait({task}, timeout=max(0.0, deadline - loop.time()))
        if not task.done():
            raise TimeoutError
        return task.result()

    # -- the loop a replica runs ----------------------------------------------------------------------------

    async def run_while_leader(
        self,
        work: Callable[[int], Awaitable[object]],
        *,
        stop: asyncio.Event | None = None,
        on_change: Callable[[bool, int], object] | None = None,
        retry_interval: float | None = None,
    ) -> None:
        """Campaign for the lease until `stop` is set; while leading, run `work(term)` and keep renewing.

        When leadership is lost (another replica holds the row, or no renewal was confirmed before our local
        deadline), `work` is cancelled, `on_change(False, term)` is called and campaigning resumes.
        `on_change(True, term)` reports each election. If `work` returns, the lease is released and this returns;
        if it raises, the lease is released and the error propagates. Cancelling this task, or setting `stop`,
        cancels `work` and releases the lease.
        """
        stop = stop or asyncio.Event()
        retry = retry_interval if retry_interval is not None else self.ttl / 3
        while not stop.is_set():
            try:
                elected = await self._within(self.try_acquire, self.ttl)
            except Exception as exc:  # the database is down, slow or unreachable: keep campaigning, do not crash
                log.warning("lease %s: campaign attempt failed: %r", self.name, exc)
                elected = False
            if elected:
                term = self._term or 0
                _notify(on_change, True, term)
                try:
                    finished = await self._lead(work, term, stop)
                finally:
                    _notify(on_change, False, term)
                if finished:
                    return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=retry)

    async def _lead(self, work: Callable[[int], Awaitable[object]], term: int, stop: asyncio.Event) -> bool:
        """Run `work` while renewing. True when we are done (stop set or work ended), False when leadership was lost."""
        task = asyncio.ensure_future(work(term))
        stopper = asyncio.ensure_future(stop.wait())
        renew_every = self.ttl / 3
        try:
            while True:
                await asyncio.wait({task, stopper}, timeout=renew_every, return_when=asyncio.FIRST_COMPLETED)
                if stopper.done() or task.done():
                    break
                if not await self._renew_before_deadline():
                    return False
            return True
        finally:
            stopper.cancel()
            lost = not self.is_leader
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if not lost:
                with contextlib.suppress(Exception):
                    await self._within(self.release, self.ttl)
            if task.done() and not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]

    async def _renew_before_deadline(self) -> bool:
        """Renew, retrying transient errors, but never past the local deadline: then we must assume it is lost."""
        while True:
            remaining = self._deadline - time.monotonic()
            if remaining <= 0:
                log.warning("lease %s: no renewal confirmed within ttl; stepping down", self.name)
                self._lost()
                return False
            try:
                return await self._within(self.renew, remaining)
            except TimeoutError:
                continue  # the deadline check above decides
            except Exception as exc:
                log.warning("lease %s: renewal failed, retrying: %r", self.name, exc)
                await asyncio.sleep(min(0.5, max(remaining, 0) / 4))


def _retrieve(task: asyncio.Future[Any]) -> None:
    """A statement given up on may fail later: its error was already reported as a timeout, so it is read here
    (asyncio would log it as never retrieved)."""
    if not task.cancelled():
        task.exception()


def _notify(callback: Callable[[bool, int], object] | None, leading: bool, term: int) -> None:
    if callback is None:
        return
    try:
        callback(leading, term)
    except Exception:  # a broken observer (metrics, logs) must not take leadership handling down with it
        log.exception("lease observer failed")
