"""The alert sender with 50,000 users and 100,000 subscriptions stored: what it costs the bot's event loop.

Set-up (bench/fanout_cycle.py's): `--users` users with `--subs` subscriptions (bench/match.py's realistic mix) and
`--providers` x `--configs` offers stored by a trusted first poll, in a SQLite file. Then, on one asyncio loop that
stands for the bot's (a 1 ms sleep probe measures how late it wakes: loop lag), the sender is started the way
`gpuradar run` starts it (`gpuradar.sender_process.SenderProcess`: in a child process of its own since issue 26;
`--on-loop` runs the same `SenderService` on the probed loop, as `SENDER__IN_PROCESS=true` does) and, in order:
  1. start-up: the sender reads the subscriptions and builds its index;
  2. an alerting poll (5 % of every provider's configurations changed) is recorded and the sender woken; until
     every user's unheard events are matched (FanOut.pending filled);
  3. an index change: 500 users subscribe, 500 subscriptions are paused, 100 deleted, then one more alerting poll.
For each phase: loop lag max and p99, a "reply" probe's p99 (a user row read through the bot's own engine every
20 ms, as a handler's first query) and the sender's CPU for the phase (the child's CPU, asked over its socket; the
whole process's with `--on-loop`). The polls are recorded in a forked process, as the leader's ingest child records
them (`--record-in thread`: on a thread of the probed process, as this bench did before, for a like-for-like
comparison with a sender on a thread).

`--db postgres` runs it all on a fresh database of the PostgreSQL server behind BENCH_PG_URL (else
TEST_DATABASE_URL, else the server .ci/postgres.sh starts), dropped afterwards; the server's durability settings are
printed with the figures (the issue's are with the server's defaults: fsync, synchronous_commit and
full_page_writes on; .ci/postgres.sh's test server has them off).

`--senders N`: N replicas' senders are alive (N - 1 stand-ins checked in for the whole run, storage.sender_shares),
so the one measured indexes, matches and plans only its share of the users: the matching work each replica holds.

`--deliver`: then the sender delivers the first poll's alerts to the stand-in Bot API server, which allows
`--rate` messages a second overall (1,000: Telegram's paid broadcasts) with paid broadcasts on
(SENDER__PAID_BROADCAST) and prints the time, lost and doubled against what the database planned.

    python3 bench/sender_loop.py [--users 50000] [--subs 100000] [--on-loop] [--deliver] [--record-in thread]
                                 [--db sqlite|postgres] [--senders N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing as mp
import os
import random
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import delete, func, insert, select, update  # noqa: E402

import gpuradar  # noqa: E402, F401 (the wiring: the provider catalog)
from bench._common import durability, p99, pg_server_url, seeded_sqlite  # noqa: E402
from bench.fanout_cycle import RATES, T0, change, fresh_pg_database, poll, populate  # noqa: E402
from bench.memory import process_tree_rss_mb  # noqa: E402
from storage.alert_tables import AlertEventRow  # noqa: E402
from storage.db import make_engine, make_sessionmaker  # noqa: E402
from storage.ingest import record_poll  # noqa: E402
from storage.outbox import OutboxWriter  # noqa: E402
from storage.user_tables import Subscription, User  # noqa: E402

TOKEN = "123456:BENCH-token"


class SteppedClock:
    """The sender's clock: a fixed time, moved on to `then` once the file `flag` exists (picklable, so it crosses
    to the sender's child process; set by the bench between its two polls)."""

    def __init__(self, first: Any, then: Any, flag: str) -> None:
        self.first, self.then, self.flag = first, then, flag
        self._moved = False
        self._looked = 0.0

    def __call__(self) -> Any:
        # The file is looked for at most every 50 ms: the sender asks the time a few times a message, and a stat
        # each time was 2 % of its CPU at 1,000 messages a second (the bench's cost, not the product's).
        if not self._moved and time.monotonic() - self._looked >= 0.05:
            self._looked = time.monotonic()
            self._moved = os.path.exists(self.flag)
        return self.then if self._moved else self.first



