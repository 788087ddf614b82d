"""Webhook mode: Telegram posts updates to the replicas' web server instead of each process long-polling.

`mount(app, dp, bot, path, secret)` puts the aiogram dispatcher behind `gpuradar.web.add_webhook_route`, which
answers 401 to any request without our secret token (constant-time compare) before the body is even read.
`register(bot, dp, url, secret)` tells Telegram where to post, with that secret and the update types our handlers
use (`dp.resolve_used_update_types()`): Telegram then does not send updates nobody handles.
"""

from __future__ import annotations

import logging
from typing import Any

from aiogram import Bot, Dispatcher
from aiogram.methods import TelegramMethod
from aiogram.types import Update
from aiohttp import web
from pydantic import ValidationError

from gpuradar.web import Handler, add_webhook_route

log = logging.getLogger(__name__)


def make_handler(dp: Dispatcher, bot: Bot) -> Handler:
    """The aiohttp handler for an authenticated webhook request: one update, handled before answering.

    Handled inline (not in the background) so that a replica dying mid-update leaves the request unanswered and
    Telegram delivers the update again, to whichever replica the load balancer picks. aiogram moves a handler that
    runs past 55 s to the background itself, before Telegram's 60 s timeout.
    """

    async def handle(request: web.Request) -> web.Response:
        try:
            update = Update.model_validate(await request.json(), context={"bot": bot})
        except (ValueError, ValidationError, RecursionError):
            # RecursionError: JSON nested thousands deep (a real update is a few levels) is no update either.
            return web.json_response({"error": "not a Telegram update"}, status=400)
        try:
            result: Any = await dp.feed_webhook_update(bot, update)
            if isinstance(result, TelegramMethod):
                await bot(result)  # a handler answered by returning a method: send it like any other call
        except Exception:
            # Answer 200 anyway: Telegram would redeliver a failing update again and again, blocking the chat's
            # later updates behind it. The error is logged (the message text redacted by gpuradar.logs).
            log.exception("update %s failed in its handler", update.update_id)
        return web.Response(status=200)

    return handle


def mount(app: web.Application, dp: Dispatcher, bot: Bot, path: str, secret: str, *,
          body_timeout: float = 15.0) -> None:
    add_webhook_route(app, path, make_handler(dp, bot), secret, body_timeout=body_timeout)


async def register(bot: Bot, dp: Dispatcher, url: str, secret: str, *, drop_pending_updates: bool = False) -> None:
    """setWebhook. Every replica calls it on start with the same arguments, which Telegram treats as a no-op."""
    await bot.set_webhook(url=url, secret_token=secret, allowed_updates=dp.resolve_used_update_types(),
                          drop_pending_updates=drop_pending_updates)
    log.info("webhook set; updates: %s", ", ".join(dp.resolve_used_update_types()))
