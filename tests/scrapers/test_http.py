"""The polite HTTP layer through the real httpx client against the loopback provider server."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from scrapers.errors import HttpStatusError, NotJsonError, TransportFailed, TruncatedPayload
from scrapers.http import RateLimiter, RetryPolicy, decode_json, make_client, parse_retry_after
from testkit.provider_server import VAST_PATH, Fault, ProviderServer

FAST = RetryPolicy(attempts=4, base_delay=1.0, jitter=0.5, scale=0.001)


def client(**kw):  # type: ignore[no-untyped-def]
    return make_client(retry=kw.pop("retry", FAST), rng=random.Random(1), rate_limits={"vastai": None}, **kw)


async def test_user_agent_identifies_the_bot(provider_server: ProviderServer) -> None:
    class S:
        user_agent = "GPURadarBot/test (+contact)"

    async with make_client(S()) as c:
        await c.get_json("selectel", provider_server.base_url + "/servers/v2/pub/location")
    assert provider_server.requests[-1].headers["User-Agent"] == "GPURadarBot/test (+contact)"


async def test_retries_5xx_with_growing_jittered_backoff(provider_server: ProviderServer) -> None:
    provider_server.inject(VAST_PATH, Fault.SERVER_ERROR, times=3)
    async with client() as c:
        data = await c.post_json("vastai", provider_server.base_url + VAST_PATH, {})
        assert len(data["offers"]) == 7
        waits = [w.seconds for w in c.waits]
    assert [r.answered for r in provider_server.requests_to(VAST_PATH)] == ["500", "500", "500", 200]
    assert len(waits) == 3 and all(w.reason == "backoff" for w in c.waits)
    for i, w in enumerate(waits):  # base * 2^i plus up to 50 % jitter
        assert 2**i <= w <= 2**i * 1.5


async def test_gives_up_after_attempts_with_the_last_status(provider_server: ProviderServer) -> None:
    provider_server.inject(VAST_PATH, Fault.SERVER_ERROR, times=None)
    async with client() as c:
        with pytest.raises(HttpStatusError) as info:
            await c.post_json("vastai", provider_server.base_url + VAST_PATH, {})
    assert info.value.status_code == 500
    assert len(provider_server.requests_to(VAST_PATH)) == FAST.attempts


async def test_retry_after_is_honoured_on_429_and_503(provider_server: ProviderServer) -> None:
    provider_server.inject(VAST_PATH, Fault.RATE_LIMITED, retry_after=7)
    provider_server.inject(VAST_PATH, Fault.UNAVAILABLE, retry_after=3)
    async with client() as c:
        await c.post_json("vastai", provider_server.base_url + VAST_PATH, {})
        assert [(w.reason, w.seconds) for w in c.waits] == [("retry-after", 7.0), ("retry-after", 3.0)]


async def test_retry_after_beyond_the_cap_fails_at_once(provider_server: ProviderServer) -> None:
    provider_server.inject(VAST_PATH, Fault.RATE_LIMITED, retry_after=3600)
    async with client() as c:
        with pytest.raises(HttpStatusError) as info:
            await c.post_json("vastai", provider_server.base_url + VAST_PATH, {})
    assert info.value.status_code == 429 and info.value.retry_after == 3600
    assert len(provider_server.requests_to(VAST_PATH)) == 1


async def test_4xx_is_not_retried(provider_server: ProviderServer) -> None:
    provider_server.serve("/forbidden", {"error": "blocked"}, status=403)
    async with client() as c:
        with pytest.raises(HttpStatusError) as info:
            await c.get_json("selectel", provider_server.base_url + "/forbidden")
    assert info.value.status_code == 403 and len(provider_server.requests_to("/forbidden")) == 1


async def test_timeouts_and_resets_are_retried_then_reported(provider_server: ProviderServer) -> None:
    provider_server.inject(VAST_PATH, Fault.TIMEOUT, delay=1.0)
    provider_server.inject(VAST_PATH, Fault.RESET)
    async with client() as c:
        data = await c.post_json("vastai", provider_server.base_url + VAST_PATH, {}, timeout=0.2)
    assert data["offers"]
    assert len(provider_server.requests_to(VAST_PATH)) == 3
    provider_server.inject(VAST_PATH, Fault.TIMEOUT, times=None, delay=1.0)
    async with client(retry=RetryPolicy(attempts=2, scale=0.001)) as c:
        with pytest.raises(TransportFailed, match="timeout"):
            await c.post_json("vastai", provider_server.base_url + VAST_PATH, {}, timeout=0.2)


async def test_conditional_get_reuses_the_last_payload_on_304(provider_server: ProviderServer) -> None:
    provider_server.serve("/v2/plans", {"plans": [1]}, etag=True)
    url = provider_server.base_url + "/v2/plans"
    async with client() as c:
        first = await c.request("vultr", "GET", url)
        second = await c.request("vultr", "GET", url)
        assert second.from_cache and second.json() == {"plans": [1]} == first.json()
        provider_server.serve("/v2/plans", {"plans": [2]}, etag=True)  # content changed: new ETag
        third = await c.request("vultr", "GET", url)
        assert not third.from_cache and third.json() == {"plans": [2]}
    log = provider_server.requests_to("/v2/plans")
    assert [r.answered for r in log] == [200, 304, 200]
    assert "If-None-Match" not in log[0].headers and log[1].headers["If-None-Match"]


async def test_last_modified_validator(provider_server: ProviderServer) -> None:
    stamp = "Wed, 21 Oct 2026 07:28:00 GMT"
    provider_server.serve("/doc", {"a": 1}, last_modified=stamp)
    async with client() as c:
        await c.get_json("selectel", provider_server.base_url + "/doc")
        assert await c.get_json("selectel", provider_server.base_url + "/doc") == {"a": 1}
    assert provider_server.requests_to("/doc")[1].headers["If-Modified-Since"] == stamp
    assert provider_server.requests_to("/doc")[1].answered == 304


async def test_html_and_truncated_bodies_are_recognised(provider_server: ProviderServer) -> None:
    provider_server.inject(VAST_PATH, Fault.CAPTCHA)
    provider_server.inject(VAST_PATH, Fault.TRUNCATED)
    async with client() as c:
        with pytest.raises(NotJsonError, match="HTML"):
            await c.post_json("vastai", provider_server.base_url + VAST_PATH, {})
        with pytest.raises(TruncatedPayload):
            await c.post_json("vastai", provider_server.base_url + VAST_PATH, {})


def test_decode_json_edge_cases() -> None:
    assert decode_json(b' {"a": [1]}', "application/json", "u") == {"a": [1]}
    with pytest.raises(NotJsonError):
        decode_json(b"<!doctype html><p>hi", "application/json", "u")  # mislabelled HTML
    with pytest.raises(TruncatedPayload):
        decode_json(b"", "application/json", "u")
    with pytest.raises(NotJsonError):
        decode_json(b"Service Unavailable", "text/plain", "u")


def test_parse_retry_after_forms() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after(format_datetime(now + timedelta(seconds=30), usegmt=True), now) == 30.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


async def test_rate_limiter_spaces_requests_with_fake_time() -> None:
    now = [0.0]
    slept: list[float] = []

    async def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    limiter = RateLimiter(10, sleep=sleep, clock=lambda: now[0])  # Vast: 10 a minute -> one per 6 s
    for _ in range(3):
        await limiter.acquire()
    assert slept == [pytest.approx(6.0), pytest.approx(6.0)]
    now[0] += 60  # an idle minute refills only up to the burst
    await limiter.acquire()
    await limiter.acquire()
    assert slept[-1] == pytest.approx(6.0) and len(slept) == 3


async def test_vast_rate_limit_comes_from_its_definition(provider_server: ProviderServer) -> None:
    from scrapers.poller import configure
    from scrapers.providers import selectel, vastai

    slept: list[float] = []

    async def sleep(s: float) -> None:
        slept.append(s)
        await asyncio.sleep(0)

    async with make_client(retry=RetryPolicy(scale=1.0), sleep=sleep) as c:
        for provider in (vastai.PROVIDER, selectel.PROVIDER):  # what every poll does first
            configure(c, provider, provider.settings)
        for _ in range(3):
            await c.post_json("vastai", provider_server.base_url + VAST_PATH, {})
        limiter = c.limiter("vastai")
        assert limiter is not None and limiter.interval == pytest.approx(6.0)
        assert c.limiter("selectel") is None  # no documented limit
    assert len(slept) == 2 and all(5.0 < s <= 6.0 for s in slept)
