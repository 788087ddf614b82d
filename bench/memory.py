"""Memory of the running bot: RSS of a real `gpuradar run --no-scrape` process (a replica answering users; any
child process it starts is counted too), idle and after 10,000 distinct inline queries, against the stand-in Bot
API server. Target: under 300 MB after the queries. Also prints the start-up time of `gpuradar estimate`.

The bot runs in its own process, so the figure is the bot's alone: neither this driver nor the stand-in server (which
records every request it gets) is in it. Its database is a migrated SQLite file where storage's ingest
(`storage.ingest.record_poll`, the function the leader's ingest runs) has recorded 1,440 offers from four providers
first; the bot loads them into its offer cache on start, as every replica does.

`--leader` measures the replica that holds the scrapers' lease instead (`gpuradar run`, scraping): it polls a
Vast-sized marketplace on the stand-in provider server (10,000 listings, 5 % of the prices changing between polls)
every 10 s throughout, and records the polls in its ingest child process, whose RSS is added to the figure.

    python3 bench/memory.py [--queries 10000] [--seed N] [--leader] [--postgres]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._common import stop_bot  # noqa: E402
from bench.inline import offers  # noqa: E402
from bench.scrape import _fresh_pg, vast_payload  # noqa: E402
from core.offers import Rates  # noqa: E402
from core.polls import PollResult, PollStatus  # noqa: E402
from scrapers.registry import PROVIDERS  # noqa: E402
from storage.db import make_engine, make_sessionmaker  # noqa: E402
from storage.ingest import record_poll  # noqa: E402
from storage.migrate import upgrade_async  # noqa: E402
from testkit.fake_telegram import FakeTelegram  # noqa: E402
from testkit.provider_server import VAST_PATH, ProviderServer  # noqa: E402

TARGET_MB = 300
OFFERS_PER_PROVIDER = 360
SIZES = ["1B", "3B", "7B", "8B", "13B", "14B", "32B", "34B", "70B", "72B", "405B"]
METHODS = ["LoRA", "QLoRA", "full fine-tune", "inference", "lora r16", "qlora 4bit"]
MODELS = ["llama-3.1-8b", "qwen2.5-72b", "mixtral", "gemma-3-27b", "deepseek r1", "qwen3-30b-a3b", "phi-4",
          "mistral nemo", "yi 1.5 34b", "gpt-oss-20b"]


def _tree(pid: int) -> list[int]:
    """`pid` and every process under it, the bot first."""
    out: list[int] = []
    todo = [pid]
    while todo:
        p = todo.pop(0)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue  # ended meanwhile
        out.append(p)
    return out


def _field_mb(path: str, name: str) -> float | None:
    try:
        with open(path) as f:
            return next(int(line.split()[1]) for line in f if line.startswith(name)) / 1024
    except (FileNotFoundError, ProcessLookupError, StopIteration):
        return None  # ended meanwhile


def process_tree_rss_mb(pid: int) -> tuple[float, list[float]]:
    """RSS (MB) of `pid` and every process under it: the total, and each process's, the bot's first."""
    each = [mb for p in _tree(pid) if (mb := _field_mb(f"/proc/{p}/status", "VmRSS:")) is not None]
    return sum(each), each


def process_tree_pss_mb(pid: int) -> float:
    """PSS (MB) of `pid` and every process under it, summed: each page the processes share (the interpreter's and
    the extension modules' code, the pages a fork left shared) counted once across them, where an RSS sum counts it
    in every process that maps it; what the machine gives the leader as a whole."""
    return sum(mb for p in _tree(pid) if (mb := _field_mb(f"/proc/{p}/smaps_rollup", "Pss:")) is not None)


def _split(each: list[float]) -> str:
    return "" if len(each) < 2 else " (" + " + ".join(f"{mb:.0f}" for mb in each) + ": the bot, then its children)"


def distinct_queries(n: int, rng: random.Random) -> list[str]:
    """`n` different phrases a user could type: sizes or model names, methods, contexts, datasets, batches."""
    out: set[str] = set()
    while len(out) < n:
        what = rng.choice(SIZES) if rng.random() < 0.7 else rng.choice(MODELS)
        ctx = rng.choice(["", f" ctx {rng.choice([2, 4, 8, 16, 32])}k"])
        extra = rng.choice(["", f" {rng.randint(1, 500)}k examples", f" batch {rng.randint(1, 64)}",
                            f" {rng.randint(1, 10)} epochs"])
        out.add(f"{what} {rng.choice(METHODS)}{ctx}{extra}")
    return rng.sample(sorted(out), n)


async def record_offers(url: str) -> int:
    await upgrade_async(url)
    engine = make_engine(url)
    try:
        sessionmaker = make_sessionmaker(engine)
        at = datetime.now(UTC) - timedelta(minutes=1)
        n = 0
        for provider, rows in offers(OFFERS_PER_PROVIDER).items():
            await record_poll(sessionmaker, PollResult(provider=provider, status=PollStatus.OK, offers=rows,
                                                       started_at=at, finished_at=at + timedelta(seconds=1)),
                              rates=Rates(rub_per={"USD": 80.0}))
            n += len(rows)
        return n
    finally:
        await engine.dispose()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def bot_env(url: str, tg: FakeTelegram, provider_url: str | None = None) -> dict[str, str]:
    ours = ("PROVIDERS__", "WEBHOOK__", "WEB__", "LEASE__", "SENDER__", "LOG__", "DATABASE_URL", "BOT_TOKEN",
            "TELEGRAM_API_URL", "FX_", "ADMIN_IDS", "HF_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(ours)}
    env.update({"DATABASE_URL": url, "BOT_TOKEN": tg.token, "TELEGRAM_API_URL": tg.base_url,
                "WEB__HOST": "127.0.0.1", "WEB__PORT": str(free_port()), "LOG__LEVEL": "WARNING",
                "HF_ENDPOINT": "http://127.0.0.1:9", "PYTHONPATH": str(ROOT)})
    for name in PROVIDERS:  # nothing polls anything but the stand-in's marketplace (with --leader)
        env[f"PROVIDERS__{name.upper()}__ENABLED"] = "false"
    if provider_url is not None:
        env.update({"PROVIDERS__VASTAI__ENABLED": "true", "PROVIDERS__VASTAI__BASE_URL": provider_url,
                    "PROVIDERS__VASTAI__INTERVAL": str(POLL_EVERY), "PROVIDERS__VASTAI__JITTER": "0",
                    "PROVIDERS__VASTAI__LIMIT": "10000", "FX_URL": f"{provider_url}/no-rates-here"})
    return env


POLL_EVERY = 10  # seconds between the leader's polls of the marketplace (Vast allows 10 requests a minute)


async def churn(server: ProviderServer, rng: random.Random) -> None:
    """Keeps the marketplace moving: every poll interval 5 % of the listings change price."""
    payload = vast_payload(10_000, rng)
    payload["truncated"] = False
    while True:
        server.serve(VAST_PATH, payload)
        await asyncio.sleep(POLL_EVERY)
        for row in rng.sample(payload["offers"], len(payload["offers"]) // 20):
            row["dph_total"] = round(row["dph_total"] * rng.uniform(0.8, 1.2), 4)


class MarketProcess:
    """`churn`'s marketplace served from a process of its own (multiprocessing, spawned), for a driver that times
    things on its loop (bench/soak.py stamps inline queries and answers there): a 10,000-listing payload copied and
    encoded every poll interval held that loop 60-170 ms, which landed on whatever answer arrived meanwhile.

        async with MarketProcess(seed) as market:   # market.base_url: the stand-in provider server's
            ...; market.polls()                      # requests to VAST_PATH so far
    """

    def __init__(self, seed: int) -> None:
        import multiprocessing

        self._context = multiprocessing.get_context("spawn")
        self._polls = self._context.Value("i", 0)
        self._seed = seed
        self._process: Any = None
        self.base_url = ""

    async def __aenter__(self) -> MarketProcess:
        parent, child = self._context.Pipe()
        self._process = self._context.Process(target=_serve_market, args=(child, self._polls, self._seed),
                                              daemon=True)
        self._process.start()
        self.base_url = await asyncio.to_thread(parent.recv)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._process.terminate()
        await asyncio.to_thread(self._process.join, 10)

    def polls(self) -> int:
        return int(self._polls.value)


def _serve_market(pipe: Any, polls: Any, seed: int) -> None:
    async def serve() -> None:
        async with ProviderServer() as server:
            market = asyncio.create_task(churn(server, random.Random(seed)))
            pipe.send(server.base_url)
            while not market.done():
                polls.value = len(server.requests_to(VAST_PATH))
                await asyncio.sleep(0.5)

    asyncio.run(serve())


async def until_healthy(port: str, proc: asyncio.subprocess.Process, timeout: float = 180.0) -> None:
    """/healthz answers once `App.start` is done (the web server starts after the offer cache is loaded)."""
    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient(trust_env=False, timeout=5) as client:
        while time.monotonic() < deadline and proc.returncode is None:
            with contextlib.suppress(httpx.HTTPError):
                if (await client.get(f"http://127.0.0.1:{port}/healthz")).status_code == 200:
                    return
            await asyncio.sleep(0.2)
    raise RuntimeError("the bot did not start")


class Answers:
    """Reads the stand-in's log of requests from where it was last read (not from the start: 10,000 queries make
    tens of thousands of requests), dropping each request's body once read so the driver stays small too."""

    def __init__(self, tg: FakeTelegram) -> None:
        self.tg = tg
        self.read = 0
        self.with_estimate = 0
        self.other = 0

    async def wait(self, ids: set[str], timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while ids:
            calls = self.tg.calls
            while self.read < len(calls):
                c = calls[self.read]
                self.read += 1
                if c.method == "answerInlineQuery":
                    qid = str(c.params.get("inline_query_id"))
                    if qid in ids:
                        ids.discard(qid)
                        results = c.params.get("results") or []
                        if any(isinstance(r, dict) and r.get("id") == "e" for r in results):
                            self.with_estimate += 1
                        else:
                            self.other += 1
                c.params = {}  # read: the driver need not keep ~100 KB answers
            if ids:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{len(ids)} inline queries not answered within {timeout:.0f} s")
                await asyncio.sleep(0.002)


async def main(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    queries = distinct_queries(args.queries, rng)
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{Path(tmp) / 'memory.sqlite3'}"
        if args.postgres:  # a fresh database on the PostgreSQL server (TEST_DATABASE_URL, else .ci/postgres.sh)
            url = await asyncio.to_thread(_fresh_pg, _postgres_url(), "bench_memory")
        n_offers = await record_offers(url)
        async with FakeTelegram() as tg, ProviderServer() as server:
            market = asyncio.create_task(churn(server, random.Random(args.seed + 1))) if args.leader else None
            log = open(Path(tmp) / "bot.log", "wb")  # noqa: SIM115  # closed below, after the process
            started = time.perf_counter()
            env = bot_env(url, tg, server.base_url if args.leader else None)
            # BENCH_MEMPROFILE=FILE: the bot through bench/_common.py's wrapper, which dumps its memory profile there
            entry = "bench._common" if os.environ.get("BENCH_MEMPROFILE") else "gpuradar.cli"
            cmd = [sys.executable, "-m", entry, "run", *([] if args.leader else ["--no-scrape"])]
            proc = await asyncio.create_subprocess_exec(*cmd, cwd=tmp, env=env, stdout=log, stderr=log)
            try:
                await until_healthy(env["WEB__PORT"], proc)  # started: migrated, offers cached, polling
                up = time.perf_counter() - started
                if args.leader:  # the first poll recorded (the next one asked for), before "idle"
                    while len(server.requests_to(VAST_PATH)) < 2:
                        await asyncio.sleep(0.2)
                await asyncio.sleep(2)
                idle, procs = process_tree_rss_mb(proc.pid)
                answers = Answers(tg)
                t0 = time.perf_counter()
                for i in range(0, len(queries), 50):  # 50 at a time, as many users typing at once would send them
                    ids = {str(tg.inline_query(q, user_id=5000 + (i + j) % 300, lang=("en", "ru")[(i + j) % 2]))
                           for j, q in enumerate(queries[i:i + 50])}
                    await answers.wait(ids)
                took = time.perf_counter() - t0
                await asyncio.sleep(1)
                after, procs_after = process_tree_rss_mb(proc.pid)
            finally:
                if market is not None:
                    market.cancel()
                await stop_bot(proc, log, Path(tmp) / "bot.log", 30)
    print(f"seed {args.seed}; database {'PostgreSQL' if args.postgres else 'SQLite'}; load average "
          f"{os.getloadavg()[0]:.1f}")
    role = (f"the scraping leader ({len(server.requests_to(VAST_PATH))} polls of a 10,000-listing marketplace "
            f"meanwhile)" if args.leader else "a replica (--no-scrape)")
    print(f"bot: {role}; up (migrated, {n_offers:,} offers cached, polling) in {up:.1f} s; "
          f"processes measured: {len(procs)} idle, {len(procs_after)} after")
    print(f"RSS idle: {idle:.0f} MB{_split(procs)}")
    print(f"RSS after {len(queries):,} distinct inline queries ({answers.with_estimate:,} answered with an estimate, "
          f"{answers.other:,} with a polite 'not understood'; {took:.0f} s): {after:.0f} MB{_split(procs_after)} "
          f"(target < {TARGET_MB} MB: {'met' if after < TARGET_MB else 'MISSED'}, {after / TARGET_MB:.2f}x)")
    cmd = [sys.executable, "-X", "importtime", "-c", "import gpuradar.commands.estimate"]
    imports = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT).stderr.splitlines()
    heavy = [line for line in imports if "sqlalchemy.ext.asyncio" in line and line.rstrip().endswith("asyncio")]
    walls = []
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "gpuradar.cli", "estimate", "13B LoRA"], capture_output=True, cwd=ROOT,
                       check=True)
        walls.append(time.perf_counter() - t0)
    print(f"`gpuradar estimate \"13B LoRA\"`: {min(walls):.2f} s wall (best of 3), SQLAlchemy's asyncio extension "
          f"imported: {'yes' if heavy else 'no'}")


def _postgres_url() -> str:
    url = os.environ.get("TEST_DATABASE_URL")
    if url:
        return url
    return subprocess.run([str(ROOT / ".ci" / "postgres.sh")], capture_output=True, text=True,
                          check=True).stdout.strip()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=random.randrange(1 << 30))
    ap.add_argument("--leader", action="store_true", help="the scraping leader (its ingest child counted too)")
    ap.add_argument("--postgres", action="store_true", help="on PostgreSQL (a fresh database) instead of SQLite")
    asyncio.run(main(ap.parse_args()))
