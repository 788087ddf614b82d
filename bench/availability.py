"""Availability statistics benchmarks (prints figures; asserts nothing about time).

1. Ingest overhead: a provider with 50,000 offer groups (every configuration its own card × count × region group)
   polled at Vast-like churn (per poll: 1 % vanish, 2 % cheaper, 1 % dearer, 1 % sold out, 1 % new), recorded by
   `storage.ingest.record_poll` with the real alert queue hook, the ingest's state cache (the leader's ingest
   child between its own polls) — once with the statistics kept current (`storage.availability.track_poll`), once
   with that hook replaced by a no-op, on two fresh databases, the same polls interleaved poll by poll (the heap
   collected and frozen before each, as the ingest child does). Target: under 10 % added. Printed three ways: the
   median of the per-poll wall-time ratios; the CPU time (all of the work on SQLite; on PostgreSQL this process's
   and the server process's behind its one connection, from /proc: the server on this machine); and, within each
   poll with the upkeep, the upkeep's own time against the rest of that poll (one clock, one moment: the least
   disturbed by a busy machine). Also: a process without the state
   cache (the index built from the stored state each poll) and the first poll (every series created).
2. `/when H100 under $2.5` end to end through the bot: the real App (aiogram long polling over HTTP) against the
   stand-in Telegram (testkit/fake_telegram.py), on the store filled in [1] plus 30 days of history for the
   H100 families of six more providers (a change every 20 minutes each); the time from the update being queued for
   getUpdates to the reply reaching the stand-in (both stamps the stand-in's). Target: under 20 ms, median and p90
   (reliably, not only at a quiet moment). Asked by users who wrote before (a first contact also creates the user
   row: /help from newcomers is printed apart). Asked one at a time, at no more than half the bot's overall send
   rate: faster, Telegram's flood limit (bot.pacing) holds every 30th reply for its window, whatever was asked.
   For reference, the same through the bot for /help (no statistics read): the stack's own share of that time.
   Then /when after a poll moved every H100 series (new rows read, the merged timeline resumed; the poll written
   through an engine of its own, as the ingest child writes it, with the cyclic collector's runs meanwhile), the
   replica's first question (30 days read and merged; with the longest the loop went without a turn meanwhile, by a
   1 ms probe: `--history-every 5` for families that move every 5 minutes), and the answer alone (answer_when on a
   session, no Telegram).
   All of it again as a webhook replica (gpuradar/webhook.py): the bench posts each update to the App's web server
   as Telegram would; the time from that POST to the reply reaching the stand-in.

Each figure is printed as a ratio against its baseline from the same run. On SQLite a real file; with `--postgres`
(TEST_DATABASE_URL, else .ci/postgres.sh) a fresh database on that server, dropped afterwards. The server's
durability settings are printed with the figures: .ci/postgres.sh's test server runs with fsync and synchronous
commit off; the issue's figure is on a server with the defaults (fsync, synchronous_commit, full_page_writes on), e.g.
a private cluster started with no -c options.

Run: python3 bench/availability.py [--postgres] [--groups N] [--polls N] [--asks N] [--skip-when]
                                   [--history-every MINUTES]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gpuradar  # noqa: F401  (the wiring: installs the provider catalog that offers' VAT terms read)
from bench._common import durability
from core.offers import Billing, Offer, Period, Rates
from core.polls import PollResult, PollStatus

GPUS = ["rtx-4090", "h100-sxm", "a100-80gb", "l40s", "rtx-3090"]
# The polls, five minutes apart, all in the past and within /when's window (a row stamped after the replica's clock
# is one a writer's clock set ahead wrote: storage/availability_cache.py reads it again on every question).
T0 = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)
RATES = Rates(rub_per={"USD": 80.0})
# Churn polls timed after the first. A single poll's with/without ratio spreads +-10-15 % on a shared machine, and the
# median of 10 still moved by +-5 % from run to run (2 Dec 2026: 8.7-13.6 % for an upkeep of ~5 % within the poll);
# 24 keep it within a couple of percent.
POLLS = 24


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


def fresh_database(stack: contextlib.ExitStack, server: str | None, tmp: str, name: str) -> str:
    """A SQLite file in `tmp`, or a new database on the PostgreSQL `server` (dropped when `stack` closes)."""
    if server is None:
        return f"sqlite+aiosqlite:///{tmp}/{name}.db"
    from bench.fanout_cycle import fresh_pg_database

    return stack.enter_context(fresh_pg_database(server, f"bench_avail_{name}"))


async def run_ingest(plain_url: str, tracked_url: str, polls: list[list[Offer]], *,
                     cached: bool) -> tuple[list[float], list[float], list[float], list[float], list[float]]:
    """The same polls through the real `storage.ingest.record_poll` (alert queue hook, state cache when `cached`)
    on two fresh databases, interleaved poll by poll (alternating which goes first, so a busy machine's drift
    falls on both): on one the statistics' upkeep replaced by a no-op. Seconds per poll (without, with), and the
    seconds spent inside the upkeep in each poll of the run with it, then the CPU seconds per poll (without, with:
    on SQLite all of the work in this process; on PostgreSQL this process's and its server process's, read from
    /proc, each engine holding one connection)."""
    import storage.ingest as ingest
    from storage.db import make_engine, make_sessionmaker
    from storage.ingest import WRITER_CACHE_MB, StateCache, record_poll
    from storage.migrate import upgrade_async
    from storage.outbox import OutboxWriter

    real = ingest.track_poll
    inside: list[float] = []  # seconds spent in the upkeep, per tracked poll

    async def untracked(*args: Any, **kwargs: Any) -> None:
        return None

    async def timed(*args: Any, **kwargs: Any) -> None:
        start = time.perf_counter()
        await real(*args, **kwargs)
        inside.append(time.perf_counter() - start)

    runs: list[tuple[Any, Any, Any, StateCache | None, list[float], list[float]]] = []
    backends: list[int | None] = []  # each engine's one PostgreSQL backend process (its CPU counted with ours)
    for url, hook in ((plain_url, untracked), (tracked_url, timed)):
        await upgrade_async(url)
        postgres = url.startswith("postgresql")
        # On PostgreSQL one pooled connection, so its server process's CPU can be read (/proc: same machine).
        # as the ingest child's engine (storage.ingest.WRITER_CACHE_MB: its SQLite page cache)
        engine = (make_engine(url, pool_size=1, max_overflow=0) if postgres
                  else make_engine(url, sqlite_cache_mb=WRITER_CACHE_MB))
        backends.append(await backend_pid(engine) if postgres else None)
        runs.append((engine, make_sessionmaker(engine), hook, StateCache() if cached else None, [], []))
    writer = OutboxWriter()
    try:
        for k, offers in enumerate(polls):
            at = T0 + timedelta(minutes=5 * k)
            order = [0, 1] if k % 2 == 0 else [1, 0]
            for n in order:
                _engine, sm, hook, cache, took, cpu = runs[n]
                ingest.track_poll = hook
                gc.collect()  # between polls, as the ingest child does (gpuradar/ingest_process.py, _settle_heap)
                gc.freeze()
                start, start_cpu, start_server = time.perf_counter(), time.process_time(), server_cpu(backends[n])
                await record_poll(sm, PollResult(provider="vastai", status=PollStatus.OK, offers=offers,
                                                 started_at=at, finished_at=at), rates=RATES, on_events=writer,
                                  cache=cache)
                took.append(time.perf_counter() - start)
                cpu.append(time.process_time() - start_cpu + server_cpu(backends[n]) - start_server)
    finally:
        gc.unfreeze()
        ingest.track_poll = real
        for engine, *_ in runs:
            await engine.dispose()
    return runs[0][4], runs[1][4], inside, runs[0][5], runs[1][5]


async def backend_pid(engine: Any) -> int | None:
    """The PostgreSQL server process behind the engine's one connection, when it runs on this machine."""
    from sqlalchemy import text

    async with engine.connect() as conn:
        pid = int((await conn.execute(text("SELECT pg_backend_pid()"))).scalar_one())
    return pid if Path(f"/proc/{pid}/stat").exists() else None


