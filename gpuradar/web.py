"""The HTTP side of a replica: `/healthz`, `/metrics`, and (in webhook mode) the Telegram webhook route.

One aiohttp application per process. `create_app(...)` builds it; `add_webhook_route(...)` mounts the webhook
handler behind the secret-token check before the server starts; `start_server(...)` binds it.
Load balancers and Docker's HEALTHCHECK poll `/healthz`; Prometheus scrapes `/metrics`.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from aiohttp import web
from sqlalchemy.ext.asyncio import AsyncEngine

from gpuradar.metrics import METRICS, Metrics
from gpuradar.settings import WebSettings  # re-exported: it used to live here

__all__ = ["SECRET_HEADER", "WebServer", "WebSettings", "add_webhook_route", "create_app", "start_server"]

log = logging.getLogger(__name__)

HealthCheck = Callable[[], Awaitable[object]]
StatusExtras = Callable[[], Mapping[str, object]]
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
# Telegram accepts 1-256 characters from this set for setWebhook's secret_token.
_SECRET_RE = re.compile(r"[A-Za-z0-9_-]{1,256}")

METRICS_KEY = web.AppKey("metrics", Metrics)
CHECKS_KEY = web.AppKey("health_checks", dict)
EXTRAS_KEY = web.AppKey("status_extras", list)
TIMEOUT_KEY = web.AppKey("health_timeout", float)


def database_check(engine: AsyncEngine) -> HealthCheck:
    """Healthy means the database accepts a write: without writes a replica can neither alert nor scrape, and a
    read-only or full database still answers `SELECT 1` happily. One row (`health_probes`, name "healthz") is
    upserted and committed; it is all the check ever writes."""
    from storage.health_tables import HealthProbe
    from storage.upsert import upsert_insert

    async def database() -> None:
        async with engine.begin() as conn:
            now = datetime.now(UTC)
            stmt = upsert_insert(conn, HealthProbe).values(name="healthz", checked_at=now)
            await conn.execute(stmt.on_conflict_do_update(index_elements=["name"], set_={"checked_at": now}))

    return database


def create_app(
    *,
    engine: AsyncEngine | None = None,
    metrics: Metrics = METRICS,
    checks: Mapping[str, HealthCheck] | None = None,
    status: StatusExtras | None = None,
    health_timeout: float = 3.0,
) -> web.Application:
    """The replica's web application.

    `engine` adds the "database" health check; `checks` adds more (name -> async callable that raises when
    unhealthy); `status` adds informational fields to the health answer (e.g. whether this replica leads).
    """
    app = web.Application()
    all_checks: dict[str, HealthCheck] = {}
    if engine is not None:
        all_checks["database"] = database_check(engine)
    all_checks.update(checks or {})
    app[METRICS_KEY] = metrics
    app[CHECKS_KEY] = all_checks
    app[EXTRAS_KEY] = [status] if status else []
    app[TIMEOUT_KEY] = health_timeout
    app.router.add_get("/healthz", _healthz)
    app.router.add_get("/metrics", _metrics)
    return app


async def _run_check(check: HealthCheck, timeout: float) -> str:
    try:
        await asyncio.wait_for(check(), timeout)
    except Exception as exc:
        # The class name only: messages can carry hosts, DSNs or SQL that do not belong on an open endpoint.
        log.warning("health check failed", exc_info=True)
        return f"error: {type(exc).__name__}"
    return "ok"


async def _healthz(request: web.Request) -> web.Response:
    app = request.app
    checks: dict[str, HealthCheck] = app[CHECKS_KEY]
    names = list(checks)
    results = await asyncio.gather(*(_run_check(checks[n], app[TIMEOUT_KEY]) for n in names))
    report = dict(zip(names, results, strict=True))
    healthy = all(r == "ok" for r in results)
    body: dict[str, object] = {"status": "ok" if healthy else "unavailable", "checks": report}
    for extras in app[EXTRAS_KEY]:
        try:
            body.update(extras())
        except Exception:  # informational only: never turns a healthy replica unhealthy
            log.warning("health status extras failed", exc_info=True)
    return web.json_response(body, status=200 if healthy else 503)


async def _metrics(request: web.Request) -> web.Response:
    metrics = request.app[METRICS_KEY]
    await metrics.refresh()
    # The content type carries a version and charset that aiohttp's content_type= argument would reject.
    return web.Response(body=metrics.render(), headers={"Content-Type": metrics.content_type})


def valid_secret(secret_token: str) -> bool:
    """Whether Telegram accepts this as setWebhook's secret_token."""
    return _SECRET_RE.fullmatch(secret_token) is not None


