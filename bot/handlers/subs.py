"""/subs: the user's subscriptions with pause / resume / delete buttons, a page at a time; /unsubscribe N | all.

Pages are cut by length, not by a fixed count: each holds as many subscriptions as fit in one Telegram message
(4,096 characters), however long the users' texts are, and ‹ › buttons turn them.
"""

from __future__ import annotations

import contextlib

from aiogram import Router
from aiogram.exceptions import TelegramBadRequest
from aiogram.filters import Command, CommandObject
from aiogram.types import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup, Message
from aiogram.utils.keyboard import InlineKeyboardBuilder
from sqlalchemy.ext.asyncio import AsyncSession

from bot.callbacks import SubCb, SubsPageCb
from bot.formatting import TELEGRAM_LIMIT
from bot.texts import t
from bot.views import subscription_filters, subscription_what
from storage.subscriptions import (
    MAX_SUBSCRIPTIONS_PER_USER,
    delete_all_subscriptions,
    delete_subscription,
    list_subscriptions,
    set_paused,
    set_subscription_chat,
)
from storage.user_tables import Subscription, User

router = Router(name="subs")

PAGE_BUDGET = TELEGRAM_LIMIT - 200  # room for the title and the "page i/n" line
BUTTON_ROWS = 20  # subscriptions per page at most: one row of buttons each, far under Telegram's 100 buttons


def _line(n: int, sub: Subscription, lang: str) -> str:
    line = t(lang, "subs_line", n=n, what=subscription_what(sub, lang), filters=subscription_filters(sub, lang),
             paused=t(lang, "subs_paused") if sub.paused else "")
    if sub.chat_id != sub.user_id:
        line += t(lang, "subs_in_group")
    return line[:PAGE_BUDGET]  # a single subscription never needs a page of its own, but never overflows one


def paginate(lines: list[str], budget: int = PAGE_BUDGET, rows: int = BUTTON_ROWS) -> list[list[int]]:
    """Indexes of `lines` per page: consecutive, each page under `budget` characters and `rows` lines."""
    pages: list[list[int]] = [[]]
    size = 0
    for i, line in enumerate(lines):
        if pages[-1] and (size + len(line) + 1 > budget or len(pages[-1]) >= rows):
            pages.append([])
            size = 0
        pages[-1].append(i)
        size += len(line) + 1
    return pages


async def render_subs(session: AsyncSession, user: User, lang: str, page: int = 1, *,
                      sub_id: int | None = None) -> tuple[str, InlineKeyboardMarkup | None]:
    """One page of /subs: `page`, or the page showing `sub_id` when given (after a button on it was pressed)."""
    subs = await list_subscriptions(session, user.id)
    if not subs:
        return t(lang, "subs_empty"), None
    lines = [_line(n, sub, lang) for n, sub in enumerate(subs, start=1)]
    pages = paginate(lines)
    if sub_id is not None:
        page = next((p + 1 for p, idx in enumerate(pages) for i in idx if subs[i].id == sub_id), page)
    page = min(max(page, 1), len(pages))
    shown = pages[page - 1]
    head = t(lang, "subs_title", n=len(subs), limit=MAX_SUBSCRIPTIONS_PER_USER)
    if len(pages) > 1:
        head += " " + t(lang, "subs_page", page=page, pages=len(pages))
    kb = InlineKeyboardBuilder()
    for i in shown:
        sub, n = subs[i], i + 1
        toggle = (t(lang, "btn_resume", n=n), SubCb(action="resume", id=sub.id)) if sub.paused else \
            (t(lang, "btn_pause", n=n), SubCb(action="pause", id=sub.id))
        kb.row(InlineKeyboardButton(text=toggle[0], callback_data=toggle[1].pack()),
               InlineKeyboardButton(text=t(lang, "btn_delete", n=n),
                                    callback_data=SubCb(action="delete", id=sub.id).pack()))
    nav = []
    if page > 1:
        nav.append(InlineKeyboardButton(text=t(lang, "btn_prev"), callback_data=SubsPageCb(page=page - 1).pack()))
    if page < len(pages):
        nav.append(InlineKeyboardButton(text=t(lang, "btn_next"), callback_data=SubsPageCb(page=page + 1).pack()))
    if nav:
        kb.row(*nav)
    return "\n".join([head, *(lines[i] for i in shown)]), kb.as_markup()


