"""The market page's data under load: 100 concurrent viewers with 10,000 offers stored, while Vast-sized polls are
ingested back to back (the leader's work), and the bot's inline answers measured beside it.

Each viewer loads the page's data as the page does (`/api/matrix`, then one cell's offers `/api/offers`; the ETag
of each kept and sent back as a browser's cache does, `--no-etag` not), looks at it for about two seconds
(`--think`; 0 sends requests back to back, which measures saturation, not a viewer's wait), and loads it again; the
latency of each request is measured by the viewer, from the request leaving to the whole body read, in a process
of its own (as browsers are not in the bot's process), over aiohttp with one connection per viewer. Inline
latency is measured as bench/inline.py does (the stand-in Telegram server in its own process, from the update queued
to `answerInlineQuery` arriving): first with the ingest alone, then with the viewers as well. The per-address limit
of the API is lifted for the run: every viewer here comes from 127.0.0.1. Then, the ingest still running, a few
fresh loads of the page in Debian's headless Chromium (when installed) time its first render. Targets: page data
p99 < 100 ms, first render < 1 s, inline p99 unchanged (< 50 ms). Prints the figures; asserts nothing.

    python3 bench/webapp.py [--viewers 100] [--loads 30] [--queries 300] [--no-etag] [--no-ingest]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.inline import PHRASES, StandInProcess, database, ingest_back_to_back, loop_lag, offers
from bot.ratelimit import Rate
from core.offers import Rates
from core.polls import PollResult, PollStatus
from gpuradar.app import App
from gpuradar.settings import Settings
from gpuradar.webapp.api import SERVICES_KEY

OFFERS_PER_PROVIDER = 2500  # x 4 providers: 10,000 offers stored, and the Vast-sized polls' 1,440 on top
# bench.inline.offers() names vastai among its four; here that share is listed under another provider, so the
# Vast-sized polls (provider vastai) add to the 10,000 rather than replace 2,500 of them.
SEEDED_AS = {"vastai": "hyperstack"}


def p(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100)[q - 1] if len(values) > 1 else (values[0] if values else 0.0)


async def viewers(base: str, n: int, loads: int, think: float, etags: bool) -> None:
    """The child's side: `n` viewers, `loads` page loads each, a person's pause of about `think` seconds (0.5x to
    1.5x) after each; prints one JSON object of latencies (ms) and the matrix body's size. With `etags` each viewer
    keeps the ETag of what it got and sends it back (`If-None-Match`), as a browser's cache does on a reload."""
    import random

    import aiohttp

    rng = random.Random(11)
    size = 0

    matrix: list[float] = []
    cells: list[float] = []
    errors = 0
    not_modified = 0

    async def viewer(i: int) -> None:
        nonlocal errors, size, not_modified
        families: list[dict[str, Any]] = []
        held: dict[str, str] = {}  # url -> ETag: the viewer's browser cache

        def headers(url: str) -> dict[str, str]:
            return {"If-None-Match": held[url]} if etags and url in held else {}

        def keep(url: str, r: aiohttp.ClientResponse) -> None:
            nonlocal not_modified
            if r.status == 304:
                not_modified += 1
            elif "ETag" in r.headers:
                held[url] = r.headers["ETag"]
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1)) as session:
            await asyncio.sleep(rng.uniform(0, think))  # viewers arrive spread over a pause, not all at once
            for k in range(loads):
                t0 = time.perf_counter()
                url = f"{base}/api/matrix?lang={'ru' if i % 2 else 'en'}"
                async with session.get(url, headers=headers(url)) as r:
                    body = await r.read()
                    ok = r.status in (200, 304)
                    keep(url, r)
                matrix.append((time.perf_counter() - t0) * 1000)
                if not ok:
                    errors += 1
                    continue
                if r.status == 200:
                    size = len(body)
                if k == 0:  # what the page would draw; read once, so the viewers' own parsing stays out of the figures
                    families = json.loads(body)["families"]
                fam = families[(i + k) % len(families)]
                provider = next(iter(fam["cells"]), None)
                if provider is None:
                    continue
                t0 = time.perf_counter()
                gpus = ",".join(v["id"] for v in fam["variants"])
                url = f"{base}/api/offers?gpu={gpus}&provider={provider}"
                async with session.get(url, headers=headers(url)) as r:
                    await r.read()
                    errors += r.status not in (200, 304)
                    keep(url, r)
                cells.append((time.perf_counter() - t0) * 1000)
                await asyncio.sleep(think * rng.uniform(0.5, 1.5))

    t0 = time.perf_counter()
    await asyncio.gather(*(viewer(i) for i in range(n)))
    print(json.dumps({"matrix": matrix, "cells": cells, "errors": errors, "seconds": time.perf_counter() - t0,
                      "size": size, "not_modified": not_modified}))


