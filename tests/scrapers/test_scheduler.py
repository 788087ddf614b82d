"""The polling schedule: APScheduler jobs per provider that poll the loopback server and feed the sink, and
`poll_once` for `gpuradar scrape --once`."""

from __future__ import annotations

import asyncio
import random

import pytest

from core.polls import PollResult, PollStatus
from scrapers.http import PoliteClient, RetryPolicy, make_client
from scrapers.registry import PROVIDERS
from scrapers.scheduler import ScrapeScheduler, enabled_providers, poll_once
from testkit.provider_server import CLOUDRIFT_PATH, VAST_PATH, Fault, ProviderServer

# Polled by default: every provider on by default that needs no key (derived, so a new one needs no line here).
ALL = {name for name, p in PROVIDERS.items() if p.settings.enabled and not p.info.key_settings}


def test_the_public_providers_are_polled_by_default() -> None:
    assert {"selectel", "hostkey", "vastai", "runpod", "cloudrift", "vultr", "lium"} <= ALL


@pytest.fixture
async def client() -> PoliteClient:  # type: ignore[misc]
    c = make_client(retry=RetryPolicy(attempts=2, scale=0.001), rng=random.Random(3), rate_limits={"vastai": None})
    yield c
    await c.aclose()


async def test_poll_once_polls_chosen_providers_and_feeds_the_sink(provider_server: ProviderServer,
                                                                   client: PoliteClient) -> None:
    received: list[PollResult] = []

    async def sink(result: PollResult) -> None:
        received.append(result)

    results = await poll_once(["runpod", "vastai"], provider_server.providers_settings(), client, sink)
    assert [r.provider for r in results] == ["runpod", "vastai"]
    assert all(r.status is PollStatus.OK for r in results)
    assert sorted(r.provider for r in received) == ["runpod", "vastai"]
    assert not provider_server.requests_to(CLOUDRIFT_PATH)  # not asked for, not polled


async def test_poll_once_defaults_to_enabled_and_slow_provider_never_delays_others(
        provider_server: ProviderServer, client: PoliteClient) -> None:
    provider_server.inject(VAST_PATH, Fault.TIMEOUT, times=None, delay=1.5)
    settings = provider_server.providers_settings(vastai={"timeout": 0.3}, hostkey={"enabled": False})
    order: list[str] = []

    async def sink(result: PollResult) -> None:
        order.append(result.provider)

    results = {r.provider: r for r in await poll_once(None, settings, client, sink)}
    assert set(results) == ALL - {"hostkey"}
    assert results["vastai"].status is PollStatus.FAILED
    assert all(r.status is PollStatus.OK for n, r in results.items() if n != "vastai")
    assert order[-1] == "vastai"  # every other provider was stored while Vast was still timing out


async def test_a_failing_sink_does_not_stop_other_results(provider_server: ProviderServer,
                                                          client: PoliteClient) -> None:
    stored: list[str] = []

    async def sink(result: PollResult) -> None:
        if result.provider == "runpod":
            raise RuntimeError("database is locked")
        stored.append(result.provider)

    results = await poll_once(["runpod", "cloudrift"], provider_server.providers_settings(), client, sink)
    assert len(results) == 2 and stored == ["cloudrift"]


def test_explicit_names_must_be_providers(provider_server: ProviderServer) -> None:
    with pytest.raises(KeyError):
        enabled_providers(provider_server.providers_settings(), ["nosuch"])


async def test_scheduler_runs_one_job_per_provider_and_feeds_the_sink(provider_server: ProviderServer,
                                                                      client: PoliteClient) -> None:
    settings = provider_server.providers_settings(selectel={"enabled": False})
    received: list[PollResult] = []
    done = asyncio.Event()
    expected = ALL - {"selectel"}

    async def sink(result: PollResult) -> None:
        received.append(result)
        if {r.provider for r in received} >= expected:
            done.set()

    sched = ScrapeScheduler(settings, client, sink)
    jobs = sched.jobs()
    assert set(jobs) == expected
    for name, job in jobs.items():
        cfg = getattr(settings, name)
        assert job.max_instances == 1 and job.coalesce is True
        assert job.trigger.interval.total_seconds() == cfg.interval
        assert job.trigger.jitter == cfg.jitter
    sched.start()
    try:
        await asyncio.wait_for(done.wait(), timeout=20)
    finally:
        sched.shutdown()
    assert {r.provider for r in received} == expected
    assert all(r.status is PollStatus.OK for r in received)
    assert all(sched.runs[name] >= 1 for name in expected)


async def test_scheduler_job_reports_failures_through_the_sink(provider_server: ProviderServer,
                                                               client: PoliteClient) -> None:
    provider_server.inject(CLOUDRIFT_PATH, Fault.CAPTCHA, times=None)
    settings = provider_server.providers_settings()
    got: asyncio.Queue[PollResult] = asyncio.Queue()
    sched = ScrapeScheduler(settings, client, got.put, providers=["cloudrift"], run_now=False)
    result = await sched.run_provider("cloudrift")  # what the job runs each interval
    assert result.status is PollStatus.SUSPECT
    assert (await got.get()).error == result.error
    assert sched.runs == {"cloudrift": 1}


async def test_release_empties_a_poll_nothing_else_holds() -> None:
    from datetime import UTC, datetime

    from scrapers.scheduler import release

    now = datetime.now(UTC)
    mine = PollResult(provider="vastai", status=PollStatus.OK, started_at=now, finished_at=now)
    mine.offers.extend([None] * 2500)  # type: ignore[list-item]  # what they are does not matter here
    await release(mine)
    assert mine.offers == []
    kept = PollResult(provider="vastai", status=PollStatus.OK, started_at=now, finished_at=now)
    kept.offers.extend([None] * 10)  # type: ignore[list-item]
    also = kept.offers  # someone else holds the list: it is left as it is
    await release(kept)
    assert len(also) == 10 and kept.offers is also