def server_cpu(pid: int | None) -> float:
    """CPU seconds (user + system) the server process has used so far; 0 without one."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


DATABASES = ("plain", "tracked", "coldplain", "cold")


async def bench_ingest(server: str | None, label: str, n: int, polls_n: int, urls: dict[str, str]) -> str:
    """Figure [1] on the fresh databases `urls` (by DATABASES name); returns the one the tracked run filled."""
    if server is not None:
        print(f"    PostgreSQL server: {await durability(urls['tracked'])}")
    polls = snapshots(n, polls_n)
    kept_url = urls["tracked"]
    plain, tracked, inside, plain_cpu, tracked_cpu = await run_ingest(urls["plain"], kept_url, polls, cached=True)
    cold_plain, cold, *_ = await run_ingest(urls["coldplain"], urls["cold"], polls[:4], cached=False)
    base, kept = statistics.median(plain[1:]), statistics.median(tracked[1:])
    pairs = sorted(b / a for a, b in zip(plain[1:], tracked[1:], strict=True))
    ratio = statistics.median(pairs)
    print(f"[1] ingest on {label}, {n:,} offer groups, Vast-like churn, {len(polls) - 1} polls after the first, "
          f"state cache (the ingest child): median poll {base * 1000:.0f} ms without the statistics' upkeep, "
          f"{kept * 1000:.0f} ms with it; median of the per-poll ratios {ratio:.3f} (+{(ratio - 1) * 100:.1f} %; "
          f"{pairs[0]:.2f}..{pairs[-1]:.2f}; target < 10 %: {'met' if ratio < 1.10 else 'MISSED'})")
    cpu_pairs = sorted(b / a for a, b in zip(plain_cpu[1:], tracked_cpu[1:], strict=True))
    cpu_ratio = statistics.median(cpu_pairs)
    behind = " (ours and the PostgreSQL server process behind our connection)"
    print(f"    CPU time per poll{'' if server is None else behind}: "
          f"{statistics.median(plain_cpu[1:]) * 1000:.0f} -> {statistics.median(tracked_cpu[1:]) * 1000:.0f} ms, "
          f"median ratio {cpu_ratio:.3f} (+{(cpu_ratio - 1) * 100:.1f} %; {cpu_pairs[0]:.2f}..{cpu_pairs[-1]:.2f})")
    # The same within each tracked poll (one clock, one moment: immune to the machine's load drifting between
    # the two databases): the upkeep's time against the rest of that poll.
    shares = sorted(u / (p - u) for u, p in zip(inside[1:], tracked[1:], strict=True))
    share = statistics.median(shares)
    upkeep = statistics.median(inside[1:]) * 1000
    print(f"    within each poll with the upkeep: the upkeep took a median {upkeep:.0f} ms, ratio to the rest of the "
          f"poll {share:.3f} (+{share * 100:.1f} %; {shares[0]:.3f}..{shares[-1]:.3f}; "
          f"target < 10 %: {'met' if share < 0.10 else 'MISSED'})")
    cold_base, cold_kept = statistics.median(cold_plain[1:]), statistics.median(cold[1:])
    print(f"    first poll (every series created): {plain[0]:.2f} s -> {tracked[0]:.2f} s (ratio "
          f"{tracked[0] / plain[0]:.2f}); a process without the state cache (the index built from the stored "
          f"state each poll): {cold_base * 1000:.0f} -> {cold_kept * 1000:.0f} ms (ratio {cold_kept / cold_base:.2f})")
    return kept_url


H100_PROVIDERS = 6


async def add_h100_history(url: str, providers: int = H100_PROVIDERS, days: int = 30, every: float = 20.0) -> None:
    """Thirty days of H100 × 1 families at more providers, a row every `every` minutes, written as ingest writes
    them (rows and coverage)."""
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
                    t += timedelta(minutes=every)
                await s.execute(insert(AvailabilitySeries), [{
                    "key": key, "provider": name, "card": card, "gpu_count": 1, "region": "*", "billing": "hourly",
                    "first_seen": start}])
                await s.execute(insert(AvailabilityChange), rows)
    await engine.dispose()


class _Collections:
    """The cyclic collector's runs by generation, and their milliseconds, while `on`."""

    def __init__(self) -> None:
        self.on = False
        self.runs = [0, 0, 0]
        self.ms = [0.0, 0.0, 0.0]
        self._t = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if not self.on:
            return
        if phase == "start":
            self._t = time.perf_counter()
        else:
            self.runs[info["generation"]] += 1
            self.ms[info["generation"]] += (time.perf_counter() - self._t) * 1000

    def __str__(self) -> str:
        return ", ".join(f"gen{g} {n} ({ms:.0f} ms)" for g, (n, ms) in enumerate(zip(self.runs, self.ms, strict=True)))