class Probe:
    """Loop lag: a 1 ms sleep, how late it wakes; and a reply's latency: one user row read every 20 ms."""

    def __init__(self, sm: Any) -> None:
        self.sm = sm
        self.lags: list[float] = []
        self.replies: list[float] = []
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._lag()), asyncio.create_task(self._reply())]

    async def _lag(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._stop.is_set():
            t = loop.time()
            await asyncio.sleep(0.001)
            self.lags.append(loop.time() - t - 0.001)

    async def _reply(self) -> None:
        n = 0
        while not self._stop.is_set():
            n += 1
            t = time.perf_counter()
            async with self.sm() as s:
                await s.scalar(select(User.lang).where(User.id == 1 + n % 1000))
            self.replies.append(time.perf_counter() - t)
            await asyncio.sleep(0.02)

    def take(self) -> tuple[list[float], list[float]]:
        lags, replies, self.lags, self.replies = self.lags, self.replies, [], []
        return lags, replies

    async def stop(self) -> None:
        self._stop.set()
        await asyncio.gather(*self._tasks)


def report(label: str, lags: list[float], replies: list[float], cpu: float, wall: float) -> None:
    print(f"  {label}: {wall:.2f} s wall; loop lag max {max(lags, default=0) * 1000:.0f} ms, p99 "
          f"{p99(lags) * 1000:.1f} ms ({len(lags)} probes); reply p99 {p99(replies) * 1000:.1f} ms, max "
          f"{max(replies, default=0) * 1000:.0f} ms; sender CPU {cpu:.2f} s", flush=True)


def _serve(conn: Any, rate: int) -> None:
    from testkit.fake_telegram import FakeTelegram

    async def main() -> None:
        async with FakeTelegram(TOKEN) as tg:
            # Telegram's free 30 a second overall; with allow_paid_broadcast up to `rate` (1,000).
            tg.enforce_limits(global_rate=30, per_chat_rate=1, window=1.0, paid_rate=rate)
            conn.send(tg.port)
            await asyncio.get_running_loop().run_in_executor(None, conn.recv)
            ok = [c for c in tg.calls_of("sendMessage") if c.status == 200]
            conn.send({"too_many": tg.stats.too_many, "chats": Counter(c.chat_id for c in ok),
                       "paid": sum(1 for c in ok if c.params.get("allow_paid_broadcast")),
                       "at": sorted(c.at for c in ok),
                       "first": sorted({c.chat_id: c.at for c in reversed(ok)}.values())})

    asyncio.run(main())


async def main_async(url: str, catalog: dict[str, Any], args: argparse.Namespace, port: int | None) -> None:
    import gc

    from aiogram import Bot
    from aiogram.client.default import DefaultBotProperties
    from aiogram.client.session.aiohttp import AiohttpSession
    from aiogram.client.telegram import TelegramAPIServer

    from bench.sender_loop import SteppedClock as Clock  # by its module's name (this file runs as __main__)
    from gpuradar.sender_process import SenderProcess, SenderService, SenderSpec

    gc.collect()
    gc.freeze()  # as App.freeze_heap does once the bot has started
    engine = make_engine(url)
    sm = make_sessionmaker(engine)
    probe = Probe(sm)
    probe.start()
    await asyncio.sleep(0.5)
    probe.take()
    api = f"http://127.0.0.1:{port or 9}"
    flag = Path(tempfile.mkdtemp()) / "second-poll"
    options: dict[str, Any] = {"poll_interval": 0.05, "workers": 64,
                               "clock": Clock(T0 + timedelta(minutes=6), T0 + timedelta(minutes=11), str(flag))}
    if args.deliver:
        options.update(paid_broadcast=True, paid_rate=min(1000.0, float(args.rate) * 0.95),
                       paid_budget_stars=args.budget, workers=128)
    model = Bot(TOKEN, session=AiohttpSession(api=TelegramAPIServer.from_base(api)),
                default=DefaultBotProperties(parse_mode="HTML"))
    spec = SenderSpec.like(model, url, rate=29.5, chat_interval=1.05, options=options)
    await model.session.close()

    if args.senders > 1:  # the other replicas' senders, alive for the whole run: this one takes its share
        from storage import sender_shares

        for n in range(1, args.senders):
            await sender_shares.check_in(sm, f"bench-other-sender-{n}", ttl=24 * 3600)
    started = time.perf_counter()
    host: SenderService | SenderProcess = SenderService(spec) if args.on_loop else SenderProcess(spec)
    task = asyncio.create_task(host.run())
    every = 0.005 if args.on_loop else 0.02  # how often the bench asks (over the socket: each ask is a frame)

    async def cpu_clock() -> float:
        return (await host.report()).cpu_seconds

    async def loaded_upto() -> int | None:
        return (await host.report()).loaded_upto

    async def pending() -> int:
        return (await host.report()).pending_users

    # 1. start-up: the index is built at the sender's first look (it finds nothing queued)
    cpu0 = 0.0 if not args.on_loop else time.process_time()
    while await loaded_upto() is None:
        await asyncio.sleep(every)
    await asyncio.sleep(0.3)
    lags, replies = probe.take()
    shown = await host.report()
    rss = process_tree_rss_mb(shown.pid)[0] if shown.pid is not None and not args.on_loop else None
    report(f"start-up (index build: {shown.indexed:,} subscriptions, {shown.share}"
           + (f"; sender child RSS {rss:.0f} MB" if rss is not None else "") + ")", lags, replies,
           await cpu_clock() - cpu0, time.perf_counter() - started)

    # 2. an alerting poll, recorded off the probed loop as the leader's ingest child records it
    rng = random.Random(args.seed + 2)
    at = T0 + timedelta(minutes=5)
    nxt = {name: change(offers, args.changed, rng) for name, offers in catalog.items()}
    queued = [0]

    async def record(polls: dict[str, Any], when: Any) -> None:
        queued[0] += await asyncio.to_thread(_record, url, polls, when, args.record_in)
        host.wake()

    async def matched() -> int:
        async with sm() as s:
            newest = await s.scalar(select(func.max(AlertEventRow.id))) or 0
        while (await loaded_upto() or 0) < newest:
            await asyncio.sleep(every)
        return newest

    probe.take()
    t = time.perf_counter()
    cpu0 = await cpu_clock()
    match0 = (await host.report()).match_cpu_seconds  # the matching may start while the poll is still recorded
    await record(nxt, at)
    t_rec = time.perf_counter()
    await matched()
    t_match, cpu_match = time.perf_counter() - t_rec, (await host.report()).match_cpu_seconds - match0
    waiting = await pending()
    await asyncio.sleep(1.0)  # the first users planned and sent meanwhile
    lags, replies = probe.take()
    report(f"alerting poll ({queued[0]:,} events queued; {waiting:,} users to alert; matched "
           f"{t_match:.2f} s after the commit, sender CPU for the matching {cpu_match:.2f} s)", lags, replies,
           await cpu_clock() - cpu0, time.perf_counter() - t)

    if args.deliver:  # the delivery of that one poll's alerts is measured: no more polls
        t = time.perf_counter()
        cpu0 = await cpu_clock()
        while time.perf_counter() - t < args.deliver_timeout:
            await asyncio.sleep(0.5)
            if await host.idle():
                break
        stars = (await host.report()).stats["stars_spent"]
        print(f"  delivery: idle {time.perf_counter() - t:.1f} s after the poll was matched, sender CPU "
              f"{await cpu_clock() - cpu0:.1f} s; Stars counted {stars:.1f}", flush=True)
        args.deliver = False
        args.delivered = True
        flag.touch()
    if not getattr(args, "delivered", False):
        # 3. an index change, then another alerting poll
        t = time.perf_counter()
        cpu0 = await cpu_clock()
        async with sm() as s, s.begin():
            base = args.users + 1
            await s.execute(insert(User), [{"id": base + i, "chat_id": base + i, "lang": "en", "currency": "USD",
                                             "tz_offset_minutes": 0, "grouping": True, "active": True,
                                             "created_at": T0} for i in range(500)])
            await s.execute(insert(Subscription), [{"user_id": base + i, "chat_id": base + i, "kind": "gpu",
                                                     "query_text": "h100", "gpu_ids": ["h100"], "max_price": None,
                                                     "price_currency": "USD", "price_basis": "total",
                                                     "paused": False, "created_at": T0} for i in range(500)])
            await s.execute(update(Subscription).where(Subscription.id <= 500).values(paused=True))
            await s.execute(delete(Subscription).where(Subscription.id.between(1001, 1100)))
        nxt2 = {name: change(offers, args.changed, rng) for name, offers in nxt.items()}
        before = queued[0]
        flag.touch()
        await record(nxt2, at + timedelta(minutes=5))
        await matched()
        await asyncio.sleep(1.0)
        lags, replies = probe.take()
        report(f"index change + poll ({queued[0] - before:,} events)", lags, replies, await cpu_clock() - cpu0,
               time.perf_counter() - t)

    await host.stop()
    await task
    await probe.stop()
    await engine.dispose()


def _record(url: str, polls: dict[str, Any], when: Any, where: str) -> int:
    """Record the polls with the alert queue; returns the alerts queued. `process`: in a forked child (the bot's
    process shares no interpreter with it, as with the ingest child); `thread`: on this thread."""

    def go() -> int:
        async def record_all() -> int:
            engine2 = make_engine(url)
            writer = OutboxWriter()
            for name, offers in polls.items():
                await record_poll(make_sessionmaker(engine2), poll(name, offers, when), rates=RATES, on_events=writer)
            await engine2.dispose()
            return int(writer.stats["queued"])
        return asyncio.run(record_all())

    if where == "thread":
        return go()
    ctx = mp.get_context("fork")  # the polls are in memory already: nothing pickled on the probed loop
    ours, theirs = ctx.Pipe()

    def child() -> None:
        theirs.send(go())

    proc = ctx.Process(target=child, daemon=True)
    proc.start()
    got = int(ours.recv())
    proc.join()
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=50_000)
    ap.add_argument("--subs", type=int, default=100_000)
    ap.add_argument("--providers", type=int, default=10)
    ap.add_argument("--configs", type=int, default=1_440)
    ap.add_argument("--changed", type=float, default=0.05)
    ap.add_argument("--on-loop", action="store_true", help="run the sender on the probed loop (SENDER__IN_PROCESS)")
    ap.add_argument("--record-in", choices=("process", "thread"), default="process",
                    help="where the polls are recorded (process: forked, as the ingest child; thread: of this one)")
    ap.add_argument("--deliver", action="store_true")
    ap.add_argument("--senders", type=int, default=1,
                    help="senders alive (the others stand-ins checked in): the measured one takes its share")
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--budget", type=float, default=100_000.0)
    ap.add_argument("--deliver-timeout", type=float, default=600.0)
    ap.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    ap.add_argument("--db-cache", default=None, help="a file to keep the populated SQLite database in between runs")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("BENCH_SEED", "1")))
    args = ap.parse_args()
    # The sender's child unpickles this bench's clock (bench.sender_loop.SteppedClock): it needs the checkout too.
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    server = ctx.Process(target=_serve, args=(child, args.rate if args.deliver else 30), daemon=True)
    server.start()
    port = parent.recv()
    with contextlib.ExitStack() as stack:
        t = time.perf_counter()
        if args.db == "postgres":
            url = stack.enter_context(fresh_pg_database(pg_server_url(), "bench_sender"))
            catalog = asyncio.run(populate(url, args))
            where = f"PostgreSQL ({asyncio.run(durability(url))})"
        else:
            tmp = stack.enter_context(tempfile.TemporaryDirectory())
            url = f"sqlite+aiosqlite:///{Path(tmp) / 'sender.sqlite3'}"
            cache = Path(args.db_cache) if args.db_cache else None
            catalog = asyncio.run(seeded_sqlite(Path(tmp) / "sender.sqlite3", cache, lambda u: populate(u, args)))
            where = "SQLite"
        sender_at = "on the probed loop" if args.on_loop else "off it"
        print(f"set-up: {args.users:,} users, {args.subs:,} subscriptions, {len(catalog)} x {args.configs:,} offers "
              f"({time.perf_counter() - t:.0f} s) on {where}; sender {sender_at}; "
              f"load average {os.getloadavg()[0]:.2f}", flush=True)
        asyncio.run(main_async(url, catalog, args, port))
        parent.send("stop")
        got = parent.recv()
        server.join(10)
        if getattr(args, "delivered", False):
            chats: Counter[int] = got["chats"]
            at: list[float] = got["at"]
            span = at[-1] - at[0] if len(at) > 1 else 0.0
            print(f"  stand-in accepted {sum(chats.values()):,} messages to {len(chats):,} chats in {span:.1f} s "
                  f"(first to last; {got['paid']:,} with allow_paid_broadcast); 429s {got['too_many']}; chats "
                  f"messaged twice or more: {sum(1 for n in chats.values() if n > 1)}", flush=True)
            # A user has heard of the poll at their chat's first message; the rest of a long digest follows at
            # Telegram's one a second per chat, whatever the overall rate.
            first: list[float] = got["first"]
            if first:
                heard = [x - at[0] for x in first]
                print(f"  every chat's first message {heard[-1]:.1f} s after the first one (half of them by "
                      f"{heard[len(heard) // 2]:.1f} s, 90 % by {heard[int(len(heard) * 0.9)]:.1f} s); messages a "
                      f"chat: mean {sum(chats.values()) / len(chats):.1f}, max {max(chats.values())}", flush=True)
            asyncio.run(check_deliveries(url, chats))
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


async def check_deliveries(url: str, chats: Counter[int]) -> None:
    from storage.alert_tables import AlertDelivery

    engine = make_engine(url)
    async with make_sessionmaker(engine)() as s:
        rows = (await s.execute(select(AlertDelivery.chat_id, AlertDelivery.state))).all()
    await engine.dispose()
    planned: Counter[int] = Counter(r.chat_id for r in rows)
    sent = Counter(r.chat_id for r in rows if r.state == "sent")
    states = Counter(r.state for r in rows)
    # lost: recorded sent but never accepted, or failed; doubled: accepted more often than planned
    lost = sum(max(0, n - chats.get(c, 0)) for c, n in sent.items()) + states.get("failed", 0)
    doubled = sum(max(0, chats[c] - planned.get(c, 0)) for c in chats)
    print(f"  deliveries planned {sum(planned.values()):,} ({len(planned):,} chats), by state {dict(states)}; "
          f"lost {lost}, doubled {doubled}", flush=True)


with contextlib.suppress(Exception):
    threading.stack_size(16 * 1024 * 1024)

if __name__ == "__main__":
    main()
