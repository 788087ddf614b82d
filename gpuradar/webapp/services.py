"""What the Mini App's routes share: the services they read and act with (the bot's own offer cache, estimator and
database), who is asking (initData, gpuradar.webapp.auth), in which language and currency, and the JSON body."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from aiogram import Bot
from aiohttp import web
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.estimates import Estimator
from bot.offer_cache import OfferCache
from core.limits import MAX_INPUT_CHARS
from gpuradar.webapp.auth import INIT_DATA_HEADER, InitDataError, WebUser, verify_init_data
from gpuradar.webapp.guard import Limits
from gpuradar.webapp.matrix import LastSeen, MatrixCache
from gpuradar.webapp.responses import Body, Built
from gpuradar.webapp.rows import CellPage, RowCache
from storage.subscriptions import DEFAULT_CURRENCY, normalise_lang
from texts.i18n import LANGS, t

log = logging.getLogger(__name__)

MAX_BODY = 8 * 1024  # bytes of a JSON request: a workload phrase and a flag or two
CELLS_KEPT = 512  # pages of /api/offers kept (tens of KB each at most), least recently used dropped first
ESTIMATES_KEPT = 256  # workload answers kept (a few tens of KB each)
CHARTS_KEPT = 256  # history answers kept (96 buckets a series: a few KB each)


@dataclass
class WebAppServices:
    """What the API reads and acts with: the bot's own offer cache, estimator and database; `bot` confirms
    subscriptions in the chat; `token` checks initData (None: nobody can sign in, the API is read-only)."""

    offers: OfferCache
    estimator: Estimator
    sessionmaker: async_sessionmaker[AsyncSession] | None
    token: str | None
    bot: Bot | None = None
    providers: list[str] = field(default_factory=list)
    forwarded_for: bool = False  # WEB__FORWARDED_FOR: the client address from our proxy's X-Forwarded-For
    limits: Limits = field(default_factory=Limits)
    matrix: MatrixCache | None = None
    # The answers kept as sent (gpuradar.webapp.responses): one cell's offers page, a workload's answer, a chart,
    # the page's texts; each under its key (language, currency, filter, page) and the version it was built from.
    cells: Built[tuple[object, ...], CellPage] = field(default_factory=lambda: Built(cap=CELLS_KEPT))
    estimates: Built[tuple[str, str, str], Body] = field(default_factory=lambda: Built(cap=ESTIMATES_KEPT))
    charts: Built[tuple[str, str, str, str], Body] = field(default_factory=lambda: Built(cap=CHARTS_KEPT))
    texts: Built[str, Body] = field(default_factory=lambda: Built(cap=len(LANGS)))
    rows: RowCache = field(default_factory=RowCache)  # each offer's row as JSON, per language, made once

    def __post_init__(self) -> None:
        self.limits.forwarded_for = self.forwarded_for
        if self.matrix is None:
            self.matrix = MatrixCache(self.offers, LastSeen(self.sessionmaker), list(self.providers))


SERVICES_KEY = web.AppKey("webapp", WebAppServices)


def services_of(request: web.Request) -> WebAppServices:
    return request.app[SERVICES_KEY]


def lang_of(request: web.Request, who: WebUser | None = None) -> str:
    asked = request.query.get("lang", "")
    if asked in LANGS:
        return asked
    if who is not None and who.language_code:
        return normalise_lang(who.language_code)
    header = request.headers.get("Accept-Language", "")
    return normalise_lang(header.split(",")[0].strip() or None)


def currency_of(request: web.Request, lang: str) -> str:
    cur = request.query.get("currency", "").upper()
    return cur if cur in ("RUB", "USD") else DEFAULT_CURRENCY[lang]  # what a new user of that language gets


def error(status: int, code: str, lang: str = "en") -> web.Response:
    key = {403: "web_forbidden", 429: "web_rate_limited"}.get(status, "web_error")
    return web.json_response({"error": code, "message": t(lang, key)}, status=status)


def identify(request: web.Request) -> WebUser | None:
    """The signed-in user, None when the request carries no initData; InitDataError when it carries a bad one."""
    raw = request.headers.get(INIT_DATA_HEADER, "")
    if not raw:
        return None
    token = services_of(request).token
    if token is None:
        raise InitDataError("no_token")
    return verify_init_data(raw, token)


def required_user(request: web.Request) -> WebUser | web.Response:
    """The signed-in user, or the 403 answer (missing, forged or expired initData) to send instead."""
    try:
        who = identify(request)
    except InitDataError as exc:
        log.info("mini app request refused: initData %s from %s", exc.reason, request.remote)
        return error(403, f"init_data_{exc.reason}", lang_of(request))
    if who is None:
        return error(403, "init_data_missing", lang_of(request))
    return who


async def json_body(request: web.Request) -> dict[str, Any] | None:
    if request.content_length is not None and request.content_length > MAX_BODY:
        return None
    try:
        raw = await request.content.read(MAX_BODY + 1)
        if len(raw) > MAX_BODY:
            return None
        body = json.loads(raw or b"{}")
    except (ValueError, UnicodeDecodeError):
        return None
    return body if isinstance(body, dict) else None


def text_of(body: dict[str, Any] | None) -> str | None:
    text = body.get("text") if body else None
    if not isinstance(text, str) or not text.strip():
        return None
    return text.strip()[:MAX_INPUT_CHARS]
