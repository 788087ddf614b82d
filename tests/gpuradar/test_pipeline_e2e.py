"""The whole pipeline on loopback: a provider stand-in at the live paths (changing payloads, injected faults) ->
the scrapers' scheduler jobs through the real httpx client -> storage's record_poll on a real database.

Checks the exact events recorded, that no fault produced a sold-out or a back-in-stock (or anything else), that
health follows faults and recovery, and that a restart in between changes nothing.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from core.offers import Rates
from core.polls import PollResult
from scrapers.http import RetryPolicy, make_client
from scrapers.scheduler import ScrapeScheduler
from storage.db import make_engine, make_sessionmaker
from storage.ingest import record_poll
from storage.offer_tables import CurrentOffer, OfferEventRow, ProviderHealth, ScrapeRun
from testkit.provider_server import (
    CLOUDRIFT_PATH,
    HYPERSTACK_STOCKS_PATH,
    RUNPOD_PATH,
    VERDA_TOKEN_PATH,
    Fault,
    ProviderServer,
    load_fixture,
)

RATES = Rates(rub_per={"USD": 80.0})

# RunPod GPU types: id -> (display name, memory GB); one offer each (Secure Cloud, one GPU, USD per hour).
TYPES = {
    "NVIDIA H100 80GB HBM3": ("H100 SXM", 80), "NVIDIA H200": ("H200 SXM", 141),
    "NVIDIA A100-SXM4-80GB": ("A100 SXM", 80), "NVIDIA L40S": ("L40S", 48),
    "NVIDIA GeForce RTX 4090": ("RTX 4090", 24), "NVIDIA GeForce RTX 5090": ("RTX 5090", 32),
    "NVIDIA RTX 6000 Ada Generation": ("RTX 6000 Ada", 48),
}


def runpod(stock: dict[str, tuple[float, int]]) -> dict[str, Any]:
    """A RunPod GraphQL answer: type id -> (price per GPU-hour, free GPUs)."""
    types = []
    for type_id, (price, free) in stock.items():
        name, mem = TYPES[type_id]
        types.append({
            "id": type_id, "displayName": name, "memoryInGb": mem, "secureCloud": True, "communityCloud": False,
            "securePrice": price, "communityPrice": None,
            "lowestPrice": {"stockStatus": "High" if free else None, "maxUnreservedGpuCount": free,
                            "uninterruptablePrice": price, "minVcpu": 16, "minMemory": 64},
        })
    return {"data": {"secure": types, "community": []}}


H100, H200, A100, L40S, R4090, R5090, ADA = TYPES
BASE = {H100: (2.99, 8), H200: (3.99, 2), A100: (1.99, 4), L40S: (0.86, 1), R4090: (0.69, 8), R5090: (0.94, 0)}


class Pipeline:
    """One 'process': an engine, a client and the scrapers' scheduler whose jobs feed record_poll."""

    def __init__(self, server: ProviderServer, url: str) -> None:
        self.settings = server.providers_settings(runpod={"timeout": 0.3}, cloudrift={"timeout": 0.3})
        self.engine = make_engine(url)
        self.sm: async_sessionmaker[AsyncSession] = make_sessionmaker(self.engine)
        self.client = make_client(retry=RetryPolicy(scale=0.001))
        self.results: list[PollResult] = []
        self.events: list[tuple[str, str]] = []

        async def sink(result: PollResult) -> None:
            self.results.append(result)
            events = await record_poll(self.sm, result, rates=RATES)
            self.events += [(e.kind.value, e.offer.sku) for e in events]

        self.scheduler = ScrapeScheduler(self.settings, self.client, sink, providers=["runpod", "cloudrift"],
                                         run_now=False)

    async def poll(self, name: str = "runpod") -> tuple[PollResult, list[tuple[str, str]]]:
        before = len(self.events)
        result = await self.scheduler.run_provider(name)  # the job body APScheduler runs
        return result, self.events[before:]

    async def state(self) -> dict[str, tuple[bool, int, float]]:
        async with self.sm() as s:
            rows = (await s.scalars(select(CurrentOffer).where(CurrentOffer.provider == "runpod"))).all()
            return {r.sku: (r.in_stock, r.missing, r.ref_price) for r in rows}

    async def health(self, name: str = "runpod") -> tuple[str, str | None]:
        async with self.sm() as s:
            h = await s.get(ProviderHealth, name)
            return (h.status, h.reason) if h else ("", None)

    async def close(self) -> None:
        self.scheduler.shutdown()
        await self.client.aclose()
        await self.engine.dispose()


