"""The shared database fixtures: a fresh empty database per test, on SQLite or (TEST_DATABASE_URL) PostgreSQL."""

from __future__ import annotations

import os

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, insert, inspect, select

from storage import migrate
from storage.db import make_engine
from tests.conftest import PostgresAdmin


async def _tables(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            return set(await conn.run_sync(lambda sync: inspect(sync).get_table_names()))
    finally:
        await engine.dispose()


async def test_database_url_is_empty_and_writable(database_url: str) -> None:
    expected = "postgresql" if os.environ.get("TEST_DATABASE_URL") else "sqlite"
    assert database_url.startswith(expected)
    assert await _tables(database_url) == set()
    meta = MetaData()
    probe = Table("probe", meta, Column("id", Integer, primary_key=True), Column("v", String(10)))
    engine = make_engine(database_url)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(meta.create_all)
            await conn.execute(insert(probe).values(id=1, v="x"))
        async with engine.connect() as conn:
            assert (await conn.execute(select(probe.c.v))).scalar_one() == "x"
    finally:
        await engine.dispose()
    assert await _tables(database_url) == {"probe"}


def test_sync_tests_get_a_database_too(database_url: str) -> None:
    # The fixture is synchronous on purpose: a plain test that runs its own event loop can use it.
    import asyncio

    assert asyncio.run(_tables(database_url)) == set()


async def test_migrated_database_url_is_at_head(migrated_database_url: str) -> None:
    assert await migrate.current_async(migrated_database_url) == migrate.heads()
    assert "alembic_version" in await _tables(migrated_database_url)


async def test_migrated_copies_are_independent(migrated_database_url: str, database_url: str) -> None:
    # Two databases in one test: writing to the migrated copy must not touch the session's template or the other.
    assert migrated_database_url != database_url
    engine = make_engine(migrated_database_url)
    try:
        async with engine.begin() as conn:
            await conn.exec_driver_sql("DELETE FROM alembic_version")
    finally:
        await engine.dispose()
    assert await migrate.current_async(migrated_database_url) == []


async def test_migrated_template_untouched_by_the_previous_test(migrated_database_url: str) -> None:
    # Runs after the test above emptied its copy's alembic_version: this copy still says head.
    assert await migrate.current_async(migrated_database_url) == migrate.heads()


def test_postgres_admin_creates_and_drops(postgres_admin: PostgresAdmin | None) -> None:
    if postgres_admin is None:
        pytest.skip("needs TEST_DATABASE_URL (a PostgreSQL server)")
    name = postgres_admin.create()
    exists = "SELECT count(*) FROM pg_database WHERE datname = $1"
    assert postgres_admin.call(postgres_admin._conn.fetchval(exists, name)) == 1
    postgres_admin.drop(name)
    assert postgres_admin.call(postgres_admin._conn.fetchval(exists, name)) == 0
