"""What every Mini App request passes: per-IP and per-user rate limits, and the security headers of every answer.

The buckets are `bot.ratelimit.RateLimiter`'s (one mechanism for all limits): per client IP for every API call, and
per Telegram user for what acts for one (writes) or costs an estimate. In memory, per replica, like the bot's.
The Content-Security-Policy allows scripts and styles from this origin only: no inline script, no CDN, no `eval`;
`frame-ancestors` lets Telegram's web clients embed the page and nobody else.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Awaitable, Callable, Mapping

from aiohttp import web

from bot.ratelimit import Rate, RateLimiter

# Sized so that a person tapping through the page never meets them, while a script is held to a few calls a second.
WEB_RATES: Mapping[str, Rate] = {
    "ip": Rate(burst=120, per=0.1),  # any API call, per client address: 10 a second sustained
    "estimate": Rate(burst=12, per=3.0),  # a workload typed into the box: the same allowance as /estimate
    "write": Rate(burst=10, per=6.0),  # subscribe / pause / delete, per user
    "history": Rate(burst=20, per=3.0),  # a chart not drawn in the last minute costs database reads: per address
}

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "font-src 'self'; base-uri 'none'; form-action 'none'; "
       "frame-ancestors 'self' https://web.telegram.org https://*.telegram.org")
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def client_address(request: web.Request, forwarded_for: bool = False) -> str:
    """Who is asking: the peer, or (WEB__FORWARDED_FOR=true, behind the https proxy Telegram reaches) the address
    that proxy appended last to X-Forwarded-For; earlier entries are the client's own say and never trusted."""
    if forwarded_for:
        hops = [h.strip() for h in request.headers.get("X-Forwarded-For", "").split(",") if h.strip()]
        if hops:
            return hops[-1]
    return request.remote or "0.0.0.0"


def client_key(request: web.Request, forwarded_for: bool = False) -> int:
    """The client address as a number for the limiter's buckets (IPv4 and IPv6 never collide: v6 ints are larger
    than 2**32 except the unspecified/loopback few)."""
    try:
        return int(ipaddress.ip_address(client_address(request, forwarded_for)))
    except ValueError:
        return 0


def too_many(wait: float) -> web.Response:
    seconds = max(1, math.ceil(wait))
    return web.json_response({"error": "rate_limited", "retry_after": seconds}, status=429,
                             headers={"Retry-After": str(seconds)})


class Limits:
    def __init__(self, rates: Mapping[str, Rate] = WEB_RATES, limiter: RateLimiter | None = None, *,
                 forwarded_for: bool = False) -> None:
        self.limiter = limiter or RateLimiter(rates)
        self.forwarded_for = forwarded_for

    def client(self, request: web.Request) -> int:
        return client_key(request, self.forwarded_for)

    def take(self, key: int, kind: str) -> web.Response | None:
        """None when allowed, else the 429 answer to send."""
        wait = self.limiter.take(key, kind)
        return None if wait <= 0 else too_many(wait)


def guard_middleware(limits: Limits, prefix: str = "/api/") -> Callable[..., Awaitable[web.StreamResponse]]:
    """Security headers on the Mini App's answers; the per-IP limit on its API."""

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        path = request.path
        ours = path == "/" or path.startswith(prefix) or path.startswith("/static/")
        if not ours:
            return await handler(request)
        if path.startswith(prefix) and (refused := limits.take(limits.client(request), "ip")) is not None:
            response: web.StreamResponse = refused
        else:
            response = await handler(request)
        for name, value in SECURITY_HEADERS.items():
            if name == "Cache-Control" and path.startswith("/static/"):
                response.headers[name] = "public, max-age=300"
                continue
            response.headers.setdefault(name, value)
        return response

    return guard
