"""The Mini App's routes on the replica's aiohttp server: the page at `/`, its static files, and a small JSON API.

    GET  /api/texts?lang=            the page's texts (texts/locales/*/webapp.ftl)
    GET  /api/me                     who the initData says is asking (null outside Telegram)
    GET  /api/matrix?lang=           cards x providers (gpuradar.webapp.matrix, from the offer cache)
    GET  /api/offers?gpu=a,b&provider=&offset=   one cell's offers, cheapest configuration first, 100 a page
    POST /api/estimate {text}        the workload box (gpuradar.webapp.estimate)
    GET  /api/history?gpu=&range=24h|7d|30d&currency=[&provider=]   a card's, or one cell's, price history
    GET/POST /api/subscriptions      the user's subscriptions / subscribe {text}   (initData required)
    POST /api/subscriptions/{id}/pause {paused} · DELETE /api/subscriptions/{id}  (initData required)

Reads are public (the page outside Telegram is a read-only view); everything that acts for a user needs a valid
initData (403 without). Limits: per client address on every call, per user on estimates and writes (guard.py).
"""

from __future__ import annotations

import asyncio
import json
import time
from importlib import resources
from pathlib import Path

from aiohttp import web

from bot.offer_cache import CachedOffer
from core.gpus import get_gpu
from gpuradar.webapp import writes
from gpuradar.webapp.auth import InitDataError
from gpuradar.webapp.estimate import estimate_answer
from gpuradar.webapp.guard import guard_middleware
from gpuradar.webapp.history import RANGES, card_history
from gpuradar.webapp.responses import Body, body_from, body_of, send
from gpuradar.webapp.rows import CellPage, RowCache, vat_line
from gpuradar.webapp.services import (
    SERVICES_KEY,
    WebAppServices,
    currency_of,
    error,
    identify,
    json_body,
    lang_of,
    services_of,
    text_of,
)
from texts.i18n import messages, t

__all__ = ["SERVICES_KEY", "WebAppServices", "mount"]

STATIC = Path(str(resources.files("gpuradar.webapp") / "static"))
OFFERS_PER_CELL = 100
CHART_TTL = 60.0  # seconds a card's history answer is the current one (then one viewer's load reads it again)


# ------------------------------------------------------------------------------------------------- public reads

async def index(request: web.Request) -> web.StreamResponse:
    return web.FileResponse(STATIC / "index.html", headers={"Content-Type": "text/html; charset=utf-8"})


async def texts(request: web.Request) -> web.Response:
    s = services_of(request)
    lang = lang_of(request)

    def build() -> Body:
        return body_of({"lang": lang, "texts": {key: t(lang, key) for key in messages(lang) if key.startswith("web_")}})

    body = await s.texts.get(lang, 0, lambda: asyncio.to_thread(build))  # the catalog is read once per process
    return send(request, body, cache_control="public, max-age=300")


async def me(request: web.Request) -> web.Response:
    try:
        who = identify(request)
    except InitDataError as exc:
        return web.json_response({"user": None, "signed_in": False, "refused": exc.reason, "lang": lang_of(request)})
    return web.json_response({"user": who.id if who else None, "signed_in": who is not None,
                              "lang": lang_of(request, who)})


async def matrix(request: web.Request) -> web.Response:
    s = services_of(request)
    assert s.matrix is not None
    return send(request, await s.matrix.payload(lang_of(request)))  # built once per poll, gzipped and tagged


def _cards(raw: str) -> list[str] | None:
    ids = [g for g in raw.split(",") if g][:16]
    for gid in ids:
        try:
            get_gpu(gid)
        except KeyError:
            return None
    return ids or None


