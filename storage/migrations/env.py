"""Alembic environment: async engine, every `storage/*_tables.py` module's tables in `target_metadata`.

The URL comes from the Config (`storage.migrate` sets it) or, failing that, from DATABASE_URL / the default.
Table modules are found with pkgutil so that a new `storage/<feature>_tables.py` needs no edit here.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import pkgutil
from typing import Any

from alembic import context
from sqlalchemy.engine import Connection

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


async def _run_async() -> None:
    engine = make_engine(_url())
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
