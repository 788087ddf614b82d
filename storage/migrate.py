"""Run the Alembic migrations from code: `upgrade(url)` / `downgrade(url, rev)` / `current(url)`.

The Alembic environment runs its own event loop (`asyncio.run` around the async engine), so the plain functions
must not be called from inside a running loop; the `*_async` variants run the same work in a worker thread and
are what the application start-up and async test fixtures await.
"""

from __future__ import annotations

import asyncio
from importlib import resources
from pathlib import Path
from typing import TextIO

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from storage.db import DEFAULT_DATABASE_URL, make_engine


def ini_path() -> Path:
    """The shipped alembic.ini (inside the installed package, next to `migrations/`)."""
    return Path(str(resources.files("storage").joinpath("alembic.ini")))


def alembic_config(url: str = DEFAULT_DATABASE_URL, *, stdout: TextIO | None = None) -> Config:
    cfg = Config(str(ini_path()), stdout=stdout) if stdout is not None else Config(str(ini_path()))
    # script_location is "%(here)s/migrations" in the ini; set it explicitly too, so a copied ini still works.
    cfg.set_main_option("script_location", str(ini_path().parent / "migrations"))
    # '%' would be read as interpolation by configparser (passwords in URLs may contain it)
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def upgrade(url: str = DEFAULT_DATABASE_URL, revision: str = "head") -> None:
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str) -> None:
    command.downgrade(alembic_config(url), revision)


def heads() -> list[str]:
    return list(ScriptDirectory.from_config(alembic_config()).get_heads())


def revisions() -> list[str]:
    """Every revision id, oldest first."""
    script = ScriptDirectory.from_config(alembic_config())
    return [rev.revision for rev in reversed(list(script.walk_revisions()))]


async def current_async(url: str = DEFAULT_DATABASE_URL) -> list[str]:
    """The revision(s) the database is at; [] for an empty database. Safe inside a running loop."""
    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            return await conn.run_sync(lambda sync: list(MigrationContext.configure(sync).get_current_heads()))
    finally:
        await engine.dispose()


def current(url: str = DEFAULT_DATABASE_URL) -> list[str]:
    return asyncio.run(current_async(url))


async def upgrade_async(url: str = DEFAULT_DATABASE_URL, revision: str = "head") -> None:
    await asyncio.to_thread(upgrade, url, revision)


async def downgrade_async(url: str, revision: str) -> None:
    await asyncio.to_thread(downgrade, url, revision)
