"""/subs: the user's subscriptions with pause / resume / delete buttons; /unsubscribe N | all."""

from __future__ import annotations

import contextlib

from aiogram import Router
from aiogram.exceptions import TelegramBadRequest
from aiogram.filters import Command, CommandObject
from aiogram.types import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup, Message
from aiogram.utils.keyboard import InlineKeyboardBuilder
from sqlalchemy.ext.asyncio import AsyncSession

from bot.callbacks import SubCb
from bot.texts import t
from bot.views import subscription_filters, subscription_what
from storage.subscriptions import (
    MAX_SUBSCRIPTIONS_PER_USER,
    delete_all_subscriptions,
    delete_subscription,
    list_subscriptions,
    set_paused,
)
from storage.user_tables import User

router = Router(name="subs")


async def render_subs(session: AsyncSession, user: User, lang: str) -> tuple[str, InlineKeyboardMarkup | None]:
    subs = await list_subscriptions(session, user.id)
    if not subs:
        return t(lang, "subs_empty"), None
    lines = [t(lang, "subs_title", n=len(subs), limit=MAX_SUBSCRIPTIONS_PER_USER)]
    kb = InlineKeyboardBuilder()
    for n, sub in enumerate(subs, start=1):
        lines.append(t(lang, "subs_line", n=n, what=subscription_what(sub, lang),
                       filters=subscription_filters(sub, lang), paused=t(lang, "subs_paused") if sub.paused else ""))
        toggle = (t(lang, "btn_resume", n=n), SubCb(action="resume", id=sub.id)) if sub.paused else \
            (t(lang, "btn_pause", n=n), SubCb(action="pause", id=sub.id))
        kb.row(InlineKeyboardButton(text=toggle[0], callback_data=toggle[1].pack()),
               InlineKeyboardButton(text=t(lang, "btn_delete", n=n),
                                    callback_data=SubCb(action="delete", id=sub.id).pack()))
    return "\n".join(lines), kb.as_markup()


@router.message(Command("subs"))
async def subs(message: Message, session: AsyncSession, user: User, lang: str) -> None:
    text, kb = await render_subs(session, user, lang)
    await message.answer(text, reply_markup=kb)


def confirm_keyboard(lang: str, yes: SubCb) -> InlineKeyboardMarkup:
    kb = InlineKeyboardBuilder()
    kb.row(InlineKeyboardButton(text=t(lang, "btn_delete_yes"), callback_data=yes.pack()),
           InlineKeyboardButton(text=t(lang, "btn_keep"), callback_data=SubCb(action="keep", id=0).pack()))
    return kb.as_markup()


async def confirm_delete_view(session: AsyncSession, user: User, sub_id: int,
                              lang: str) -> tuple[str, InlineKeyboardMarkup] | None:
    """"Delete subscription N: <what>?" with Delete / Keep, or None when it no longer exists."""
    subs = await list_subscriptions(session, user.id)
    for n, sub in enumerate(subs, start=1):
        if sub.id == sub_id:
            text = t(lang, "sub_delete_confirm", n=n, what=subscription_what(sub, lang),
                     filters=subscription_filters(sub, lang))
            return text, confirm_keyboard(lang, SubCb(action="delete_yes", id=sub.id))
    return None


@router.callback_query(SubCb.filter())
async def manage(query: CallbackQuery, callback_data: SubCb, session: AsyncSession, user: User, lang: str) -> None:
    if callback_data.action == "delete":  # asks first: the list turns into the question, Keep turns it back
        view = await confirm_delete_view(session, user, callback_data.id, lang)
        await query.answer(None if view else t(lang, "sub_not_found"))
        if view is not None and query.message is not None:
            with contextlib.suppress(TelegramBadRequest):
                await query.message.edit_text(view[0], reply_markup=view[1])
        return
    if callback_data.action == "delete_all_yes":
        n = await delete_all_subscriptions(session, user.id)
        await session.commit()
        await query.answer()
        if query.message is not None:
            await query.message.edit_text(t(lang, "unsub_all_done", n=n))
        return
    if callback_data.action == "keep":
        done, note = True, "sub_kept"
    elif callback_data.action == "delete_yes":
        done = await delete_subscription(session, user.id, callback_data.id)
        note = "sub_deleted"
    elif callback_data.action in ("pause", "resume"):
        done = await set_paused(session, user.id, callback_data.id, callback_data.action == "pause") is not None
        note = "sub_paused" if callback_data.action == "pause" else "sub_resumed"
    else:
        done, note = False, "sub_not_found"
    await session.commit()
    await query.answer(t(lang, note if done else "sub_not_found"))
    if query.message is not None:
        text, kb = await render_subs(session, user, lang)
        with contextlib.suppress(TelegramBadRequest):  # unchanged: 'message is not modified'
            await query.message.edit_text(text, reply_markup=kb)


@router.message(Command("unsubscribe"))
async def unsubscribe(message: Message, command: CommandObject, session: AsyncSession, user: User,
                      lang: str) -> None:
    arg = (command.args or "").strip().lower()
    subs = await list_subscriptions(session, user.id)
    if arg in ("all", "все", "всё"):
        if not subs:
            await message.answer(t(lang, "subs_empty"))
            return
        await message.answer(t(lang, "unsub_all_confirm", n=len(subs)),
                             reply_markup=confirm_keyboard(lang, SubCb(action="delete_all_yes", id=0)))
        return
    if not arg.isdigit() or not 1 <= int(arg) <= len(subs):
        text, kb = await render_subs(session, user, lang)
        await message.answer(t(lang, "unsub_usage") + ("\n\n" + text if subs else ""), reply_markup=kb)
        return
    view = await confirm_delete_view(session, user, subs[int(arg) - 1].id, lang)
    assert view is not None
    await message.answer(view[0], reply_markup=view[1])
