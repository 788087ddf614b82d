"""The Mini App from the bot: the menu button (setChatMenuButton with `web_app`) and an "Open the market" button
under /offers and /estimate answers, both only when WEB__PUBLIC_URL names where the page is served.

Telegram allows `web_app` buttons in private chats only (a group's keyboard with one is refused), so elsewhere the
answers keep their keyboards as they were. The page is opened with the user's phrase in `?q=`, so it starts where
the answer was.
"""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit, urlunsplit

from aiogram import Bot
from aiogram.types import Chat, InlineKeyboardButton, InlineKeyboardMarkup, MenuButtonWebApp, WebAppInfo

from bot.texts import t


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


async def set_menu_button(bot: Bot, url: str) -> None:
    """The bot's default menu button opens the market (every chat without a button of its own)."""
    await bot.set_chat_menu_button(menu_button=MenuButtonWebApp(text=t("en", "menu_market"),
                                                               web_app=WebAppInfo(url=market_url(url))))
