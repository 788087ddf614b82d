"""The one dialect-aware INSERT ... ON CONFLICT of the project.

SQLite and PostgreSQL both have `ON CONFLICT (...) DO NOTHING | DO UPDATE`, but SQLAlchemy exposes it through each
dialect's own `insert()`. Every upsert (users, wizard state, leases, the alert outbox, link tokens, the health
probe) builds its statement here, so a third database would need one change in one place.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

UpsertInsert = postgresql.Insert | sqlite.Insert


def dialect_name(bind: AsyncSession | AsyncConnection) -> str:
    if isinstance(bind, AsyncSession):
        return bind.get_bind().dialect.name
    return bind.dialect.name


def upsert_insert(bind: AsyncSession | AsyncConnection, table: Any) -> UpsertInsert:
    """`INSERT INTO table` with `.on_conflict_do_nothing(...)` / `.on_conflict_do_update(...)` available.

    Raises NotImplementedError on a database without ON CONFLICT (the project supports SQLite and PostgreSQL)."""
    return insert_for(dialect_name(bind), table)


def insert_for(name: str, table: Any) -> UpsertInsert:
    """`upsert_insert` for the database named `name` (a dialect's name), for a statement built once and kept."""
    if name == "postgresql":
        return postgresql.insert(table)
    if name == "sqlite":
        return sqlite.insert(table)
    raise NotImplementedError(f"no INSERT ... ON CONFLICT for the {name!r} database")