async def test_faults_changes_and_a_restart(provider_server: ProviderServer, migrated_database_url: str) -> None:
    server = provider_server
    p = Pipeline(server, migrated_database_url)

    # 1. baseline: nothing announced
    server.serve(RUNPOD_PATH, runpod(BASE))
    res, ev = await p.poll()
    assert (res.status.value, len(res.offers), ev) == ("ok", 6, [])

    # 2. a price drop, a new type, L40S gone (first miss: within hysteresis)
    step2 = {**{k: v for k, v in BASE.items() if k != L40S}, H100: (2.49, 8), ADA: (0.77, 3)}
    server.serve(RUNPOD_PATH, runpod(step2))
    _, ev = await p.poll()
    assert ev == [("appeared", ADA), ("price_drop", H100)]
    settled = await p.state()
    assert settled[L40S] == (True, 1, 0.86)

    # 3-7. faults: every one leaves stock state exactly as it was and marks the provider degraded
    faults = [
        (Fault.SERVER_ERROR, "failed", {}),
        (Fault.TIMEOUT, "failed", {"delay": 1.0}),
        (Fault.CAPTCHA, "suspect", {}),
        (Fault.TRUNCATED, "suspect", {}),
        (Fault.EMPTY, "suspect", {}),  # a valid empty list: the shrink verdict in ingest marks it suspect
    ]
    for fault, status, extra in faults:
        server.inject(RUNPOD_PATH, fault, times=None, **extra)
        res, ev = await p.poll()
        server.clear_faults(RUNPOD_PATH)
        async with p.sm() as s:
            run = (await s.scalars(select(ScrapeRun).order_by(ScrapeRun.id.desc()))).first()
        assert (fault, run.status) == (fault, status)
        assert ev == [], fault
        assert await p.state() == settled, fault
        health = await p.health()
        assert health[0] == "degraded" and health[1], fault
    # the empty answer reached ingest as a trusted-looking poll and was judged there
    assert res.status.value == "ok" and res.offers == []

    # the other provider is unaffected while runpod is down
    server.inject(RUNPOD_PATH, Fault.SERVER_ERROR, times=None)
    cr, _ = await p.poll("cloudrift")
    server.clear_faults(RUNPOD_PATH)
    assert cr.status.value == "ok" and cr.offers
    assert (await p.health("cloudrift"))[0] == "ok"

    # 8. 429 with Retry-After, honoured, then the answer: a trusted poll; L40S missing a second time -> sold out
    server.inject(RUNPOD_PATH, Fault.RATE_LIMITED, times=1, retry_after=7)
    res, ev = await p.poll()
    assert res.status.value == "ok"
    assert [w.seconds for w in p.client.waits if w.reason == "retry-after"] == [7.0]
    assert ev == [("sold_out", L40S)]
    assert await p.health() == ("ok", None)

    # 9. restart: a new engine, client and scheduler on the same database; the same answer changes nothing
    await p.close()
    p = Pipeline(server, migrated_database_url)
    try:
        _, ev = await p.poll()
        assert ev == []
        # 10. L40S returns after its confirmed sell-out; the 5090, listed at zero since the baseline, comes in
        step10 = {**step2, L40S: (0.86, 2), R5090: (0.94, 3)}
        server.serve(RUNPOD_PATH, runpod(step10))
        _, ev = await p.poll()
        assert ev == [("back_in_stock", R5090), ("back_in_stock", L40S)]  # by key
        # 11. flapping: the 4090 vanishes for one poll and returns: nothing to say
        server.serve(RUNPOD_PATH, runpod({k: v for k, v in step10.items() if k != R4090}))
        assert (await p.poll())[1] == []
        server.serve(RUNPOD_PATH, runpod(step10))
        assert (await p.poll())[1] == []

        async with p.sm() as s:
            rows = (await s.execute(select(OfferEventRow.kind, OfferEventRow.offer_key, OfferEventRow.run_id)
                                    .order_by(OfferEventRow.id))).all()
            runs = dict((await s.execute(select(ScrapeRun.id, ScrapeRun.status))).all())
    finally:
        await p.close()

    recorded = [(kind, key.split("|")[1]) for kind, key, _ in rows]
    assert recorded == [("appeared", ADA), ("price_drop", H100), ("sold_out", L40S),
                        ("back_in_stock", R5090), ("back_in_stock", L40S)]
    # every event came from a trusted poll; none from a faulty one
    assert {runs[run_id] for *_, run_id in rows} == {"ok"}
    assert not [r for r in rows if r.kind in ("sold_out", "back_in_stock") and runs[r.run_id] != "ok"]


