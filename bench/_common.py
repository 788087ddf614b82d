"""What several benches share, written once: the deployment-scale users and subscriptions (50,000 users, 100,000
subscriptions of bench/match.py's realistic mix), a populated SQLite file kept between runs (`--db-cache`), the
teardown of a bot process the bench started, and p99.

Used by bench/fanout_cycle.py, bench/sender_loop.py, bench/soak.py and bench/memory.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import random
import shutil
import sqlite3
import statistics
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, TypeVar

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import gpuradar  # noqa: E402, F401  # the wiring: installs the provider catalog (core.providers)

T0 = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
T = TypeVar("T")


def p99(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=100)[98] if len(xs) >= 2 else (xs[0] if xs else 0.0)


async def store_users_and_subscriptions(sm: Any, users: int, subs: int, seed: int) -> None:
    """`users` users (a third English and in USD, the rest Russian and in RUB) and `subs` subscriptions of
    bench/match.py's realistic mix (GPU and workload watches, RUB and USD caps, some pinned to providers, counts,
    billing), dealt round-robin over the users, inserted 5,000 rows a statement."""
    from sqlalchemy import insert

    from bench.match import make_watches
    from storage.user_tables import Subscription, User

    watches = make_watches(subs, random.Random(seed))
    user_rows = [{"id": uid, "chat_id": uid, "lang": "ru" if uid % 3 else "en", "lang_chosen": True,
                  "currency": "RUB" if uid % 3 else "USD", "tz_offset_minutes": 0, "grouping": True, "active": True,
                  "created_at": T0} for uid in range(1, users + 1)]
    sub_rows = []
    for i, w in enumerate(watches):
        uid = 1 + (i % users)
        sub_rows.append({"user_id": uid, "chat_id": uid, "kind": "workload" if w.min_gib_by_count else "gpu",
                         "query_text": f"watch {i}", "gpu_ids": sorted(w.gpu_ids) if w.gpu_ids else None,
                         "workload_json": None,
                         "min_gib_by_count": {str(k): v for k, v in w.min_gib_by_count.items()}
                         if w.min_gib_by_count else None,
                         "max_price": w.max_price, "price_currency": w.currency, "price_basis": w.price_basis,
                         "providers": sorted(w.providers) if w.providers else None, "gpu_count": w.gpu_count,
                         "billing": w.billing, "region": None, "paused": False, "created_at": T0})
    async with sm() as s, s.begin():
        for i in range(0, len(user_rows), 5000):
            await s.execute(insert(User), user_rows[i:i + 5000])
        for i in range(0, len(sub_rows), 5000):
            await s.execute(insert(Subscription), sub_rows[i:i + 5000])


async def seeded_sqlite(db: Path, cache: Path | None, populate: Callable[[str], Awaitable[T]]) -> T:
    """The SQLite file `db` populated by `populate(url)`, or copied from `cache` when that exists (with what
    `populate` returned, pickled beside it, and the migrations brought up to this checkout's); a fresh population
    is saved to `cache` when one is named."""
    from storage.migrate import upgrade_async

    url = f"sqlite+aiosqlite:///{db}"
    extra = cache.with_suffix(".pickle") if cache is not None else None
    if cache is not None and extra is not None and cache.exists() and extra.exists():
        shutil.copyfile(cache, db)
        await upgrade_async(url)  # the cache may predate this checkout's migrations
        got: T = pickle.loads(extra.read_bytes())
        return got
    got = await populate(url)
    if cache is not None and extra is not None:
        with sqlite3.connect(db) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        shutil.copyfile(db, cache)
        extra.write_bytes(pickle.dumps(got))
    return got


async def stop_bot(proc: asyncio.subprocess.Process, log: IO[bytes], log_path: Path, timeout: float) -> None:
    """Ends the bot process a bench started (SIGTERM, then SIGKILL after `timeout` s), closes its log, and prints
    the log's tail when it ended badly or the bench is unwinding an exception."""
    if proc.returncode is None:
        proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
    log.close()
    if proc.returncode not in (0, -15) or sys.exc_info()[0] is not None:
        print(log_path.read_text(errors="replace")[-3000:])


# ---------------------------------------------------------------------------------------------- the bot's side
# Opt-in memory profile of a bench's bot process: BENCH_MEMPROFILE=FILE appends one JSON line every
# BENCH_MEMPROFILE_EVERY seconds (default 60), tracing from the end of `App.start`. Each line: RSS, what tracemalloc
# traces and its top growth by traceback since the previous line, object counts by type (with their change), the
# frozen objects (gpuradar/heap.py freezes the heap), the size of every lru_cache of our packages, and the largest
# containers alive. BENCH_MEMPROFILE_CYCLES=1 also unfreezes and collects with gc.DEBUG_SAVEALL at each line,
# counting by type the cyclic garbage the frozen heap was keeping (this reclaims it, so RSS in such a run is not the
# product's). tracemalloc costs CPU and memory of its own: a profiled run's figures find what grows, they are not
# the bench's verdict.
OURS = ("core", "bot", "storage", "scrapers", "gpuradar", "texts", "modelhub")


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024


def _lru_sizes() -> dict[str, int]:
    out: dict[str, int] = {}
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] not in OURS:
            continue
        for attr, obj in list(vars(module).items()):
            info = getattr(obj, "cache_info", None)
            if callable(info) and getattr(obj, "__module__", name) == name:
                with contextlib.suppress(Exception):
                    out[f"{name}.{attr}"] = int(info().currsize)
    return out


