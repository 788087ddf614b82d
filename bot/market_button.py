"""The Mini App from the bot: the menu button (setChatMenuButton with `web_app`) and an "Open the market" button
under /offers and /estimate answers, both only when WEB__PUBLIC_URL names where the page is served.

Telegram allows `web_app` buttons in private chats only (a group's keyboard with one is refused), so elsewhere the
answers keep their keyboards as they were. The page is opened with the user's phrase in `?q=`, so it starts where
the answer was.

The menu button's text is one per chat: `setChatMenuButton` takes a `chat_id` but no `language_code` (unlike
`setMyCommands`; Bot API, https://core.telegram.org/bots/api#setchatmenubutton). So the default button (every chat
without one of its own) is in English, and each private chat gets the button in its user's language on /start and
when the language is changed (`set_chat_menu`); the page it opens is in that language too.
"""

from __future__ import annotations

import logging
from urllib.parse import urlencode, urlsplit, urlunsplit

from aiogram import Bot
from aiogram.exceptions import TelegramAPIError
from aiogram.types import Chat, InlineKeyboardButton, InlineKeyboardMarkup, MenuButtonWebApp, WebAppInfo

from bot.texts import t

log = logging.getLogger(__name__)


def market_url(base: str, query: str = "", lang: str | None = None) -> str:
    parts = urlsplit(base)
    params = {k: v for k, v in (("q", query.strip()[:200]), ("lang", lang or "")) if v}
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", urlencode(params), ""))


def with_market(markup: InlineKeyboardMarkup | None, url: str | None, lang: str, chat: Chat | None,
                query: str = "") -> InlineKeyboardMarkup | None:
    """`markup` with an "Open the market" row added (a private chat and a public URL), else `markup` unchanged."""
    if not url or chat is None or chat.type != "private":
        return markup
    button = InlineKeyboardButton(text=t(lang, "btn_open_market"), web_app=WebAppInfo(url=market_url(url, query, lang)))
    rows = list(markup.inline_keyboard) if markup is not None else []
    return InlineKeyboardMarkup(inline_keyboard=[*rows, [button]])


def menu_button(url: str, lang: str) -> MenuButtonWebApp:
    return MenuButtonWebApp(text=t(lang, "menu_market"), web_app=WebAppInfo(url=market_url(url, lang=lang)))


async def set_menu_button(bot: Bot, url: str) -> None:
    """The bot's default menu button opens the market (every chat without a button of its own), in English: the
    language of a user whose Telegram names none (storage.subscriptions.normalise_lang)."""
    await bot.set_chat_menu_button(menu_button=MenuButtonWebApp(text=t("en", "menu_market"),
                                                               web_app=WebAppInfo(url=market_url(url))))


async def set_chat_menu(bot: Bot, url: str | None, chat: Chat | None, lang: str) -> None:
    """This private chat's menu button in its user's language (a public URL set; groups keep the default). A refusal
    costs the user nothing but the default button's English, so it is logged, never raised into the answer."""
    if not url or chat is None or chat.type != "private":
        return
    try:
        await bot.set_chat_menu_button(chat_id=chat.id, menu_button=menu_button(url, lang))
    except TelegramAPIError as exc:
        log.warning("menu button for chat %s not set: %s", chat.id, exc)
