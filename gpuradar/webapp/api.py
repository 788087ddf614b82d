"""The Mini App's routes on the replica's aiohttp server: the page at `/`, its static files, and a small JSON API.

    GET  /api/texts?lang=            the page's texts (texts/locales/*/webapp.ftl)
    GET  /api/me                     who the initData says is asking (null outside Telegram)
    GET  /api/matrix?lang=           cards x providers (gpuradar.webapp.matrix, from the offer cache)
    GET  /api/offers?gpu=a,b&provider=&offset=   one cell's offers, cheapest configuration first, 100 a page
    POST /api/estimate {text}        the workload box (gpuradar.webapp.estimate)
    GET  /api/history?gpu=&range=24h|7d|30d&currency=
    GET/POST /api/subscriptions      the user's subscriptions / subscribe {text}   (initData required)
    POST /api/subscriptions/{id}/pause {paused} · DELETE /api/subscriptions/{id}  (initData required)

Reads are public (the page outside Telegram is a read-only view); everything that acts for a user needs a valid
initData (403 without). Limits: per client address on every call, per user on estimates and writes (guard.py).
"""

from __future__ import annotations

import json
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from aiogram import Bot
from aiohttp import web
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.estimates import Estimator
from bot.offer_cache import OfferCache
from core.gpus import get_gpu
from core.limits import MAX_INPUT_CHARS
from gpuradar.webapp import subs
from gpuradar.webapp.auth import INIT_DATA_HEADER, InitDataError, WebUser, verify_init_data
from gpuradar.webapp.estimate import estimate_answer
from gpuradar.webapp.guard import Limits, guard_middleware
from gpuradar.webapp.history import RANGES, card_history
from gpuradar.webapp.matrix import LastSeen, MatrixCache
from gpuradar.webapp.rows import offer_row, vat_line
from storage.subscriptions import DEFAULT_CURRENCY, normalise_lang
from texts.i18n import LANGS, messages, t

log = logging.getLogger(__name__)

STATIC = Path(str(resources.files("gpuradar.webapp") / "static"))
MAX_BODY = 8 * 1024  # bytes of a JSON request: a workload phrase and a flag or two
OFFERS_PER_CELL = 100
CHART_TTL = 60.0  # seconds a card's history answer is reused
CHARTS_KEPT = 256
CELLS_KEPT = 512  # answers of /api/offers kept (a few KB each), dropped oldest first; a new cache version misses


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
    cells: OrderedDict[tuple[object, ...], bytes] = field(default_factory=OrderedDict)
    charts: OrderedDict[tuple[str, str, str], tuple[float, bytes]] = field(default_factory=OrderedDict)

    def __post_init__(self) -> None:
        self.limits.forwarded_for = self.forwarded_for
        if self.matrix is None:
            self.matrix = MatrixCache(self.offers, LastSeen(self.sessionmaker), list(self.providers))


SERVICES_KEY = web.AppKey("webapp", WebAppServices)


def _services(request: web.Request) -> WebAppServices:
    return request.app[SERVICES_KEY]


def _lang(request: web.Request, who: WebUser | None = None) -> str:
    asked = request.query.get("lang", "")
    if asked in LANGS:
        return asked
    if who is not None and who.language_code:
        return normalise_lang(who.language_code)
    header = request.headers.get("Accept-Language", "")
    return normalise_lang(header.split(",")[0].strip() or None)


def _currency(request: web.Request, lang: str) -> str:
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
    token = _services(request).token
    if token is None:
        raise InitDataError("no_token")
    return verify_init_data(raw, token)


def required_user(request: web.Request) -> WebUser | web.Response:
    """The signed-in user, or the 403 answer (missing, forged or expired initData) to send instead."""
    try:
        who = identify(request)
    except InitDataError as exc:
        log.info("mini app request refused: initData %s from %s", exc.reason, request.remote)
        return error(403, f"init_data_{exc.reason}", _lang(request))
    if who is None:
        return error(403, "init_data_missing", _lang(request))
    return who


async def _json_body(request: web.Request) -> dict[str, Any] | None:
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


