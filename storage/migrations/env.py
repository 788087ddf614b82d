"""Alembic environment: async engine, every `storage/*_tables.py` module's tables in `target_metadata`.

The URL comes from the Config (`storage.migrate` sets it) or, failing that, from DATABASE_URL / the default.
Table modules are found with pkgutil so that a new `storage/<feature>_tables.py` needs no edit here.

Each migration is one transaction (`transaction_per_migration`), its DDL and its `alembic_version` bump together, so a
process killed mid-upgrade leaves the database at the last whole revision. PostgreSQL has transactional DDL as is;
SQLite has it too, but Python's sqlite driver commits on its own before DDL unless told not to: the engine used
here turns the driver's transaction handling off and emits BEGIN itself (the recipe of the SQLAlchemy and Alembic
docs, "Serializable isolation / Savepoints / Transactional DDL" for pysqlite/aiosqlite).
"""

from __future__ import annotations

import asyncio
import importlib
import os
import pkgutil
from typing import Any

from alembic import context
from sqlalchemy import event
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from storage.db import DEFAULT_DATABASE_URL, Base, make_engine

for _info in pkgutil.iter_modules(storage.__path__):
    if _info.name.endswith("_tables"):
        importlib.import_module(f"storage.{_info.name}")

target_metadata = Base.metadata
config = context.config


def _url() -> str:
    return config.get_main_option("sqlalchemy.url") or os.environ.get("DATABASE_URL") or DEFAULT_DATABASE_URL


def _configure(**kwargs: Any) -> None:
    context.configure(
        target_metadata=target_metadata,
        render_as_batch=True,  # SQLite cannot ALTER most things; batch mode recreates tables instead
        compare_type=True,
        transaction_per_migration=True,  # a kill mid-upgrade loses at most the revision it was in
        **kwargs,
    )


def run_migrations_offline() -> None:
    _configure(url=_url(), literal_binds=True, dialect_opts={"paramstyle": "named"})
    with context.begin_transaction():
        context.run_migrations()


def _run_sync(connection: Connection) -> None:
    _configure(connection=connection)
    with context.begin_transaction():
        context.run_migrations()


def transactional_ddl(engine: AsyncEngine) -> None:
    """SQLite: BEGIN emitted by us, so CREATE/ALTER/DROP run inside the migration's transaction (no-op elsewhere)."""
    if engine.dialect.name != "sqlite":
        return

    @event.listens_for(engine.sync_engine, "connect")
    def _no_driver_transactions(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # the driver no longer begins (nor commits) behind our back

    @event.listens_for(engine.sync_engine, "begin")
    def _begin(connection: Connection) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")  # the write lock at once: no upgrade from a stale read


async def _run_async() -> None:
    engine = make_engine(_url())
    transactional_ddl(engine)
    try:
        async with engine.connect() as connection:
            await connection.run_sync(_run_sync)
            await connection.commit()
    finally:
        await engine.dispose()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:  # a caller handed us a sync connection (e.g. inside run_sync)
        _run_sync(connection)
        return
    asyncio.run(_run_async())


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
