"""Shared pytest fixtures. Keep this file small: fixtures live in tests/support/ and are registered here."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import shutil
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import settings
from sqlalchemy.engine import URL, make_url

import bot  # noqa: F401  # first, as in `gpuradar run`: aiogram's types are built when first used (bot/lazy_aiogram.py)
import gpuradar  # noqa: F401  # the wiring: installs the provider catalog core and the bot read (core.providers)

# No test reaches the internet: any HTTP(S) request a test (or a process it starts, which inherits the environment)
# makes to a host other than loopback goes to a proxy address where nothing listens, and fails at once. A provider or
# Hub base URL a test forgot to point at its stand-in then shows up as a failed poll, never as live traffic.
_DEAD_PROXY = "http://127.0.0.1:9"
for _var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
    os.environ[_var] = _DEAD_PROXY
os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost,::1"

# The alert sender runs on the app's own loop in tests (`SENDER__IN_PROCESS`: the same `SenderService` the child
# process hosts): a child per started App would import the whole app again for every test (seconds each). The child
# host itself is tested where it is the point: tests/gpuradar/test_sender_process.py (killed mid-burst, wake-ups and
# reports over its socket, replies first) and the replica tests, whose `gpuradar run` processes get no such setting.
os.environ.setdefault("SENDER__IN_PROCESS", "true")
# Likewise the ingest child (`INGEST__IN_PROCESS`): its code serves the same channel from a thread of the test's
# process (gpuradar.child_process.ThreadChild), not ~0.7 s of CPU importing the app per started App. The child
# process itself is tested where it is the point: tests/gpuradar/test_ingest_process.py and test_ingest_slices.py
# (killed mid-poll, restarted, polls crossing), test_ingest_priority.py (niced) and the replica tests.
os.environ.setdefault("INGEST__IN_PROCESS", "true")

# Property tests (hypothesis) draw fresh random examples on every run, which finds what fixed examples miss, but a
# CI run must not pass or fail by the draw: there (.ci/run exports CI) each test's examples come from a seed fixed by
# its name, the same on every run; a developer's runs stay random, and a counterexample found is pinned as @example.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

# `provider_server`: a stand-in for the providers' APIs on 127.0.0.1 (testkit/provider_server.py).
pytest_plugins = ["testkit.provider_server", "tests.support.hub_server"]


# ---------------------------------------------------------------------------------------------------------------
# Databases: `database_url` and `migrated_database_url`. Use these instead of building your own SQLite path, so
# that `.ci/run` runs your tests on PostgreSQL too (it exports TEST_DATABASE_URL for the second run).
# ---------------------------------------------------------------------------------------------------------------

TEST_DATABASE_URL_ENV = "TEST_DATABASE_URL"
_T = TypeVar("_T")


class PostgresAdmin:
    """Creates and drops throwaway databases on the server named by TEST_DATABASE_URL.

    One asyncpg connection on a private event-loop thread: fixtures stay synchronous (usable by sync and async
    tests alike, whatever loop scope a test runs in) and no test's loop owns the admin connection.
    """

    PREFIX = "gpr_"  # every database made here: gpr_<pid>_<random>, so a dead session's leftovers are recognisable

    def __init__(self, url: str) -> None:
        import asyncpg  # lazily: SQLite-only runs need no PostgreSQL driver

        self.url: URL = make_url(url)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="pg-admin", daemon=True)
        self._thread.start()
        self._conn = self.call(asyncpg.connect(self._dsn(self.url.database or "postgres")))
        version = self.call(self._conn.fetchval("SHOW server_version_num"))
        # FILE_COPY (PostgreSQL 15+) copies the template's files instead of WAL-logging every block: ~4x faster here.
        self._strategy = " STRATEGY FILE_COPY" if int(version) >= 150000 else ""
        self._drop_orphans()

    def call(self, coro: Coroutine[Any, Any, _T]) -> _T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=120)

    def _dsn(self, database: str) -> str:
        return self.url.set(drivername="postgresql", database=database).render_as_string(hide_password=False)

    def url_for(self, database: str) -> str:
        return self.url.set(database=database).render_as_string(hide_password=False)

    def create(self, template: str = "template0") -> str:
        name = f"{self.PREFIX}{os.getpid()}_{uuid.uuid4().hex[:12]}"
        self.call(self._conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"{self._strategy}'))
        return name

    def drop(self, name: str) -> None:
        # FORCE ends connections a test forgot to close (an engine not disposed) instead of failing the drop. It may
        # not end a server-owned backend (an autovacuum worker that just started on the database: "must be a member
        # of the role whose process is being terminated"); that one finishes by itself, so wait for it and retry.
        import asyncpg

        for attempt in range(20):
            try:
                self.call(self._conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
                return
            except asyncpg.exceptions.InsufficientPrivilegeError:
                if attempt == 19:
                    raise
                time.sleep(0.5)

    def _drop_orphans(self) -> None:
        """Drop databases left by test sessions that were killed, recognised by a pid that no longer runs here."""
        if self.url.host not in ("127.0.0.1", "localhost", "::1"):
            return  # pids only mean something on this machine
        names = self.call(self._conn.fetch("SELECT datname FROM pg_database WHERE datname LIKE 'gpr\\_%'"))
        for (name,) in names:
            pid = name.split("_")[1] if name.count("_") >= 2 else ""
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                with contextlib.suppress(Exception):
                    self.drop(name)

    def close(self) -> None:
        self.call(self._conn.close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()


def _in_thread(fn: Callable[[], object]) -> None:
    """Run blocking set-up code (Alembic runs its own event loop) away from any loop running in this thread."""
    errors: list[BaseException] = []

    def target() -> None:
        try:
            result = fn()
            if inspect.isawaitable(result):
                asyncio.run(result)  # an async upgrade(url) works too
        except BaseException as exc:
            errors.append(exc)

    worker = threading.Thread(target=target)
    worker.start()
    worker.join()
    if errors:
        raise errors[0]


@pytest.fixture(scope="session")
def postgres_admin() -> Iterator[PostgresAdmin | None]:
    """The admin helper when TEST_DATABASE_URL names a PostgreSQL server, else None (the SQLite run)."""
    url = os.environ.get(TEST_DATABASE_URL_ENV)
    if not url:
        yield None
        return
    if not make_url(url).get_backend_name().startswith("postgresql"):
        raise pytest.UsageError(f"{TEST_DATABASE_URL_ENV} must be a postgresql+asyncpg:// URL, got {url!r}")
    admin = PostgresAdmin(url)
    try:
        yield admin
    finally:
        admin.close()


@pytest.fixture
def database_url(tmp_path: Path, postgres_admin: PostgresAdmin | None) -> Iterator[str]:
    """A fresh, empty database for this test, as an async SQLAlchemy URL (use `storage.db.make_engine(url)`).

    - By default: a SQLite file in the test's tmp_path (`sqlite+aiosqlite:///…/test.sqlite3`).
    - With TEST_DATABASE_URL=postgresql+asyncpg://user:pw@127.0.0.1:5432/db (what `.ci/postgres.sh` prints):
      a new PostgreSQL database created for this test only (the role needs CREATEDB) and dropped afterwards,
      even if the test left connections open.

    The database has no tables: call `Base.metadata.create_all` for the tables you test, or take
    `migrated_database_url` for the full Alembic schema. Dispose your engines at the end of the test.
    """
    if postgres_admin is None:
        yield f"sqlite+aiosqlite:///{tmp_path / 'test.sqlite3'}"
        return
    name = postgres_admin.create()
    try:
        yield postgres_admin.url_for(name)
    finally:
        postgres_admin.drop(name)


@pytest.fixture(scope="session")
def _migrated_template(
    tmp_path_factory: pytest.TempPathFactory, postgres_admin: PostgresAdmin | None
) -> Iterator[str]:
    """Migrate once per session; each test then gets a copy (a file copy, or CREATE DATABASE … TEMPLATE)."""
    from storage import migrate
    if postgres_admin is None:
        path = tmp_path_factory.mktemp("migrated") / "template.sqlite3"
        url = f"sqlite+aiosqlite:///{path}"
        _in_thread(lambda: migrate.upgrade(url))
        # Fold the WAL into the main file so a plain copy of it is the whole database.
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        yield str(path)
        return
    name = postgres_admin.create()
    try:
        _in_thread(lambda: migrate.upgrade(postgres_admin.url_for(name)))
        yield name
    finally:
        postgres_admin.drop(name)


@pytest.fixture
def migrated_database_url(
    tmp_path: Path, postgres_admin: PostgresAdmin | None, _migrated_template: str
) -> Iterator[str]:
    """Like `database_url`, but already at Alembic head (`storage.migrate.upgrade(url)`): every table of every
    `storage/*_tables.py` that has a migration. Cheap per test: the migration runs once per session."""
    if postgres_admin is None:
        path = tmp_path / "migrated.sqlite3"
        shutil.copyfile(_migrated_template, path)
        yield f"sqlite+aiosqlite:///{path}"
        return
    name = postgres_admin.create(template=_migrated_template)
    try:
        yield postgres_admin.url_for(name)
    finally:
        postgres_admin.drop(name)


@pytest.fixture
async def sm(migrated_database_url: str):
    """A session factory on a fresh migrated database (SQLite file or PostgreSQL, as `database_url` decides)."""
    from storage.db import make_engine, make_sessionmaker

    engine = make_engine(migrated_database_url)
    yield make_sessionmaker(engine)
    await engine.dispose()


# ---------------------------------------------------------------------------------------------------------------
# `-m database`: the tests that touch a database through the fixtures above. `.ci/run` runs the whole suite on
# SQLite and then only these on PostgreSQL: a test that never opens a database gives the same answer on both, so
# running it twice told nothing new and cost half of CI's time.
# ---------------------------------------------------------------------------------------------------------------

DATABASE_FIXTURES = frozenset({"postgres_admin"})  # every database fixture above depends on it


@pytest.hookimpl(tryfirst=True)  # before pytest's own `-m` selection reads the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if DATABASE_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.database)
