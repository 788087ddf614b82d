"""Storage at Vast-like churn: rows and bytes a day, and the 30-day projection with and without retention.

A day of polls of one Vast-sized provider (`--configs` configurations, one poll every `--interval` minutes, `--churn`
of the configurations changing price or stock in each poll) is recorded through the real ingest
(`storage.ingest.record_poll` with the alert queue hook), with simulated timestamps. Then the real retention
(`storage.retention.run_retention`, default settings) runs as it would `raw_days` later, to measure how much the
hourly thinning keeps. Printed: rows per day per table, bytes per row, and the 30-day projection — without
retention (everything kept) and with it (raw points for `raw_days`, hourly after that; events and runs for 30 days;
queued alert events for 3 days; the availability statistics' changes and coverage for 31 days, their series once per
offer group). SQLite always; PostgreSQL with --postgres (or TEST_DATABASE_URL set).

    python3 bench/storage.py [--configs 1440] [--interval 5] [--churn 0.05] [--postgres]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import func, select, text  # noqa: E402

import gpuradar  # noqa: E402, F401  # the wiring: installs the provider catalog (core.providers)
from bench.fanout_cycle import fresh_pg_database, provider_offers  # noqa: E402
from core.offers import Offer, Rates  # noqa: E402
from core.polls import PollResult, PollStatus  # noqa: E402
from core.providers import catalog  # noqa: E402
from storage.alert_tables import AlertEventRow  # noqa: E402
from storage.availability import KEEP_DAYS  # noqa: E402
from storage.availability_tables import AvailabilityChange, AvailabilityCoverage, AvailabilitySeries  # noqa: E402
from storage.db import make_engine, make_sessionmaker  # noqa: E402
from storage.ingest import StateCache, record_poll  # noqa: E402
from storage.migrate import upgrade_async  # noqa: E402
from storage.offer_tables import OfferEventRow, PricePoint, ScrapeRun  # noqa: E402
from storage.outbox import OutboxWriter  # noqa: E402
from storage.retention import run_retention  # noqa: E402
from storage.retention_settings import RetentionSettings  # noqa: E402

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TABLES = {"price_history": PricePoint, "offer_events": OfferEventRow, "scrape_runs": ScrapeRun,
          "alert_events": AlertEventRow, "availability_changes": AvailabilityChange,
          "availability_coverage": AvailabilityCoverage, "availability_series": AvailabilitySeries}
# Written once per offer group and never deleted, not a day's worth again each day (storage/availability.py).
ONCE = {"availability_series"}


def churn(offers: list[Offer], share: float, rng: random.Random) -> list[Offer]:
    out = list(offers)
    for i in rng.sample(range(len(out)), int(len(out) * share)):
        o = out[i]
        r = rng.random()
        if r < 0.4:
            out[i] = o.model_copy(update={"price": round(o.price * rng.uniform(0.8, 1.25), 4)})
        else:
            out[i] = o.model_copy(update={"in_stock": not o.in_stock})
    return out


async def counts(sm) -> dict[str, int]:
    async with sm() as s:
        return {name: int(await s.scalar(select(func.count()).select_from(t)) or 0) for name, t in TABLES.items()}


async def table_bytes(url: str, sm) -> dict[str, float]:
    """Bytes per row of each table (with its indexes), as the database reports them."""
    out: dict[str, float] = {}
    async with sm() as s:
        for name, t in TABLES.items():
            n = int(await s.scalar(select(func.count()).select_from(t)) or 0)
            if not n:
                continue
            if url.startswith("postgresql"):
                size = await s.scalar(text(f"SELECT pg_total_relation_size('{name}')"))
            else:
                size = await s.scalar(text(
                    "SELECT sum(pgsize) FROM dbstat WHERE name = :t OR name IN "
                    "(SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = :t)"), {"t": name})
            out[name] = float(size or 0) / n
    return out


async def run(url: str, label: str, args: argparse.Namespace) -> None:
    await upgrade_async(url)
    engine = make_engine(url)
    sm = make_sessionmaker(engine)
    rng = random.Random(args.seed)
    offers = provider_offers("vastai", args.configs, rng)
    cache, writer, rates = StateCache(), OutboxWriter(), Rates(rub_per={"USD": 80.0})
    polls = int(24 * 60 / args.interval)
    catalog()  # built now (the wiring installs it lazily: every provider module imported), not in the first timed poll
    t = time.perf_counter()
    for n in range(polls + 1):
        at = T0 + timedelta(minutes=args.interval * n)
        await record_poll(sm, PollResult(provider="vastai", status=PollStatus.OK, offers=offers, started_at=at,
                                         finished_at=at), rates=rates, on_events=writer, cache=cache)
        offers = churn(offers, args.churn, rng)
    per_day = await counts(sm)
    per_row = await table_bytes(url, sm)
    settings = RetentionSettings()
    day_end = T0 + timedelta(days=1)
    await run_retention(sm, settings, day_end + timedelta(days=settings.raw_days))
    thinned = (await counts(sm))["price_history"]
    await engine.dispose()
    ratio = thinned / max(1, per_day["price_history"])
    print(f"[{label}] one day at Vast-like churn: {args.configs:,} configurations, a poll every {args.interval} min "
          f"({polls} polls), {args.churn:.0%} changing per poll ({time.perf_counter() - t:.0f} s to record)")
    for name, n in per_day.items():
        per = "" if name in ONCE else "/day"
        print(f"[{label}]   {name}: {n:,} rows{per}, {per_row.get(name, 0):.0f} bytes/row -> "
              f"{n * per_row.get(name, 0) / 2**20:.1f} MiB{per}{' (once per offer group)' if per == '' else ''}")
    keep = {"price_history": settings.raw_days + (30 - settings.raw_days) * ratio,
            "offer_events": min(30, settings.events_days), "scrape_runs": min(30, settings.runs_days),
            "alert_events": settings.alert_events_days, "availability_changes": min(30, KEEP_DAYS),
            "availability_coverage": min(30, KEEP_DAYS), "availability_series": 1}
    without = sum(n * per_row.get(k, 0) * (1 if k in ONCE else 30) for k, n in per_day.items())
    with_ret = sum(n * per_row.get(k, 0) * keep[k] for k, n in per_day.items())
    print(f"[{label}]   hourly thinning keeps {ratio:.1%} of a day's price points")
    print(f"[{label}] 30-day projection for this provider: without retention {without / 2**20:,.0f} MiB; with "
          f"retention (steady state, defaults) {with_ret / 2**20:,.0f} MiB, and flat from then on for everything "
          f"but the thinned history (hourly to 90 days, daily to 2 years)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", type=int, default=1440)
    ap.add_argument("--interval", type=float, default=5)
    ap.add_argument("--churn", type=float, default=0.05)
    ap.add_argument("--postgres", action="store_true")
    ap.add_argument("--seed", type=int, default=random.randrange(1 << 30))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(run(f"sqlite+aiosqlite:///{Path(tmp) / 'storage.sqlite3'}", "SQLite", args))
    pg = os.environ.get("TEST_DATABASE_URL")
    if pg is None and args.postgres:
        pg = subprocess.run([str(ROOT / ".ci" / "postgres.sh")], capture_output=True, text=True,
                            check=True).stdout.strip()
    if pg:
        with fresh_pg_database(pg, "bench_storage") as database:
            asyncio.run(run(database, "PostgreSQL", args))


if __name__ == "__main__":
    main()
