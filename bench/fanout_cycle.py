"""One scrape cycle's alert fan-out at deployment scale, through the real path, then its delivery.

Set-up: `--users` users (default 50,000) with `--subs` subscriptions (default 100,000: the realistic mix of
bench/match.py — GPU watches and workload watches, price caps in RUB and USD, some pinned to providers, counts,
billing), `--providers` providers (default 10) each with a Vast-sized poll of `--configs` configurations
(default 1,440, the size of a real Vast.ai poll), all stored by a trusted first poll.

Phase 1 (what the issue's "< 5 s" is about): the next cycle, with `--changed` (5 %) of every provider's
configurations changed (a third appear, a third get cheaper, the rest sell out or rise), is recorded through
`storage.ingest.record_poll` with the real `storage.outbox.OutboxWriter` hook, provider after provider, as the
leader's ingest does. The figure is the time from the first poll handed to ingest to the last outbox commit.

Phase 2: the real `bot.sender.AlertSender` drains what phase 1 queued into the stand-in Bot API server, which
enforces Telegram's limits (30 messages per window overall, 1 per chat per window) with its window scaled by
`--window` so the run stays short (both sides scaled alike; default 0.25 s, time x4 as in bench/fanout.py). Prints
the delivery rate against the limit (target >= 90 %), and alerts lost or doubled (target 0) by comparing what the
stand-in accepted per chat with the deliveries the database recorded; then where the time went (the gaps between
accepted messages, 429s and how the sender took them, its CPU per message). At x10 (`--window 0.1`, 300 msg/s) the
sender's own CPU (~3 ms a digest message: aiogram's request and answer models, the form encoding, rendering) needs
most of a core, so on a small shared machine that run measures the machine more than the sender; at Telegram's real
30 msg/s the same work takes under a tenth of a core (printed). `--deliver-users N` limits phase 2 to N users'
alerts (the others' are set aside after phase 1, outside the timings), since at Telegram's real 30 msg/s 50,000
users take half an hour.

    python3 bench/fanout_cycle.py [--db sqlite|postgres|both] [--users 50000] [--subs 100000]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import multiprocessing as mp
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import select, text  # noqa: E402

import gpuradar  # noqa: E402, F401  # the wiring: installs the provider catalog (core.providers)
from bench._common import T0, store_users_and_subscriptions  # noqa: E402
from bench.match import PROVIDERS as MATCH_PROVIDERS  # noqa: E402
from core.gpus import GPUS  # noqa: E402
from core.offers import Billing, Offer, Rates  # noqa: E402
from core.polls import PollResult, PollStatus  # noqa: E402
from storage.db import make_engine, make_sessionmaker  # noqa: E402
from storage.ingest import record_poll  # noqa: E402
from storage.migrate import upgrade_async  # noqa: E402
from storage.outbox import OutboxWriter, delivery_counts  # noqa: E402
from storage.user_tables import Subscription  # noqa: E402

TOKEN = "123456:BENCH-token"
# A digest's closing count (texts alert_more, both languages: "➕ 34 more offers match", "➕ И ещё 34 подходящих").
MORE_LINE = r"➕\D*?(\d[\d\s,.]*)"
RATES = Rates(rub_per={"USD": 80.0, "EUR": 90.0})
PROVIDER_NAMES = [*MATCH_PROVIDERS, "lambda", "datacrunch", "tensordock"]


def provider_offers(name: str, n: int, rng: random.Random) -> list[Offer]:
    out = []
    for i in range(n):
        gpu = rng.choice(GPUS)
        usd = (0.15 + 0.022 * gpu.usable_gib) * rng.uniform(0.6, 1.4)
        count = rng.choice([1, 1, 2, 4, 8])
        out.append(Offer(provider=name, sku=f"{gpu.id}-{i}", gpu=gpu.id, gpu_name=gpu.name, gpu_count=count,
                         location=rng.choice(["ru-1", "us-east", "eu-west", "ca"]),
                         billing=rng.choice([Billing.HOURLY, Billing.HOURLY, Billing.MONTHLY]),
                         price=round(usd * count, 4), currency="USD", in_stock=True,
                         url=f"https://{name}.example/{gpu.id}-{i}"))
    return out


def change(offers: list[Offer], share: float, rng: random.Random) -> list[Offer]:
    """The next poll: `share` of the configurations changed (new ones appear, some cheaper, sold out, dearer)."""
    out = list(offers)
    picked = rng.sample(range(len(out)), int(len(out) * share))
    for j, i in enumerate(picked):
        o = out[i]
        mode = j % 6
        if mode in (0, 1):  # appears: a configuration not listed before
            out.append(o.model_copy(update={"sku": o.sku + "-new", "price": round(o.price * 0.97, 4),
                                            "url": o.url + "-new"}))
        elif mode in (2, 3):
            out[i] = o.model_copy(update={"price": round(o.price * 0.85, 4)})  # 15 % cheaper
        elif mode == 4:
            out[i] = o.model_copy(update={"in_stock": False})
        else:
            out[i] = o.model_copy(update={"price": round(o.price * 1.2, 4)})
    return out


def poll(name: str, offers: list[Offer], at: datetime) -> PollResult:
    return PollResult(provider=name, status=PollStatus.OK, offers=offers, started_at=at,
                      finished_at=at + timedelta(seconds=2))


async def populate(url: str, args: argparse.Namespace) -> dict[str, list[Offer]]:
    await upgrade_async(url)
    engine = make_engine(url)
    sm = make_sessionmaker(engine)
    await store_users_and_subscriptions(sm, args.users, args.subs, args.seed)
    rng = random.Random(args.seed + 1)
    catalog = {name: provider_offers(name, args.configs, rng) for name in PROVIDER_NAMES[:args.providers]}
    for name, offers in catalog.items():
        await record_poll(sm, poll(name, offers, T0), rates=RATES)
    await engine.dispose()
    return catalog


async def cycle(url: str, catalog: dict[str, list[Offer]], args: argparse.Namespace) -> tuple[float, int, int]:
    engine = make_engine(url)
    sm = make_sessionmaker(engine)
    writer = OutboxWriter()
    rng = random.Random(args.seed + 2)
    nxt = {name: change(offers, args.changed, rng) for name, offers in catalog.items()}
    at = T0 + timedelta(minutes=5)
    events = 0
    t0 = time.perf_counter()
    for name, offers in nxt.items():
        events += len(await record_poll(sm, poll(name, offers, at), rates=RATES, on_events=writer))
    elapsed = time.perf_counter() - t0
    queued = writer.stats["queued"]
    await engine.dispose()
    return elapsed, events, queued


async def expected(url: str, n: int) -> dict[int, set[str]]:
    """Which offers (order links) each of the first `n` users must hear about: every queued event checked against
    each of their subscriptions with `Watch.matches` (the plain definition, not the index the sender uses)."""
    from core.alerts import AlertEvent
    from core.matching import Target, watch_from_row
    from storage.alert_tables import ALERT_ROW_KINDS, AlertEventRow

    engine = make_engine(url)
    sm = make_sessionmaker(engine)
    async with sm() as s:
        events = [AlertEvent.model_validate(p) for p in (await s.scalars(
            select(AlertEventRow.payload).where(AlertEventRow.event_kind.in_(ALERT_ROW_KINDS)))).all()]
        subs = (await s.execute(select(Subscription).where(Subscription.user_id <= n))).scalars().all()
    await engine.dispose()
    targets = [(e.offer.url, Target.from_offer(e.offer, e.price_rub, e.price_usd)) for e in events]
    out: dict[int, set[str]] = {}
    for sub in subs:
        w = watch_from_row(id=sub.id, gpu_ids=sub.gpu_ids, min_gib_by_count=sub.min_gib_by_count,
                           max_price=sub.max_price, price_currency=sub.price_currency,
                           price_basis=sub.price_basis, providers=sub.providers,
                           gpu_count=sub.gpu_count, billing=sub.billing, region=sub.region)
        hits = {u for u, t in targets if w.matches(t)}
        if hits:
            out.setdefault(sub.chat_id, set()).update(hits)
    return out


async def keep_users(url: str, n: int) -> None:
    """Phase 2 delivers to the first `n` users only: the others are set aside (outside the timings) the way a
    blocked chat is, so the sender drops their events without a message."""
    engine = make_engine(url)
    async with engine.begin() as conn:
        await conn.execute(text("UPDATE users SET active = false WHERE id > :n"), {"n": n})
    await engine.dispose()


def _serve(conn: Any, window: float) -> None:
    from testkit.fake_telegram import FakeTelegram

    async def main() -> None:
        async with FakeTelegram(TOKEN) as tg:
            tg.enforce_limits(global_rate=30, per_chat_rate=1, window=window)
            conn.send(tg.port)
            await asyncio.get_running_loop().run_in_executor(None, conn.recv)
            ok = [c for c in tg.calls_of("sendMessage") if c.status == 200]
            conn.send({"too_many": tg.stats.too_many, "texts": Counter((c.chat_id, c.text) for c in ok),
                       "accepted_at": sorted(c.at for c in ok)})

    asyncio.run(main())


async def deliver(url: str, port: int, args: argparse.Namespace) -> tuple[float, dict[str, int], float, Any, float]:
    from aiogram import Bot
    from aiogram.client.default import DefaultBotProperties
    from aiogram.client.session.aiohttp import AiohttpSession
    from aiogram.client.telegram import TelegramAPIServer

    from bot.sender import AlertSender

    engine = make_engine(url)
    sm = make_sessionmaker(engine)
    bot = Bot(TOKEN, session=AiohttpSession(api=TelegramAPIServer.from_base(f"http://127.0.0.1:{port}")),
              default=DefaultBotProperties(parse_mode="HTML"))
    # Slots are taken ahead by waiting workers: 16 keep up with 30 msg/s; a stand-in x4 faster needs 4x as many.
    sender = AlertSender(bot, sm, time_scale=args.window, workers=int(16 / args.window), poll_interval=0.05,
                         clock=lambda: T0 + timedelta(minutes=6))
    task = asyncio.create_task(sender.run())
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    while True:
        await asyncio.sleep(0.2)
        if await sender.idle():
            break
    elapsed = time.perf_counter() - t0
    cpu = time.process_time() - cpu0  # this process: the sender, its SQLite thread, and these idle checks
    await sender.stop()
    await task
    async with sm() as s:
        counts = await delivery_counts(s)
    await bot.session.close()
    await engine.dispose()
    return elapsed, counts, cpu, sender.stats, t0


def run_one(url: str, label: str, args: argparse.Namespace) -> None:
    t = time.perf_counter()
    catalog = asyncio.run(populate(url, args))
    print(f"[{label}] set-up: {args.users:,} users, {args.subs:,} subscriptions, {len(catalog)} providers x "
          f"{args.configs:,} configurations stored ({time.perf_counter() - t:.0f} s)")
    elapsed, events, queued = asyncio.run(cycle(url, catalog, args))
    print(f"[{label}] cycle: {events:,} events, {queued:,} alerting events queued; poll -> outbox "
          f"committed: {elapsed:.2f} s (target < 5 s: {'met' if elapsed < 5 else 'MISSED'})")
    if args.no_deliver:
        return
    if args.deliver_users:
        asyncio.run(keep_users(url, args.deliver_users))
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    server = ctx.Process(target=_serve, args=(child, args.window), daemon=True)
    server.start()
    port = parent.recv()
    want = asyncio.run(expected(url, args.deliver_users or args.users))
    seconds, counts, cpu, stats, started = asyncio.run(deliver(url, port, args))
    parent.send("stop")
    got = parent.recv()
    server.join(10)
    texts: Counter[tuple[int, str]] = got["texts"]
    accepted = sum(texts.values())
    heard: dict[int, Counter[str]] = {}
    counted: Counter[int] = Counter()  # offers a chat's digest counted on its closing line instead of naming them
    for (chat, body), times in texts.items():
        for link in re.findall(r'href="([^"]+)"', body):
            heard.setdefault(chat, Counter())[link] += times
        for more in re.findall(MORE_LINE, body):
            counted[chat] += int(re.sub(r"\D", "", more)) * times
    # A digest names what fits in SENDER__DIGEST_MESSAGES messages and counts the rest ("➕ 34 more offers match:
    # /offers", bot.alert_texts.pack_digest): an offer is lost when it is neither named nor counted.
    lost = sum(max(0, len(links) - len(links & set(heard.get(chat, {}))) - counted[chat])
               for chat, links in want.items())
    doubled = sum(n - 1 for c in heard.values() for n in c.values() if n > 1)
    extra = sum(len(set(c) - want.get(chat, set())) for chat, c in heard.items())
    pairs = sum(len(v) for v in want.values())
    limit = 30 / args.window
    rate = accepted / seconds if seconds else 0.0
    print(f"[{label}] delivery to {len(want):,} users ({pairs:,} (user, offer) pairs, each offer named once per "
          f"user): {accepted:,} messages in {seconds:.1f} s = {rate:.0f} msg/s = {rate / limit * 100:.1f} % of the "
          f"limit ({limit:.0f} msg/s: Telegram's 30/s, time x{1 / args.window:.0f}; target >= 90 %); 429s: "
          f"{got['too_many']}; offers named {sum(len(c) for c in heard.values()):,}, counted on a digest's last line "
          f"{sum(counted.values()):,}; lost: {lost}; doubled: {doubled}; not expected: {extra}; deliveries: {counts}")
    at: list[float] = got["accepted_at"]
    if len(at) > 1:
        slot = args.window / 30
        gaps = [b - a for a, b in itertools.pairwise(at)]
        idle = sum(g - slot for g in gaps if g > 2 * slot)
        # perf_counter is the system's monotonic clock on Linux: the stand-in's stamps and ours compare.
        print(f"[{label}] where the time went: sender start to first accepted message {at[0] - started:.2f} s; "
              f"first to last {at[-1] - at[0]:.1f} s "
              f"({(len(at) - 1) / (at[-1] - at[0]) / limit * 100:.1f} % of the limit); gaps over two slots "
              f"({2 * slot * 1000:.1f} ms) add up to {idle:.1f} s, the longest {max(gaps) * 1000:.0f} ms; 429s "
              f"answered to the sender: {stats.retry_after} ({stats.retry_after_chat} taken as one chat's); "
              f"sender process CPU {cpu:.1f} s = {cpu / accepted * 1000:.2f} ms a message (at Telegram's real "
              f"30 msg/s: {cpu / accepted * 30 * 100:.0f} % of a core); load average {os.getloadavg()[0]:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", choices=["sqlite", "postgres", "both"], default="sqlite")
    ap.add_argument("--users", type=int, default=50_000)
    ap.add_argument("--subs", type=int, default=100_000)
    ap.add_argument("--providers", type=int, default=10)
    ap.add_argument("--configs", type=int, default=1_440)
    ap.add_argument("--changed", type=float, default=0.05)
    ap.add_argument("--window", type=float, default=0.25, help="seconds the stand-in's one-second window lasts")
    ap.add_argument("--deliver-users", type=int, default=2_000,
                    help="phase 2 delivers the alerts of this many users (0: all)")
    ap.add_argument("--no-deliver", action="store_true")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("BENCH_SEED", "1")))
    args = ap.parse_args()
    if args.db in ("sqlite", "both"):
        with tempfile.TemporaryDirectory() as tmp:
            run_one(f"sqlite+aiosqlite:///{Path(tmp) / 'cycle.sqlite3'}", "SQLite", args)
    if args.db in ("postgres", "both"):
        url = os.environ.get("TEST_DATABASE_URL") or subprocess.run(
            [str(ROOT / ".ci" / "postgres.sh")], capture_output=True, text=True, check=True).stdout.strip()
        with fresh_pg_database(url, "bench_cycle") as database:
            run_one(database, "PostgreSQL", args)


@contextlib.contextmanager
def fresh_pg_database(url: str, prefix: str) -> Iterator[str]:
    """A new empty database on the server behind `url`, dropped afterwards: the bench never touches other
    databases and leaves the server as it found it (a 100,000-subscription database is ~1 GB)."""
    name = f"{prefix}_{os.getpid()}"
    _pg_admin(url, f"DROP DATABASE IF EXISTS {name}", f"CREATE DATABASE {name}")
    try:
        yield url.rsplit("/", 1)[0] + "/" + name
    finally:
        _pg_admin(url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _pg_admin(url: str, *statements: str) -> None:
    """Run statements outside a transaction on the server behind `url` (the bench never touches other databases)."""

    async def run() -> None:
        engine = make_engine(url, isolation_level="AUTOCOMMIT")
        async with engine.connect() as conn:
            for statement in statements:
                await conn.execute(text(statement))
        await engine.dispose()

    asyncio.run(run())


if __name__ == "__main__":
    main()
