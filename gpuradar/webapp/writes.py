"""The Mini App's routes that act for a signed-in user: their subscriptions (gpuradar.webapp.subs). Every one needs a
valid initData (403 without) and takes from the user's write allowance."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web
from sqlalchemy.ext.asyncio import AsyncSession

from gpuradar.webapp import subs
from gpuradar.webapp.auth import WebUser
from gpuradar.webapp.services import WebAppServices, error, json_body, required_user, services_of, text_of


def _writer(fn: Callable[..., Any]) -> Callable[[web.Request], Any]:
    """A route acting for a user: initData required, the per-user write allowance taken, a session opened."""

    async def route(request: web.Request) -> web.StreamResponse:
        who = required_user(request)
        if isinstance(who, web.Response):
            return who
        s = services_of(request)
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
    text = text_of(await json_body(request))
    if text is None:
        return 400, {"error": "no_text"}
    return await subs.subscribe(session, who, text, estimator=s.estimator, offers=s.offers, bot=s.bot)


async def _pause(request: web.Request, s: WebAppServices, session: AsyncSession,
                 who: WebUser) -> tuple[int, dict[str, Any]]:
    body, sub_id = await json_body(request), _sub_id(request)
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


def add_routes(app: web.Application) -> None:
    app.router.add_get("/api/subscriptions", _writer(_list))
    app.router.add_post("/api/subscriptions", _writer(_create))
    app.router.add_post(r"/api/subscriptions/{sub_id}/pause", _writer(_pause))
    app.router.add_delete(r"/api/subscriptions/{sub_id}", _writer(_delete))