def add_webhook_route(app: web.Application, path: str, handler: Handler, secret_token: str, *,
                      body_timeout: float = 15.0) -> None:
    """Mount Telegram's webhook at `path` (POST), answering 401 unless the request carries our secret token.

    Telegram sends the `secret_token` given to setWebhook in the X-Telegram-Bot-Api-Secret-Token header of every
    update; anyone else who finds the URL can post forged updates, so the check guards the handler. The comparison
    is constant-time so that response timing does not reveal how much of a guess was right.
    """
    if not valid_secret(secret_token):
        raise ValueError("secret_token must be 1-256 characters of A-Z, a-z, 0-9, _ and -")
    expected = secret_token.encode()
    refused = Throttle(REFUSED_LOG_INTERVAL)

    async def guarded(request: web.Request) -> web.StreamResponse:
        provided = request.headers.get(SECRET_HEADER, "").encode()
        if not hmac.compare_digest(provided, expected):
            # A flood of forged requests must not become a flood of log lines: one warning per interval, with
            # the number of refusals since the last one.
            if (count := refused.hit()) is not None:
                log.warning("webhook requests refused (missing or wrong secret token): %d since the last report; "
                            "latest from %s", count, request.remote)
            return web.json_response({"error": "unauthorized"}, status=401)
        try:
            # The body in full before the handler sees it (request.json() then reads it from memory): a client
            # trickling its body holds the connection at most this long.
            async with asyncio.timeout(body_timeout):
                await request.read()
        except TimeoutError:
            return web.json_response({"error": "request body too slow"}, status=408)
        return await handler(request)

    app.router.add_post(path, guarded)


REFUSED_LOG_INTERVAL = 60.0  # seconds between warnings about refused webhook requests


@dataclass
class Throttle:
    """Counts events and says when to report them: the first at once, then at most once per `interval` seconds."""

    interval: float
    clock: Callable[[], float] = time.monotonic
    _count: int = 0
    _last: float | None = field(default=None, repr=False)

    def hit(self) -> int | None:
        """Count one event; the number to report (events since the last report) when it is time, else None."""
        self._count += 1
        now = self.clock()
        if self._last is not None and now - self._last < self.interval:
            return None
        count, self._count, self._last = self._count, 0, now
        return count


@dataclass
class WebServer:
    """A started server; `port` is the bound one (ask for port 0 in tests)."""

    runner: web.AppRunner
    host: str
    port: int

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    async def close(self) -> None:
        await self.runner.cleanup()


async def start_server(app: web.Application, host: str = "0.0.0.0", port: int = 8080, *,
                       header_timeout: float = 15.0) -> WebServer:
    """Bind and start serving. No access log: health probes every few seconds would drown the useful lines.

    `header_timeout`: aiohttp's keep-alive timeout, which also runs from the moment a connection opens until a
    complete request line and headers arrive (its default, 3,630 s, lets a slow-header client hold a connection
    for an hour). It also bounds aiohttp's lingering close (10 s by default): after a 408 for a trickled body the
    server reads and drops the rest of that body before closing, so a slow client is held no longer than this."""
    runner = web.AppRunner(app, access_log=None, keepalive_timeout=header_timeout,
                           lingering_time=min(header_timeout, 10.0))
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound_host, bound_port = runner.addresses[0][:2]
    log.info("web server listening on %s:%d", bound_host, bound_port)
    return WebServer(runner=runner, host=bound_host, port=bound_port)
