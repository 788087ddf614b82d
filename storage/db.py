"""Engine, sessions and the declarative base. SQLite (WAL) by default; PostgreSQL through the same URL setting."""

from __future__ import annotations

from typing import Any

from sqlalchemy import MetaData, event, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase

from storage.urls import DEFAULT_DATABASE_URL

__all__ = ["DEFAULT_DATABASE_URL", "Base", "make_engine", "make_sessionmaker"]

# Named constraints keep Alembic migrations identical on SQLite and PostgreSQL.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


def make_engine(url: str = DEFAULT_DATABASE_URL, *, sqlite_cache_mb: int | None = None,
                sqlite_statements: int | None = None, **kwargs: Any) -> AsyncEngine:
    """`sqlite_cache_mb`: each SQLite connection's page cache (SQLite's default is 2 MB), for a writer whose
    transactions touch more pages than that (storage.ingest.WRITER_CACHE_MB); `sqlite_statements`: the prepared
    statements each SQLite connection keeps (Python's sqlite3 default: 128, `cached_statements`), for a process
    whose statements are mostly one-off IN lists. PostgreSQL ignores both."""
    # hide_parameters: a failed statement's error (and so its logged traceback) shows the SQL without the values,
    # which are user data (texts, chat ids inside wizard-state keys) the log redactor cannot recognise by shape.
    kwargs.setdefault("hide_parameters", True)
    sqlite = make_url(url).get_backend_name() == "sqlite"
    if sqlite and sqlite_statements is not None:  # a copy: the caller's connect_args stay as given
        kwargs["connect_args"] = {**kwargs.get("connect_args", {}), "cached_statements": sqlite_statements}
    engine = create_async_engine(url, **kwargs)
    if sqlite:
        _sqlite_pragmas(engine, sqlite_cache_mb)
    return engine


def _sqlite_pragmas(engine: AsyncEngine, cache_mb: int | None) -> None:
    # WAL lets the bot read while a poll writes; busy_timeout turns lock contention into a short wait, not an error.
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_conn, _record):  # type: ignore[no-untyped-def]
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA busy_timeout=10000")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA synchronous=NORMAL")
        if cache_mb is not None:
            cur.execute(f"PRAGMA cache_size={-1024 * int(cache_mb)}")  # negative: KiB
        cur.close()


def make_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)