WEBHOOK_PATH = "/tg/hook"
WEBHOOK_SECRET = "bench-secret_0123456789"


async def bench_when(url: str, label: str, asks: int, *, webhook: bool = False) -> None:
    """Figure [2] through long polling (aiogram's getUpdates against the stand-in), or with `webhook` as a webhook
    replica: the bench posts each update to the App's own web server as Telegram would (gpuradar/webhook.py) and
    the time runs from that POST's start to the reply reaching the stand-in."""
    import aiohttp

    from gpuradar.app import App
    from gpuradar.metrics import Metrics
    from gpuradar.settings import Settings
    from gpuradar.web import SECRET_HEADER
    from storage.db import make_engine, make_sessionmaker
    from testkit.fake_telegram import Call, FakeTelegram

    class Telegram(FakeTelegram):
        """The stand-in plus setWebhook, for a webhook replica's start."""

        def _m_setWebhook(self, params: dict[str, Any], call: Call) -> Any:
            return True

    mode = "webhook" if webhook else "long polling"
    # The simulated polls write through one engine of their own: a real poll is recorded in the ingest child, so
    # nothing of it (an engine built per poll, its garbage) belongs on the bot's heap being measured.
    poll_engine = make_engine(url)
    poll_sm = make_sessionmaker(poll_engine)
    collections_ = _Collections()
    gc.callbacks.append(collections_)
    async with Telegram() as tg, aiohttp.ClientSession() as http:
        extra: dict[str, Any] = {}
        if webhook:
            extra = {"web": {"host": "127.0.0.1", "port": 0},
                     "webhook": {"url": f"https://bot.example.com{WEBHOOK_PATH}", "secret": WEBHOOK_SECRET,
                                 "path": WEBHOOK_PATH}}
        settings = Settings(database_url=url, bot_token=tg.token, telegram_api_url=tg.base_url, **extra)
        app = App(settings, scrape=False, polling_timeout=1, webhook=webhook, metrics=Metrics(process=False))
        await app.start()
        app.freeze_heap()  # as `gpuradar run` does once started
        try:
            cpu: dict[str, list[float]] = {"when": [], "help": [], "moved": []}

            # One ask at a time, and no faster than half the bot's overall send rate: asked back to back (about
            # 60 a second) the replies would fill Telegram's per-second window, and the pacer (bot.pacing) holds
            # the 30th for the window to roll, by design; that wait (0.2-0.5 s) is the flood limit's, not /when's.
            gap = 2.0 / settings.sender.global_rate
            last = [-math.inf]

            async def ask(text: str, user_id: int, kind: str = "") -> tuple[float, str]:
                await asyncio.sleep(max(0.0, last[0] + gap - time.perf_counter()))
                last[0] = time.perf_counter()
                start = time.process_time()
                if webhook:
                    assert app.web is not None
                    update_id = 10_000_000 + user_id
                    sent = time.perf_counter()
                    update = {"update_id": update_id, "message": {
                        "message_id": update_id, "date": int(time.time()), "text": text,
                        "chat": {"id": user_id, "type": "private", "first_name": "Tester"},
                        "from": {"id": user_id, "is_bot": False, "first_name": "Tester", "language_code": "en"},
                        **({"entities": [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]}
                           if text.startswith("/") else {})}}
                    async with http.post(f"{app.web.url}{WEBHOOK_PATH}", json=update,
                                         headers={SECRET_HEADER: WEBHOOK_SECRET}) as answer:
                        assert answer.status == 200, answer.status
                else:
                    uid = tg.message(text, user_id=user_id)
                    sent = tg.update_times[uid]
                call = await tg.wait_for("sendMessage", chat_id=user_id, timeout=30,
                                         predicate=lambda c: c.at >= sent)
                if kind:
                    cpu[kind].append((time.process_time() - start) * 1000)
                return (call.at - sent) * 1000, str(call.params.get("text", ""))

            def summary(ms: list[float]) -> tuple[float, float]:
                return statistics.median(ms), sorted(ms)[int(0.9 * len(ms))]

            # The replica's first question reads 30 days of every H100 family and merges them: how long this loop
            # (the bot's, the stand-in's) went without a turn meanwhile.
            held = [0.0]

            async def probe() -> None:
                while True:
                    t = time.perf_counter()
                    await asyncio.sleep(0.001)
                    held[0] = max(held[0], time.perf_counter() - t - 0.001)

            prober = asyncio.create_task(probe())
            first, reply = await ask("/when H100 under $2.5", 5000)
            prober.cancel()
            print(f"    /when answered ({mode}):", reply.replace("\n", " | ")[:300])
            # Users who wrote before (their rows stored: what a user's next question pays; twenty of them, so no
            # one meets the per-user limit on /when), then first contacts (the user row created on the way).
            users = [5001 + i for i in range(20)]
            for user_id in users:
                await ask("/help", user_id)
            when = [(await ask("/when H100 under $2.5", users[i % 20], "when"))[0] for i in range(asks)]
            help_ = [(await ask("/help", users[i % 20], "help"))[0] for i in range(asks)]
            newcomers = [(await ask("/help", 20_001 + i))[0] for i in range(max(5, asks // 3))]
            moved = []
            collections_.on = True
            for i in range(max(3, asks // 3)):
                await h100_poll(poll_sm, i)  # every H100 series moved since the last answer
                moved.append((await ask("/when H100 under $2.5", users[i % 20], "moved"))[0])
            collections_.on = False
        finally:
            await app.stop()
            gc.callbacks.remove(collections_)
            await poll_engine.dispose()
    (w50, w90), (h50, h90), (m50, m90), (n50, _) = summary(when), summary(help_), summary(moved), summary(newcomers)
    print(f"[2] /when H100 under $2.5 through the bot ({mode}) on {label}: median {w50:.1f} ms, p90 {w90:.1f} ms over "
          f"{asks} asks (target < 20 ms, median and p90: {'met' if w90 < 20 else 'MISSED'}; slowest "
          f"{max(when):.1f} ms); /help, the same stack without the statistics: median {h50:.1f} ms, "
          f"p90 {h90:.1f} ms (ratio {w50 / h50:.2f}); /help from a "
          f"first contact (the user row created): median {n50:.1f} ms")
    print(f"    after a poll moved all {2 * H100_PROVIDERS} H100 series (their new rows read, the merged timeline "
          f"recomputed): median {m50:.1f} ms, p90 {m90:.1f} ms, slowest {max(moved):.1f} ms (ratio to /help "
          f"{m50 / h50:.2f}); the cyclic collector meanwhile: {collections_}; the replica's first question "
          f"(30 days of those series read): "
          f"{first:.0f} ms, the loop held at most {held[0] * 1000:.0f} ms meanwhile")
    # CPU time of this process (bot, stand-in and bench together) from an update queued to its reply: what the
    # machine's load does not stretch as it stretches wall time. /when's own share is its excess over /help's.
    c_when, c_help, c_moved = (statistics.median(cpu[k]) for k in ("when", "help", "moved"))
    print(f"    CPU per ask (the process: bot + stand-in; load does not stretch it): /when {c_when:.1f} ms, "
          f"/help {c_help:.1f} ms, /when's own {c_when - c_help:.1f} ms; after a poll moved them {c_moved:.1f} ms "
          f"(own {c_moved - c_help:.1f} ms)")
    if not webhook:
        direct = await when_directly(url, asks)
        d50, d90 = summary(direct)
        print(f"    the answer alone (bot.handlers.when.answer_when on a session, held changes warm, no Telegram): "
              f"median {d50:.1f} ms, p90 {d90:.1f} ms")


async def when_directly(url: str, asks: int) -> list[float]:
    from bot.estimates import Estimator
    from bot.handlers.when import answer_when
    from storage.availability_cache import ChangeCache
    from storage.db import make_engine, make_sessionmaker

    engine = make_engine(url)
    sm = make_sessionmaker(engine)
    cache, estimator, took = ChangeCache(), Estimator(), []
    try:
        for _ in range(asks + 1):
            start = time.perf_counter()
            async with sm() as session:
                await answer_when("H100 under $2.5", session=session, lang="en", currency="USD",
                                  estimator=estimator, user_id=None, cache=cache)
            took.append((time.perf_counter() - start) * 1000)
    finally:
        await engine.dispose()
    return took[1:]  # the first reads the 30 days


async def h100_poll(sm: Any, k: int) -> None:
    """One poll's worth of moves for the added H100 families: a change row each, every stretch extended to now."""
    from sqlalchemy import insert, update

    from storage.availability_tables import AvailabilityChange, AvailabilityCoverage

    now = datetime.now(UTC)
    rng = random.Random(100 + k)
    async with sm() as s, s.begin():
        for p in range(H100_PROVIDERS):
            await s.execute(update(AvailabilityCoverage).where(AvailabilityCoverage.provider == f"cloud{p}")
                            .values(end=now))
            for card in ("h100-sxm", "h100-pcie"):
                price = round(rng.uniform(1.0, 3.0), 4)
                await s.execute(insert(AvailabilityChange).values(
                    series_key=f"cloud{p}|{card}|1|*|hourly", at=now, in_stock=rng.random() < 0.6,
                    price_usd=price, price_rub=price * 80))


def pg_server() -> str:
    return os.environ.get("TEST_DATABASE_URL") or subprocess.run(
        [str(Path(__file__).resolve().parents[1] / ".ci" / "postgres.sh")], capture_output=True, text=True,
        check=True).stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--postgres", "--pg", action="store_true", help="PostgreSQL (TEST_DATABASE_URL) instead of SQLite")
    ap.add_argument("--groups", type=int, default=50_000)
    ap.add_argument("--polls", type=int, default=POLLS)
    ap.add_argument("--asks", type=int, default=60)
    ap.add_argument("--skip-when", action="store_true")
    ap.add_argument("--history-every", type=float, default=20.0,
                    help="minutes between two rows of an H100 family's 30 days of history")
    args = ap.parse_args()
    server = pg_server() if args.postgres else None
    label = "PostgreSQL" if server else "SQLite (a file)"
    started = time.perf_counter()

    async def run(urls: dict[str, str]) -> None:
        kept = await bench_ingest(server, label, args.groups, args.polls, urls)
        if not args.skip_when:
            await add_h100_history(kept, every=args.history_every)
            await bench_when(kept, label, args.asks)
            await bench_when(kept, label, args.asks, webhook=True)

    # The PostgreSQL databases are made (and dropped) outside the event loop: fresh_pg_database runs its own.
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        asyncio.run(run({name: fresh_database(stack, server, tmp, name) for name in DATABASES}))
    print(f"bench wall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
