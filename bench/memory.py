"""Memory of a running bot: RSS idle (App started, offers ingested) and after 10,000 distinct inline queries, through
the real stack (App, aiogram long polling, inline handler, caches) against the stand-in Bot API server.
Target: under 300 MB after the queries. Also prints the import and start-up cost of `gpuradar estimate`.

    python3 bench/memory.py [--queries 10000]
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

from bench.inline import offers  # noqa: E402
from core.offers import Rates  # noqa: E402
from core.polls import PollResult, PollStatus  # noqa: E402
from gpuradar.app import App  # noqa: E402
from gpuradar.settings import Settings  # noqa: E402
from tests.support.fake_telegram import FakeTelegram  # noqa: E402

SIZES = ["1B", "3B", "7B", "8B", "13B", "14B", "32B", "34B", "70B", "72B", "405B"]
METHODS = ["LoRA", "QLoRA", "full fine-tune", "inference", "lora r16", "qlora 4bit"]


def rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def distinct_queries(n: int, rng: random.Random) -> list[str]:
    out: set[str] = set()
    while len(out) < n:
        ctx = rng.choice(["", f" ctx {rng.choice([2, 4, 8, 16, 32])}k"])
        extra = rng.choice(["", f" {rng.randint(1, 500)}k examples", f" batch {rng.randint(1, 64)}",
                            f" {rng.randint(1, 10)} epochs"])
        out.add(f"{rng.choice(SIZES)} {rng.choice(METHODS)}{ctx}{extra}")
    return sorted(out)


async def main(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{Path(tmp) / 'memory.sqlite3'}"
        async with FakeTelegram() as tg:
            app = App(Settings(database_url=url, bot_token=tg.token, telegram_api_url=tg.base_url), scrape=False,
                      polling_timeout=1)
            await app.start()
            try:
                at = datetime(2026, 1, 1, tzinfo=UTC)
                for provider, rows in offers(360).items():
                    await app.ingest(PollResult(provider=provider, status=PollStatus.OK, offers=rows, started_at=at,
                                                finished_at=at + timedelta(seconds=1)), Rates(rub_per={"USD": 80.0}))
                idle = rss_mb()
                queries = distinct_queries(args.queries, rng)
                t0 = time.perf_counter()
                for i in range(0, len(queries), 50):  # 50 at a time, as many users typing at once would send them
                    ids = [tg.inline_query(q, user_id=5000 + (i + j) % 300) for j, q in enumerate(queries[i:i + 50])]
                    for uid in ids:
                        call = await tg.wait_for("answerInlineQuery", inline_query_id=str(uid), timeout=30)
                        # The stand-in runs in this process and records every request: forget the answer's body,
                        # or the RSS measured would be mostly the stand-in's log of ~100 KB answers.
                        call.params = {"inline_query_id": call.params.get("inline_query_id")}
                    for c in tg.calls:
                        if c.method == "getUpdates":
                            c.params = {}
                took = time.perf_counter() - t0
                after = rss_mb()
            finally:
                await app.stop()
    print(f"RSS idle (bot started, {sum(1 for _ in offers(360).values()) * 360:,} offers cached): {idle:.0f} MB")
    print(f"RSS after {len(queries):,} distinct inline queries ({took:.0f} s): {after:.0f} MB "
          f"(target < 300 MB: {'met' if after < 300 else 'MISSED'})")
    cmd = [sys.executable, "-X", "importtime", "-c", "import gpuradar.commands.estimate"]
    imports = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT).stderr.splitlines()
    heavy = [line for line in imports if "sqlalchemy.ext.asyncio" in line and line.rstrip().endswith("asyncio")]
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "gpuradar.cli", "estimate", "13B LoRA"], capture_output=True, cwd=ROOT)
    print(f"`gpuradar estimate \"13B LoRA\"`: {time.perf_counter() - t0:.2f} s wall, SQLAlchemy's asyncio extension "
          f"imported: {'yes' if heavy else 'no'}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=random.randrange(1 << 30))
    asyncio.run(main(ap.parse_args()))