@router.message(Command("subs"))
async def subs(message: Message, session: AsyncSession, user: User, lang: str) -> None:
    text, kb = await render_subs(session, user, lang)
    await message.answer(text, reply_markup=kb, disable_web_page_preview=True)


async def _show(query: CallbackQuery, text: str, kb: InlineKeyboardMarkup | None) -> None:
    if isinstance(query.message, Message):
        with contextlib.suppress(TelegramBadRequest):  # unchanged: 'message is not modified'
            await query.message.edit_text(text, reply_markup=kb, disable_web_page_preview=True)


@router.callback_query(SubsPageCb.filter())
async def turn_page(query: CallbackQuery, callback_data: SubsPageCb, session: AsyncSession, user: User,
                    lang: str) -> None:
    await query.answer()
    await _show(query, *await render_subs(session, user, lang, callback_data.page))


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
    if callback_data.action == "here":
        await alerts_here(query, callback_data, session, user, lang)
        return
    if callback_data.action == "delete":  # asks first: the list turns into the question, Keep turns it back
        view = await confirm_delete_view(session, user, callback_data.id, lang)
        await query.answer(None if view else t(lang, "sub_not_found"))
        if view is not None and isinstance(query.message, Message):
            with contextlib.suppress(TelegramBadRequest):
                await query.message.edit_text(view[0], reply_markup=view[1])
        return
    if callback_data.action == "delete_all_yes":
        n = await delete_all_subscriptions(session, user.id)
        await session.commit()
        await query.answer()
        if isinstance(query.message, Message):
            await query.message.edit_text(t(lang, "unsub_all_done", n=n))
        return
    if callback_data.action == "keep":
        done, note = True, "sub_kept"
    elif callback_data.action == "delete_yes":
        done = await delete_subscription(session, user.id, callback_data.id)
        note = "sub_deleted"
    else:
        done = await set_paused(session, user.id, callback_data.id, callback_data.action == "pause") is not None
        note = "sub_paused" if callback_data.action == "pause" else "sub_resumed"
    await session.commit()
    await query.answer(t(lang, note if done else "sub_not_found"))
    await _show(query, *await render_subs(session, user, lang, sub_id=callback_data.id))


async def alerts_here(query: CallbackQuery, callback_data: SubCb, session: AsyncSession, user: User,
                      lang: str) -> None:
    """The owner chose to get this subscription's alerts in the chat the button is in (a group)."""
    if query.message is None:
        await query.answer(t(lang, "button_stale"))
        return
    sub = await set_subscription_chat(session, user.id, callback_data.id, query.message.chat.id)
    if sub is None:  # someone else's button (ownership is checked in storage), or deleted since
        await query.answer(t(lang, "sub_not_found"), show_alert=True)
        return
    await session.commit()
    await query.answer(t(lang, "alerts_here_done"), show_alert=True)
    if isinstance(query.message, Message):
        with contextlib.suppress(TelegramBadRequest):
            await query.message.edit_reply_markup(reply_markup=None)


def _number(arg: str) -> int | None:
    """A subscription number typed by the user: ASCII digits only ('²' passes str.isdigit() but not int())."""
    if arg.isascii() and arg.isdigit() and len(arg) <= 6:
        return int(arg)
    return None


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
    number = _number(arg)
    if number is None or not 1 <= number <= len(subs):
        # One message: what was wrong (no such number, or no number at all), then the list to pick from.
        head = t(lang, "unsub_usage") if number is None else \
            t(lang, "unsub_no_such", n=str(number)) if subs else t(lang, "unsub_no_such_none", n=str(number))
        if not subs:
            await message.answer(head)
            return
        text, kb = await render_subs(session, user, lang)
        if len(head) + 2 + len(text) > TELEGRAM_LIMIT:  # a page already near the limit: the list on its own
            await message.answer(head)
            await message.answer(text, reply_markup=kb, disable_web_page_preview=True)
            return
        await message.answer(head + "\n\n" + text, reply_markup=kb, disable_web_page_preview=True)
        return
    view = await confirm_delete_view(session, user, subs[number - 1].id, lang)
    assert view is not None
    await message.answer(view[0], reply_markup=view[1])
