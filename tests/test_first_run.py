"""First run on a fresh machine: `gpuradar run` says in one line per language why it cannot start (exit 2),
ADMIN_IDS in every spelling people use, and the migration lock file kept beside the database and out of git."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from gpuradar.migrate_lock import lock_path, migration_lock
from gpuradar.settings import Settings
from testkit.fake_telegram import FakeTelegram

ROOT = Path(__file__).resolve().parents[1]
CYRILLIC = "абвгдеёжзийклмнопрстуфхцчшщъыьэюя"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("WEBHOOK__", "WEB__", "BOT_TOKEN", "TELEGRAM_", "DATABASE_URL", "ADMIN_IDS"))}
    env.update(BOT_TOKEN="123456:TEST-token", DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite3'}",
               PYTHONPATH=str(ROOT), TELEGRAM_CONNECT_BACKOFF="0.05", WEB__HOST="127.0.0.1", WEB__PORT="0")
    env.update(extra)
    return env


async def _run(tmp_path: Path, **extra: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "gpuradar.cli", "run", "--no-scrape", cwd=tmp_path, env=_env(tmp_path, **extra),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        _, err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
    return proc.returncode or 0, err.decode()


def _said(stderr: str) -> list[str]:
    """The message lines (log records, if any, start with a level or a timestamp / JSON brace)."""
    return [line for line in stderr.splitlines() if line.strip() and not line.startswith(("{", "WARNING", "INFO"))]


def _one_line_each(lines: list[str], *needles: str) -> None:
    assert len(lines) == 2, lines
    ru, en = lines
    assert any(c in ru.lower() for c in CYRILLIC) and not any(c in en.lower() for c in CYRILLIC), lines
    for needle in needles:
        assert needle in ru and needle in en, (needle, lines)


async def test_invalid_token_says_so_in_both_languages(tmp_path: Path) -> None:
    async with FakeTelegram(token="123456:RIGHT-token") as tg:
        code, err = await _run(tmp_path, BOT_TOKEN="123456:WRONG-token", TELEGRAM_API_URL=tg.base_url)
    assert code == 2 and "Traceback" not in err
    _one_line_each(_said(err), "BOT_TOKEN", "@BotFather")


async def test_malformed_token_is_refused_before_any_request(tmp_path: Path) -> None:
    async with FakeTelegram() as tg:
        code, err = await _run(tmp_path, BOT_TOKEN="not a token", TELEGRAM_API_URL=tg.base_url)
        assert tg.calls_of("getMe") == []
    assert code == 2 and "Traceback" not in err
    _one_line_each(_said(err), "BOT_TOKEN")


async def test_unreachable_telegram_is_retried_with_backoff_then_given_up(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, err = await _run(tmp_path, TELEGRAM_API_URL=f"http://127.0.0.1:{port}", TELEGRAM_CONNECT_ATTEMPTS="3")
    assert code == 2 and "Traceback" not in err
    _one_line_each(_said(err), f"http://127.0.0.1:{port}", "TELEGRAM_API_URL", "3")
    assert err.count("retry") == 2  # two waits between three attempts, logged as warnings


async def test_telegram_down_for_a_moment_is_waited_for(tmp_path: Path) -> None:
    """Reachable, then a dropped connection or two: the start-up retries and the bot comes up."""
    from gpuradar.app import App

    async with FakeTelegram() as tg:
        tg.fail("getMe", "drop", times=2)
        settings = Settings(bot_token=tg.token, telegram_api_url=tg.base_url, telegram_connect_backoff=0.01,
                            database_url=f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite3'}")
        app = App(settings, scrape=False)
        try:
            await app.start()
            assert app.started.is_set()
            tg.fail("getUpdates", "drop", times=2)  # the connection drops while running: polling backs off
            tg.message("/help", user_id=5)
            call = await tg.wait_for("sendMessage", chat_id=5, timeout=20)
            assert "/estimate" in call.text
        finally:
            await app.stop()
        assert len(tg.calls_of("getMe")) >= 3


async def test_web_port_in_use_names_the_setting(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        async with FakeTelegram() as tg:
            code, err = await _run(tmp_path, TELEGRAM_API_URL=tg.base_url, WEB__PORT=str(port))
    assert code == 2 and "Traceback" not in err
    _one_line_each(_said(err), "WEB__PORT", str(port))


@pytest.mark.parametrize(("database", "needle"), [
    ("{tmp}/no/such/folder/db.sqlite3", "/no/such/folder"),
    ("/sys/gpuradar-test.sqlite3", "/sys/gpuradar-test.sqlite3"),  # read-only even for root
])
async def test_database_path_missing_or_not_writable(tmp_path: Path, database: str, needle: str) -> None:
    async with FakeTelegram() as tg:
        code, err = await _run(tmp_path, TELEGRAM_API_URL=tg.base_url,
                               DATABASE_URL="sqlite+aiosqlite:///" + database.format(tmp=tmp_path))
        assert tg.calls_of("getMe") == []  # the database is checked first
    assert code == 2 and "Traceback" not in err
    _one_line_each(_said(err), "DATABASE_URL", needle)


@pytest.mark.parametrize(("value", "ids"), [("123", [123]), ("123,456", [123, 456]), ("[123, 456]", [123, 456]),
                                            ("123, 456", [123, 456]), ("", [])])
def test_admin_ids_in_every_usual_spelling(monkeypatch: pytest.MonkeyPatch, value: str, ids: list[int]) -> None:
    monkeypatch.setenv("ADMIN_IDS", value)
    assert Settings().admin_ids == ids


def test_admin_ids_garbage_is_a_settings_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from pydantic import ValidationError

    monkeypatch.setenv("ADMIN_IDS", "alice")
    with pytest.raises(ValidationError):
        Settings()


async def test_migration_lock_file_beside_the_database_and_ignored_by_git(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    db = tmp_path / "data" / "radar.sqlite3"
    db.parent.mkdir()
    async with migration_lock(f"sqlite+aiosqlite:///{db}"):
        pass
    assert lock_path(str(db)).parent == db.parent and lock_path(str(db)).exists()
    assert list(work.iterdir()) == []  # nothing left in the working directory
    ignored = subprocess.run(["git", "check-ignore", "-q", "gpuradar.sqlite3.migrate.lock"], cwd=ROOT)
    assert ignored.returncode == 0
