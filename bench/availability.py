"""Availability statistics benchmarks (prints figures; asserts nothing about time).

1. Ingest overhead: a provider with 50,000 offer groups (every configuration its own card × count × region group)
   polled at Vast-like churn (per poll: 1 % vanish, 2 % cheaper, 1 % dearer, 1 % sold out, 1 % new), recorded by
   `storage.ingest.record_poll` with the real alert queue hook, the ingest's state cache (the leader's ingest
   child between its own polls) — once with the statistics kept current (`storage.availability.track_poll`), once
   with that hook replaced by a no-op, on fresh databases, the same polls. Target: under 10 % added. Also printed:
   a cold process's poll (no state cache: the index is built from the provider's state) and the first poll.
2. `/when H100 under $2.5` end to end through the bot: the real dispatcher over aiogram's HTTP stack against the
   stand-in Telegram, on the store filled in [1] plus 30 days of history for the H100 families of six more
   providers (a change every 20 minutes each); the time from the update being fed to the reply reaching the stand-in.
   Target: under 20 ms (median).

Run: python3 bench/availability.py [--postgres] [--groups N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.offers import Billing, Offer, Period, Rates  # noqa: E402
from core.polls import PollResult, PollStatus  # noqa: E402

GPUS = ["rtx-4090", "h100-sxm", "a100-80gb", "l40s", "rtx-3090"]
T0 = datetime(2026, 10, 1, tzinfo=UTC)
RATES = Rates(rub_per={"USD": 80.0})
POLLS = 6  # churn polls timed after the first


def snapshots(n: int, polls: int, seed: int = 5) -> list[list[Offer]]:
    rng = random.Random(seed)
    first = [Offer(provider="vastai", sku=f"m{i}", gpu=GPUS[i % 5], gpu_name="GPU", gpu_count=1 + (i // 5) % 4,
                   location=f"Region {i // 20}", billing=Billing.HOURLY, price=round(rng.uniform(0.2, 3.0), 4),
                   currency="USD", period=Period.HOUR, in_stock=True, available=rng.randrange(1, 5),
                   url=f"https://vast.example/{i}") for i in range(n)]
    out = [first]
    current = first
    fresh = n
    for _ in range(polls):
        nxt = []
        for o in current:
            r = rng.random()
            if r < 0.01:
                continue
            if r < 0.03:
                o = o.model_copy(update={"price": round(o.price * 0.8, 4)})
            elif r < 0.04:
                o = o.model_copy(update={"price": round(o.price * 1.2, 4)})
            elif r < 0.05:
                o = o.model_copy(update={"in_stock": not o.in_stock, "available": 0 if o.in_stock else 1})
            nxt.append(o)
        for o in rng.sample(current, len(current) // 100):  # new machines in the same groups
            nxt.append(o.model_copy(update={"sku": f"m{fresh}", "url": f"https://vast.example/{fresh}"}))
            fresh += 1
        out.append(nxt)
        current = nxt
    return out


async def fresh_database(url: str | None, tmp: str, name: str) -> str:
    if url is None:
        return f"sqlite+aiosqlite:///{tmp}/{name}.db"
    from bench.fanout_cycle import fresh_pg_database

    return await fresh_pg_database(url, name)


async def run_ingest(url: str, polls: list[list[Offer]], *, tracked: bool, cached: bool) -> list[float]:
    import storage.ingest as ingest
    from storage.db import make_engine, make_sessionmaker
    from storage.ingest import StateCache, record_poll
    from storage.migrate import upgrade_async
    from storage.outbox import OutboxWriter

    await upgrade_async(url)
    engine = make_engine(url)
    sm = make_sessionmaker(engine)
    real = ingest.track_poll

    async def untracked(*args: Any, **kwargs: Any) -> None:
        return None

    ingest.track_poll = real if tracked else untracked  # type: ignore[assignment]
    try:
        cache = StateCache() if cached else None
        writer = OutboxWriter()
        took = []
        for k, offers in enumerate(polls):
            at = T0 + timedelta(minutes=5 * k)
            start = time.perf_counter()
            await record_poll(sm, PollResult(provider="vastai", status=PollStatus.OK, offers=offers, started_at=at,
                                             finished_at=at), rates=RATES, on_events=writer,
                              cache=cache if cached else None)
            took.append(time.perf_counter() - start)
    finally:
        ingest.track_poll = real  # type: ignore[assignment]
        await engine.dispose()
    return took


async def bench_ingest(url: str | None, label: str, n: int) -> str | None:
    polls = snapshots(n, POLLS)
    with tempfile.TemporaryDirectory() as tmp:
        plain = await run_ingest(await fresh_database(url, tmp, "plain"), polls, tracked=False, cached=True)
        kept_url = await fresh_database(url, tmp, "tracked")
        tracked = await run_ingest(kept_url, polls, tracked=True, cached=True)
        cold_plain = await run_ingest(await fresh_database(url, tmp, "coldplain"), polls[:3], tracked=False,
                                      cached=False)
        cold = await run_ingest(await fresh_database(url, tmp, "cold"), polls[:3], tracked=True, cached=False)
        base, kept = statistics.median(plain[1:]), statistics.median(tracked[1:])
        ratio = kept / base
        print(f"[1] ingest on {label}, {n:,} offer groups, Vast-like churn, state cache: median poll "
              f"{base * 1000:.0f} ms without the statistics, {kept * 1000:.0f} ms with them: "
              f"+{(ratio - 1) * 100:.1f} % (target < 10 %: {'met' if ratio < 1.10 else 'MISSED'})")
        print(f"    first poll (every series created): {plain[0]:.2f} s -> {tracked[0]:.2f} s; cold process "
              f"(no state cache, index built each poll): {statistics.median(cold_plain[1:]) * 1000:.0f} -> "
              f"{statistics.median(cold[1:]) * 1000:.0f} ms")
        if url is None:
            keep = Path(tempfile.gettempdir()) / "gpuradar-bench-availability.db"
            Path(tmp, "tracked.db").replace(keep)
            return f"sqlite+aiosqlite:///{keep}"
        return kept_url


async def add_h100_history(url: str, providers: int = 6, days: int = 30) -> None:
    """Thirty days of H100 × 1 families at more providers, written as ingest writes them (rows and coverage)."""
    from sqlalchemy import insert

    from storage.availability_tables import AvailabilityChange, AvailabilityCoverage, AvailabilitySeries
    from storage.db import make_engine, make_sessionmaker

    engine = make_engine(url)
    sm = make_sessionmaker(engine)
    rng = random.Random(3)
    now = datetime.now(UTC)
    start = now - timedelta(days=days)
    async with sm() as s, s.begin():
        for p in range(providers):
            name = f"cloud{p}"
            await s.execute(insert(AvailabilityCoverage), [{"provider": name, "start": start, "end": now,
                                                             "polls": days * 288}])
            for card in ("h100-sxm", "h100-pcie"):
                key = f"{name}|{card}|1|*|hourly"
                rows = []
                t, in_stock, price = start, False, 2.5
                while t < now:
                    in_stock = rng.random() < 0.6
                    price = round(max(1.0, price * rng.uniform(0.95, 1.05)), 4)
                    rows.append({"series_key": key, "at": t, "in_stock": in_stock,
                                 "price_usd": price if in_stock else None,
                                 "price_rub": price * 80 if in_stock else None})
                    t += timedelta(minutes=20)
                await s.execute(insert(AvailabilitySeries), [{
                    "key": key, "provider": name, "card": card, "gpu_count": 1, "region": "*", "billing": "hourly",
                    "in_stock": in_stock, "price_usd": price, "price_rub": price * 80, "first_seen": start,
                    "changed_at": now}])
                await s.execute(insert(AvailabilityChange), rows)
    await engine.dispose()


async def bench_when(url: str, label: str, asks: int = 60) -> None:
    from tests.support.botkit import BotKit

    await add_h100_history(url)
    async with BotKit(url) as kit:
        took = []
        for i in range(asks):
            start = time.perf_counter()
            reply = await kit.ask("/when H100 under $2.5")
            took.append(time.perf_counter() - start)
            if i == 0:
                print("    /when answered:", reply.replace("\n", " | ")[:300])
        median = statistics.median(took[3:]) * 1000
        print(f"[2] /when H100 under $2.5 through the bot on {label}: median {median:.1f} ms, "
              f"p90 {sorted(took[3:])[int(0.9 * len(took[3:]))] * 1000:.1f} ms over {asks - 3} asks "
              f"(target < 20 ms: {'met' if median < 20 else 'MISSED'})")


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--postgres", action="store_true")
    ap.add_argument("--groups", type=int, default=50_000)
    ap.add_argument("--skip-when", action="store_true")
    args = ap.parse_args()
    url = os.environ.get("TEST_DATABASE_URL") if args.postgres else None
    if args.postgres and not url:
        sys.exit("--postgres needs TEST_DATABASE_URL")
    label = "PostgreSQL" if url else "SQLite"
    kept = await bench_ingest(url, label, args.groups)
    if kept and not args.skip_when:
        await bench_when(kept, label)


if __name__ == "__main__":
    asyncio.run(main())
