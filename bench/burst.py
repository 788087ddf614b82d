"""A burst of replies under Telegram's limits: 2,000 `/estimate` from 500 users (half of them known to the bot,
half writing for the first time) arriving at once, through the real stack (App, aiogram long polling, the estimate
handler, the database) against the stand-in Bot API server enforcing Telegram's limits (30 messages per window
overall, 1 per chat per window).

Prints whether every request got its answer (target: all, 0 dropped), the time from the first update to the last
answer (drain), and the 429s the stand-in answered. The stand-in's one-second window is scaled by `--window`
(0.25: the same limits four times faster) and the bot's limiter is given the same scale, so the run stays short;
the drain time is also printed in Telegram seconds.

    python3 bench/burst.py [--users 500] [--requests 2000] [--window 0.25]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpuradar.app import App
from gpuradar.settings import SenderSettings, Settings
from testkit.fake_telegram import FakeTelegram

PHRASES = ["13B LoRA", "70B QLoRA ctx 8k", "7B full fine-tune", "Qwen2.5-72B inference 32k", "mixtral qlora",
           "llama-3.1-8b lora r16 seq 4096", "инференс 70B int4, контекст 32k", "405B QLoRA на 8 GPU", "34B LoRA"]


async def main(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{Path(tmp) / 'burst.sqlite3'}"
        async with FakeTelegram() as tg:
            w = args.window
            settings = Settings(database_url=url, bot_token=tg.token, telegram_api_url=tg.base_url,
                                sender=SenderSettings(global_rate=29.5 / w, chat_interval=1.05 * w, window=w))
            app = App(settings, scrape=False, polling_timeout=1)
            await app.start()
            try:
                users = list(range(10_000, 10_000 + args.users))
                known = users[: args.users // 2]
                for uid in known:  # these have talked to the bot before
                    tg.message("/start", user_id=uid)
                def greeted(_call: object) -> bool:
                    return len({x.chat_id for x in tg.calls_of("sendMessage")}) >= len(known)

                await tg.wait_for("sendMessage", timeout=120, predicate=greeted)
                tg.enforce_limits(global_rate=30, per_chat_rate=1, window=w)
                before = Counter(c.chat_id for c in tg.calls_of("sendMessage") if c.status == 200)
                asked: Counter[int] = Counter()
                t0 = time.perf_counter()
                for _ in range(args.requests):
                    uid = rng.choice(users)
                    asked[uid] += 1
                    tg.message(f"/estimate {rng.choice(PHRASES)}", user_id=uid, lang=rng.choice(["en", "ru"]))

                def answered() -> Counter[int]:
                    now = Counter(c.chat_id for c in tg.calls_of("sendMessage") if c.status == 200)
                    return Counter({u: now[u] - before[u] for u in asked})

                deadline = time.perf_counter() + args.timeout
                while time.perf_counter() < deadline:
                    got = answered()
                    if all(got[u] >= n for u, n in asked.items()):
                        break
                    await asyncio.sleep(0.2)
                drain = time.perf_counter() - t0
                got = answered()
            finally:
                await app.stop()
    dropped = sum(max(0, n - got[u]) for u, n in asked.items())
    users_unanswered = sum(1 for u, n in asked.items() if got[u] < n)
    print(f"burst: {args.requests:,} /estimate from {len(asked)} users ({args.users // 2} known, the rest new), "
          f"Telegram's limits scaled x{1 / args.window:.0f}")
    print(f"answered: {sum(min(n, got[u]) for u, n in asked.items()):,} / {args.requests:,}; dropped: {dropped} "
          f"(target 0); users without every answer: {users_unanswered}")
    print(f"drain: {drain:.1f} s here = {drain / args.window:.0f} s at Telegram's real limits "
          f"(the floor is {args.requests / 30:.0f} s: 30 messages a second); 429s answered by the stand-in: "
          f"{tg.stats.too_many}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=500)
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--window", type=float, default=0.25)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--seed", type=int, default=random.randrange(1 << 30))
    asyncio.run(main(ap.parse_args()))
