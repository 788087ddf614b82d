"""Polite HTTP for every provider: one shared `httpx.AsyncClient`, retries with exponential backoff and jitter,
`Retry-After` honoured, a rate limiter per provider, conditional GETs, and JSON that is checked before it is
believed (an HTML captcha page or a cut-off body raises, it never parses into "no offers").

Bounded input: a body is read up to the provider's limit (`ProviderSpec.max_body_bytes`, or the settings'
`MAX_BODY_MB`) and no further; a large JSON body is decoded in a worker thread so the event loop keeps serving the
bot. Redirects are followed by hand: only to the provider's own host (or its configured `REDIRECT_HOSTS`), never
from https to http, at most `MAX_REDIRECTS` hops, and a request body is never re-sent to another host.

Every wait goes through one injectable `sleep` and is multiplied by `RetryPolicy.scale`, so tests run the real
retry logic in milliseconds and can read back the most recent waits that were asked for (`PoliteClient.waits`,
a bounded window, not a process-lifetime list).
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import json
import logging
import random
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Set
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx

from scrapers.errors import (
    HttpStatusError,
    NotJsonError,
    PayloadTooLarge,
    RedirectRefused,
    TransportFailed,
    TruncatedPayload,
)
from scrapers.heap import built_frozen

log = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[Any]]
Clock = Callable[[], float]

DEFAULT_USER_AGENT = "GPURadarBot/0.1 (+https://t.me/gpuradar_bot; GPU stock alerts)"
RECENT = 256  # waits remembered for tests and the bench: a window, never a list that grows for the process' life
MAX_REDIRECTS = 5
DEFAULT_MAX_BODY = 32 * 1024 * 1024  # an answer larger than this is not read (Vast's 3,000 rows: ~6 MB)
OFFLOAD_BYTES = 256 * 1024  # JSON bodies larger than this are decoded in a worker thread
PART_CHARS = 128 * 1024  # ... and their long arrays a part of about this many characters at a time (`loads_in_parts`)
_REDIRECTS = {301, 302, 303, 307, 308}
_CREDENTIAL_HEADERS = {"authorization", "x-api-key", "api_key", "apikey", "cookie"}


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
        self.waited: deque[float] = deque(maxlen=RECENT)  # recent waits (unscaled), for tests and the bench

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

    async def json_off_loop(self) -> Any:
        """`json()`, in a worker thread when the body is large, so decoding never stalls the event loop (with the
        cyclic collector paused: decoded JSON has no cycles, and a full collection walking it meanwhile would hold
        the loop; see core.slices.collector_paused)."""
        if len(self.content) <= OFFLOAD_BYTES:
            return self.json()
        return await asyncio.to_thread(self._json_paused)

    def _json_paused(self) -> Any:
        with built_frozen():
            return self.json()


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
    """JSON or a precise reason why not: HTML/captcha pages and truncated bodies must not pass as payloads.

    The body decides, not the label: a PHP endpoint may send JSON as `text/html` (HOSTKEY), so a body that starts
    like JSON and parses is JSON whatever the Content-Type says; a body that starts with `<` is a page."""
    stripped = content.lstrip()
    if stripped.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte order mark some servers prepend
        stripped = stripped[3:].lstrip()
    head = stripped[:1]
    if head == b"<" or (not head and "html" in content_type.lower()):
        raise NotJsonError(f"HTML where JSON was expected from {url} (captcha or maintenance page?)")
    if not head:
        raise TruncatedPayload(f"empty body from {url}")
    try:
        text = stripped.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotJsonError(f"not UTF-8 from {url}: invalid byte at {exc.start}") from exc
    try:
        return loads_in_parts(text) if len(text) > PART_CHARS else json.loads(text)
    except json.JSONDecodeError as exc:
        if head in (b"{", b"["):
            if "html" in content_type.lower():
                raise NotJsonError(f"HTML where JSON was expected from {url} ({exc.msg})") from exc
            raise TruncatedPayload(f"truncated JSON from {url}: {exc.msg} at char {exc.pos}") from exc
        raise NotJsonError(f"not JSON from {url}: starts with {content[:20]!r}") from exc
    except RecursionError as exc:
        raise NotJsonError(f"JSON from {url} is nested too deeply to be a provider's catalogue") from exc


_DECODER = json.JSONDecoder()
_WHITESPACE = re.compile(r"[ \t\n\r]*")  # JSON's, as json.decoder skips it


def _skip(text: str, at: int) -> int:
    """Where the whitespace from `at` ends."""
    space = _WHITESPACE.match(text, at)
    return space.end() if space is not None else at


def _after_item(text: str, at: int, close: str) -> tuple[bool, int]:
    """After a member or element: (True, past the container) where it closes there, else (False, where the next
    item starts); anything but a comma between them is not read in parts."""
    at = _skip(text, at)
    if text[at] == close:
        return True, at + 1
    if text[at] != ",":
        raise _Whole
    return False, _skip(text, at + 1)


_CLOSES = {"{": "}", "[": "]"}
_NESTED = 3  # objects this deep are read key by key, so an array of theirs is read in parts too


class _Whole(Exception):
    """The document is not one `loads_in_parts` reads in parts: `json.loads` reads it (or says why it is not JSON)."""


def loads_in_parts(text: str) -> Any:
    """`json.loads(text)`, the long arrays read a part at a time: a provider's catalogue is one document of
    megabytes (a page of Vast's search: 10,000 rows, ~3 MB), and `json.loads` decodes it in one C call holding the
    interpreter lock, 40-200 ms on a loaded machine, in which the bot's loop cannot run whichever thread decodes.

    An array (the document, or one held by an object up to `_NESTED` levels deep, read key by key) is decoded a run of
    its elements at a time: the text from an element's start to a comma about `PART_CHARS` further (one after "}"
    where the element is an object, after "]" where it is an array), within brackets, by the same decoder
    `json.loads` uses. A run that does not end between two elements is not valid JSON (its brackets or quotes do not
    close: it starts outside any string, at an element, so it reads exactly as in the whole document), and the
    elements up to that comma are read one by one instead. Anything else, or anything
    invalid, is read by `json.loads` itself: the same value, or the same error, as `json.loads(text)` gives."""
    try:
        value, end = _value(text, _skip(text, 0), 1)
        if _skip(text, end) != len(text):
            raise _Whole
    except (_Whole, json.JSONDecodeError, IndexError):
        return json.loads(text)
    return value


def _value(text: str, at: int, depth: int) -> tuple[Any, int]:
    head = text[at]
    if head == "[":
        return _array(text, at)
    if head == "{" and depth <= _NESTED:
        return _object(text, at, depth)
    return _DECODER.raw_decode(text, at)


def _object(text: str, at: int, depth: int) -> tuple[dict[str, Any], int]:
    out: dict[str, Any] = {}
    at = _skip(text, at + 1)
    if text[at] == "}":
        return out, at + 1
    while True:
        if text[at] != '"':
            raise _Whole
        key, at = _DECODER.raw_decode(text, at)
        at = _skip(text, at)
        if text[at] != ":":
            raise _Whole
        out[key], at = _value(text, _skip(text, at + 1), depth + 1)
        done, at = _after_item(text, at, "}")
        if done:
            return out, at


def _array(text: str, at: int) -> tuple[list[Any], int]:
    out: list[Any] = []
    at = _skip(text, at + 1)
    if text[at] == "]":
        return out, at + 1
    single_until = -1  # after a run that was not one (its comma was inside an element): one by one up to there
    while True:
        run = None
        if at > single_until:
            # The comma after an element like this one closes: "}," after an object, "]," after an array.
            close = _CLOSES.get(text[at], "")
            cut = text.find(close + ",", at + PART_CHARS)
            if cut != -1:
                cut += len(close)
                try:
                    run = _DECODER.decode("[" + text[at:cut] + "]")
                except (json.JSONDecodeError, RecursionError):
                    single_until = cut
        if run is not None:
            out += run
            at = cut
        else:
            element, at = _DECODER.raw_decode(text, at)
            out.append(element)
        done, at = _after_item(text, at, "]")
        if done:
            return out, at


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


def _with_validators(headers: Mapping[str, str] | None, cached: _Validators | None) -> dict[str, str]:
    """The request's headers, with the validators of the answer kept from last time (a conditional GET)."""
    out = dict(headers or {})
    if cached is not None:
        if cached.etag:
            out["If-None-Match"] = cached.etag
        if cached.last_modified:
            out["If-Modified-Since"] = cached.last_modified
    return out


