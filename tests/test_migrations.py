"""Alembic: a stairway over every revision on a real SQLite file, models == migrations, async-safe calls."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Table, create_engine

from storage import migrate, offer_tables
from storage.db import Base

MY_TABLES = {"offers", "price_history", "scrape_runs", "provider_health", "offer_events"}


def _url(path: Path) -> str:
    return f"sqlite+aiosqlite:///{path}"


def _tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def test_first_revision_is_0001_offers_and_creates_every_table(tmp_path: Path) -> None:
    revs = migrate.revisions()
    assert revs[0] == "0001_offers"
    db = tmp_path / "one.sqlite3"
    migrate.upgrade(_url(db), "0001_offers")
    assert _tables(db) >= MY_TABLES
    assert migrate.current(_url(db)) == ["0001_offers"]


def test_stairway_up_down_up_each_revision(tmp_path: Path) -> None:
    db = tmp_path / "stairs.sqlite3"
    url = _url(db)
    previous = "base"
    for rev in migrate.revisions():
        migrate.upgrade(url, rev)
        after_up = _tables(db)
        migrate.downgrade(url, previous)
        assert migrate.current(url) == ([] if previous == "base" else [previous])
        migrate.upgrade(url, rev)
        assert _tables(db) == after_up
        assert migrate.current(url) == [rev]
        previous = rev
    assert migrate.current(url) == migrate.heads()
    migrate.downgrade(url, "base")
    assert _tables(db) == {"alembic_version"}


def _my_diff(db: Path) -> list[object]:
    """Differences between the models and the migrated schema, limited to this module's tables (other features'
    tables arrive with their own revisions)."""
    engine = create_engine(f"sqlite:///{db}")
    try:
        with engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), Base.metadata)
    finally:
        engine.dispose()

    def table_of(d: object) -> str | None:
        d = d[0] if isinstance(d, list) else d
        for item in d[1:]:
            if isinstance(item, Table):
                return item.name
            if isinstance(getattr(item, "table", None), Table):
                return item.table.name
            if isinstance(item, str):
                return item
        return None

    return [d for d in diff if table_of(d) in MY_TABLES]


def test_models_match_migration_0001(tmp_path: Path) -> None:
    db = tmp_path / "cmp.sqlite3"
    migrate.upgrade(_url(db))
    assert {t.name for t in offer_tables.Base.metadata.sorted_tables} >= MY_TABLES
    assert _my_diff(db) == []
    # the comparison itself can fail: a dropped index and a stray column are both seen
    with sqlite3.connect(db) as conn:
        conn.execute("DROP INDEX ix_offers_gpu")
        conn.execute("ALTER TABLE offers ADD COLUMN stray INTEGER")
    assert sorted(d[0] for d in _my_diff(db)) == ["add_index", "remove_column"]


async def test_async_variants_work_inside_a_running_loop(tmp_path: Path) -> None:
    url = _url(tmp_path / "async.sqlite3")
    await migrate.upgrade_async(url)
    assert await migrate.current_async(url) == migrate.heads()
    await migrate.downgrade_async(url, "base")
    assert await migrate.current_async(url) == []


def test_ini_ships_inside_the_package() -> None:
    ini = migrate.ini_path()
    assert ini.is_file()
    assert (ini.parent / "migrations" / "env.py").is_file()
    assert (ini.parent / "migrations" / "script.py.mako").is_file()
