"""Revision 0004_lease on a real database (SQLite file, or PostgreSQL with TEST_DATABASE_URL): the table the
migration creates is the table the model describes, and the revision goes down and up again cleanly."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect

from storage import migrate
from storage.db import Base, make_engine, make_sessionmaker
from storage.lease import LeaderLease
from storage.lease_tables import LeaseRow

REVISION = "0004_lease"


async def _lease_diff(url: str) -> list:
    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            def diff(sync):
                found = compare_metadata(MigrationContext.configure(sync, opts={"compare_type": True}), Base.metadata)
                return [d for d in found if "leases" in repr(d)]

            return await conn.run_sync(diff)
    finally:
        await engine.dispose()


async def _tables(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            return set(await conn.run_sync(lambda sync: inspect(sync).get_table_names()))
    finally:
        await engine.dispose()


async def test_lease_revision_matches_the_model_and_steps_down_and_up(database_url: str) -> None:
    assert LeaseRow.__tablename__ == "leases"
    assert REVISION in migrate.revisions()
    previous = migrate.revisions()[migrate.revisions().index(REVISION) - 1]
    await migrate.upgrade_async(database_url, REVISION)
    assert "leases" in await _tables(database_url)
    assert await _lease_diff(database_url) == []
    await migrate.downgrade_async(database_url, previous)
    assert "leases" not in await _tables(database_url)
    await migrate.upgrade_async(database_url, REVISION)
    assert await _lease_diff(database_url) == []
    # and the comparison can fail: a column the model does not have is seen
    engine = make_engine(database_url)
    try:
        async with engine.begin() as conn:
            await conn.exec_driver_sql("ALTER TABLE leases ADD COLUMN stray INTEGER")
    finally:
        await engine.dispose()
    assert [d[0] for d in await _lease_diff(database_url)] == ["remove_column"]


async def test_lease_works_on_the_migrated_schema(migrated_database_url: str) -> None:
    engine = make_engine(migrated_database_url)
    try:
        a = LeaderLease(make_sessionmaker(engine), "scrapers", "a", ttl=60)
        b = LeaderLease(make_sessionmaker(engine), "scrapers", "b", ttl=60)
        assert await a.try_acquire() and not await b.try_acquire()
        assert await a.release() and await b.try_acquire() and b.term == 2
    finally:
        await engine.dispose()