def _text_of(body: dict[str, Any] | None) -> str | None:
    text = body.get("text") if body else None
    if not isinstance(text, str) or not text.strip():
        return None
    return text.strip()[:MAX_INPUT_CHARS]


# ------------------------------------------------------------------------------------------------- public reads

async def index(request: web.Request) -> web.StreamResponse:
    return web.FileResponse(STATIC / "index.html", headers={"Content-Type": "text/html; charset=utf-8"})


async def texts(request: web.Request) -> web.Response:
    lang = _lang(request)
    catalog = {key: t(lang, key) for key in messages(lang) if key.startswith("web_")}
    return web.json_response({"lang": lang, "texts": catalog}, headers={"Cache-Control": "public, max-age=300"})


async def me(request: web.Request) -> web.Response:
    try:
        who = identify(request)
    except InitDataError as exc:
        return web.json_response({"user": None, "signed_in": False, "refused": exc.reason, "lang": _lang(request)})
    return web.json_response({"user": who.id if who else None, "signed_in": who is not None,
                              "lang": _lang(request, who)})


async def matrix(request: web.Request) -> web.Response:
    s = _services(request)
    assert s.matrix is not None
    return web.Response(body=await s.matrix.json(_lang(request)), content_type="application/json")


def _cards(raw: str) -> list[str] | None:
    ids = [g for g in raw.split(",") if g][:16]
    for gid in ids:
        try:
            get_gpu(gid)
        except KeyError:
            return None
    return ids or None


async def offers(request: web.Request) -> web.Response:
    s = _services(request)
    lang = _lang(request)
    cards = _cards(request.query.get("gpu", ""))
    if cards is None:
        return error(400, "bad_gpu", lang)
    provider = (request.query.get("provider") or "")[:64] or None
    currency = _currency(request, lang)
    raw = request.query.get("offset", "0")
    offset = int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 7 else 0
    key = (s.offers.version, tuple(cards), provider, lang, currency, offset)
    body = s.cells.get(key)
    if body is None:  # once per offer-cache version: viewers open the same popular cells
        found = [o for group in s.offers.groups(currency, gpu_ids=cards) for o in group
                 if provider is None or o.provider == provider]
        found.sort(key=lambda o: (o.billing == "spot", o.sort_usd if currency == "USD" else o.sort_rub, o.key))
        shown = found[offset:offset + OFFERS_PER_CELL]
        more = offset + OFFERS_PER_CELL if offset + OFFERS_PER_CELL < len(found) else None
        body = json.dumps({"gpu": cards, "provider": provider, "currency": currency, "count": len(found),
                           "offset": offset, "next_offset": more,
                           "offers": [offer_row(o, lang) for o in shown], "vat": vat_line(shown, lang)},
                          ensure_ascii=False, separators=(",", ":")).encode()
        s.cells[key] = body
        while len(s.cells) > CELLS_KEPT:
            s.cells.popitem(last=False)
    else:
        s.cells.move_to_end(key)
    return web.Response(body=body, content_type="application/json")


async def estimate(request: web.Request) -> web.Response:
    s = _services(request)
    try:
        who = identify(request)
    except InitDataError:
        who = None  # a read: an invalid sign-in only loses the per-user allowance, the per-address one applies
    lang = _lang(request, who)
    body = await _json_body(request)
    text = _text_of(body)
    if text is None:
        return error(400, "no_text", lang)
    if (refused := s.limits.take(who.id if who else -s.limits.client(request) - 1, "estimate")) is not None:
        return refused
    currency = _currency(request, lang)
    # Whose allowance of Hugging Face lookups a new model name uses: the user's, or the address's (a negative key,
    # never a Telegram id) for the public view.
    answer = await estimate_answer(s.estimator, s.offers, text, lang=lang, currency=currency,
                                   user_id=who.id if who else -s.limits.client(request) - 1)
    return web.json_response(answer)


