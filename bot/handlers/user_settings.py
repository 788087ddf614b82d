"""/settings (currency, quiet hours, alert grouping) and /lang. Changes are stored per user at once
(`bot.services.settings` commits them before the answer)."""

from __future__ import annotations

import contextlib
import re

from aiogram import Bot, Router
from aiogram.exceptions import TelegramBadRequest
from aiogram.filters import Command, CommandObject
from aiogram.types import CallbackQuery, InlineKeyboardMarkup, Message
from sqlalchemy.ext.asyncio import AsyncSession

from bot.callbacks import SettingsCb
from bot.formatting import esc
from bot.keyboards import language_keyboard, settings_keyboard
from bot.market_button import set_chat_menu
from bot.prefs import PrefsCache
from bot.services import settings as user_settings
from bot.texts import t
from bot.timezones import format_offset, parse_tz
from storage.user_tables import User

router = Router(name="settings")

QUIET_RE = re.compile(r"^(?:quiet|тихие(?:\s+часы)?|тишина)?\s*(\d{1,2})(?::00)?\s*[-–—]\s*(\d{1,2})(?::00)?$",
                      re.IGNORECASE)
TZ_RE = re.compile(r"^(?:tz|time\s*zone|timezone|пояс|часовой\s+пояс|utc)\s+(.+)$", re.IGNORECASE)
QUIET_OFF_RE = re.compile(r"^(?:quiet|тихие|тишина)?\s*(?:off|выкл\w*|нет|none)$", re.IGNORECASE)
# Settings that have their own command: named here, they are pointed there instead of read as quiet hours.
LANG_WORD_RE = re.compile(r"^(?:lang\w*|язык\w*|locale)\b", re.IGNORECASE)
QUIET_WORD_RE = re.compile(r"^(?:quiet|тихие|тишина)\b", re.IGNORECASE)


def settings_view(user: User) -> tuple[str, InlineKeyboardMarkup]:
    """The settings as they are, and the buttons that change them."""
    lang = user.lang
    quiet = t(lang, "quiet_off") if user.quiet_start is None else \
        t(lang, "quiet_range", start=f"{user.quiet_start:02d}", end=f"{user.quiet_end:02d}")
    tz = format_offset(user.tz_offset_minutes)
    text = t(lang, "settings_title", currency=user.currency, quiet=quiet,
             grouping=t(lang, "on" if user.grouping else "off"), tz=tz)
    return text, settings_keyboard(user)


@router.message(Command("settings"))
async def settings(message: Message, command: CommandObject, session: AsyncSession, user: User, lang: str) -> None:
    arg = (command.args or "").strip()
    if arg:
        if (tz := TZ_RE.match(arg)) is not None:
            found = parse_tz(tz.group(1))
            if found is None:
                await message.answer(t(lang, "tz_bad", given=esc(tz.group(1))))
                return
            await user_settings.change_time_zone(session, user, found[0])
        elif QUIET_OFF_RE.match(arg):
            await user_settings.change_quiet_hours(session, user, None, None)
        elif (m := QUIET_RE.match(arg)) and int(m.group(1)) <= 23 and int(m.group(2)) <= 23:
            await user_settings.change_quiet_hours(session, user, int(m.group(1)), int(m.group(2)))
        elif m is not None:  # two hours, but not both 0-23
            await message.answer(t(lang, "quiet_bad_hours", given=esc(arg)))
            return
        elif LANG_WORD_RE.match(arg):
            await message.answer(t(lang, "settings_use_lang"))
            return
        elif QUIET_WORD_RE.match(arg):
            await message.answer(t(lang, "quiet_bad"))
            return
        else:
            await message.answer(t(lang, "settings_unknown", given=esc(arg[:40])))
            return
    text, kb = settings_view(user)
    await message.answer((t(lang, "settings_saved") + "\n\n" if arg else "") + text, reply_markup=kb)


@router.message(Command("lang"))
async def lang_command(message: Message, command: CommandObject, session: AsyncSession, user: User, lang: str,
                       prefs: PrefsCache, bot: Bot, webapp_url: str | None = None) -> None:
    arg = (command.args or "").strip().lower()
    if arg in ("ru", "en"):
        await user_settings.change_language(session, user, arg, prefs)  # saved before the user reads "done"
        await message.answer(t(arg, "lang_set"))
        await set_chat_menu(bot, webapp_url, message.chat, arg)  # the market button follows the language
        return
    await message.answer(t(lang, "lang_choose"), reply_markup=language_keyboard())


@router.callback_query(SettingsCb.filter())
async def change(query: CallbackQuery, callback_data: SettingsCb, session: AsyncSession, user: User,
                 prefs: PrefsCache, bot: Bot, webapp_url: str | None = None) -> None:
    what = callback_data.what
    try:
        await user_settings.change_by_button(session, user, what, callback_data.value, prefs)
    except ValueError:
        await query.answer(t(user.lang, "error"), show_alert=True)
        return
    await query.answer(t(user.lang, "lang_set" if what == "lang" else "settings_saved"))
    if what == "lang":  # the market button follows the language (this chat's; a group keeps the default)
        await set_chat_menu(bot, webapp_url, query.message.chat if query.message else None, user.lang)
    if not isinstance(query.message, Message):
        return
    with contextlib.suppress(TelegramBadRequest):  # unchanged: 'message is not modified'
        if what == "lang":
            await query.message.edit_text(t(user.lang, "lang_set"))
        else:
            text, kb = settings_view(user)
            await query.message.edit_text(text, reply_markup=kb)
