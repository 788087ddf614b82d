"""Polite HTTP for every provider: one shared `httpx.AsyncClient`, retries with exponential backoff and jitter,
`Retry-After` honoured, a rate limiter per provider, conditional GETs, and JSON that is checked before it is
believed (an HTML captcha page or a cut-off body raises, it never parses into "no offers").

Every wait goes through one injectable `sleep` and is multiplied by `RetryPolicy.scale`, so tests run the real
retry logic in milliseconds and can read back the waits that were asked for (`PoliteClient.waits`).
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx

from scrapers.errors import HttpStatusError, NotJsonError, TransportFailed, TruncatedPayload
from scrapers.registry import get_spec

log = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[Any]]
Clock = Callable[[], float]

DEFAULT_USER_AGENT = "GPURadarBot/0.1 (+https://t.me/gpuradar_bot; GPU stock alerts)"


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    attempts: int = 4  # requests in all, the first included
    base_delay: float = 1.0  # seconds before the first retry; doubles each time
    max_delay: float = 60.0
    jitter: float = 0.5  # up to this fraction of the delay is added at random, so pollers do not retry in step
    max_retry_after: float = 300.0  # a longer Retry-After is not waited for inside one poll: the poll fails
    scale: float = 1.0  # every wait is multiplied by this (tests: 0.001)

    def backoff(self, retry: int, rng: random.Random) -> float:
        delay = min(self.max_delay, self.base_delay * (2**retry))
        return delay + rng.uniform(0, self.jitter * delay)


class RateLimiter:
    """A token bucket: at most `per_minute` requests a minute on average, bursts of `burst`."""

    def __init__(self, per_minute: float, *, burst: int = 1, sleep: Sleep = asyncio.sleep,
                 clock: Clock = time.monotonic, scale: float = 1.0) -> None:
        self.interval = 60.0 / per_minute
        self.burst = burst
        self._tokens = float(burst)
        self._sleep, self._clock, self._scale = sleep, clock, scale
        self._updated = clock()
        self._lock = asyncio.Lock()
        self.waited: list[float] = []  # seconds each acquire had to wait (unscaled), for tests and the bench

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._updated) / self.interval)
        self._updated = now

    async def acquire(self) -> float:
        async with self._lock:  # one waiter at a time keeps the order of requests fair
            self._refill()
            wait = 0.0
            if self._tokens < 1:
                wait = (1 - self._tokens) * self.interval
                await self._sleep(wait * self._scale)
                # The clock may not have moved by `wait` (scaled or fake time): count the token as earned.
                self._refill()
                self._tokens = max(self._tokens, 1.0)
            self._tokens -= 1
            self.waited.append(wait)
            return wait


@dataclass(slots=True)
class Fetched:
    """A successful answer (2xx, or 304 turned back into the payload remembered for it)."""

    status: int
    content: bytes
    headers: httpx.Headers
    url: str
    attempts: int
    from_cache: bool = False

    def json(self) -> Any:
        return decode_json(self.content, self.headers.get("content-type", ""), self.url)


@dataclass(slots=True)
class _Validators:
    etag: str | None
    last_modified: str | None
    content: bytes
    headers: httpx.Headers


@dataclass(slots=True)
class Wait:
    provider: str
    reason: str  # "backoff" | "retry-after"
    seconds: float  # as asked for, before scaling


def decode_json(content: bytes, content_type: str, url: str) -> Any:
    """JSON or a precise reason why not: HTML/captcha pages and truncated bodies must not pass as payloads."""
    head = content.lstrip()[:1]
    if "html" in content_type.lower() or head == b"<":
        raise NotJsonError(f"HTML where JSON was expected from {url} (captcha or maintenance page?)")
    if not head:
        raise TruncatedPayload(f"empty body from {url}")
    try:
        return json.loads(content)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        if head in (b"{", b"["):
            raise TruncatedPayload(f"truncated JSON from {url}: {exc.msg} at byte {exc.pos}") from exc
        raise NotJsonError(f"not JSON from {url}: starts with {content[:20]!r}") from exc


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date), None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


@dataclass
class PoliteClient:
    """The shared HTTP client of all scrapers, with per-provider politeness state (limiter, validators)."""

    http: httpx.AsyncClient
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    sleep: Sleep = asyncio.sleep
    clock: Clock = time.monotonic
    rng: random.Random = field(default_factory=random.Random)
    rate_limits: dict[str, float | None] = field(default_factory=dict)  # overrides the registry's, per provider
    waits: list[Wait] = field(default_factory=list)
    _limiters: dict[str, RateLimiter | None] = field(default_factory=dict)
    _validators: dict[str, _Validators] = field(default_factory=dict)

    def limiter(self, provider: str) -> RateLimiter | None:
        if provider not in self._limiters:
            per_minute = self.rate_limits.get(provider, get_spec(provider).rate_limit_per_minute)
            self._limiters[provider] = (
                RateLimiter(per_minute, sleep=self.sleep, clock=self.clock, scale=self.retry.scale)
                if per_minute else None)
        return self._limiters[provider]

    async def _wait(self, provider: str, reason: str, seconds: float) -> None:
        self.waits.append(Wait(provider, reason, seconds))
        await self.sleep(seconds * self.retry.scale)

    async def request(self, provider: str, method: str, url: str, *, params: Mapping[str, Any] | None = None,
                      json_body: Any = None, data: Mapping[str, Any] | None = None,
                      headers: Mapping[str, str] | None = None, timeout: float | None = None,
                      conditional: bool | None = None) -> Fetched:
        """One logical request with retries. Raises TransportFailed or HttpStatusError when it cannot succeed."""
        method = method.upper()
        use_validators = (get_spec(provider).conditional if conditional is None else conditional) and method == "GET"
        cache_key = self._cache_key(method, url, params, json_body, data)
        last: Exception | None = None
        for attempt in range(self.retry.attempts):
            limiter = self.limiter(provider)
            if limiter is not None:
                await limiter.acquire()
            req_headers = dict(headers or {})
            cached = self._validators.get(cache_key) if use_validators else None
            if cached is not None:
                if cached.etag:
                    req_headers["If-None-Match"] = cached.etag
                if cached.last_modified:
                    req_headers["If-Modified-Since"] = cached.last_modified
            delay: float | None = None
            try:
                resp = await self.http.request(method, url, params=params, json=json_body, data=data,
                                               headers=req_headers, timeout=timeout)
            except httpx.TimeoutException as exc:
                last = TransportFailed(f"timeout after {timeout or 'default'} s from {url} ({type(exc).__name__})")
            except httpx.TransportError as exc:
                last = TransportFailed(f"connection error to {url}: {type(exc).__name__}: {exc}")
            else:
                if resp.status_code == 304 and cached is not None:
                    return Fetched(200, cached.content, cached.headers, url, attempt + 1, from_cache=True)
                if 200 <= resp.status_code < 300:
                    if use_validators and (resp.headers.get("etag") or resp.headers.get("last-modified")):
                        self._validators[cache_key] = _Validators(resp.headers.get("etag"),
                                                                  resp.headers.get("last-modified"),
                                                                  resp.content, resp.headers)
                    return Fetched(resp.status_code, resp.content, resp.headers, url, attempt + 1)
                retry_after = parse_retry_after(resp.headers.get("retry-after"))
                last = HttpStatusError(resp.status_code, url, retry_after)
                if resp.status_code < 500 and resp.status_code != 429:
                    raise last  # a 4xx answer will not improve by asking again
                if resp.status_code in (429, 503) and retry_after is not None:
                    if retry_after > self.retry.max_retry_after:
                        raise last  # the provider asks for longer than a poll may take: fail now, poll later
                    delay = retry_after
            if attempt + 1 >= self.retry.attempts:
                break
            if delay is not None:
                await self._wait(provider, "retry-after", delay)
            else:
                await self._wait(provider, "backoff", self.retry.backoff(attempt, self.rng))
            log.info("%s: retrying %s %s after %s", provider, method, url, last)
        assert last is not None
        raise last

    async def get_json(self, provider: str, url: str, **kwargs: Any) -> Any:
        return (await self.request(provider, "GET", url, **kwargs)).json()

    async def post_json(self, provider: str, url: str, body: Any, **kwargs: Any) -> Any:
        return (await self.request(provider, "POST", url, json_body=body, **kwargs)).json()

    @staticmethod
    def _cache_key(method: str, url: str, params: Any, json_body: Any, data: Any) -> str:
        raw = json.dumps([method, url, params, json_body, data], sort_keys=True, default=str)
        return hashlib.sha1(raw.encode()).hexdigest()

    async def aclose(self) -> None:
        await self.http.aclose()

    async def __aenter__(self) -> PoliteClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def make_http_client(user_agent: str = DEFAULT_USER_AGENT, *, timeout: float = 30.0) -> httpx.AsyncClient:
    """The one httpx client all providers share: identifying User-Agent, bounded timeouts, a connection pool large
    enough that one slow provider never queues another's requests."""
    return httpx.AsyncClient(
        headers={"User-Agent": user_agent, "Accept": "application/json, text/html;q=0.5"},
        timeout=httpx.Timeout(timeout, connect=min(10.0, timeout)),
        limits=httpx.Limits(max_connections=64, max_keepalive_connections=32),
        follow_redirects=True,
    )


def make_client(settings: Any = None, *, retry: RetryPolicy | None = None, sleep: Sleep = asyncio.sleep,
                clock: Clock = time.monotonic, rng: random.Random | None = None,
                rate_limits: Mapping[str, float | None] | None = None, timeout: float = 30.0) -> PoliteClient:
    """A PoliteClient; `settings` is the app `Settings` (its `user_agent` is used) or None."""
    user_agent = getattr(settings, "user_agent", None) or DEFAULT_USER_AGENT
    return PoliteClient(make_http_client(user_agent, timeout=timeout), retry=retry or RetryPolicy(), sleep=sleep,
                        clock=clock, rng=rng or random.Random(), rate_limits=dict(rate_limits or {}))
