"""The leader lease on a real database (SQLite file, or PostgreSQL with TEST_DATABASE_URL): several replicas, each
with its own engine as separate processes would have, one of them dies, another takes over."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from storage.db import Base, make_engine, make_sessionmaker
from storage.lease import LeaderLease
from storage.lease_tables import LeaseRow

ROOT = Path(__file__).resolve().parents[2]
# Generous upper bound for polling loops, so a slow CI machine cannot fail a test; never a timing assertion.
PATIENCE = 30.0


@pytest.fixture
async def lease_db(database_url: str) -> AsyncIterator[str]:
    engine = make_engine(database_url)
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all, tables=[LeaseRow.__table__])
    await engine.dispose()
    yield database_url


@pytest.fixture
async def replicas(lease_db: str) -> AsyncIterator[Callable[..., LeaderLease]]:
    """A factory of replicas: each LeaderLease gets its own engine (its own connection pool), like a process."""
    engines: list[AsyncEngine] = []

    def make(holder: str, ttl: float = 1.0, name: str = "scrapers") -> LeaderLease:
        engine = make_engine(lease_db)
        engines.append(engine)
        return LeaderLease(make_sessionmaker(engine), name, holder, ttl)

    yield make
    for engine in engines:
        await engine.dispose()


async def test_one_holder_at_a_time_then_release_hands_over(replicas: Callable[..., LeaderLease]) -> None:
    a, b = replicas("a", ttl=60), replicas("b", ttl=60)
    assert await a.try_acquire()
    assert a.is_leader and a.term == 1
    assert not await b.try_acquire()
    assert not b.is_leader and b.term is None
    assert await a.try_acquire()  # re-acquiring our own lease extends it in the same term
    assert a.term == 1
    assert await a.renew()
    assert not await b.renew()  # b never held it

    state = await b.state()
    assert state is not None and state.holder == "a" and state.term == 1
    assert 50 < state.expires_in <= 60  # the database clock put the expiry a ttl ahead

    assert await a.release()
    assert not a.is_leader
    assert await b.try_acquire()  # no waiting for expiry after a release
    assert b.term == 2  # changed hands: a new fencing term
    assert not await a.renew()
    assert not await a.try_acquire()


async def test_separate_names_are_separate_leases(replicas: Callable[..., LeaderLease]) -> None:
    assert await replicas("a", name="scrapers").try_acquire()
    assert await replicas("b", name="digest").try_acquire()
    assert not await replicas("c", name="scrapers").try_acquire()


async def test_holder_that_stops_renewing_is_taken_over_after_ttl(replicas: Callable[..., LeaderLease]) -> None:
    dead, heir = replicas("dead", ttl=2.0), replicas("heir", ttl=2.0)  # no expiry between two statements
    assert await dead.try_acquire()
    assert not await heir.try_acquire()  # still valid: no takeover before expiry
    # `dead` never renews again. The heir polls, as run_while_leader does, until the lease has expired.
    attempts = 0
    async with asyncio.timeout(PATIENCE):
        while not await heir.try_acquire():
            attempts += 1
            await asyncio.sleep(0.05)
    assert attempts >= 1
    assert heir.term == 2
    state = await heir.state()
    assert state is not None and state.holder == "heir"
    # The old holder finds out on its next renewal and stops believing it leads.
    assert not await dead.renew()
    assert not dead.is_leader and dead.term is None


async def test_three_replicas_racing_for_a_free_lease_elect_exactly_one(
    replicas: Callable[..., LeaderLease],
) -> None:
    trio = [replicas(f"r{i}", ttl=60) for i in range(3)]
    terms: list[int] = []
    for _round in range(4):
        results = await asyncio.gather(*(r.try_acquire() for r in trio))
        assert sum(results) == 1, results
        winner = trio[results.index(True)]
        terms.append(winner.term or 0)
        assert await winner.release()
    # the first race is for a row that does not exist yet (the INSERT path), later ones for a released row;
    # every new leadership period gets a new term, even when the same replica wins again
    assert terms == [1, 2, 3, 4]


async def test_leader_whose_lease_was_taken_cancels_its_work_and_reports_loss(
    replicas: Callable[..., LeaderLease], database_url: str
) -> None:
    leader = replicas("leader", ttl=0.9)
    events: list[tuple[bool, int]] = []
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def work(term: int) -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    stop = asyncio.Event()
    task = asyncio.create_task(
        leader.run_while_leader(work, stop=stop, on_change=lambda up, term: events.append((up, term)), retry_interval=5)
    )
    async with asyncio.timeout(PATIENCE):
        await started.wait()
    # Someone else now holds the row (as after a long pause of the leader): its next renewal must fail.
    engine = make_engine(database_url)
    async with engine.begin() as conn:
        await conn.execute(update(LeaseRow).values(holder="usurper", term=LeaseRow.term + 1, expires_at=1e12))
    await engine.dispose()
    async with asyncio.timeout(PATIENCE):
        while len(events) < 2:
            await asyncio.sleep(0.02)
    assert cancelled.is_set()  # the work is stopped before the loss is reported
    assert events == [(True, 1), (False, 1)]
    assert not leader.is_leader
    stop.set()
    async with asyncio.timeout(PATIENCE):
        await task
    state = await leader.state()
    assert state is not None and state.holder == "usurper"  # stopping did not release a lease it does not hold


async def test_leader_steps_down_when_no_renewal_is_confirmed_in_time(
    replicas: Callable[..., LeaderLease],
) -> None:
    leader = replicas("leader", ttl=0.6)
    stalled = asyncio.Event()

    async def hanging_renew() -> bool:  # the database stopped answering (network partition, stuck pool)
        stalled.set()
        await asyncio.Event().wait()
        return True

    leader.renew = hanging_renew  # type: ignore[method-assign]
    lost = asyncio.Event()
    work_cancelled = asyncio.Event()

    async def work(term: int) -> None:
        try:
            await asyncio.Event().wait()
        finally:
            work_cancelled.set()

    def on_change(up: bool, term: int) -> None:
        if not up:
            lost.set()

    stop = asyncio.Event()
    task = asyncio.create_task(leader.run_while_leader(work, stop=stop, on_change=on_change, retry_interval=60))
    async with asyncio.timeout(PATIENCE):
        await lost.wait()
    assert stalled.is_set() and work_cancelled.is_set()
    assert not leader.is_leader
    stop.set()
    async with asyncio.timeout(PATIENCE):
        await task


async def test_work_error_releases_the_lease_and_propagates(replicas: Callable[..., LeaderLease]) -> None:
    leader, other = replicas("leader", ttl=60), replicas("other", ttl=60)

    async def work(term: int) -> None:
        raise RuntimeError("scheduler crashed")

    with pytest.raises(RuntimeError, match="scheduler crashed"):
        await leader.run_while_leader(work)
    assert await other.try_acquire()  # released, not left to expire in 60 s


async def test_three_replicas_one_leads_and_graceful_stop_hands_over(replicas: Callable[..., LeaderLease]) -> None:
    # A lease long enough that a loaded machine's late renewal (every third of it) never lapses it: what is tested is
    # that renewals keep the leader and that a graceful stop hands over by release, not by expiry.
    trio = [replicas(f"r{i}", ttl=3.0) for i in range(3)]
    stops = [asyncio.Event() for _ in trio]
    leading: set[str] = set()
    overlaps: list[set[str]] = []
    elected: list[tuple[str, int]] = []

    def work_for(holder: str) -> Callable[[int], object]:
        async def work(term: int) -> None:
            leading.add(holder)
            if len(leading) > 1:
                overlaps.append(set(leading))
            elected.append((holder, term))
            try:
                await asyncio.Event().wait()
            finally:
                leading.discard(holder)

        return work

    tasks = [
        asyncio.create_task(r.run_while_leader(work_for(r.holder), stop=s, retry_interval=0.1))
        for r, s in zip(trio, stops, strict=True)
    ]
    try:
        async with asyncio.timeout(PATIENCE):
            while not elected:
                await asyncio.sleep(0.02)
        first, first_term = elected[0]
        await asyncio.sleep(2.5)  # past two renewals: they keep the same leader
        assert [h for h, _ in elected] == [first]
        index = [r.holder for r in trio].index(first)
        stops[index].set()  # graceful shutdown: work cancelled, lease released
        await tasks[index]
        async with asyncio.timeout(PATIENCE):
            while len(elected) < 2:
                await asyncio.sleep(0.02)
        second, second_term = elected[1]
        assert second != first and second_term == first_term + 1
        assert overlaps == []
    finally:
        for s in stops:
            s.set()
        await asyncio.gather(*tasks)


# A replica in its own process, killed with SIGKILL: no release, no goodbye. The lease must expire and pass on.
REPLICA = textwrap.dedent(
    """
    import asyncio, sys
    from storage.db import make_engine, make_sessionmaker
    from storage.lease import LeaderLease

    async def main(url):
        lease = LeaderLease(make_sessionmaker(make_engine(url)), "scrapers", "doomed", ttl=3.0)
        async def work(term):
            print(f"leading {term}", flush=True)
            await asyncio.Event().wait()
        await lease.run_while_leader(work, retry_interval=0.1)

    asyncio.run(main(sys.argv[1]))
    """
)


async def test_killed_leader_process_is_replaced(replicas: Callable[..., LeaderLease], lease_db: str) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", REPLICA, lease_db, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        async with asyncio.timeout(PATIENCE):
            line = await proc.stdout.readline()  # type: ignore[union-attr]
        assert line.decode().strip() == "leading 1", (line, await proc.stderr.read())  # type: ignore[union-attr]
        heir = replicas("heir", ttl=1.0)
        took_over = asyncio.Event()
        terms: list[int] = []

        async def work(term: int) -> None:
            terms.append(term)
            took_over.set()
            await asyncio.Event().wait()

        stop = asyncio.Event()
        task = asyncio.create_task(heir.run_while_leader(work, stop=stop, retry_interval=0.1))
        await asyncio.sleep(3.5)  # more than a ttl: the live leader keeps renewing, so the heir must still wait
        assert not took_over.is_set()
        proc.kill()
        await proc.wait()
        async with asyncio.timeout(PATIENCE):
            await took_over.wait()
        # A new term, past the dead leader's 1. Not necessarily 2: on a loaded machine the heir's first acquiring
        # statement can come back after its 1 s deadline, and by its next attempt that lease of its own has lapsed,
        # which (rightly) starts another term.
        assert len(terms) == 1 and terms[0] >= 2
        state = await heir.state()
        assert state is not None and state.holder == "heir"
        stop.set()
        await task
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()


async def test_a_late_statement_is_waited_for_never_cancelled(replicas: Callable[..., LeaderLease]) -> None:
    """storage.lease: a statement that misses its deadline (SQLite's busy wait under contention) is reported as a
    timeout but runs on to its end; the next one waits for it first. A statement cancelled in flight can leave its
    connection inside a write transaction nobody commits: the database's write lock held by a replica for good."""
    lease = replicas("me")
    release = asyncio.Event()
    finished: list[str] = []

    async def slow() -> str:
        try:
            await release.wait()
        except asyncio.CancelledError:
            finished.append("cancelled")
            raise
        finished.append("slow")
        return "slow"

    async def quick() -> str:
        finished.append("quick")
        return "quick"

    with pytest.raises(TimeoutError):
        await lease._within(slow, 0.05)
    with pytest.raises(TimeoutError):  # still running: the next statement is not sent beside it
        await lease._within(quick, 0.05)
    assert finished == []
    release.set()
    assert await lease._within(quick, PATIENCE) == "quick"
    assert finished == ["slow", "quick"]


async def test_a_campaign_attempt_stuck_on_sqlites_write_lock_leaves_no_lock_behind(tmp_path: Path) -> None:
    """Another process holds SQLite's write lock longer than the lease's ttl: the campaign's attempts time out and
    are retried, the replica leads once the lock is free, and afterwards nobody holds the write lock."""
    import sqlite3
    import threading

    path = tmp_path / "lease.sqlite3"
    url = f"sqlite+aiosqlite:///{path}"
    engine = make_engine(url)
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all, tables=[LeaseRow.__table__])
    lease = LeaderLease(make_sessionmaker(engine), "scrapers", "me", ttl=0.5)
    held = threading.Event()

    def hold() -> None:
        other = sqlite3.connect(path, timeout=30)
        other.execute("BEGIN IMMEDIATE")
        held.set()
        threading.Event().wait(2.0)  # four of the lease's ttls
        other.rollback()
        other.close()

    holder = threading.Thread(target=hold)
    holder.start()
    await asyncio.to_thread(held.wait)
    leading = asyncio.Event()

    async def work(term: int) -> None:
        leading.set()
        await asyncio.Event().wait()

    stop = asyncio.Event()
    task = asyncio.create_task(lease.run_while_leader(work, stop=stop, retry_interval=0.1))
    try:
        async with asyncio.timeout(PATIENCE):
            await leading.wait()
    finally:
        stop.set()
        async with asyncio.timeout(PATIENCE):
            await task
        await asyncio.to_thread(holder.join)
        await engine.dispose()
    check = sqlite3.connect(path, timeout=0.5)
    try:
        check.execute("BEGIN IMMEDIATE")  # raises "database is locked" if a connection kept the write lock
        check.rollback()
    finally:
        check.close()
