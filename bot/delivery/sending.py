"""An alert's request as it goes to Telegram: one JSON body, made from the text the planner wrote, posted through the
bot's own aiohttp session.

aiogram sends every method as an urlencoded form, and the standard library percent-encodes it a byte at a time in
Python: a 3,000-character digest took 0.3-1.5 ms, more than everything else the sender does for a message together
(bench/sender_loop.py at 1,000 messages a second; Cyrillic costs three escapes a character). The Bot API takes the
same parameters as a JSON body (https://core.telegram.org/bots/api#making-requests), which the C encoder writes in
microseconds. An accepted answer is read for its `message_id` alone: aiogram's reading of it (`Bot.__call__`, its
session middlewares, `check_response` validating the whole Message with pydantic) was a third of the sender's CPU
per message at the paid rate (py-spy on bench/sender_loop.py --deliver), and the sender paces its own sends, so the
pacing middleware only passed them through. Every other answer (an error, a 429, anything unexpected) is read by the
session's own `check_response`, so the errors (TelegramRetryAfter, TelegramForbiddenError, ...) and the network
failures (TelegramNetworkError) are aiogram's as before. Every other call, replies included, goes aiogram's way.

The `SendMessage` object aiogram names errors with is made only then: a copy of one validated template with the chat
and text set (the body, not the object, carries the buttons).
"""

from __future__ import annotations

import json
from typing import Any

from aiogram import Bot
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.exceptions import TelegramNetworkError
from aiogram.methods import SendMessage
from aiohttp import ClientError, ClientTimeout

_HEADERS = {"Content-Type": "application/json"}


def posts_directly(bot: Bot) -> bool:
    """Whether the sender can post its alerts itself: the session is aiogram's aiohttp one (any other session, a
    test double's say, gets aiogram's way, each request validated)."""
    return isinstance(bot.session, AiohttpSession)


class Requests:
    """The sender's requests: the JSON body, and a `SendMessage` for aiogram to read the answer with, copied from
    one validated template with the chat and text set (nearly every digest's text is its reader's own)."""

    def __init__(self) -> None:
        self._template = SendMessage(chat_id=0, text=".", parse_mode="HTML")

    def method(self, chat_id: int, text: str) -> SendMessage:
        return self._template.model_copy(update={"chat_id": chat_id, "text": text})

    async def post(self, bot: Bot, chat_id: int, text: str, body: bytes, timeout: float) -> int:
        """Post one alert's body as sendMessage; the sent message's id, or aiogram's exception for the answer."""
        session = bot.session
        assert isinstance(session, AiohttpSession)  # posts_directly(bot)
        http = await session.create_session()
        url = session.api.api_url(token=bot.token, method="sendMessage")
        try:
            async with http.post(url, data=body, headers=_HEADERS, timeout=ClientTimeout(total=timeout)) as resp:
                status, raw = resp.status, await resp.read()
        except TimeoutError as e:  # as aiogram's AiohttpSession.make_request says them
            raise TelegramNetworkError(method=self.method(chat_id, text), message="Request timeout error") from e
        except ClientError as e:
            raise TelegramNetworkError(method=self.method(chat_id, text), message=f"{type(e).__name__}: {e}") from e
        if status == 200:
            try:
                answer = json.loads(raw)
                if answer["ok"] is True and type(message_id := answer["result"]["message_id"]) is int:
                    return message_id
            except (ValueError, KeyError, TypeError):
                pass  # not the answer it should be: aiogram says what is wrong with it, below
        response = session.check_response(bot=bot, method=self.method(chat_id, text), status_code=status,
                                          content=raw.decode("utf-8", errors="replace"))
        result = response.result
        if result is None:
            raise TelegramNetworkError(method=self.method(chat_id, text), message="answer without a message")
        return result.message_id

    @staticmethod
    def body(chat_id: int, text: str, reply_markup: dict[str, Any] | None, paid: bool) -> bytes:
        params: dict[str, Any] = {"chat_id": chat_id, "text": text, "parse_mode": "HTML"}
        if reply_markup:
            params["reply_markup"] = reply_markup
        if paid:
            params["allow_paid_broadcast"] = True
        return json.dumps(params, ensure_ascii=False, separators=(",", ":")).encode()


__all__ = ["Requests", "posts_directly"]
