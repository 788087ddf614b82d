"""Scraping benchmarks (prints figures; asserts nothing about time).

1. One scrape cycle over 20 providers on loopback, each answering after 200 ms: wall time vs the sum of latencies
   (target: under 0.25 of it — providers are polled concurrently).
1b. The same for every real provider module (the twelve at their live paths, keyed ones with test keys), each
   request answered after 200 ms: providers that need several requests (HOSTKEY's locations, Vultr's regions,
   Verda's token) make their own requests in turn, the providers still run side by side.
2. Parsing a generated 10,000-listing Vast.ai payload into configurations.
3. Change detection (core.changes) over 50,000 stored configurations.

Run: python3 bench/scrape.py
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from anywhere without installing tests/

from pydantic import create_model

from core.offers import Billing, Offer, Period
from core.polls import PollStatus
from scrapers.http import RetryPolicy, make_client
from scrapers.providers import vastai
from scrapers.scheduler import poll_once
from scrapers.settings import DeclarativeProviderSettings, ProvidersSettings
from tests.support.provider_server import ProviderServer, sample_routes

PROVIDERS = 20
LATENCY = 0.2
GPUS = ["RTX 4090", "RTX 3090", "RTX 5090", "H100 SXM", "H100 PCIE", "H200", "A100 SXM4", "A100 PCIE", "L40S",
        "RTX A6000", "RTX 6000Ada", "A40", "L4", "Tesla V100", "B200"]
COUNTRIES = ["US", "CA", "DE", "FI", "NO", "PL", "FR", "JP", "KR", "BR", "SE", "NL"]


async def bench_cycle() -> None:
    names = [f"bench{i:02d}" for i in range(PROVIDERS)]
    async with ProviderServer() as server:
        fields = {}
        for i, name in enumerate(names):
            server.serve(f"/{name}.json", {"rows": [{"gpu": "RTX 4090", "price": 0.4 + i / 100}]}, delay=LATENCY)
            fields[name] = (DeclarativeProviderSettings, DeclarativeProviderSettings(
                base_url=server.base_url, enabled=True, path=f"/{name}.json", format="json", rows="rows",
                fields={"gpu": "gpu", "price": "price"}, currency="USD"))
        model = create_model("BenchProviders", __base__=ProvidersSettings, **fields)  # type: ignore[call-overload]
        settings = model()
        async with make_client(retry=RetryPolicy(attempts=1)) as client:
            t0 = time.perf_counter()
            results = await poll_once(names, settings, client)
            wall = time.perf_counter() - t0
    ok = sum(r.status is PollStatus.OK for r in results)
    total = PROVIDERS * LATENCY
    print(f"[1] scrape cycle: {PROVIDERS} providers x {LATENCY * 1000:.0f} ms, {ok}/{PROVIDERS} ok: "
          f"wall {wall * 1000:.0f} ms vs sum of latencies {total * 1000:.0f} ms -> ratio {wall / total:.3f} "
          f"(target < 0.25)")


async def bench_real_providers() -> None:
    async with ProviderServer() as server:
        for path, payload in sample_routes().items():
            if isinstance(path, tuple):
                server.serve(path[0], payload, query=dict(path[1]), delay=LATENCY)
            else:
                server.serve(path, payload, delay=LATENCY)
        settings = server.providers_settings(keys=True, immers={"enabled": False})
        names = list(settings.enabled())
        async with make_client(retry=RetryPolicy(attempts=1), rate_limits=dict.fromkeys(names)) as client:
            t0 = time.perf_counter()
            results = await poll_once(names, settings, client)
            wall = time.perf_counter() - t0
        requests = len(server.requests)
    ok = sum(r.status is PollStatus.OK for r in results)
    total = requests * LATENCY
    print(f"[1b] real provider modules: {len(names)} providers, {requests} requests x {LATENCY * 1000:.0f} ms, "
          f"{ok}/{len(names)} ok: wall {wall * 1000:.0f} ms vs sum of latencies {total * 1000:.0f} ms -> ratio "
          f"{wall / total:.3f} (target < 0.25)")


def vast_payload(n: int, rng: random.Random) -> dict:  # type: ignore[type-arg]
    offers = []
    for i in range(n):
        gpu = rng.choice(GPUS)
        count = rng.choice([1, 1, 1, 2, 4, 8])
        price = round(rng.uniform(0.1, 4.0) * count, 4)
        offers.append({"id": i, "machine_id": rng.randrange(n // 3), "num_gpus": count, "gpu_name": gpu,
                       "gpu_ram": 24564, "dph_total": price, "min_bid": round(price * 0.6, 4),
                       "rentable": rng.random() > 0.1, "geolocation": f"Region, {rng.choice(COUNTRIES)}",
                       "cpu_cores_effective": 8.0, "disk_space": 100.0, "reliability": 0.99})
    return {"offers": offers}


def bench_vast_parse() -> None:
    payload = vast_payload(10_000, random.Random(42))
    vastai.parse(payload)  # warm the GPU-name cache the way a running poller has it
    t0 = time.perf_counter()
    offers = vastai.parse(payload)
    ms = (time.perf_counter() - t0) * 1000
    print(f"[2] Vast.ai parse: 10,000 listings -> {len(offers)} configurations in {ms:.1f} ms")


def bench_changes() -> None:
    try:
        from core.changes import detect_changes
    except ImportError:
        print("[3] change detection: core.changes not available, skipped")
        return
    rng = random.Random(7)
    n = 50_000
    snapshot = [Offer(provider="bench", sku=f"sku{i}", gpu="rtx-4090", gpu_name="RTX 4090", gpu_count=1,
                      location=f"dc{i % 50}", billing=Billing.HOURLY, price=round(rng.uniform(0.2, 3.0), 4),
                      currency="USD", period=Period.HOUR, in_stock=True, available=rng.randrange(1, 5))
                for i in range(n)]
    states, _ = detect_changes({}, snapshot)  # baseline
    changed = []
    for o in snapshot:
        r = rng.random()
        if r < 0.02:
            continue  # vanished
        if r < 0.05:
            o = o.model_copy(update={"price": round(o.price * 0.8, 4)})
        elif r < 0.07:
            o = o.model_copy(update={"in_stock": False, "available": 0})
        changed.append(o)
    t0 = time.perf_counter()
    _, events = detect_changes(states, changed)
    ms = (time.perf_counter() - t0) * 1000
    print(f"[3] change detection: {n:,} stored configurations vs a new snapshot in {ms:.0f} ms "
          f"({len(events)} events)")


def main() -> None:
    asyncio.run(bench_cycle())
    asyncio.run(bench_real_providers())
    bench_vast_parse()
    bench_changes()


if __name__ == "__main__":
    main()