@dataclass
class PoliteClient:
    """The shared HTTP client of all scrapers, with per-provider politeness state (limiter, validators)."""

    http: httpx.AsyncClient
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    sleep: Sleep = asyncio.sleep
    clock: Clock = time.monotonic
    rng: random.Random = field(default_factory=random.Random)
    # Per provider, from its definition (`scrapers.poller.configure`) or the caller: requests a minute (None: no
    # limit), the largest body read (bytes), whether GETs send the validators it gave (If-None-Match...).
    rate_limits: dict[str, float | None] = field(default_factory=dict)
    body_limits: dict[str, int] = field(default_factory=dict)
    conditional: dict[str, bool] = field(default_factory=dict)
    redirect_hosts: dict[str, Set[str]] = field(default_factory=dict)  # extra hosts a provider may redirect to
    waits: deque[Wait] = field(default_factory=lambda: deque(maxlen=RECENT))
    _limiters: dict[str, RateLimiter | None] = field(default_factory=dict)
    _validators: dict[str, _Validators] = field(default_factory=dict)

    def limiter(self, provider: str) -> RateLimiter | None:
        if provider not in self._limiters:
            per_minute = self.rate_limits.get(provider)
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
        if conditional is None:
            conditional = self.conditional.get(provider, True)
        use_validators = conditional and method == "GET"
        cache_key = self._cache_key(method, url, params, json_body, data)
        last: Exception | None = None
        for attempt in range(self.retry.attempts):
            limiter = self.limiter(provider)
            if limiter is not None:
                await limiter.acquire()
            cached = self._validators.get(cache_key) if use_validators else None
            delay: float | None = None
            try:
                status, resp_headers, content, final_url = await self._send(
                    provider, method, url, params=params, json_body=json_body, data=data,
                    headers=_with_validators(headers, cached), timeout=timeout)
            except httpx.TimeoutException as exc:
                last = TransportFailed(f"timeout after {timeout or 'default'} s from {url} ({type(exc).__name__})")
            except httpx.TransportError as exc:
                last = TransportFailed(f"connection error to {url}: {type(exc).__name__}: {exc}")
            else:
                if status == 304 and cached is not None:
                    return Fetched(200, cached.content, cached.headers, url, attempt + 1, from_cache=True)
                if 200 <= status < 300:
                    if use_validators:
                        self._remember_validators(cache_key, resp_headers, content)
                    return Fetched(status, content, resp_headers, final_url, attempt + 1)
                last, delay = self._failed_answer(status, resp_headers, url)
            if attempt + 1 >= self.retry.attempts:
                break
            await self._before_retry(provider, attempt, delay)
            log.info("%s: retrying %s %s after %s", provider, method, url, last)
        assert last is not None
        raise last

    def _remember_validators(self, cache_key: str, headers: httpx.Headers, content: bytes) -> None:
        """Keep the answer with its ETag / Last-Modified, so the next GET can be answered 304."""
        if headers.get("etag") or headers.get("last-modified"):
            self._validators[cache_key] = _Validators(headers.get("etag"), headers.get("last-modified"), content,
                                                      headers)

    def _failed_answer(self, status: int, headers: httpx.Headers, url: str) -> tuple[HttpStatusError, float | None]:
        """An answer that is not a success: the error, and how long the provider asked to wait before the next try
        (None: back off). Raised at once when asking again will not help: a 4xx other than 429, or a Retry-After
        longer than a poll may wait."""
        retry_after = parse_retry_after(headers.get("retry-after"))
        error = HttpStatusError(status, url, retry_after)
        if status < 500 and status != 429:
            raise error  # a 4xx answer will not improve by asking again
        if status in (429, 503) and retry_after is not None:
            if retry_after > self.retry.max_retry_after:
                raise error  # the provider asks for longer than a poll may take: fail now, poll later
            return error, retry_after
        return error, None

    async def _before_retry(self, provider: str, attempt: int, delay: float | None) -> None:
        if delay is not None:
            await self._wait(provider, "retry-after", delay)
        else:
            await self._wait(provider, "backoff", self.retry.backoff(attempt, self.rng))

    def body_limit(self, provider: str) -> int:
        return self.body_limits.get(provider) or DEFAULT_MAX_BODY

    def _may_redirect(self, provider: str, origin: httpx.URL, target: httpx.URL) -> bool:
        if target.scheme not in ("http", "https") or (origin.scheme == "https" and target.scheme == "http"):
            return False
        if target.host == origin.host and target.port == origin.port:
            return True
        return target.host in self.redirect_hosts.get(provider, ())

    async def _send(self, provider: str, method: str, url: str, *, params: Mapping[str, Any] | None,
                    json_body: Any, data: Mapping[str, Any] | None, headers: dict[str, str],
                    timeout: float | None) -> tuple[int, httpx.Headers, bytes, str]:
        """One request with redirects followed by hand, the body read up to the provider's limit."""
        limit = self.body_limit(provider)
        request = self.http.build_request(method, url, params=params, json=json_body, data=data, headers=headers,
                                          timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT)
        origin = request.url
        for _ in range(MAX_REDIRECTS + 1):
            resp = await self.http.send(request, stream=True, follow_redirects=False)
            try:
                location = resp.headers.get("location")
                if resp.status_code in _REDIRECTS and location:
                    target = request.url.join(location)
                    if not self._may_redirect(provider, origin, target):
                        raise RedirectRefused(f"{provider}: redirect from {origin.host} to {target.host or target} "
                                              "refused (not the provider's host)")
                    keep_body = resp.status_code in (307, 308)
                    if keep_body and request.content and target.host != request.url.host:
                        raise RedirectRefused(f"{provider}: a {resp.status_code} would re-send the request body to "
                                              f"{target.host}; refused")
                    new_method = request.method if keep_body or request.method == "GET" else "GET"
                    dropped = set() if keep_body else {"content-type", "content-length"}
                    if target.host != request.url.host:
                        dropped |= _CREDENTIAL_HEADERS  # credentials never follow a redirect to another host
                    headers = {k: v for k, v in headers.items() if k.lower() not in dropped}
                    request = self.http.build_request(
                        new_method, target, headers=headers,
                        content=request.content if keep_body else None,
                        timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT)
                    continue
                declared = resp.headers.get("content-length")
                if declared and declared.isdigit() and int(declared) > limit:
                    raise PayloadTooLarge(f"{provider}: body of {int(declared):,} bytes exceeds the limit of "
                                          f"{limit:,} from {url}")
                chunks: list[bytes] = []
                size = 0
                async for chunk in resp.aiter_bytes():
                    size += len(chunk)
                    if size > limit:
                        raise PayloadTooLarge(f"{provider}: body exceeds the limit of {limit:,} bytes from {url}")
                    chunks.append(chunk)
                return resp.status_code, resp.headers, b"".join(chunks), str(resp.url)
            finally:
                await resp.aclose()
        raise RedirectRefused(f"{provider}: more than {MAX_REDIRECTS} redirects from {url}")

    async def get_json(self, provider: str, url: str, **kwargs: Any) -> Any:
        return await (await self.request(provider, "GET", url, **kwargs)).json_off_loop()

    async def post_json(self, provider: str, url: str, body: Any, **kwargs: Any) -> Any:
        return await (await self.request(provider, "POST", url, json_body=body, **kwargs)).json_off_loop()

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
        follow_redirects=False,  # PoliteClient follows them itself, on the provider's host only
    )


def make_client(settings: Any = None, *, retry: RetryPolicy | None = None, sleep: Sleep = asyncio.sleep,
                clock: Clock = time.monotonic, rng: random.Random | None = None,
                rate_limits: Mapping[str, float | None] | None = None, timeout: float = 30.0) -> PoliteClient:
    """A PoliteClient; `settings` is the app `Settings` (its `user_agent` is used) or None."""
    user_agent = getattr(settings, "user_agent", None) or DEFAULT_USER_AGENT
    return PoliteClient(make_http_client(user_agent, timeout=timeout), retry=retry or RetryPolicy(), sleep=sleep,
                        clock=clock, rng=rng or random.Random(), rate_limits=dict(rate_limits or {}))
