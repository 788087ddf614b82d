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

import json
import time
from importlib import resources
from pathlib import Path

from aiohttp import web

from core.gpus import get_gpu
from gpuradar.webapp import writes
from gpuradar.webapp.auth import InitDataError
from gpuradar.webapp.estimate import estimate_answer
from gpuradar.webapp.guard import guard_middleware
from gpuradar.webapp.history import RANGES, card_history
from gpuradar.webapp.rows import offer_row, vat_line
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
CHART_TTL = 60.0  # seconds a card's history answer is reused
CHARTS_KEPT = 256
CELLS_KEPT = 512  # answers of /api/offers kept (a few KB each), dropped oldest first; a new cache version misses


# ------------------------------------------------------------------------------------------------- public reads

async def index(request: web.Request) -> web.StreamResponse:
    return web.FileResponse(STATIC / "index.html", headers={"Content-Type": "text/html; charset=utf-8"})


async def texts(request: web.Request) -> web.Response:
    lang = lang_of(request)
    catalog = {key: t(lang, key) for key in messages(lang) if key.startswith("web_")}
    return web.json_response({"lang": lang, "texts": catalog}, headers={"Cache-Control": "public, max-age=300"})


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
    payload = await s.matrix.payload(lang_of(request))
    if "gzip" in request.headers.get("Accept-Encoding", ""):  # compressed once per build, not per request
        return web.Response(body=payload.gz, content_type="application/json",
                            headers={"Content-Encoding": "gzip", "Vary": "Accept-Encoding"})
    return web.Response(body=payload.raw, content_type="application/json", headers={"Vary": "Accept-Encoding"})


def _cards(raw: str) -> list[str] | None:
    ids = [g for g in raw.split(",") if g][:16]
    for gid in ids:
        try:
            get_gpu(gid)
        except KeyError:
            return None
    return ids or None


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
                                   user_id=who.id if who else -s.limits.client(request) - 1)
    return web.json_response(answer)


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
    hit = s.charts.get(key)
    now = time.monotonic()
    if hit is not None and now - hit[0] < CHART_TTL:  # the same chart for everyone for a minute: one reading
        return web.Response(body=hit[1], content_type="application/json")
    if (refused := s.limits.take(s.limits.client(request), "history")) is not None:
        return refused
    async with s.sessionmaker() as session:
        body = json.dumps(await card_history(session, cards[0], span=span, currency=currency, provider=provider),
                          separators=(",", ":")).encode()
    s.charts[key] = (now, body)
    s.charts.move_to_end(key)
    while len(s.charts) > CHARTS_KEPT:
        s.charts.popitem(last=False)
    return web.Response(body=body, content_type="application/json")


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