async def test_scheduler_runs_every_provider_job(provider_server: ProviderServer, migrated_database_url: str) -> None:
    """APScheduler itself starts the jobs (first run at once); a faulty provider does not hold the healthy one."""
    provider_server.inject(CLOUDRIFT_PATH, Fault.SERVER_ERROR, times=None)
    settings = provider_server.providers_settings(runpod={"timeout": 0.3}, cloudrift={"timeout": 0.3})
    engine = make_engine(migrated_database_url)
    sm = make_sessionmaker(engine)
    client = make_client(retry=RetryPolicy(scale=0.001))
    done: dict[str, str] = {}
    both = asyncio.Event()

    async def sink(result: PollResult) -> None:
        await record_poll(sm, result, rates=RATES)
        done.setdefault(result.provider, result.status.value)
        if len(done) == 2:
            both.set()

    scheduler = ScrapeScheduler(settings, client, sink, providers=["runpod", "cloudrift"])
    scheduler.start()
    try:
        await asyncio.wait_for(both.wait(), timeout=60)  # a guard against a hang, not a timing assertion
    finally:
        scheduler.shutdown()
        await client.aclose()
    async with sm() as s:
        health = dict((await s.execute(select(ProviderHealth.provider, ProviderHealth.status))).all())
        stored = (await s.scalars(select(CurrentOffer.provider))).all()
    await engine.dispose()
    assert done == {"runpod": "ok", "cloudrift": "failed"}
    assert health == {"runpod": "ok", "cloudrift": "degraded"}
    assert set(stored) == {"runpod"}
    assert len(stored) == 8  # the sample's RunPod types


@pytest.mark.parametrize("fault", [Fault.CAPTCHA, Fault.TRUNCATED, Fault.EMPTY])
async def test_a_fault_right_after_baseline_never_sells_out(provider_server: ProviderServer,
                                                            migrated_database_url: str, fault: Fault) -> None:
    p = Pipeline(provider_server, migrated_database_url)
    try:
        provider_server.serve(RUNPOD_PATH, runpod(BASE))
        await p.poll()
        provider_server.inject(RUNPOD_PATH, fault, times=2)
        for _ in range(2):  # two faulty polls in a row: hysteresis would have fired on two trusted empty polls
            assert (await p.poll())[1] == []
        _, ev = await p.poll()
        assert ev == []
        state = await p.state()
        assert {sku: missing for sku, (_, missing, _) in state.items()} == dict.fromkeys(BASE, 0)
    finally:
        await p.close()


async def test_new_providers_through_the_pipeline(provider_server: ProviderServer, migrated_database_url: str) -> None:
    """Hyperstack (a keyed API) and Verda (OAuth client credentials) from their live paths into storage: baseline,
    a configuration coming into stock, a bad record skipped without voiding the poll, no key -> not polled."""
    settings = provider_server.providers_settings(keys=True)
    engine = make_engine(migrated_database_url)
    sm = make_sessionmaker(engine)
    client = make_client(retry=RetryPolicy(scale=0.001))
    events: list[tuple[str, str, str]] = []

    async def sink(result: PollResult) -> None:
        events.extend((e.kind.value, e.offer.provider, e.key.split("|", 1)[1]) for e in
                      await record_poll(sm, result, rates=RATES))

    sched = ScrapeScheduler(settings, client, sink, providers=["hyperstack", "verda"], run_now=False)
    try:
        for name in ("hyperstack", "verda"):
            res = await sched.run_provider(name)
            assert res.status.value == "ok" and res.offers, (name, res.error)
        assert events == []  # a baseline announces nothing
        assert len(provider_server.requests_to(VERDA_TOKEN_PATH)) == 1
        stocks = load_fixture("hyperstack.stocks.sample.json")
        norway = stocks["stocks"][0]["models"]
        norway[1]["configurations"]["1x"] = 3  # A100 80G PCIe, 1 GPU: back in stock
        norway.append({"model": "H100-80G-PCIe", "available": None, "configurations": {"1x": "many"}})  # bad
        provider_server.serve(HYPERSTACK_STOCKS_PATH, stocks)
        res = await sched.run_provider("hyperstack")
        assert res.status.value == "ok" and res.skipped == 1
        assert events == [("back_in_stock", "hyperstack", "A100-80G-PCIe|1|NORWAY-1|hourly")]
        await sched.run_provider("verda")  # the token is reused, not asked for again
        assert len(provider_server.requests_to(VERDA_TOKEN_PATH)) == 1
        async with sm() as s:
            stored = (await s.scalars(select(CurrentOffer).where(CurrentOffer.provider == "verda"))).all()
        assert {r.location for r in stored} == {"FIN-01", "FIN-02", "ICE-01"} and any(r.in_stock for r in stored)
    finally:
        sched.shutdown()
        await client.aclose()
        await engine.dispose()
    unkeyed = provider_server.providers_settings()
    assert "hyperstack" not in unkeyed.enabled() and "lium" in unkeyed.enabled()