_asked = iter(range(10**9))


def first_renders(base: str, n: int) -> list[float]:
    """Milliseconds from navigation start to the page's first render (matrix drawn: `data-ready-ms`), `n` fresh
    loads in Debian's headless Chromium; [] when it is not installed."""
    if not (os.path.exists("/usr/bin/chromium") and os.path.exists("/usr/bin/chromedriver")):
        return []
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=412,915"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    out = []
    try:
        for i in range(n):
            driver.get("about:blank")
            driver.get(f"{base}/?lang={'ru' if i % 2 else 'en'}")
            deadline = time.monotonic() + 30
            while not (ms := driver.find_element("tag name", "body").get_attribute("data-ready-ms")):
                if time.monotonic() > deadline:
                    raise TimeoutError("the page did not render within 30 s")
                time.sleep(0.01)
            out.append(float(ms))
    finally:
        driver.quit()
    return out


async def inline_latencies(tg: StandInProcess, n: int) -> list[float]:
    """`n` inline queries, from 1,000 users in turn: the per-user inline allowance (4 a second) is never what is
    measured, however fast the answers come."""
    out = []
    for _ in range(n):
        i = next(_asked)
        out.append(await tg.query(PHRASES[i % len(PHRASES)], 1000 + i % 1000))
    return out


def _rss_mib() -> tuple[float, float]:
    """The bot's process's resident memory now and at its peak (MiB), from /proc (Linux)."""
    now = peak = 0.0
    with contextlib.suppress(OSError), open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                now = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                peak = int(line.split()[1]) / 1024
    return now, peak


