"""Helpers the handlers share: reading a command's argument politely and answering under Telegram's limits."""

from __future__ import annotations

from aiogram.filters import CommandObject
from aiogram.types import InlineKeyboardMarkup, Message

from bot.formatting import MAX_INPUT, cut_input, split_message
from bot.texts import t


async def argument(message: Message, command: CommandObject | None, lang: str) -> str:
    """The command's argument (or the whole text), cut to MAX_INPUT characters with a polite note when cut."""
    raw = (command.args if command is not None else message.text) or ""
    text, cut = cut_input(raw)
    if cut:
        await message.answer(t(lang, "input_cut", limit=MAX_INPUT))
    return text


async def answer_long(message: Message, text: str, reply_markup: InlineKeyboardMarkup | None = None) -> Message:
    """Send `text` in pieces under 4096 characters; the keyboard goes with the last piece."""
    parts = split_message(text)
    sent = None
    for i, part in enumerate(parts):
        sent = await message.answer(part, reply_markup=reply_markup if i == len(parts) - 1 else None,
                                    disable_web_page_preview=True)
    assert sent is not None
    return sent
