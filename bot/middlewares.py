"""Per-update context: one database session and the stored user (language, currency) for every handler, and the
error path that answers the user when anything fails.

Handlers receive `session`, `user`, `lang` and `currency` by name. The session commits when the handler returns
normally, so one conversation step is one transaction; on an exception it rolls back and the user gets a polite
"try again" instead of silence (the error is logged with its traceback for us, never shown).

The error path needs nothing from the database: the language of the apology is known before the database is asked
(the process's preference cache, else the client's language), because the failure may be the database itself (a
read-only or locked file, a lost connection) and ORM objects are expired after a rollback. Failures outside this
middleware (aiogram's FSM storage reading the wizard state) reach `apologise_on_error`, the dispatcher's error
handler, which answers the same way.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiogram import BaseMiddleware
from aiogram.types import CallbackQuery, ErrorEvent, Message, TelegramObject
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.prefs import PrefsCache
from bot.texts import t
from storage.subscriptions import get_or_create_user

log = logging.getLogger(__name__)

Handler = Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]]


class UserMiddleware(BaseMiddleware):
    """Outer middleware for messages and callback queries (inline queries are served from memory instead)."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], prefs: PrefsCache) -> None:
        self.sessionmaker = sessionmaker
        self.prefs = prefs

    async def __call__(self, handler: Handler, event: TelegramObject, data: dict[str, Any]) -> Any:
        from_user = getattr(event, "from_user", None)
        if from_user is None or from_user.is_bot:
            return None  # channel posts and the like: nothing for this bot to do
        lang = self.prefs.get(from_user.id, from_user.language_code).lang  # a plain str: survives any rollback
        async with self.sessionmaker() as session:
            try:
                user, created = await get_or_create_user(session, from_user.id, from_user.language_code)
                lang = user.lang
                data.update(session=session, user=user, lang=lang, currency=user.currency, new_user=created)
                await session.commit()  # the user row exists even if the handler fails
                self.prefs.remember(user.id, user.lang, user.currency)
                result = await handler(event, data)
                await session.commit()
                self.prefs.remember(user.id, user.lang, user.currency)
            except Exception:
                with contextlib.suppress(Exception):  # the database may be what failed
                    await session.rollback()
                # user_id=… is pseudonymised by the log formatter (gpuradar.logs), like every id.
                log.exception("handler failed for an update (user_id=%s)", from_user.id)
                await apologise(event, lang)
                return None
            return result


async def apologise(event: TelegramObject | None, lang: str) -> None:
    """Tell the user something failed on our side (and stop a pressed button spinning). Needs no database."""
    try:
        if isinstance(event, Message):
            await event.answer(t(lang, "error"))
        elif isinstance(event, CallbackQuery):
            await event.answer(t(lang, "error"), show_alert=True)
    except Exception:  # the apology itself failed (network): the log already has the cause
        log.warning("could not tell the user about a failure", exc_info=True)


def apologise_on_error(prefs: PrefsCache) -> Callable[[ErrorEvent], Awaitable[bool]]:
    """The dispatcher's error handler: an update that failed before UserMiddleware (e.g. the FSM storage could not
    read the wizard state) still gets an answer."""

    async def on_error(error: ErrorEvent) -> bool:
        update = error.update
        event: Message | CallbackQuery | None = update.message or update.callback_query
        from_user = event.from_user if event is not None else None
        log.error("update failed before its handler (user_id=%s)", from_user.id if from_user else None,
                  exc_info=(type(error.exception), error.exception, error.exception.__traceback__))
        if from_user is not None:
            await apologise(event, prefs.get(from_user.id, from_user.language_code).lang)
        return True

    return on_error