async def main(args: argparse.Namespace) -> None:
    with database("sqlite") as url:
        tg = await StandInProcess.start()
        settings = Settings(database_url=url, bot_token=tg.token, telegram_api_url=tg.base_url,
                            web={"host": "127.0.0.1", "port": 0})
        app = App(settings, scrape=False, polling_timeout=1, serve_web=True)
        await app.start()
        app.freeze_heap()
        try:
            limiter = app.web.runner.app[SERVICES_KEY].limits.limiter
            limiter.rates = {**limiter.rates, "ip": Rate(burst=10**9, per=1e-9)}  # one address for every viewer
            at = datetime(2025, 1, 1, tzinfo=UTC)
            for listed, rows in offers(OFFERS_PER_PROVIDER).items():
                provider = SEEDED_AS.get(listed, listed)
                rows = [o.model_copy(update={"provider": provider}) for o in rows]
                await app.ingest(PollResult(provider=provider, status=PollStatus.OK, offers=rows, started_at=at,
                                            finished_at=at + timedelta(seconds=1)), Rates(rub_per={"USD": 80.0}))
            assert app.offers is not None
            stored = len(app.offers)
            await inline_latencies(tg, len(PHRASES))  # first-time phrases: estimates computed, not measured
            stop = asyncio.Event()
            took: list[float] = []
            ingest: asyncio.Task[object] = asyncio.create_task(
                ingest_back_to_back(app, stop, took) if args.ingest else stop.wait())
            while args.ingest and not took:
                await asyncio.sleep(0.05)
            cpu0, wall0, polls0 = time.process_time(), time.perf_counter(), len(took)
            alone = await inline_latencies(tg, args.queries)
            polls_before = len(took)
            cpu_alone = (time.process_time() - cpu0, time.perf_counter() - wall0, polls_before - polls0)
            cpu0, wall0 = time.process_time(), time.perf_counter()  # the bot's process, its threads included
            pauses: list[float] = []  # the cyclic collector's full collections meanwhile (ms each)
            cpu_pauses: list[float] = []  # the same on the thread's CPU clock (a busy machine's waits left out)
            young = [0, 0.0, 0.0]  # generation 0/1 collections: how many, CPU ms in all, the longest
            started: list[float] = []

            def collector(phase: str, info: dict[str, int]) -> None:
                if phase == "start":
                    started[:] = [time.perf_counter(), time.thread_time()]
                elif started:
                    cpu = (time.thread_time() - started[1]) * 1000
                    if info["generation"] == 2:
                        pauses.append((time.perf_counter() - started[0]) * 1000)
                        cpu_pauses.append(cpu)
                    else:
                        young[0] += 1
                        young[1] += cpu
                        young[2] = max(young[2], cpu)

            gc.callbacks.append(collector)
            child = await asyncio.create_subprocess_exec(
                sys.executable, __file__, "--serve-viewers", app.web.url, str(args.viewers), str(args.loads),
                str(args.think), "1" if args.etags else "0",
                stdout=asyncio.subprocess.PIPE)
            lags: list[float] = []
            lag = asyncio.create_task(loop_lag(stop, lags))
            finished = asyncio.create_task(child.communicate())  # read as it comes: the pipe never fills
            beside: list[float] = []
            while not finished.done():
                beside.extend(await inline_latencies(tg, 10))
            out, _ = await finished
            cpu_viewers = (time.process_time() - cpu0, time.perf_counter() - wall0, len(took) - polls_before)
            gc.callbacks.remove(collector)
            tracked = len(gc.get_objects())  # what a full collection walks (gc.freeze() moved the rest out)
            frozen = gc.get_freeze_count()
            rss = _rss_mib()
            # What a frozen heap kept only because it was frozen (cycles that died frozen): found once unfrozen.
            gc.unfreeze()
            t_full = time.perf_counter()
            leaked = gc.collect()
            t_full = (time.perf_counter() - t_full) * 1000
            gc.freeze()
            stored_during = len(app.offers)
            renders = await asyncio.to_thread(first_renders, app.web.url, args.renders) if args.renders else []
            stop.set()
            await ingest
            await lag
            polls = len(took) - polls_before
        finally:
            await app.stop()
            await tg.close()
    got = json.loads(out)
    matrix, cells = got["matrix"], got["cells"]
    both = matrix + cells
    if took:
        print(f"offers stored: {stored:,} before the ingest, {stored_during:,} in stock when the viewers finished "
              f"(a Vast-sized provider of 1,440 ingested back to back: {polls} polls while the viewers ran, each "
              f"{statistics.median(took) * 1000:.0f} ms median)")
    else:
        print(f"offers stored: {stored}; no ingest running (--no-ingest)")
    rate = (len(matrix) + len(cells)) / got["seconds"]
    print(f"{args.viewers} concurrent viewers x {args.loads} page loads (a pause of ~{args.think:g} s after each) in "
          f"{got['seconds']:.1f} s: {rate:.0f} requests/s, {got['errors']} errors; matrix body {got['size']:,} bytes; "
          f"{got['not_modified']} answered 304 Not Modified "
          f"({'ETags sent back, as a browser does' if args.etags else '--no-etag: full bodies every time'})")
    print(f"page data /api/matrix: {len(matrix)} requests, p50 {statistics.median(matrix):.1f} ms, "
          f"p99 {p(matrix, 99):.1f} ms, max {max(matrix):.1f} ms")
    print(f"cell offers /api/offers: {len(cells)} requests, p50 {statistics.median(cells):.1f} ms, "
          f"p99 {p(cells, 99):.1f} ms")
    print(f"page data, all requests: p99 {p(both, 99):.1f} ms (target < 100 ms: "
          f"{'met' if p(both, 99) < 100 else 'MISSED'})")
    if renders:
        print(f"first render in headless Chromium (navigation start to the matrix drawn): {len(renders)} loads, "
              f"median {statistics.median(renders):.0f} ms, max {max(renders):.0f} ms (target < 1 s: "
              f"{'met' if max(renders) < 1000 else 'MISSED'})")
    (c_a, w_a, n_a), (c_v, w_v, n_v) = cpu_alone, cpu_viewers
    print(f"bot process CPU (its threads included): {100 * c_a / w_a:.0f} % of a core with the ingest alone "
          f"({n_a} polls, {len(alone)} inline queries in {w_a:.1f} s); {c_v:.1f} s in the {w_v:.1f} s of the viewers "
          f"({len(both)} page requests, {len(beside)} inline queries, {n_v} polls): at most "
          f"{c_v / len(both) * 1000:.2f} ms per page request, all of it counted against them")
    print(f"full garbage collections in the bot's process meanwhile: {len(pauses)}, longest "
          f"{max(pauses, default=0.0):.0f} ms, {tracked:,} objects tracked at the end ({frozen:,} frozen); "
          f"RSS {rss[0]:.0f} MiB at the end, peak {rss[1]:.0f} MiB; then unfrozen, one full collection of "
          f"{t_full:.0f} ms found {leaked:,} unreachable")
    print(f"  on the thread's CPU clock: full collections {sum(cpu_pauses):.0f} ms in all, longest "
          f"{max(cpu_pauses, default=0.0):.1f} ms; {young[0]:,} young collections, {young[1]:.0f} ms in all, "
          f"longest {young[2]:.1f} ms; "
          f"thresholds {gc.get_threshold()}")
    heap = getattr(app, "heap", None)  # gpuradar.heap.HeapSettler, where the App has one
    if heap is not None:
        print(f"  heap settles (collect what is not frozen, freeze the rest): {heap.settles} in the run, "
              f"{heap.fulls} unfrozen first, longest {heap.longest_ms:.1f} ms")
    print(f"bot's loop lag meanwhile: p50 {statistics.median(lags):.1f} ms, p99 {p(lags, 99):.1f} ms, "
          f"max {max(lags):.1f} ms")
    print(f"inline, {'ingest' if took else 'nothing else'} alone: {len(alone)} queries, "
          f"p50 {statistics.median(alone):.1f} ms, p99 {p(alone, 99):.1f} ms")
    print(f"inline, {'ingest + ' if took else ''}viewers: {len(beside)} queries, "
          f"p50 {statistics.median(beside):.1f} ms, p99 {p(beside, 99):.1f} ms "
          f"(target < 50 ms: {'met' if p(beside, 99) < 50 else 'MISSED'})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--viewers", type=int, default=100)
    parser.add_argument("--loads", type=int, default=30, help="page loads per viewer")
    parser.add_argument("--queries", type=int, default=300, help="inline queries with the ingest alone")
    parser.add_argument("--think", type=float, default=2.0,
                        help="seconds a viewer spends on a page before the next load (0: back to back, saturation)")
    parser.add_argument("--renders", type=int, default=6, help="page loads in headless Chromium (0: none)")
    parser.add_argument("--no-ingest", dest="ingest", action="store_false", help="viewers without an ingest running")
    parser.add_argument("--no-etag", dest="etags", action="store_false",
                        help="viewers never send If-None-Match (every load a full body, as with no browser cache)")
    parser.add_argument("--serve-viewers", nargs=5, help=argparse.SUPPRESS)  # the viewers' process
    options = parser.parse_args()
    if options.serve_viewers:
        base, n, loads, think, etags = options.serve_viewers
        asyncio.run(viewers(base, int(n), int(loads), float(think), etags == "1"))
        sys.exit(0)
    print(f"== load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    started = time.perf_counter()
    asyncio.run(main(options))
    print(f"bench wall time {time.perf_counter() - started:.1f} s")
