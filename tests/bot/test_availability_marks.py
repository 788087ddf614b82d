"""The ⚡ marks' reads (bot/availability_marks.py) on a migrated database (SQLite, or PostgreSQL with
TEST_DATABASE_URL) whose history storage's real ingest recorded: an answer that may not wait long goes without the
marks still being read, the read goes on once for everyone, and the next asker has them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import event

from bot.availability_marks import StayMarks
from storage.db import make_engine, make_sessionmaker
from tests.bot.test_availability_bot import cached, record_history

H100 = cached("h100", "h100-sxm", "H100")  # in stock one poll in nine: short-lived
A100 = cached("a100", "a100-80gb", "A100")  # never leaves


async def test_an_answer_that_cannot_wait_goes_without_the_marks_being_read(migrated_database_url: str) -> None:
    await record_history(migrated_database_url, datetime.now(UTC) - timedelta(seconds=5))
    # One connection in the pool, held here: a read of the marks waits for it, as behind a slow database.
    engine = make_engine(migrated_database_url, pool_size=1, max_overflow=0)
    checkouts: list[Any] = []

    def count(*_: Any) -> None:
        checkouts.append(1)

    try:
        marks = StayMarks(make_sessionmaker(engine))
        held = await engine.connect()
        event.listen(engine.sync_engine.pool, "checkout", count)
        try:
            first = await marks.short([H100, A100], wait=0.05)
            assert first.keys == frozenset() and not first.complete
            again = await marks.short([H100], wait=0.05)  # its read is under way: not a second one
            assert again.keys == frozenset() and not again.complete
            assert checkouts == []
        finally:
            await held.close()
        # The read that went on finishes for whoever waits on it, once.
        done = await marks.short([H100, A100])
        assert done.keys == frozenset({H100.key}) and done.complete
        assert len(checkouts) == 1
        # Kept: the next asker, in a hurry or not, reads nothing.
        assert await marks.short([A100, H100], wait=0.0) == done
        assert len(checkouts) == 1
    finally:
        event.remove(engine.sync_engine.pool, "checkout", count)
        await engine.dispose()


async def test_close_ends_the_reads_under_way(migrated_database_url: str) -> None:
    """At shutdown a read nobody waits for any more is finished, or cancelled past the timeout: none is left."""
    await record_history(migrated_database_url, datetime.now(UTC) - timedelta(seconds=5))
    engine = make_engine(migrated_database_url, pool_size=1, max_overflow=0)
    try:
        marks = StayMarks(make_sessionmaker(engine))
        held = await engine.connect()
        try:
            await marks.short([H100], wait=0.0)
            (stuck,) = set(marks._reading.values())
            await marks.close(timeout=0.05)  # the database never answers in time: cancelled
            assert stuck.cancelled() and not marks._reading
            await marks.short([A100], wait=0.0)
            (reading,) = set(marks._reading.values())
        finally:
            await held.close()
        await marks.close()  # the database answers: the read finishes, its verdict kept
        assert reading.done() and not reading.cancelled() and not marks._reading
        assert (await marks.short([A100], wait=0.0)).complete
    finally:
        await engine.dispose()


async def test_a_verdict_past_its_time_is_kept_until_the_new_one_is_read(migrated_database_url: str) -> None:
    await record_history(migrated_database_url, datetime.now(UTC) - timedelta(seconds=5))
    engine = make_engine(migrated_database_url, pool_size=1, max_overflow=0)
    try:
        marks = StayMarks(make_sessionmaker(engine), ttl=0.0)  # every verdict is stale at once
        assert (await marks.short([H100])).keys == frozenset({H100.key})
        held = await engine.connect()
        try:
            stale = await marks.short([H100, A100], wait=0.05)
            # The H100's old verdict still marks it; the A100 was never read: the answer is not complete.
            assert stale.keys == frozenset({H100.key}) and not stale.complete
        finally:
            await held.close()
        assert (await marks.short([H100, A100])).complete
    finally:
        await engine.dispose()


async def test_a_read_that_fails_marks_nothing_and_raises_nothing(database_url: str) -> None:
    engine = make_engine(database_url)  # a database without the tables: every read of the figures fails
    try:
        marks = StayMarks(make_sessionmaker(engine))
        out = await marks.short([H100, A100])
        assert out.keys == frozenset() and out.complete  # "not short-lived" is a verdict: nothing to mark
    finally:
        await engine.dispose()
