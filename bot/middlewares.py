"""Per-update context: one database session and the stored user (language, currency) for every handler.

Handlers receive `session`, `user`, `lang` and `currency` by name. The session commits when the handler returns
normally, so one conversation step is one transaction; on an exception it rolls back and the user gets a polite
"try again" instead of silence (the error is logged with its traceback for us, never shown).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiogram import BaseMiddleware
from aiogram.types import CallbackQuery, Message, TelegramObject
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
        chat_id = _chat_id(event, from_user.id)
        async with self.sessionmaker() as session:
            user, created = await get_or_create_user(session, from_user.id, chat_id, from_user.language_code)
            data.update(session=session, user=user, lang=user.lang, currency=user.currency, new_user=created)
            await session.commit()  # the user row exists even if the handler fails
            self.prefs.remember(user.id, user.lang, user.currency)
            try:
                result = await handler(event, data)
            except Exception:
                await session.rollback()
                log.exception("handler failed for update from user %s", from_user.id)
                await _apologise(event, user.lang)
                return None
            await session.commit()
            self.prefs.remember(user.id, user.lang, user.currency)
            return result


def _chat_id(event: TelegramObject, fallback: int) -> int:
    if isinstance(event, Message):
        return event.chat.id
    if isinstance(event, CallbackQuery) and event.message is not None:
        return event.message.chat.id
    return fallback


async def _apologise(event: TelegramObject, lang: str) -> None:
    try:
        if isinstance(event, Message):
            await event.answer(t(lang, "error"))
        elif isinstance(event, CallbackQuery):
            await event.answer(t(lang, "error"), show_alert=True)
    except Exception:  # the apology itself failed (network): the log already has the cause
        log.warning("could not tell the user about a failure", exc_info=True)