def _cell_page(groups: list[tuple[CachedOffer, ...]], cards: list[str], provider: str | None, lang: str,
               currency: str, offset: int, rows: RowCache, previous: CellPage | None) -> CellPage:
    """One cell's offers, cheapest configuration first, a page of them (CPU work: run in a thread). A poll that
    left this cell's offers as they were (the offer cache keeps an unchanged offer's very object) keeps the page
    as it was: same bytes, same ETag, nothing formatted or compressed again. Otherwise the rows are the row cache's
    JSON, joined."""
    found = [o for group in groups for o in group if provider is None or o.provider == provider]
    found.sort(key=lambda o: (o.billing == "spot", o.sort_usd if currency == "USD" else o.sort_rub, o.key))
    shown = tuple(found[offset:offset + OFFERS_PER_CELL])
    if previous is not None and previous.total == len(found) and len(previous.shown) == len(shown) and all(
            a is b for a, b in zip(previous.shown, shown, strict=True)):
        return previous  # the page's bytes depend on its offers and the cell's count only
    more = offset + OFFERS_PER_CELL if offset + OFFERS_PER_CELL < len(found) else None
    head = {"gpu": cards, "provider": provider, "currency": currency, "count": len(found), "offset": offset,
            "next_offset": more, "vat": vat_line(shown, lang)}
    made = json.dumps(head, ensure_ascii=False, separators=(",", ":")).encode()
    raw = made[:-1] + b',"offers":[' + b",".join(rows.row(o, lang) for o in shown) + b"]}"
    return CellPage(shown, len(found), body_from(raw))


async def offers(request: web.Request) -> web.Response:
    s = services_of(request)
    lang = lang_of(request)
    cards = _cards(request.query.get("gpu", ""))
    if cards is None:
        return error(400, "bad_gpu", lang)
    provider = (request.query.get("provider") or "")[:64] or None
    currency = currency_of(request, lang)
    raw = request.query.get("offset", "0")
    offset = int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 7 else 0
    key = (tuple(cards), provider, lang, currency, offset)
    version = s.offers.version

    async def build() -> CellPage:
        groups = s.offers.groups(currency, gpu_ids=cards)  # on the loop: immutable tuples the thread reads
        return await asyncio.to_thread(_cell_page, groups, cards, provider, lang, currency, offset, s.rows,
                                       s.cells.latest(key))

    # Once per offer-cache version and cell page: viewers open the same popular cells.
    return send(request, (await s.cells.get(key, version, build)).body)


async def estimate(request: web.Request) -> web.Response:
    s = services_of(request)
    try:
        who = identify(request)
    except InitDataError:
        who = None  # a read: an invalid sign-in only loses the per-user allowance, the per-address one applies
    lang = lang_of(request, who)
    body = await json_body(request)
    text = text_of(body)
    if text is None:
        return error(400, "no_text", lang)
    if (refused := s.limits.take(who.id if who else -s.limits.client(request) - 1, "estimate")) is not None:
        return refused
    currency = currency_of(request, lang)
    # Whose allowance of Hugging Face lookups a new model name uses: the user's, or the address's (a negative key,
    # never a Telegram id) for the public view.
    answer = await estimate_answer(s.estimator, s.offers, text, lang=lang, currency=currency,
                                   user_id=who.id if who else -s.limits.client(request) - 1, kept=s.estimates)
    return send(request, answer)


async def history(request: web.Request) -> web.Response:
    s = services_of(request)
    lang = lang_of(request)
    cards = _cards(request.query.get("gpu", ""))
    span_name = request.query.get("range", "7d")
    span = RANGES.get(span_name)
    if cards is None or len(cards) != 1 or span is None or s.sessionmaker is None:
        return error(400, "bad_request", lang)
    currency = currency_of(request, lang)
    provider = (request.query.get("provider") or "")[:64] or None
    key = (cards[0], span_name, currency, provider or "")
    # The same chart for everyone for a minute (one reading of the history per card, range and cell); a chart not
    # drawn lately costs database reads, so it takes from the address's allowance.
    if not s.charts.has(key) and (refused := s.limits.take(s.limits.client(request), "history")) is not None:
        return refused
    sessionmaker = s.sessionmaker

    async def build() -> Body:
        async with sessionmaker() as session:
            data = await card_history(session, cards[0], span=span, currency=currency, provider=provider)
        return await asyncio.to_thread(body_of, data)

    return send(request, await s.charts.get(key, int(time.monotonic() // CHART_TTL), build))


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
    writes.add_routes(app)
