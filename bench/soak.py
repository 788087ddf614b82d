"""Soak: the scraping leader (`gpuradar run`) for `--minutes` (default 20) of a realistic mix, with 50,000 users and
100,000 subscriptions stored.

The mix: `--users` users with `--subs` subscriptions (bench/match.py's realistic mix, stored as in
bench/fanout_cycle.py), a 10,000-listing Vast-sized marketplace on the stand-in provider server polled every 10 s
by the leader with 5 % of the prices moving between polls (bench/memory.py's churn, in a process of its own:
`MarketProcess`), ~`--inline-rate` distinct inline queries a second (bench/memory.py's phrases), and the alerts
this makes sent to the stand-in Bot API server, which enforces Telegram's limits (30 messages a second overall,
1 a second per chat). Before the clock starts, `--history-days` (default 7) of availability history is written for
every series the first poll created, a change every `--history-every` minutes (default 30) each (`seed_history`):
the week the ⚡ marks of every inline answer read for the groups they show, which a fresh database does not have.

The bot runs in its own process (this script with `--as-bot`: `gpuradar run` plus a 1 ms sleep probe on its event
loop that writes the loop's lag every 5 s to a file), so its figures are its own. Prints, every 30 s: RSS of the bot
and its children (the ingest and sender children), their PSS summed (shared pages counted once), loop lag p99 and
max over the last 30 s, inline answers' p99, and this driver's own longest stall (inline times are stamped on its
loop, so a stall there is added to the answers it overlaps: the driver is kept light, and this shows it was); at
the end the same over the whole run, and alerts delivered (accepted by the stand-in), lost (a delivery the database
calls sent that the stand-in never accepted, or one failed) and doubled (one text accepted twice for one chat), with
what was still queued (Telegram's limit is the floor: a poll that reaches 40,000 users takes 20 minutes at 30 a
second).

`--db postgres` runs it on a fresh database of the PostgreSQL server behind BENCH_PG_URL (else TEST_DATABASE_URL,
else the server .ci/postgres.sh starts), dropped afterwards; the server's durability settings are printed.

    python3 bench/soak.py [--minutes 20] [--users 50000] [--subs 100000] [--db-cache FILE] [--db sqlite|postgres]
                          [--history-days 7] [--history-every 30]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import heapq
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import cast

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import gpuradar  # noqa: E402, F401  # the wiring: installs the provider catalog (core.providers)
from bench._common import (  # noqa: E402
    durability,
    p99,
    pg_server_url,
    run_bot,
    seeded_sqlite,
    stop_bot,
    store_users_and_subscriptions,
)
from bench.fanout_cycle import fresh_pg_database  # noqa: E402

SLOWEST_SHOWN = 8  # inline answers named at the end, slowest first: a phrase that is slow to answer shows as itself

# ---------------------------------------------------------------------------------------------- the driver
async def populate(url: str, args: argparse.Namespace) -> None:
    from storage.db import make_engine, make_sessionmaker
    from storage.migrate import upgrade_async

    await upgrade_async(url)
    engine = make_engine(url)
    await store_users_and_subscriptions(make_sessionmaker(engine), args.users, args.subs, args.seed)
    await engine.dispose()


async def outcome(url: str, accepted: Counter[tuple[int, str]]) -> tuple[int, int, int, Counter[str]]:
    """(delivered, lost, doubled, deliveries by state) against what the database recorded."""
    from sqlalchemy import select

    from storage.alert_tables import AlertDelivery
    from storage.db import make_engine, make_sessionmaker

    engine = make_engine(url)
    async with make_sessionmaker(engine)() as s:
        rows = (await s.execute(select(AlertDelivery.chat_id, AlertDelivery.text, AlertDelivery.state))).all()
    await engine.dispose()
    states = Counter(r.state for r in rows)
    sent = Counter((r.chat_id, r.text) for r in rows if r.state == "sent")
    lost = sum(max(0, n - accepted.get(k, 0)) for k, n in sent.items()) + states.get("failed", 0)
    doubled = sum(n - 1 for n in accepted.values() if n > 1)
    return sum(accepted.values()), lost, doubled, states


async def seed_history(url: str, days: float, every: float, seed: int, timeout: float = 120.0) -> tuple[int, int]:
    """`days` of availability history before now for every series the leader's first poll created (the market's
    groups and provider families): each series alternates in stock and sold out, a change every `every` minutes on
    average (exponential gaps), at a price that wanders; and the provider observed throughout. What a bot that has
    run for a week holds, which the ⚡ marks of every inline answer and /offers page read (a week of each group
    shown), as /when reads 30 days. Written in batches, each its own transaction, beside the running ingest.
    Returns (series, rows)."""
    from datetime import UTC, timedelta

    from sqlalchemy import Table, func, insert, select

    from storage.availability_tables import AvailabilityChange, AvailabilityCoverage, AvailabilitySeries
    from storage.db import make_engine, make_sessionmaker

    engine = make_engine(url)
    sm = make_sessionmaker(engine)
    rng = random.Random(seed)
    deadline = time.monotonic() + timeout
    try:
        while True:  # the first poll's series, once its transaction is committed
            async with sm() as s:
                keys = list((await s.scalars(select(AvailabilitySeries.key))).all())
                first = (await s.execute(select(func.min(AvailabilityChange.at)))).scalar()
            if keys or time.monotonic() > deadline:
                break
            await asyncio.sleep(1.0)
        if not keys or first is None:
            return 0, 0
        first = first if first.tzinfo else first.replace(tzinfo=UTC)
        start = first - timedelta(days=days)
        rows: list[dict[str, object]] = []
        written = 0

        async def flush() -> None:
            nonlocal rows, written
            async with sm() as s, s.begin():
                await s.execute(insert(cast(Table, AvailabilityChange.__table__)), rows)
            written += len(rows)
            rows = []

        for key in keys:
            at, in_stock, price = start, rng.random() < 0.5, rng.uniform(0.5, 3.0)
            while at < first:
                rows.append({"series_key": key, "at": at, "in_stock": in_stock,
                             "price_usd": round(price, 3) if in_stock else None, "price_rub": None})
                in_stock = not in_stock
                price *= rng.uniform(0.95, 1.05)
                at += timedelta(minutes=rng.expovariate(1 / every))
            if len(rows) >= 20_000:
                await flush()
        if rows:
            await flush()
        providers = {k.split("|", 1)[0] for k in keys}
        async with sm() as s, s.begin():
            await s.execute(insert(AvailabilityCoverage), [{"provider": p, "start": start, "end": first,
                                                            "polls": int(days * 8640)} for p in providers])
        return len(keys), written
    finally:
        await engine.dispose()


class _DriverLag:
    """This driver's own loop lag: inline latencies are stamped on this loop (the query when it is handed to the
    stand-in, the answer when the stand-in's handler runs), so a stall here adds to them what the bot never did."""

    def __init__(self) -> None:
        self.window_max = 0.0
        self.run_max = 0.0

    async def probe(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            t = loop.time()
            await asyncio.sleep(0.001)
            lag = loop.time() - t - 0.001
            self.window_max = max(self.window_max, lag)
            self.run_max = max(self.run_max, lag)

    def reset(self) -> None:
        self.window_max = self.run_max = 0.0

    def take_window(self) -> float:
        out, self.window_max = self.window_max, 0.0
        return out


async def drive(args: argparse.Namespace, pg_url: str | None, where: str) -> None:
    from bench.memory import (
        POLL_EVERY,
        MarketProcess,
        bot_env,
        distinct_queries,
        process_tree_pss_mb,
        process_tree_rss_mb,
        until_healthy,
    )
    from testkit.fake_telegram import FakeTelegram

    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        if pg_url is None:
            db = Path(tmp) / "soak.sqlite3"
            url = f"sqlite+aiosqlite:///{db}"
            cache = Path(args.db_cache) if args.db_cache else None
            await seeded_sqlite(db, cache, lambda u: populate(u, args))
        else:
            url = pg_url
            await populate(url, args)
        print(f"set-up: {args.users:,} users, {args.subs:,} subscriptions stored ({time.perf_counter() - t:.0f} s) "
              f"on {where}; {args.minutes:g} minutes; load average {os.getloadavg()[0]:.2f}", flush=True)
        probe_file = Path(tmp) / "lag.jsonl"
        async with FakeTelegram() as tg, MarketProcess(args.seed + 1) as market:
            tg.enforce_limits(global_rate=30, per_chat_rate=1, window=1.0)
            env = bot_env(url, tg, market.base_url)
            log = open(Path(tmp) / "bot.log", "wb")  # noqa: SIM115  # closed below, after the process
            cmd = [sys.executable, str(Path(__file__).resolve()), "--as-bot", str(probe_file)]
            proc = await asyncio.create_subprocess_exec(*cmd, cwd=tmp, env=env, stdout=log, stderr=log)
            queries = distinct_queries(max(100, int(args.minutes * 60 * args.inline_rate) + 100), rng)
            latencies: list[float] = []
            window_latencies: list[float] = []
            asked: dict[str, tuple[float, str]] = {}
            slowest: list[tuple[float, float, str]] = []  # (seconds, when into the run, the phrase): the top few
            read = 0
            sends = 0
            rss: list[tuple[float, float]] = []
            pss: list[float] = []
            all_lags: list[float] = []
            lag_max = 0.0
            probes = 0
            lag_read = 0
            driver = _DriverLag()
            driver_probe = asyncio.create_task(driver.probe())
            try:
                await until_healthy(env["WEB__PORT"], proc)
                if args.history_days > 0:
                    t = time.perf_counter()
                    series, rows_ = await seed_history(url, args.history_days, args.history_every, args.seed)
                    print(f"history: {rows_:,} changes over {args.history_days:g} days for {series:,} series (a "
                          f"change every {args.history_every:g} minutes each on average) written in "
                          f"{time.perf_counter() - t:.0f} s", flush=True)
                    if probe_file.exists():  # the lag while it was written is not the soak's
                        lag_read = len(probe_file.read_text().splitlines())
                    gc.collect()  # the rows built here, gone: not left for a collection inside the first window
                    await asyncio.sleep(0.01)  # the probe sees that stall now ...
                    driver.reset()  # ... and it is not the soak's
                started = time.perf_counter()
                next_report = started + 30
                next_query = started
                q = 0
                window_lags: list[float] = []
                window_max = 0.0
                while time.perf_counter() - started < args.minutes * 60:
                    now = time.perf_counter()
                    if now >= next_query:
                        phrase = queries[q % len(queries)]
                        qid = str(tg.inline_query(phrase, user_id=900_000 + q % 500, lang=("en", "ru")[q % 2]))
                        asked[qid] = (time.perf_counter(), phrase)
                        q += 1
                        next_query += rng.expovariate(args.inline_rate)
                    calls = tg.calls
                    while read < len(calls):
                        c = calls[read]
                        read += 1
                        if c.method == "answerInlineQuery":
                            query = asked.pop(str(c.params.get("inline_query_id")), None)
                            if query is not None:
                                took = c.at - query[0]
                                latencies.append(took)
                                window_latencies.append(took)
                                heapq.heappush(slowest, (took, query[0] - started, query[1]))
                                if len(slowest) > SLOWEST_SHOWN:
                                    heapq.heappop(slowest)
                        if c.method == "sendMessage" and c.status == 200:
                            sends += 1  # counted as read: a scan of every call each window grew with the run
                        else:
                            c.params = {k: v for k, v in c.params.items() if k in ("chat_id", "text")} \
                                if c.method == "sendMessage" else {}
                    if now >= next_report:
                        next_report += 30
                        total, each = process_tree_rss_mb(proc.pid)
                        rss.append((now - started, total))
                        pss.append(process_tree_pss_mb(proc.pid))
                        if probe_file.exists():
                            lines = probe_file.read_text().splitlines()
                            for line in lines[lag_read:]:
                                got = json.loads(line)
                                window_lags += got["lags"]
                                all_lags += got["lags"]
                                window_max = max(window_max, got["max"])
                                lag_max = max(lag_max, got["max"])
                                probes += got["n"]
                            lag_read = len(lines)
                        print(f"  {now - started:5.0f} s: RSS {total:.0f} MB (" + " + ".join(f"{m:.0f}" for m in each)
                              + f"), PSS {pss[-1]:.0f} MB; loop lag max {window_max * 1000:.0f} ms; inline p99 "
                              f"{p99(window_latencies) * 1000:.0f} ms ({len(window_latencies)}); alerts accepted "
                              f"{sends:,}; polls {market.polls()}; driver stall max "
                              f"{driver.take_window() * 1000:.0f} ms", flush=True)
                        window_lags, window_latencies, window_max = [], [], 0.0
                        # What this driver keeps (every call the stand-in recorded) out of its collector's full
                        # collections, which held this loop 160 ms once it was a few thousand calls long.
                        gc.freeze()
                    await asyncio.sleep(0.005)
            finally:
                driver_probe.cancel()
                await stop_bot(proc, log, Path(tmp) / "bot.log", 60)
            accepted = Counter((int(c.params["chat_id"]), str(c.params["text"])) for c in tg.calls_of("sendMessage")
                               if c.status == 200 and "chat_id" in c.params)
            delivered, lost, doubled, states = await outcome(url, accepted)
        # p99 of the probes: the ones over 2 ms were kept, the rest count as under it.
        over = sorted(all_lags)
        k = int(probes * 0.01)
        lag_p99 = over[-k] if k and len(over) >= k else 0.002
        rss_mb = [m for _, m in rss]
        print(f"RSS over time (s, MB): {', '.join(f'{s:.0f}:{m:.0f}' for s, m in rss)}; first {rss_mb[0]:.0f}, max "
              f"{max(rss_mb):.0f}, last {rss_mb[-1]:.0f} MB (target < 300 MB flat)" if rss_mb else "no RSS sample")
        if pss:
            print(f"PSS (shared pages once): first {pss[0]:.0f}, max {max(pss):.0f}, last {pss[-1]:.0f} MB")
        print(f"inline: {len(latencies):,} answered, p99 {p99(latencies) * 1000:.0f} ms, median "
              f"{statistics.median(latencies) * 1000 if latencies else 0:.0f} ms; unanswered {len(asked)}")
        print("slowest inline answers: " + "; ".join(f"{took * 1000:.0f} ms at {at:.0f} s ({phrase!r})"
                                                    for took, at, phrase in sorted(slowest, reverse=True)))
        shown = "<= 2" if lag_p99 <= 0.002 else f"{lag_p99 * 1000:.0f}"
        print(f"loop lag (1 ms probe, {probes:,} probes): p99 {shown} ms, max {lag_max * 1000:.0f} ms")
        print(f"this driver's own loop: stall max {driver.run_max * 1000:.0f} ms (inline times are stamped there: "
              "a stall of it adds to those it overlaps)")
        print(f"alerts: delivered {delivered:,}, lost {lost}, doubled {doubled}; deliveries by state {dict(states)}; "
              f"polls {market.polls()} (every {POLL_EVERY} s); load average "
              f"{os.getloadavg()[0]:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=20.0)
    ap.add_argument("--users", type=int, default=50_000)
    ap.add_argument("--subs", type=int, default=100_000)
    ap.add_argument("--inline-rate", type=float, default=5.0, help="inline queries a second (Poisson)")
    ap.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    ap.add_argument("--db-cache", default=None, help="a file to keep the populated SQLite database in between runs")
    ap.add_argument("--history-days", type=float, default=7.0,
                    help="days of availability history written for every series after the first poll (0: none)")
    ap.add_argument("--history-every", type=float, default=30.0, help="minutes between a series' changes, on average")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("BENCH_SEED", "1")))
    ap.add_argument("--as-bot", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.as_bot:
        sys.exit(run_bot(["run"], args.as_bot))
    with contextlib.suppress(KeyboardInterrupt), contextlib.ExitStack() as stack:
        pg_url, where = None, "SQLite"
        if args.db == "postgres":
            pg_url = stack.enter_context(fresh_pg_database(pg_server_url(), "bench_soak"))
            where = f"PostgreSQL ({asyncio.run(durability(pg_url))})"
        asyncio.run(drive(args, pg_url, where))


if __name__ == "__main__":
    main()
