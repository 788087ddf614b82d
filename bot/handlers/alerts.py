"""The "stop these alerts" button under an alert: pauses that subscription (resumable from /subs)."""

from __future__ import annotations

import contextlib

from aiogram import Router
from aiogram.exceptions import TelegramBadRequest
from aiogram.types import CallbackQuery, InlineKeyboardMarkup, Message
from sqlalchemy.ext.asyncio import AsyncSession

from bot.alert_texts import at
from bot.callbacks import AlertCb
from bot.keyboards import without_button
from bot.names import query_words
from bot.services import subscriptions
from bot.services.subscriptions import Stop
from storage.user_tables import User

router = Router(name="alerts")


@router.callback_query(AlertCb.filter())
async def stop_alerts(query: CallbackQuery, callback_data: AlertCb, session: AsyncSession, user: User,
                      lang: str) -> None:
    # Ownership is checked by the repository: a forged button cannot pause someone else's subscription.
    done, sub = await subscriptions.stop_alerts(session, user.id, callback_data.sub)  # committed before answering
    if done is Stop.GONE or sub is None:
        await query.answer(at(lang, "stop_gone"), show_alert=True)
        return
    if done is Stop.ALREADY:
        await query.answer(at(lang, "stop_already"))
        return
    await query.answer(at(lang, "stopped", query=query_words(lang, sub.query_text)[:100]), show_alert=True)
    # Take the pressed button off the message, so the same alert does not keep offering it.
    if isinstance(query.message, Message) and isinstance(query.message.reply_markup, InlineKeyboardMarkup):
        with contextlib.suppress(TelegramBadRequest):  # an old message may no longer be editable
            await query.message.edit_reply_markup(reply_markup=without_button(query.message.reply_markup, query.data))
