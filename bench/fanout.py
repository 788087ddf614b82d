"""Fan-out: 5,000 alerts through the real sender to the stand-in Bot API server enforcing Telegram's limits.

Telegram allows about 30 messages a second overall and 1 a second per chat; at real speed 5,000 messages take
~170 s. To keep the run short the stand-in server's limit window is scaled (`--window 0.25`: 30 messages per
0.25 s = 120 msg/s) and the sender is given the same scale (`time_scale`), so both sides keep the same ratios,
just faster. The server runs in its own process, so it does not steal the sender's CPU.

Prints delivered per second against the limit (target >= 90 %), 429s received (target < 1 % of sends), and lost
and duplicated alerts (target 0).

    python3 bench/fanout.py [--alerts 5000] [--window 0.25] [--workers 16]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # testkit/ without installing it

from aiogram import Bot
from aiogram.client.default import DefaultBotProperties
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from sqlalchemy import func, select

import gpuradar  # noqa: F401  # the wiring: installs the provider catalog (core.providers)
from bot.sender import AlertSender
from core.changes import EventKind, OfferEvent
from core.offers import Offer
from storage.alert_tables import AlertDelivery
from storage.db import make_engine, make_sessionmaker
from storage.migrate import upgrade_async
from storage.outbox import OutboxWriter
from storage.user_tables import Subscription, User

TOKEN = "123456:BENCH-token"


def _serve(conn: Any, window: float) -> None:
    """Child process: the stand-in server with Telegram's limits; reports its counts when told to stop."""
    from testkit.fake_telegram import FakeTelegram

    async def main() -> None:
        async with FakeTelegram(TOKEN) as tg:
            tg.enforce_limits(global_rate=30, per_chat_rate=1, window=window)
            conn.send(tg.port)
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(None, conn.recv)  # "stop"
            sends = tg.calls_of("sendMessage")
            per_chat = Counter(c.chat_id for c in sends if c.status == 200)
            conn.send({"sends": len(sends), "too_many": tg.stats.too_many, "accepted": tg.stats.sent,
                       "per_chat": dict(per_chat)})

    asyncio.run(main())


async def prepare(url: str, n: int) -> None:
    await upgrade_async(url)
    engine = make_engine(url)
    sm = make_sessionmaker(engine)
    async with sm() as s, s.begin():
        s.add_all(User(id=uid, chat_id=uid, lang="en", lang_chosen=True, currency="USD", tz_offset_minutes=0,
                       grouping=True, active=True) for uid in range(1, n + 1))
        await s.flush()
        s.add_all(Subscription(user_id=uid, chat_id=uid, kind="gpu", query_text="H100", gpu_ids=["h100-sxm"],
                               price_currency="USD", paused=False) for uid in range(1, n + 1))
    offer = Offer(provider="runpod", sku="h100", gpu="h100-sxm", gpu_name="H100 80GB HBM3", gpu_count=8,
                  price=19.9, currency="USD", in_stock=True, url="https://runpod.example/h100")
    ev = OfferEvent(kind=EventKind.APPEARED, key=offer.key, offer=offer, new_price=offer.price_per_gpu_hour,
                    currency="USD", new_price_usd=offer.price_per_gpu_hour, new_price_rub=offer.price_per_gpu_hour * 80,
                    id=1)
    async with sm() as s, s.begin():
        queued = await OutboxWriter().enqueue(s, [ev])
    assert queued == 1, f"expected the event queued once, got {queued}"  # its n subscribers are the sender's job
    await engine.dispose()


async def run(url: str, port: int, args: argparse.Namespace) -> tuple[float, dict[str, int], dict[str, int]]:
    engine = make_engine(url)
    sm = make_sessionmaker(engine)
    bot = Bot(TOKEN, session=AiohttpSession(api=TelegramAPIServer.from_base(f"http://127.0.0.1:{port}")),
              default=DefaultBotProperties(parse_mode="HTML"))
    sender = AlertSender(bot, sm, time_scale=args.window, workers=args.workers, poll_interval=0.05)
    t0 = time.perf_counter()
    task = asyncio.create_task(sender.run())
    while True:
        await asyncio.sleep(0.1)
        if await sender.idle():
            break
    elapsed = time.perf_counter() - t0
    await sender.stop()
    await task
    async with sm() as s:
        by_state = dict((await s.execute(select(AlertDelivery.state, func.count())
                                         .group_by(AlertDelivery.state))).all())
    stats = {"retry_after": sender.stats.retry_after, "network_errors": sender.stats.network_errors}
    await bot.session.close()
    await engine.dispose()
    return elapsed, by_state, stats


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--alerts", type=int, default=5000)
    ap.add_argument("--window", type=float, default=0.25, help="seconds the server's 1-second limit window lasts")
    ap.add_argument("--workers", type=int, default=16)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{Path(tmp) / 'fanout.sqlite3'}"
        asyncio.run(prepare(url, args.alerts))
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe()
        server = ctx.Process(target=_serve, args=(child, args.window), daemon=True)
        server.start()
        port = parent.recv()
        elapsed, by_state, stats = asyncio.run(run(url, port, args))
        parent.send("stop")
        counts = parent.recv()
        server.join(10)

    limit = 30 / args.window
    rate = args.alerts / elapsed
    per_chat = counts["per_chat"]
    lost = sum(1 for uid in range(1, args.alerts + 1) if per_chat.get(uid, 0) == 0)
    duplicated = sum(n - 1 for n in per_chat.values() if n > 1)
    print(f"alerts: {args.alerts:,}   limit: 30 msg per {args.window} s window = {limit:.0f} msg/s "
          f"(Telegram's 30/s, time scaled x{1 / args.window:.0f})")
    print(f"delivered in {elapsed:.1f} s: {rate:.1f} msg/s = {rate / limit * 100:.1f} % of the limit (target >= 90 %)")
    print(f"sends: {counts['sends']:,}   429 received: {counts['too_many']} "
          f"({counts['too_many'] / max(1, counts['sends']) * 100:.2f} % of sends, target < 1 %)")
    print(f"lost: {lost}   duplicated: {duplicated}   deliveries: {by_state}   sender: {stats}")


if __name__ == "__main__":
    main()
