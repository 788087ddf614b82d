"""Why `gpuradar run` cannot start, said in one line per language (exit status 2), instead of a traceback.

Checked before anything runs: the database path (SQLite: its folder exists and can be written), the token
(Telegram answers 401), Telegram itself (unreachable: retried with backoff, then given up), the web port (in use:
the message names WEB__PORT). Once the bot has reached Telegram, a lost connection is aiogram's polling business:
it retries with backoff and the process stays up.
"""

from __future__ import annotations

import asyncio
import errno
import logging
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
        """Russian line, English line (the operator's language is unknown)."""
        from texts.i18n import t

        return "\n".join(t(lang, self.key, **self.values) for lang in ("ru", "en"))


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
            with open(path, "r+b"):  # opened for writing, nothing written
                pass
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
