"""Alembic on a real database (a SQLite file, or PostgreSQL with TEST_DATABASE_URL): a stairway over every revision,
models == migrations, async-safe calls."""

from __future__ import annotations

import asyncio
import importlib
import pkgutil
from datetime import UTC, datetime

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Table, inspect, text
from sqlalchemy.ext.asyncio import AsyncSession

import storage
from storage import migrate, offer_tables
from storage.db import Base, make_engine

MY_TABLES = {"offers", "price_history", "scrape_runs", "provider_health", "offer_events"}


async def _tables_async(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            return set(await conn.run_sync(lambda sync: inspect(sync).get_table_names()))
    finally:
        await engine.dispose()


def _tables(url: str) -> set[str]:
    return asyncio.run(_tables_async(url))


async def _execute(url: str, *statements: str) -> None:
    engine = make_engine(url)
    try:
        async with engine.begin() as conn:
            for statement in statements:
                await conn.execute(text(statement))
    finally:
        await engine.dispose()


def _all_models() -> None:
    """Every `storage/*_tables.py`, as the Alembic environment loads them: the whole of `Base.metadata`."""
    for info in pkgutil.iter_modules(storage.__path__):
        if info.name.endswith("_tables"):
            importlib.import_module(f"storage.{info.name}")


def _table_of(d: object) -> str | None:
    d = d[0] if isinstance(d, list) else d
    for item in d[1:]:  # type: ignore[index]
        if isinstance(item, Table):
            return item.name
        if isinstance(getattr(item, "table", None), Table):
            return item.table.name
        if isinstance(item, str):
            return item
    return None


async def _diff(url: str, tables: set[str] | None = None) -> list[object]:
    """Differences between the models and the migrated schema (only `tables`' when given)."""
    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            diff = await conn.run_sync(lambda sync: compare_metadata(
                MigrationContext.configure(sync, opts={"compare_type": True}), Base.metadata))
    finally:
        await engine.dispose()
    return [d for d in diff if tables is None or _table_of(d) in tables]


def test_first_revision_is_0001_offers_and_creates_every_table(database_url: str) -> None:
    revs = migrate.revisions()
    assert revs[0] == "0001_offers"
    migrate.upgrade(database_url, "0001_offers")
    assert _tables(database_url) >= MY_TABLES
    assert migrate.current(database_url) == ["0001_offers"]


def test_stairway_up_down_up_each_revision(database_url: str) -> None:
    url = database_url
    previous = "base"
    for rev in migrate.revisions():
        migrate.upgrade(url, rev)
        after_up = _tables(url)
        migrate.downgrade(url, previous)
        assert migrate.current(url) == ([] if previous == "base" else [previous])
        migrate.upgrade(url, rev)
        assert _tables(url) == after_up
        assert migrate.current(url) == [rev]
        previous = rev
    assert migrate.current(url) == migrate.heads()
    migrate.downgrade(url, "base")
    assert _tables(url) == {"alembic_version"}


async def test_models_match_migration_0001(migrated_database_url: str) -> None:
    url = migrated_database_url
    assert {t.name for t in offer_tables.Base.metadata.sorted_tables} >= MY_TABLES
    assert await _diff(url, MY_TABLES) == []
    # the comparison itself can fail: a dropped index and a stray column are both seen
    await _execute(url, "DROP INDEX ix_offers_gpu", "ALTER TABLE offers ADD COLUMN stray INTEGER")
    assert sorted(d[0] for d in await _diff(url, MY_TABLES)) == ["add_index", "remove_column"]


async def test_every_model_matches_the_migrations_at_head(migrated_database_url: str) -> None:
    """The same models and the same migrations on both databases: at head, nothing differs, whatever the dialect
    (types, nullability, indexes, constraints)."""
    _all_models()
    assert {t.name for t in Base.metadata.sorted_tables} | {"alembic_version"} == \
        await _tables_async(migrated_database_url)
    assert await _diff(migrated_database_url) == []


async def test_async_variants_work_inside_a_running_loop(database_url: str) -> None:
    url = database_url
    await migrate.upgrade_async(url)
    assert await migrate.current_async(url) == migrate.heads()
    await migrate.downgrade_async(url, "base")
    assert await migrate.current_async(url) == []
    assert await _tables_async(url) == {"alembic_version"}


def test_ini_ships_inside_the_package() -> None:
    ini = migrate.ini_path()
    assert ini.is_file()
    assert (ini.parent / "migrations" / "env.py").is_file()
    assert (ini.parent / "migrations" / "script.py.mako").is_file()


async def _scalar(url: str, statement: str) -> object:
    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            return (await conn.execute(text(statement))).scalar_one()
    finally:
        await engine.dispose()


def test_price_caps_stored_before_0013_keep_their_per_gpu_hour_meaning(database_url: str) -> None:
    """Every cap stored before the basis existed was matched per GPU-hour: it stays so after the upgrade."""
    url = database_url
    migrate.upgrade(url, "0012_availability_series_state")
    asyncio.run(_execute(
        url,
        "INSERT INTO users (id, chat_id, lang, lang_chosen, currency, tz_offset_minutes, grouping, active, "
        "alert_cursor, created_at) VALUES (5, 5, 'ru', false, 'RUB', 180, true, true, 0, '2026-11-01 00:00:00')",
        "INSERT INTO subscriptions (user_id, chat_id, kind, query_text, max_price, price_currency, paused, "
        "created_at) VALUES (5, 5, 'gpu', 'H100', 80, 'RUB', false, '2026-11-01 00:00:00')"))
    migrate.upgrade(url, "0013_price_basis")
    assert asyncio.run(_scalar(url, "SELECT price_basis FROM subscriptions WHERE user_id = 5")) == "gpu"


def test_the_cheapest_cooling_alert_stored_by_0018_becomes_the_cooling_list_and_back(database_url: str) -> None:
    """0020 turns the one cooling alert 0018 kept into the list's one entry, as the outbox reads it; a downgrade
    keeps the list's cheapest (first) entry."""
    from core.alerts import CoolingAlert
    from storage.outbox import OutboxWriter

    url = database_url
    migrate.upgrade(url, "0019_alert_owed")
    asyncio.run(_execute(
        url,
        "INSERT INTO alert_offer_state (offer_key, last_alert_at, last_price, last_price_rub, last_price_usd, "
        "cheapest_at, cheapest_price, cheapest_price_rub, cheapest_price_usd) VALUES "
        "('a', '2026-12-05 12:00:00', 2.5, 200, 2.5, '2026-12-05 12:10:00', 2.4, 192, 2.4), "
        "('b', '2026-12-05 12:00:00', 3.0, NULL, 3.0, NULL, NULL, NULL, NULL)"))
    migrate.upgrade(url, "0020_cooling_alerts")

    async def read() -> dict[str, tuple[CoolingAlert, ...]]:
        engine = make_engine(url)
        try:
            async with AsyncSession(engine) as s:
                return {k: v.cooling for k, v in (await OutboxWriter()._last_alerts(s, {"a", "b"})).items()}
        finally:
            await engine.dispose()

    at = datetime(2026, 12, 5, 12, 10, tzinfo=UTC)
    assert asyncio.run(read()) == {"a": (CoolingAlert(at=at, price=2.4, price_rub=192.0, price_usd=2.4),), "b": ()}
    asyncio.run(_execute(
        url, "UPDATE alert_offer_state SET cooling_alerts = '[{\"at\": \"2026-12-05T12:20:00+00:00\", \"price\": 2.3,"
             " \"price_rub\": 184, \"price_usd\": 2.3}, {\"at\": \"2026-12-05T12:30:00+00:00\", \"price\": 2.45, "
             "\"price_rub\": null, \"price_usd\": 2.45}]' WHERE offer_key = 'b'"))
    migrate.downgrade(url, "0019_alert_owed")
    got = asyncio.run(_scalar(url, "SELECT cheapest_price_rub FROM alert_offer_state WHERE offer_key = 'b'"))
    assert got == 184
    assert asyncio.run(_scalar(url, "SELECT cheapest_price FROM alert_offer_state WHERE offer_key = 'a'")) == 2.4
