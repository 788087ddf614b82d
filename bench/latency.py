"""Latency: a provider's payload changes on the local provider server -> the alert reaches the stand-in Telegram
server. The real application (`gpuradar.app.App` with the alert hook) polls RunPod every 5 s through the real
scraper, records the change, queues the alert in the same transaction and the sender delivers it.

Each sample lowers one offer's price by 10 % at a random moment of the poll cycle (a price-drop alert) and times
until that alert's sendMessage arrives at the stand-in. Two offers take turns (an H100 watched by one user, an
A100 by another), and the payload of each sample puts the other offer back to its price: the poll that records a
drop also records the other's rise (a rise alerts nobody), so no sample waits for a separate "back up" poll, and
every drop is measured from the price the previous poll stored. The alert cooldown is off for the bench, so every
drop alerts. The seed is random per run (printed; --seed repeats a run). Prints p50 / p99 (target: p99 under the
interval plus 5 s).

    python3 bench/latency.py [--samples 100] [--interval 1] [--seed N]
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
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # testkit/ without installing it

from datetime import timedelta

from core.alerts import AlertPolicy
from gpuradar.app import App, alert_hook
from gpuradar.settings import Settings
from storage.user_tables import Subscription, User
from testkit.fake_telegram import FakeTelegram
from testkit.provider_server import RUNPOD_PATH, ProviderServer

# (RunPod's GPU type id, our catalog id, the chat whose subscription watches it)
WATCHED = (("NVIDIA H100 80GB HBM3", "h100-sxm", 7), ("NVIDIA A100-SXM4-80GB", "a100-80gb", 8))
PRICE = 3.0


def runpod(dropped: int | None) -> dict[str, Any]:
    """The payload with every watched GPU at PRICE, except `dropped` (an index of WATCHED) 10 % cheaper."""
    types = []
    for i, (type_id, _, _) in enumerate(WATCHED):
        price = round(PRICE * 0.9, 4) if i == dropped else PRICE
        types.append({"id": type_id, "displayName": type_id, "memoryInGb": 80, "secureCloud": True,
                      "communityCloud": False, "securePrice": price, "communityPrice": None,
                      "lowestPrice": {"stockStatus": "High", "maxUnreservedGpuCount": 8, "uninterruptablePrice": price,
                                      "minVcpu": 16, "minMemory": 64}})
    return {"data": {"secure": types, "community": []}}


async def main(args: argparse.Namespace) -> list[float]:
    rng = random.Random(args.seed)
    async with FakeTelegram() as tg, ProviderServer() as server:
        server.serve(RUNPOD_PATH, runpod(None))
        overrides: dict[str, Any] = {name: {"enabled": False} for name in
                                     ("selectel", "hostkey", "vastai", "cloudrift", "vultr")}
        overrides["runpod"] = {"interval": args.interval, "jitter": 0}
        settings = Settings(database_url=f"sqlite+aiosqlite:///{Path.cwd() / 'latency.sqlite3'}",
                            bot_token=tg.token, telegram_api_url=tg.base_url,
                            providers=server.providers_settings(**overrides),
                            fx_url=f"{server.base_url}/no-rates-here")  # never the internet: fallback rates
        app = App(settings, alerts=alert_hook(AlertPolicy(cooldown=timedelta(0))), scrape=True, polling_timeout=1)
        await app.start()
        assert app.sessionmaker is not None
        async with app.sessionmaker() as s, s.begin():
            for _, _gpu, chat in WATCHED:
                s.add(User(id=chat, chat_id=chat, lang="en", lang_chosen=True, currency="USD", tz_offset_minutes=0,
                           grouping=True, active=True))
            await s.flush()
            for _, gpu, chat in WATCHED:
                s.add(Subscription(user_id=chat, chat_id=chat, kind="gpu", query_text=gpu, gpu_ids=[gpu],
                                   price_currency="USD", paused=False))
        await asyncio.sleep(args.interval + 1)  # the baseline poll has happened
        latencies: list[float] = []
        try:
            for i in range(args.samples):
                dropped = i % len(WATCHED)
                await asyncio.sleep(rng.uniform(0, args.interval))  # a random moment of the poll cycle
                server.serve(RUNPOD_PATH, runpod(dropped))  # this one cheaper; the previous one back up
                changed = time.perf_counter()
                call = await tg.wait_for("sendMessage", chat_id=WATCHED[dropped][2], timeout=args.interval * 4 + 10,
                                         predicate=lambda c: "Cheaper" in c.text)
                latencies.append(call.at - changed)
                print(f"  sample {i + 1:3d}: {latencies[-1]:.2f} s", flush=True)
        finally:
            await app.stop()
        return latencies


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=100)
    ap.add_argument("--interval", type=int, default=1, help="RunPod poll interval, seconds")
    ap.add_argument("--seed", type=int, default=random.randrange(1 << 30))
    arguments = ap.parse_args()
    print(f"seed {arguments.seed}")
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)  # the database and any rates cache live and die here
        lat = asyncio.run(main(arguments))
    print(f"payload change -> alert at Telegram, poll interval {arguments.interval} s, {len(lat)} samples: "
          f"p50 {statistics.median(lat):.2f} s, p99 {percentile(lat, 0.99):.2f} s, max {max(lat):.2f} s "
          f"(target p99 < {arguments.interval + 5} s)")
