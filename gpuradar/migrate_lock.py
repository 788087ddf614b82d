"""One replica at a time runs the migrations at start-up.

`docker compose up --scale bot=3` starts three replicas at once against one empty database; without a lock all
three would run Alembic concurrently and the losers would fail on tables the winner had just created. Holding the
lock, a replica migrates; the next one then finds the database at head and does nothing.

- PostgreSQL: a session-level advisory lock, held on a connection of its own while Alembic runs on another.
- SQLite: an exclusive `flock` on a file next to the database (every process using a SQLite file is on its host).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
from collections.abc import AsyncIterator
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import make_url

from storage.db import make_engine

# An arbitrary 64-bit key naming "GPU Radar migrations" among the server's advisory locks.
ADVISORY_KEY = 0x6770_7572_6164_6172 & 0x7FFF_FFFF_FFFF_FFFF


def lock_path(database: str) -> Path:
    """The SQLite lock file: beside the database (never in the working directory), ignored by git (*.migrate.lock)."""
    db = Path(database)
    return db.with_name(db.name + ".migrate.lock")


@contextlib.asynccontextmanager
async def migration_lock(url: str) -> AsyncIterator[None]:
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "postgresql":
        engine = make_engine(url, pool_size=1, max_overflow=0)
        try:
            async with engine.connect() as conn:
                await conn.execute(text("SELECT pg_advisory_lock(:key)"), {"key": ADVISORY_KEY})
                await conn.commit()  # the lock is per session, not per transaction: do not sit idle in one
                try:
                    yield
                finally:
                    await conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": ADVISORY_KEY})
                    await conn.commit()
        finally:
            await engine.dispose()
    elif backend == "sqlite" and parsed.database and parsed.database != ":memory:":
        with open(lock_path(parsed.database), "a+b") as handle:
            await asyncio.to_thread(fcntl.flock, handle.fileno(), fcntl.LOCK_EX)  # waits for the migrating one
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    else:
        yield
