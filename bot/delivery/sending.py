"""An alert's request as it goes to Telegram: one JSON body, made from the text the planner wrote.

aiogram sends every method as an urlencoded form, and the standard library percent-encodes it a byte at a time in
Python: a 3,000-character digest took 0.3-1.5 ms, more than everything else the sender does for a message together
(bench/sender_loop.py at 1,000 messages a second; Cyrillic costs three escapes a character). The Bot API takes the
same parameters as a JSON body (https://core.telegram.org/bots/api#making-requests), which the C encoder writes in
microseconds. `JsonSend`, an aiogram request middleware (the session's public extension point), posts the sender's
own sendMessage calls that way through the session's aiohttp client and reads the answer with the session's own
`check_response`, so the result, the errors (TelegramRetryAfter, TelegramForbiddenError, ...) and the network
failures (TelegramNetworkError) are aiogram's as before. Every other call, replies included, goes aiogram's way.

The `SendMessage` object that goes with the body (aiogram reads the answer and names errors with it) is a copy of
one validated template with the chat and text set: the body, not the object, carries the buttons, so no request is
validated per send.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
from collections.abc import Iterator
from typing import Any

from aiogram import Bot
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.session.middlewares.base import BaseRequestMiddleware, NextRequestMiddlewareType
from aiogram.exceptions import TelegramNetworkError
from aiogram.methods import Response, SendMessage, TelegramMethod
from aiogram.methods.base import TelegramType
from aiohttp import ClientError, ClientTimeout

_BODY: contextvars.ContextVar[tuple[bytes, float] | None] = contextvars.ContextVar("gpuradar_alert_body",
                                                                                   default=None)
_HEADERS = {"Content-Type": "application/json"}


class JsonSend(BaseRequestMiddleware):
    """Post the sender's sendMessage calls (inside `json_body`) as JSON; everything else passes through."""

    async def __call__(self, make_request: NextRequestMiddlewareType[TelegramType], bot: Bot,
                       method: TelegramMethod[TelegramType]) -> Response[TelegramType]:
        prepared = _BODY.get()
        session = bot.session
        if prepared is None or not isinstance(method, SendMessage) or not isinstance(session, AiohttpSession):
            return await make_request(bot, method)
        body, timeout = prepared
        http = await session.create_session()
        url = session.api.api_url(token=bot.token, method=method.__api_method__)
        try:
            async with http.post(url, data=body, headers=_HEADERS, timeout=ClientTimeout(total=timeout)) as resp:
                raw = await resp.text()
        except TimeoutError as e:  # as aiogram's AiohttpSession.make_request says them
            raise TelegramNetworkError(method=method, message="Request timeout error") from e
        except ClientError as e:
            raise TelegramNetworkError(method=method, message=f"{type(e).__name__}: {e}") from e
        response = session.check_response(bot=bot, method=method, status_code=resp.status, content=raw)
        return response.result  # type: ignore[return-value]  # what a session's make_request hands back


def install(bot: Bot) -> bool:
    """Put `JsonSend` on the bot's session once; False when the session is not aiogram's aiohttp one (then the
    sender goes aiogram's way, validating each request)."""
    if not isinstance(bot.session, AiohttpSession):
        return False
    if not any(isinstance(m, JsonSend) for m in bot.session.middleware):
        bot.session.middleware(JsonSend())
    return True


@contextlib.contextmanager
def json_body(body: bytes, timeout: float) -> Iterator[None]:
    token = _BODY.set((body, timeout))
    try:
        yield
    finally:
        _BODY.reset(token)


class Requests:
    """The sender's requests: the JSON body, and a `SendMessage` for aiogram to read the answer with, copied from
    one validated template with the chat and text set (nearly every digest's text is its reader's own)."""

    def __init__(self) -> None:
        self._template = SendMessage(chat_id=0, text=".", parse_mode="HTML")

    def method(self, chat_id: int, text: str) -> SendMessage:
        return self._template.model_copy(update={"chat_id": chat_id, "text": text})

    @staticmethod
    def body(chat_id: int, text: str, reply_markup: dict[str, Any] | None, paid: bool) -> bytes:
        params: dict[str, Any] = {"chat_id": chat_id, "text": text, "parse_mode": "HTML"}
        if reply_markup:
            params["reply_markup"] = reply_markup
        if paid:
            params["allow_paid_broadcast"] = True
        return json.dumps(params, ensure_ascii=False, separators=(",", ":")).encode()


__all__ = ["JsonSend", "Requests", "install", "json_body"]
