"""First run on a fresh machine: `gpuradar run` says in one line, in the operator's language (LANG), why it cannot
start (exit 2), ADMIN_IDS in every spelling people use, the migration lock file kept beside the database and out of
git, and SIGTERM ends it quietly."""

from __future__ import annotations

import asyncio
import os
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from gpuradar.migrate_lock import lock_path, migration_lock
from gpuradar.settings import Settings
from gpuradar.startup import check_database_path
from testkit.fake_telegram import FakeTelegram

ROOT = Path(__file__).resolve().parents[2]
CYRILLIC = "абвгдеёжзийклмнопрстуфхцчшщъыьэюя"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("WEBHOOK__", "WEB__", "BOT_TOKEN", "TELEGRAM_", "DATABASE_URL", "ADMIN_IDS", "LANG",
                                "LC_"))}
    env.update(BOT_TOKEN="123456:TEST-token", DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite3'}",
               PYTHONPATH=str(ROOT), TELEGRAM_CONNECT_BACKOFF="0.05", WEB__HOST="127.0.0.1", WEB__PORT="0",
               LANG="en_US.UTF-8")
    env.update(extra)
    return env


async def _run(tmp_path: Path, *args: str, **extra: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "gpuradar.cli", "run", *(args or ("--no-scrape",)), cwd=tmp_path,
        env=_env(tmp_path, **extra), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        _, err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
    return proc.returncode or 0, err.decode()


def _said(stderr: str) -> list[str]:
    """The message lines (log records, if any, start with a level or a timestamp / JSON brace)."""
    return [line for line in stderr.splitlines() if line.strip() and not line.startswith(("{", "WARNING", "INFO"))]


def _one_line_each(lines: list[str], *needles: str, lang: str = "en") -> None:
    """One line, in `lang` only (the operator's locale), naming each of `needles`."""
    assert len(lines) == 1, lines
    russian = any(c in lines[0].lower() for c in CYRILLIC)
    assert russian is (lang == "ru"), lines
    for needle in needles:
        assert needle in lines[0], (needle, lines)


@pytest.mark.parametrize("locale", ["en_US.UTF-8", "ru_RU.UTF-8", "C"])
async def test_invalid_token_says_so_in_the_operators_language(tmp_path: Path, locale: str) -> None:
    async with FakeTelegram(token="123456:RIGHT-token") as tg:
        code, err = await _run(tmp_path, BOT_TOKEN="123456:WRONG-token", TELEGRAM_API_URL=tg.base_url, LANG=locale)
    assert code == 2 and "Traceback" not in err
    _one_line_each(_said(err), "BOT_TOKEN", "@BotFather", lang="ru" if locale.startswith("ru") else "en")


@pytest.mark.parametrize("token", ["not a token", "notatoken", "123456:", ":abc", "abc:def"])
async def test_malformed_token_is_refused_before_any_request_or_migration(tmp_path: Path, token: str) -> None:
    async with FakeTelegram() as tg:
        code, err = await _run(tmp_path, BOT_TOKEN=token, TELEGRAM_API_URL=tg.base_url)
        assert tg.calls_of("getMe") == []
    assert code == 2 and "Traceback" not in err
    _one_line_each(_said(err), "BOT_TOKEN")
    assert not (tmp_path / "db.sqlite3").exists()  # not one migration ran for a typo


async def test_an_empty_token_is_not_set(tmp_path: Path) -> None:
    code, err = await _run(tmp_path, BOT_TOKEN="", LANG="ru_RU.UTF-8")
    assert code == 2 and "Traceback" not in err
    _one_line_each(_said(err), "BOT_TOKEN", "@BotFather", lang="ru")
    assert "не задан" in err and not (tmp_path / "db.sqlite3").exists()


def _closed_port() -> int:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(("url", "needle"), [
    ("foo://x", "DATABASE_URL"),
    ("postgres://gpuradar:pw-secret@127.0.0.1:5432/gpuradar", "postgres://"),
    ("postgresql://gpuradar:pw-secret@127.0.0.1:5432/gpuradar", "postgresql+asyncpg://"),
    ("sqlite:///db.sqlite3", "sqlite+aiosqlite://"),
    ("mysql+aiomysql://gpuradar:pw-secret@127.0.0.1/gpuradar", "DATABASE_URL"),
    ("not a url at all", "DATABASE_URL"),
    ("postgresql+asyncpg://gpuradar:pw-secret@127.0.0.1:{port}/gpuradar", "127.0.0.1:{port}"),
    ("postgresql+asyncpg://gpuradar:pw-secret@no-such-host.invalid:5432/gpuradar", "no-such-host.invalid"),
])
@pytest.mark.parametrize("locale", ["en_US.UTF-8", "ru_RU.UTF-8"])
async def test_a_bad_database_url_is_one_line(tmp_path: Path, url: str, needle: str, locale: str) -> None:
    port = str(_closed_port())
    async with FakeTelegram() as tg:
        code, err = await _run(tmp_path, TELEGRAM_API_URL=tg.base_url, DATABASE_URL=url.format(port=port),
                               LANG=locale)
        assert tg.calls_of("getMe") == []
    assert code == 2 and "Traceback" not in err, err
    _one_line_each(_said(err), needle.format(port=port), lang=locale[:2])
    assert "pw-secret" not in err


async def test_sigterm_ends_the_bot_quietly_with_polls_in_flight(tmp_path: Path) -> None:
    """SIGTERM while the leader's polls wait on a slow provider: exit 0, and nothing at warning level or above
    (no CancelledError from the scheduler, no traceback from the ingest child)."""
    import json
    import signal

    from testkit.provider_server import RUNPOD_PATH, ProviderServer
    from tests.gpuradar.test_cli_scrape import CBR_PATH, CBR_XML, env_for

    async with FakeTelegram() as tg, ProviderServer() as providers:
        providers.load_samples()
        providers.serve(CBR_PATH, body=CBR_XML, content_type="application/xml")
        providers.serve(RUNPOD_PATH, {"data": {"gpuTypes": []}}, delay=60)  # in flight when the signal comes
        env = env_for(providers, f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite3'}", enabled=("runpod", "cloudrift"))
        extra = {k: v for k, v in env.items() if k.startswith(("PROVIDERS__", "FX_"))}
        extra |= {"PROVIDERS__RUNPOD__TIMEOUT": "60"}
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "gpuradar.cli", "run", cwd=tmp_path,
            env=_env(tmp_path, BOT_TOKEN=tg.token, TELEGRAM_API_URL=tg.base_url, **extra),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        try:
            tg.message("/help", user_id=5)
            await tg.wait_for("sendMessage", chat_id=5, timeout=90)
            for _ in range(600):
                if providers.requests_to(RUNPOD_PATH):
                    break
                await asyncio.sleep(0.1)
            assert providers.requests_to(RUNPOD_PATH)  # the slow poll has started
            proc.send_signal(signal.SIGTERM)
            _, err = await asyncio.wait_for(proc.communicate(), 60)
        finally:
            if proc.returncode is None:
                proc.kill()
    assert proc.returncode == 0, err
    text = err.decode()
    assert "CancelledError" not in text and "Traceback" not in text, text
    levels = [json.loads(line)["level"] for line in text.splitlines() if line.startswith("{")]
    # quiet: nothing at error level (a warning such as a sample's unknown GPU name is the poll's, not the stop's)
    assert levels and not set(levels) & {"error", "critical"}, text


async def test_unreachable_telegram_is_retried_with_backoff_then_given_up(tmp_path: Path) -> None:
    port = _closed_port()
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


def test_the_database_check_keeps_this_process_sqlite_locks(tmp_path: Path) -> None:
    """Starting an App checks the SQLite file while other connections of the process may be open (a second App, a
    test's replicas). Opening and closing the file would drop every POSIX lock the process holds on it; another
    process closing its last connection would then find the database unused and delete its WAL under ours."""
    db = tmp_path / "radar.sqlite3"
    ours = sqlite3.connect(db)
    try:
        ours.execute("PRAGMA journal_mode=WAL")
        ours.execute("CREATE TABLE t (x INTEGER)")
        ours.execute("INSERT INTO t VALUES (1)")
        ours.commit()
        check_database_path(f"sqlite+aiosqlite:///{db}")
        other = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('SELECT * FROM t').fetchall(); "
                 "c.close()")
        subprocess.run([sys.executable, "-c", other, str(db)], check=True, timeout=60)
        # Ours is still open, so the other process was not the last connection: the WAL must still be there.
        assert (tmp_path / "radar.sqlite3-wal").exists() and (tmp_path / "radar.sqlite3-shm").exists()
        assert ours.execute("SELECT count(*) FROM t").fetchone() == (1,)
    finally:
        ours.close()


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
