"""The command menu, registered with setMyCommands in Russian and in English (Telegram shows each user theirs)."""

from __future__ import annotations

from aiogram import Bot
from aiogram.types import BotCommand

from bot.texts import t

MENU = ("start", "estimate", "offers", "subscribe", "subs", "unsubscribe", "history", "when", "providers", "settings",
        "lang", "help")


def menu(lang: str) -> list[BotCommand]:
    return [BotCommand(command=name, description=t(lang, f"cmd_{name}")) for name in MENU]


async def register_menu(bot: Bot) -> None:
    await bot.set_my_commands(menu("en"))  # the default, for every language without its own list
    await bot.set_my_commands(menu("ru"), language_code="ru")