async def history(request: web.Request) -> web.Response:
    s = _services(request)
    lang = _lang(request)
    cards = _cards(request.query.get("gpu", ""))
    span_name = request.query.get("range", "7d")
    span = RANGES.get(span_name)
    if cards is None or len(cards) != 1 or span is None or s.sessionmaker is None:
        return error(400, "bad_request", lang)
    currency = _currency(request, lang)
    key = (cards[0], span_name, currency)
    hit = s.charts.get(key)
    now = time.monotonic()
    if hit is not None and now - hit[0] < CHART_TTL:  # the same chart for everyone for a minute: one reading
        return web.Response(body=hit[1], content_type="application/json")
    if (refused := s.limits.take(s.limits.client(request), "history")) is not None:
        return refused
    async with s.sessionmaker() as session:
        body = json.dumps(await card_history(session, cards[0], span=span, currency=currency),
                          separators=(",", ":")).encode()
    s.charts[key] = (now, body)
    s.charts.move_to_end(key)
    while len(s.charts) > CHARTS_KEPT:
        s.charts.popitem(last=False)
    return web.Response(body=body, content_type="application/json")


# ------------------------------------------------------------------------------------- acting for a signed-in user

def _writer(fn: Callable[..., Any]) -> Callable[[web.Request], Any]:
    """A route acting for a user: initData required, the per-user write allowance taken, a session opened."""

    async def route(request: web.Request) -> web.StreamResponse:
        who = required_user(request)
        if isinstance(who, web.Response):
            return who
        s = _services(request)
        if request.method != "GET" and (refused := s.limits.take(who.id, "write")) is not None:
            return refused
        if s.sessionmaker is None:
            return error(503, "no_database")
        async with s.sessionmaker() as session:
            status, body = await fn(request, s, session, who)
        return web.json_response(body, status=status)

    return route


def _sub_id(request: web.Request) -> int | None:
    raw = request.match_info.get("sub_id", "")
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 12 else None


async def _list(request: web.Request, s: WebAppServices, session: AsyncSession,
                who: WebUser) -> tuple[int, dict[str, Any]]:
    return 200, await subs.listing(session, await subs.user_of(session, who))


async def _create(request: web.Request, s: WebAppServices, session: AsyncSession,
                  who: WebUser) -> tuple[int, dict[str, Any]]:
    text = _text_of(await _json_body(request))
    if text is None:
        return 400, {"error": "no_text"}
    return await subs.subscribe(session, who, text, estimator=s.estimator, offers=s.offers, bot=s.bot)


async def _pause(request: web.Request, s: WebAppServices, session: AsyncSession,
                 who: WebUser) -> tuple[int, dict[str, Any]]:
    body, sub_id = await _json_body(request), _sub_id(request)
    paused = body.get("paused", True) if body else None
    if sub_id is None or not isinstance(paused, bool):
        return 400, {"error": "bad_request"}
    return await subs.pause(session, who, sub_id, paused)


async def _delete(request: web.Request, s: WebAppServices, session: AsyncSession,
                  who: WebUser) -> tuple[int, dict[str, Any]]:
    sub_id = _sub_id(request)
    if sub_id is None:
        return 400, {"error": "bad_request"}
    return await subs.delete(session, who, sub_id)


def mount(app: web.Application, services: WebAppServices) -> None:
    """Add the page, its files and its API to the replica's application (before it starts)."""
    app[SERVICES_KEY] = services
    app.middlewares.append(guard_middleware(services.limits))
    app.router.add_get("/", index)
    app.router.add_static("/static/", STATIC, append_version=False)
    app.router.add_get("/api/texts", texts)
    app.router.add_get("/api/me", me)
    app.router.add_get("/api/matrix", matrix)
    app.router.add_get("/api/offers", offers)
    app.router.add_post("/api/estimate", estimate)
    app.router.add_get("/api/history", history)
    app.router.add_get("/api/subscriptions", _writer(_list))
    app.router.add_post("/api/subscriptions", _writer(_create))
    app.router.add_post(r"/api/subscriptions/{sub_id}/pause", _writer(_pause))
    app.router.add_delete(r"/api/subscriptions/{sub_id}", _writer(_delete))
