"""Ranking 10,000 stored offers for a workload: what `/offers WORKLOAD` (and an inline answer) waits on.

Setup (not timed as a query): a real SQLite offer store migrated to head, 10,000 in-stock offers written through the
ingest path (`storage.ingest.record_poll`, 7 providers), loaded into the bot's in-memory offer cache exactly as the
running bot does after an ingest (`in_stock_offers` -> `CachedOffer.from_stored`). The load time is printed too.

Timed per query, for several workloads (with and without a dataset, so by price per hour and by job cost): a fresh
estimate (nothing memoised), the offers that fit it (slices included), ranked by what the configuration costs
(`core.ranking`), and the first page rendered (`bot.handlers.offers.select_offers` + `render_page`); and the inline
answer's first page (`estimate_results`). Prints the median and best per query and the ratio to the 20 ms target.

    python bench/ranking.py [--offers 10000] [--rounds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gpuradar  # noqa: F401  # the wiring: installs the provider catalog (core.providers)
from bot.estimates import Estimate, Estimator
from bot.handlers.inline import estimate_results
from bot.handlers.offers import render_page, select_offers
from bot.offer_cache import CachedOffer, OfferCache
from bot.tokens import QueryTokens
from bot.views import rank_for
from core.gpus import GPUS
from core.offers import Billing, Offer, Period, Rates
from core.polls import PollResult, PollStatus
from storage import migrate
from storage.db import make_engine, make_sessionmaker
from storage.ingest import record_poll
from storage.queries import in_stock_offers

TARGET_MS = 20.0
PROVIDERS = ["selectel", "hostkey", "vastai", "runpod", "cloudrift", "vultr", "immers"]
QUERIES = ["70B QLoRA ctx 8k", "7B LoRA 50000 examples 2 epochs 1024 tokens", "13B LoRA", "Qwen2.5-72B inference 32k",
           "8B QLoRA 10k примеров 3 эпохи", "mixtral qlora"]
RATES = Rates(rub_per={"USD": 90.0, "EUR": 98.0})


def make_offers(n: int, rng: random.Random) -> dict[str, list[Offer]]:
    out: dict[str, list[Offer]] = {p: [] for p in PROVIDERS}
    for i in range(n):
        provider = PROVIDERS[i % len(PROVIDERS)]
        gpu = rng.choice(GPUS)
        count = rng.choice((1, 1, 1, 2, 4, 8))
        billing = rng.choice((Billing.HOURLY, Billing.HOURLY, Billing.SPOT, Billing.MONTHLY))
        usd = (0.1 + 0.025 * gpu.usable_gib) * count * rng.uniform(0.7, 1.4)
        slice_ = rng.random() < 0.02 and count == 1
        memory = round(gpu.memory_gb / 8, 1) if slice_ else gpu.memory_gb
        monthly = billing is Billing.MONTHLY
        out[provider].append(Offer(
            provider=provider, sku=f"{gpu.id}-{i}", gpu=gpu.id, gpu_name=gpu.name, gpu_count=count,
            gpu_memory_gb=memory, location=rng.choice(("us", "eu", "msk", "")), billing=billing,
            price=round(usd * (730 if monthly else 1) * (90 if provider in ("selectel", "immers") else 1), 2),
            currency="RUB" if provider in ("selectel", "immers") else "USD",
            period=Period.MONTH if monthly else Period.HOUR, in_stock=True, url=f"https://example.com/{i}"))
    return out


async def build_cache(n: int, rng: random.Random, url: str) -> tuple[OfferCache, float]:
    await migrate.upgrade_async(url)
    engine = make_engine(url)
    sm = make_sessionmaker(engine)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    for provider, offers in make_offers(n, rng).items():
        await record_poll(sm, PollResult(provider=provider, status=PollStatus.OK, offers=offers, error=None,
                                         started_at=at, finished_at=at), rates=RATES)

    async def load() -> list[CachedOffer]:
        async with sm() as session:
            return [CachedOffer.from_stored(s) for s in await in_stock_offers(session)]

    cache = OfferCache(load)
    t0 = time.perf_counter()
    await cache.refresh()
    loaded = time.perf_counter() - t0
    await engine.dispose()
    return cache, loaded


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--offers", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{tmp}/bench.sqlite3"
        cache, loaded = asyncio.run(build_cache(args.offers, rng, url))
    tokens = QueryTokens()
    offers_ms: list[float] = []
    inline_ms: list[float] = []
    counts: dict[str, int] = {}
    for _ in range(args.rounds):
        for q in QUERIES:
            estimator = Estimator()  # a fresh estimate every time: nothing memoised for the phrase
            t0 = time.perf_counter()
            items = select_offers(q, cache, estimator, "en", "USD")
            assert not isinstance(items, str)
            render_page(items, q, 1, tokens.encode(q), "en", "USD")
            offers_ms.append((time.perf_counter() - t0) * 1e3)
            counts[q] = len(items)
            estimator = Estimator()
            t0 = time.perf_counter()
            est = estimator.get(q)
            assert isinstance(est, Estimate)
            estimate_results(est, rank_for(est, cache, "USD"), 0, "en", "USD", "gpuradar_bot", tokens)
            inline_ms.append((time.perf_counter() - t0) * 1e3)
    print(f"{len(cache)} offers in stock in the store, loaded into the offer cache in {loaded * 1e3:.0f} ms "
          f"(once per ingest, not per query)")
    print("fitting offers per workload: " + ", ".join(f"{q!r} {n}" for q, n in counts.items()))
    for label, xs in (("/offers WORKLOAD (estimate + fit + rank + first page)", offers_ms),
                      ("inline answer (estimate + fit + rank + first 20 results)", inline_ms)):
        med, best = statistics.median(xs), min(xs)
        verdict = "meets" if med <= TARGET_MS else "misses"
        print(f"{label}: median {med:.1f} ms, best {best:.1f} ms per query; "
              f"target {TARGET_MS:.0f} ms: median is {med / TARGET_MS:.2f}x it: {verdict} it")


if __name__ == "__main__":
    main()
