"""/subs: the user's subscriptions with pause / resume / delete buttons, a page at a time; /unsubscribe N | all.

Pages are cut by length, not by a fixed count: each holds as many subscriptions as fit in one Telegram message
(4,096 characters), however long the users' texts are, and ‹ › buttons turn them.
"""

from __future__ import annotations

import contextlib

from aiogram import Router
from aiogram.exceptions import TelegramBadRequest
from aiogram.filters import Command, CommandObject
from aiogram.types import CallbackQuery, InlineKeyboardMarkup, Message
from sqlalchemy.ext.asyncio import AsyncSession

from bot.callbacks import SubCb, SubsPageCb
from bot.formatting import TELEGRAM_LIMIT
from bot.keyboards import confirm_keyboard, subs_page_keyboard
from bot.services import subscriptions
from bot.texts import t
from bot.views import subscription_filters, subscription_what
from storage.subscriptions import MAX_SUBSCRIPTIONS_PER_USER, list_subscriptions
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
    kb = subs_page_keyboard(lang, [(i + 1, subs[i]) for i in shown], page, len(pages))
    return "\n".join([head, *(lines[i] for i in shown)]), kb


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
        n = await subscriptions.delete_all(session, user.id)
        await query.answer()
        if isinstance(query.message, Message):
            await query.message.edit_text(t(lang, "unsub_all_done", n=n))
        return
    if callback_data.action == "keep":
        done, note = True, "sub_kept"
    elif callback_data.action == "delete_yes":
        done = await subscriptions.delete(session, user.id, callback_data.id)
        note = "sub_deleted"
    else:
        done = await subscriptions.pause(session, user.id, callback_data.id, callback_data.action == "pause")
        note = "sub_paused" if callback_data.action == "pause" else "sub_resumed"
    await query.answer(t(lang, note if done else "sub_not_found"))
    await _show(query, *await render_subs(session, user, lang, sub_id=callback_data.id))


async def alerts_here(query: CallbackQuery, callback_data: SubCb, session: AsyncSession, user: User,
                      lang: str) -> None:
    """The owner chose to get this subscription's alerts in the chat the button is in (a group)."""
    if query.message is None:
        await query.answer(t(lang, "button_stale"))
        return
    sub = await subscriptions.alerts_to_chat(session, user.id, callback_data.id, query.message.chat.id)
    if sub is None:  # someone else's button (ownership is checked in storage), or deleted since
        await query.answer(t(lang, "sub_not_found"), show_alert=True)
        return
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