def _largest_containers(limit: int = 12) -> list[tuple[str, int]]:
    """The biggest dicts, lists, sets and deques alive (the frozen heap's too), each with a sample of its content."""
    import collections
    import gc

    kinds = (dict, list, set, collections.OrderedDict, collections.deque)
    big = sorted(((len(o), id(o), o) for o in gc.get_objects() if type(o) in kinds and len(o) >= 2000),
                 key=lambda p: -p[0])[:limit]
    out = []
    for n, _, o in big:
        sample = next(iter(o.items()), None) if isinstance(o, dict) else next(iter(o), None)
        out.append((f"{type(o).__name__}: e.g. {str(sample)[:100]}", n))
    return out


def _sender_sizes(app: Any) -> dict[str, int]:
    """The alert sender's structures, when it runs in this process (a thread of it on main)."""
    sender = getattr(app, "_sender", None)
    planner: Any = getattr(getattr(sender, "sender", sender), "planner", None)
    fanout = getattr(planner, "fanout", None)
    if planner is None or fanout is None:
        return {}
    pending = dict(fanout.pending)
    return {"pending_users": len(pending), "pending_pairs": sum(len(v) for v in pending.values()),
            "events": len(fanout._events), "held": len(planner.held), "blocked": len(planner.blocked)}


def _top(stats: list[Any], n: int = 12) -> list[dict[str, Any]]:
    out = []
    for s in stats[:n]:
        frames = [f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno}" for f in s.traceback if "/asyncio/" not in f.filename]
        out.append({"kb": round(s.size_diff / 1024), "total_kb": round(s.size / 1024), "count": s.count_diff,
                    "at": frames[:6]})
    return out


