"""Why `gpuradar run` cannot start, said in one line in the operator's language (exit status 2), not a traceback.

Checked before anything runs: the token's format, the database URL (a known database with an asyncio driver) and
path (SQLite: its folder exists and can be written), then the database reached (refused, unknown host: one line),
the token (Telegram answers 401), Telegram itself (unreachable: retried with backoff, then given up), the web port
(in use: the message names WEB__PORT). Once the bot has reached Telegram, a lost connection is aiogram's polling
business: it retries with backoff and the process stays up.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import make_url

if TYPE_CHECKING:
    from aiogram import Bot
    from aiogram.types import User

log = logging.getLogger(__name__)


class StartupError(Exception):
    """A configuration or environment problem that stops `gpuradar run`; `key` names its text in the catalog."""

    def __init__(self, key: str, **values: Any) -> None:
        super().__init__(key)
        self.key = key
        self.values = values

    def text(self) -> str:
        """One line in the operator's language (the locale: LANG and the like)."""
        from texts.i18n import locale_lang, t

        return t(locale_lang(), self.key, **self.values)


SUPPORTED_BACKENDS = ("sqlite", "postgresql")


def check_database_url(url: str) -> None:
    """DATABASE_URL must be a URL SQLAlchemy reads, of a database it knows, with an asyncio driver (the bot's
    engine is async): `postgres://` (Heroku's spelling), `mysql://` or plain `sqlite://` are answered in one line
    instead of a traceback from deep inside the engine. Then, for SQLite, the file's folder (check_database_path)."""
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    try:
        parsed = make_url(url)
    except ArgumentError:
        raise StartupError("run_db_bad_url") from None
    if parsed.get_backend_name() not in SUPPORTED_BACKENDS:  # storage is written and tested for these two
        raise StartupError("run_db_unknown", scheme=parsed.drivername)
    try:
        dialect = parsed.get_dialect()
        if getattr(dialect, "is_async", False):
            dialect.import_dbapi()  # the driver installed (aiosqlite / asyncpg come with the package)
    except (NoSuchModuleError, ImportError):
        raise StartupError("run_db_unknown", scheme=parsed.drivername) from None
    if not getattr(dialect, "is_async", False):
        raise StartupError("run_db_not_async", scheme=parsed.drivername) from None
    check_database_path(url)


def database_unreachable(url: str, exc: BaseException) -> StartupError | None:
    """The one-line reason for a failure to reach the database (refused, unknown host, timed out, rejected login,
    no such database), or None for anything else (a real bug keeps its traceback). Never shows the password."""
    from sqlalchemy.exc import DBAPIError, InterfaceError

    from core.redaction import redact

    driver_error = type(exc).__module__.split(".")[0] in ("asyncpg", "aiosqlite", "sqlite3")
    if not isinstance(exc, OSError | TimeoutError | DBAPIError | InterfaceError) and not driver_error:
        return None
    parsed = make_url(url)
    where = parsed.render_as_string(hide_password=True)
    first = (str(exc).strip().splitlines() or [""])[0]
    error = redact(f"{type(exc).__name__}: {first}" if first else type(exc).__name__, parsed.password)
    return StartupError("run_db_unreachable", where=where, error=error[:300])


def check_database_path(url: str) -> None:
    """For a SQLite file: its folder must exist and the file must be creatable / writable. Other databases are
    checked by connecting (the migration step)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return
    path = Path(parsed.database)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise StartupError("run_db_missing", path=str(folder.resolve() if not folder.is_absolute() else folder))
    try:
        if path.exists():
            # Asked of the file system, never by opening the file: closing any descriptor of a file drops every
            # POSIX lock this process holds on it, so an open-and-close here would silently release the locks of
            # SQLite connections already open in this process (another App, a test's replicas); a process closing
            # its last connection elsewhere would then take the database for unused, checkpoint it and delete its
            # WAL under them ("disk I/O error" on their next read).
            if not os.access(path, os.R_OK | os.W_OK):
                raise PermissionError(errno.EACCES, "not writable", str(path))
        else:
            # a probe file of its own: never the database's name, which another replica may be creating right now
            with tempfile.NamedTemporaryFile(dir=folder, prefix=".gpuradar-probe-"):
                pass
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise StartupError("run_db_missing", path=str(folder)) from None
        raise StartupError("run_db_not_writable", path=str(path)) from None


def check_token_format(token: str) -> None:
    from aiogram.utils.token import TokenValidationError, validate_token

    try:
        validate_token(token)
    except TokenValidationError:
        raise StartupError("run_bad_token") from None


async def reach_telegram(bot: Bot, *, attempts: int = 5, backoff: float = 1.0, api: str = "") -> User:
    """getMe, retried with exponential backoff while Telegram cannot be reached; a refused token fails at once."""
    from aiogram.exceptions import TelegramNetworkError, TelegramServerError, TelegramUnauthorizedError

    delay = backoff
    for attempt in range(1, attempts + 1):
        try:
            return await bot.get_me()
        except TelegramUnauthorizedError:
            raise StartupError("run_bad_token") from None
        except (TelegramNetworkError, TelegramServerError, OSError) as exc:
            if attempt == attempts:
                raise StartupError("run_telegram_unreachable", api=api or "https://api.telegram.org",
                                   attempts=attempts) from None
            log.warning("Telegram unreachable (%s: %s); retry %d of %d in %.0f s", type(exc).__name__, exc,
                        attempt, attempts - 1, delay)
            await asyncio.sleep(delay)
            delay *= 2
    raise AssertionError("unreachable")


def port_in_use(exc: OSError, host: str, port: int) -> StartupError | None:
    if exc.errno in (errno.EADDRINUSE, errno.EACCES, errno.EADDRNOTAVAIL):
        return StartupError("run_port_in_use", host=host, port=str(port))
    return None
