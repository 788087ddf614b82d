"""A kill during `gpuradar db upgrade` never bricks the database (issue 24): the real command in a child process,
SIGKILLed just before its N-th SQL statement, on a SQLite file (or PostgreSQL with TEST_DATABASE_URL); afterwards
`gpuradar db upgrade` finishes the job and the schema is exactly the models'.

CI runs a sample of kill points (KILL_SAMPLE of them, default 4: evenly spread over the whole upgrade with a random
offset, named in a failure); `bench/reliability.py` sweeps every statement of the upgrade for the closing figures."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine

from storage import migrate
from tests.conftest import PostgresAdmin
from tests.storage.test_migrations import _all_models, _diff

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = int(os.environ.get("KILL_SAMPLE") or 4)
OFFSET = random.Random().random()  # where in each stretch the kill lands, this run


def upgrade_killed_at(url: str, point: int) -> tuple[int, str]:
    """Run `gpuradar db upgrade` killing it before statement `point` (0: never): (exit status, output)."""
    proc = subprocess.run([sys.executable, "-m", "tests.support.kill_upgrade", url, str(point)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout + proc.stderr


@pytest.fixture
def fresh_url(tmp_path: Path, postgres_admin: PostgresAdmin | None) -> Iterator[str]:
    if postgres_admin is None:
        yield f"sqlite+aiosqlite:///{tmp_path / 'killed.sqlite3'}"
        return
    name = postgres_admin.create()
    try:
        yield postgres_admin.url_for(name)
    finally:
        postgres_admin.drop(name)


def count_statements(url: str) -> int:
    """How many statements a whole upgrade sends (in this process: the command adds a few reads after it)."""
    seen = [0]

    def count(*_: object) -> None:
        seen[0] += 1

    event.listen(Engine, "before_cursor_execute", count)
    try:
        migrate.upgrade(url)
    finally:
        event.remove(Engine, "before_cursor_execute", count)
    return seen[0]


@pytest.fixture(scope="module")
def statements(tmp_path_factory: pytest.TempPathFactory, postgres_admin: PostgresAdmin | None) -> int:
    if postgres_admin is None:
        return count_statements(f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('count') / 'count.sqlite3'}")
    name = postgres_admin.create()
    try:
        return count_statements(postgres_admin.url_for(name))
    finally:
        postgres_admin.drop(name)


def points(total: int, sample: int = SAMPLE, offset: float = OFFSET) -> list[int]:
    step = total / sample
    return sorted({1 + int(step * (k + offset)) for k in range(sample)})


def check_recovers(url: str, point: int) -> None:
    status, out = upgrade_killed_at(url, point)
    assert status == -signal.SIGKILL, f"point {point}: not killed ({status}): {out}"
    # whatever the kill left, the next upgrade completes and the schema is the models' exactly
    try:
        migrate.upgrade(url)
    except Exception as exc:
        raise AssertionError(f"killed before statement {point}, the next upgrade failed: {exc}") from exc
    assert migrate.current(url) == migrate.heads()
    _all_models()
    assert asyncio.run(_diff(url)) == [], f"killed before statement {point}: schema differs"


@pytest.mark.parametrize("k", range(SAMPLE))
def test_a_kill_anywhere_in_an_upgrade_leaves_a_database_the_next_upgrade_completes(
        fresh_url: str, statements: int, k: int) -> None:
    chosen = points(statements)
    if k >= len(chosen):
        pytest.fail(f"only {len(chosen)} points for {statements} statements")  # never: SAMPLE << statements
    check_recovers(fresh_url, chosen[k])