async def memory_profile(path: str, every: float, app: Any = None) -> None:
    import gc
    import json
    import time
    import tracemalloc
    from collections import Counter

    trace = bool(int(os.environ.get("BENCH_MEMPROFILE_TRACE", "0") or 0))
    if trace:  # from here on: what the running bot allocates, by traceback (slows the bot several times over)
        tracemalloc.start(8)
    cycles = bool(int(os.environ.get("BENCH_MEMPROFILE_CYCLES", "0") or 0))
    previous = tracemalloc.take_snapshot() if trace else None
    first = previous
    types_before: Counter[str] = Counter()
    started = time.monotonic()
    while True:
        await asyncio.sleep(every)
        line: dict[str, Any] = {"t": round(time.monotonic() - started), "rss_mb": round(_rss_mb(), 1),
                                "frozen": gc.get_freeze_count()}
        if cycles:
            gc.unfreeze()
            gc.set_debug(gc.DEBUG_SAVEALL)
            gc.collect()
            garbage = Counter(type(o).__name__ for o in gc.garbage)
            line["cyclic_garbage"] = len(gc.garbage)
            line["cyclic_garbage_types"] = garbage.most_common(15)
            gc.set_debug(0)
            gc.garbage.clear()
            gc.collect()
            gc.freeze()
        if trace and previous is not None and first is not None:
            snap = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
            line["traced_mb"] = round(tracemalloc.get_traced_memory()[0] / 2**20, 1)
            line["growth_since_last"] = _top(snap.compare_to(previous, "traceback"))
            line["growth_since_start"] = _top(snap.compare_to(first, "filename"), 15)
            previous = snap
        # gc.get_objects() leaves out the frozen heap (the permanent generation): counted with it, then frozen back
        frozen = gc.get_freeze_count() > 0
        gc.unfreeze()
        types = Counter(type(o).__name__ for o in gc.get_objects())
        line["objects"] = sum(types.values())
        line["types_growth"] = sorted(((k, v, v - types_before.get(k, 0)) for k, v in types.items()),
                                      key=lambda x: -abs(x[2]))[:15]
        types_before = types
        line["lru"] = {k: v for k, v in _lru_sizes().items() if v}
        line["sender"] = _sender_sizes(app)
        line["largest"] = _largest_containers()
        if frozen:
            gc.freeze()
        with open(path, "a") as f:
            f.write(json.dumps(line, default=str) + "\n")


def run_bot(argv: list[str], lag_file: str | None = None) -> int:
    """`gpuradar <argv>` in this process, plus (once the app has started) a 1 ms loop-lag probe writing to
    `lag_file` every 5 s when one is given, and the memory profile when BENCH_MEMPROFILE names a file."""
    import gpuradar.app as app_module
    from gpuradar.cli import main

    profile = os.environ.get("BENCH_MEMPROFILE")
    original = app_module.App.start

    async def start(self: Any, bot: Any = None) -> None:
        await original(self, bot)
        loop = asyncio.get_running_loop()
        if lag_file:
            _tasks.append(loop.create_task(_lag_probe(lag_file)))
        if profile:
            every = float(os.environ.get("BENCH_MEMPROFILE_EVERY", "60"))
            _tasks.append(loop.create_task(memory_profile(profile, every, self)))

    app_module.App.start = start  # type: ignore[method-assign]
    return main(argv)


_tasks: list[asyncio.Task[None]] = []


async def _lag_probe(path: str) -> None:
    import json
    import time

    loop = asyncio.get_running_loop()
    lags: list[float] = []
    last = loop.time()
    while True:
        t = loop.time()
        await asyncio.sleep(0.001)
        lags.append(loop.time() - t - 0.001)
        if t - last >= 5.0:
            with open(path, "a") as f:
                f.write(json.dumps({"at": time.time(), "lags": [round(x, 5) for x in lags if x > 0.002],
                                    "n": len(lags), "max": max(lags)}) + "\n")
            lags, last = [], t


def pg_server_url() -> str:
    """The PostgreSQL server a `--db postgres` bench makes its fresh database on: BENCH_PG_URL, else
    TEST_DATABASE_URL, else the one .ci/postgres.sh starts (its test server: durability off)."""
    import subprocess

    return os.environ.get("BENCH_PG_URL") or os.environ.get("TEST_DATABASE_URL") or subprocess.run(
        [str(ROOT / ".ci" / "postgres.sh")], capture_output=True, text=True, check=True).stdout.strip()


async def durability(url: str) -> str:
    """The PostgreSQL server's durability settings, as the figures were measured under them."""
    from sqlalchemy import text

    from storage.db import make_engine

    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            got = {name: (await conn.execute(text(f"SHOW {name}"))).scalar_one()
                   for name in ("fsync", "synchronous_commit", "full_page_writes")}
    finally:
        await engine.dispose()
    default = got == {"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"}
    return (", ".join(f"{k}={v}" for k, v in got.items())
            + (" (the server's default durability)" if default else
               " (NOT the default durability: .ci/postgres.sh's test server; point TEST_DATABASE_URL at a server "
               "with the defaults for the figure the issue asks for)"))


if __name__ == "__main__":  # python -m bench._common run [...]: the bot with BENCH_MEMPROFILE's profile
    sys.exit(run_bot(sys.argv[1:]))
