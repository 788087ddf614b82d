"""Ingest in a REAL child process (gpuradar.ingest_process) on a real database: polls and their alert queue are
recorded there under the leader's fence; a child killed in the middle of a poll is restarted and the poll is
recorded exactly once; stopping leaves no child, and neither does a parent that is SIGKILLed; the bot's offer
cache, fed by what changed since its last reading, always equals what the database says is in stock."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from core.alerts import AlertPolicy
from gpuradar.app import App
from gpuradar.ingest_process import Fence, IngestProcess
from gpuradar.leadership import SCRAPERS_LEASE, LeadershipLost
from gpuradar.settings import IngestSettings, Settings
from storage.alert_tables import AlertEventRow
from storage.db import make_engine
from storage.lease import LeaderLease
from storage.offer_tables import OfferEventRow, ScrapeRun
from storage.queries import in_stock_offers
from testkit.fake_telegram import FakeTelegram
from testkit.waiting import until
from tests.storage.test_ingest import RATES, Poller, offer

ROOT = Path(__file__).resolve().parents[2]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by a parent that is gone) counts as dead.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # reaped meanwhile (reading its stat then fails with ESRCH)
        return False


async def rows(sm: async_sessionmaker[AsyncSession], model: type) -> int:
    async with sm() as s:
        return int(await s.scalar(select(func.count()).select_from(model)) or 0)


@asynccontextmanager
async def child(url: str) -> AsyncIterator[IngestProcess]:
    ingest = IngestProcess(url)
    await ingest.start()
    try:
        yield ingest
    finally:
        await ingest.stop()


async def test_polls_and_alerts_are_recorded_in_a_child_process_under_the_fence(sm, migrated_database_url) -> None:
    poll = Poller()
    lease = LeaderLease(sm, SCRAPERS_LEASE, ttl=30)
    assert await lease.try_acquire()
    term = lease.term
    assert term is not None
    async with child(migrated_database_url) as ingest:
        assert ingest.pid is not None and ingest.pid != os.getpid()
        fence = Fence(lease.name, lease.holder, term)
        baseline = await ingest.record(poll([offer("a", 2.0), offer("b", 3.0)]), rates=RATES, alerts=AlertPolicy(),
                                       fence=fence)
        assert (baseline.events, baseline.queued) == (0, 0)
        done = await ingest.record(poll([offer("a", 1.0), offer("b", 3.0), offer("c", 4.0)]), rates=RATES,
                                   alerts=AlertPolicy(), fence=fence)
        assert (done.events, done.queued) == (2, 2)  # a price drop and an appearance, each queued once
        assert await rows(sm, AlertEventRow) == 2

        # A fence that is not ours (a later term): nothing of the poll is recorded, and the caller hears why.
        with pytest.raises(LeadershipLost):
            await ingest.record(poll([offer("a", 0.5), offer("b", 3.0), offer("c", 4.0)]), rates=RATES,
                                alerts=AlertPolicy(), fence=Fence(lease.name, lease.holder, term + 1))
        assert await rows(sm, ScrapeRun) == 2 and await rows(sm, AlertEventRow) == 2
        # The same change under the right term is recorded (the child's state cache was not left ahead).
        done = await ingest.record(poll([offer("a", 0.5), offer("b", 3.0), offer("c", 4.0)]), rates=RATES,
                                   alerts=AlertPolicy(), fence=fence)
        assert (done.events, done.queued) == (1, 1)


@asynccontextmanager
async def write_lock(url: str) -> AsyncIterator[None]:
    """Another writer holding the tables the ingest writes first, so the child's poll waits inside its transaction."""
    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            if engine.dialect.name == "sqlite":
                await conn.exec_driver_sql("BEGIN IMMEDIATE")
            else:
                await conn.execute(text("BEGIN"))
                await conn.execute(text("LOCK TABLE scrape_runs IN EXCLUSIVE MODE"))
            try:
                yield
            finally:
                await conn.exec_driver_sql("ROLLBACK")
    finally:
        await engine.dispose()


async def test_a_child_killed_in_the_middle_of_a_poll_is_restarted_and_the_poll_recorded_once(
        sm, migrated_database_url) -> None:
    poll = Poller()
    async with child(migrated_database_url) as ingest:
        await ingest.record(poll([offer(f"s{i}", 2.0) for i in range(50)]), rates=RATES, alerts=AlertPolicy())
        first = ingest.pid
        assert first is not None
        changed = poll([offer("s0", 1.0), *[offer(f"s{i}", 2.0) for i in range(1, 50)], offer("new", 3.0)])
        async with write_lock(migrated_database_url):
            call = asyncio.create_task(ingest.record(changed, rates=RATES, alerts=AlertPolicy()))
            await asyncio.sleep(1.0)  # the child has the poll and waits for the lock, inside its transaction
            assert not call.done()
            os.kill(first, signal.SIGKILL)
            await until(lambda: ingest.restarts == 1)
        done = await asyncio.wait_for(call, 60)  # made again in a new child once the lock is free
        assert ingest.pid not in (None, first) and not alive(first)
        assert (done.events, done.queued, done.retried) == (2, 2, True)
        async with sm() as s:
            kinds = (await s.execute(select(OfferEventRow.kind, func.count()).group_by(OfferEventRow.kind))).all()
        assert sorted(kinds) == [("appeared", 1), ("price_drop", 1)]  # once each: nothing lost, nothing doubled
        assert await rows(sm, AlertEventRow) == 2
        # Recording the same poll again is a no-op, in the new child too.
        assert (await ingest.record(changed, rates=RATES, alerts=AlertPolicy())).events == 0


async def test_stop_leaves_no_child(migrated_database_url) -> None:
    async with child(migrated_database_url) as ingest:
        pid = ingest.pid
        assert pid is not None and alive(pid)
        await ingest.record(Poller()([offer("a")]), rates=RATES)
    await until(lambda: not alive(pid), limit=10)
    assert ingest.pid is None


PARENT = """
import asyncio, sys
from gpuradar.ingest_process import IngestProcess

async def main():
    ingest = IngestProcess(sys.argv[1])
    await ingest.start()
    print(ingest.pid, flush=True)
    await asyncio.sleep(600)

asyncio.run(main())
"""


async def test_a_parent_killed_with_sigkill_leaves_no_child(migrated_database_url, tmp_path) -> None:
    parent = await asyncio.create_subprocess_exec(
        sys.executable, "-c", PARENT, migrated_database_url, stdout=asyncio.subprocess.PIPE, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert parent.stdout is not None
        line = await asyncio.wait_for(parent.stdout.readline(), 60)
        pid = int(line)
        assert alive(pid)
    finally:
        parent.kill()
        await parent.wait()
    await until(lambda: not alive(pid), limit=15)


async def test_the_apps_offer_cache_follows_the_database_through_the_child_and_its_restart(
        migrated_database_url) -> None:
    poll = Poller()
    async with FakeTelegram() as tg:
        # A real child (tests/conftest.py hosts it in a thread everywhere else).
        app = App(Settings(database_url=migrated_database_url, bot_token=tg.token, telegram_api_url=tg.base_url,
                           ingest=IngestSettings(in_process=False)),
                  scrape=False, migrate=False, polling_timeout=1)
        await app.start()
        try:
            assert app.ingest_process is not None and app.offers is not None

            async def matches_database() -> None:
                assert app.sessionmaker is not None and app.offers is not None
                async with app.sessionmaker() as s:
                    stored = {(o.offer.key, o.price_per_gpu_hour_usd) for o in await in_stock_offers(s)}
                assert {(o.key, o.price_per_gpu_hour_usd) for o in app.offers.all()} == stored

            many = [offer(f"s{i}", 2.0 + i / 100) for i in range(40)]
            await app.ingest(poll(many), RATES)
            pid = app.ingest_process.pid
            assert pid is not None and pid != os.getpid()
            await matches_database()
            assert len(app.offers) == 40
            # Some cheaper, some gone (sold out after the hysteresis), some new.
            later = [offer(f"s{i}", 1.0) if i % 5 == 0 else o for i, o in enumerate(many) if i % 7] + \
                [offer("n1", 3.0), offer("n2", 3.5)]
            for _ in range(2):
                await app.ingest(poll(later), RATES)
                await matches_database()
            assert {"n1", "n2"} <= {o.key.split("|")[1] for o in app.offers.all()}
            # The child dies between polls: the next poll starts a new one, which sends the offers whole again.
            os.kill(pid, signal.SIGKILL)
            await until(lambda: not alive(pid))
            await app.ingest(poll([*later, offer("n3", 4.0)]), RATES)
            assert app.ingest_process.pid not in (None, pid)
            await matches_database()
        finally:
            child_pid = app.ingest_process.pid if app.ingest_process is not None else None
            await app.stop()
        assert child_pid is not None
        await until(lambda: not alive(child_pid), limit=10)


def test_nothing_of_a_poll_crosses_as_a_model(migrated_database_url) -> None:
    """What crosses to the child is plain values (tuples of the offer's fields), and comes back as the same poll."""
    from gpuradar.ingest_process import OFFER_FIELDS, PackedPoll

    result = Poller()([offer("a", 2.0, available=3), offer("b", 3.0, in_stock=False)])
    packed, _ = PackedPoll.pack(result)
    assert all(type(values) is tuple and len(values) == len(OFFER_FIELDS) for values in packed.offers)
    assert packed.unpack() == result
    assert packed.unpack().finished_at - packed.unpack().started_at == timedelta(seconds=2)


def test_a_poll_crosses_as_what_changed_since_the_previous_one() -> None:
    """Offers listed exactly as in the provider's previous poll cross as their position there, and the child lists
    the offers it already holds again (the same objects); the rest cross as tuples. Unpacked, it is the same poll."""
    from gpuradar.ingest_process import PackedPoll

    poll = Poller()
    before = poll([offer("a", 2.0), offer("b", 3.0), offer("c", 4.0)])
    packed, sent = PackedPoll.pack(before, 1)
    held = packed.unpack()
    after = poll([offer("b", 3.0), offer("a", 1.5), offer("d", 5.0), offer("c", 4.0)])
    diff, _ = PackedPoll.pack(after, 2, sent)
    assert diff.base == 1 and diff.token == 2
    assert [type(v) for v in diff.offers] == [int, tuple, tuple, int]
    got = diff.unpack(held.offers)
    assert got == after
    assert got.offers[0] is held.offers[1] and got.offers[3] is held.offers[2]
    with pytest.raises(ValueError):
        diff.unpack()  # a diff without the poll it refers to is refused, never guessed


async def test_polls_crossing_as_diffs_record_what_whole_polls_record(sm, migrated_database_url) -> None:
    """Random polls (prices moving, configurations vanishing and coming back, duplicates, failed polls, the child
    killed between polls so the next crosses whole again) recorded through the child end in the same stored state,
    with the same events, as the same polls recorded whole in this process (under another provider's name)."""
    import random

    from core.polls import PollStatus
    from storage.ingest import record_poll
    from storage.offer_tables import CurrentOffer

    rng = random.Random(14)
    prices = {f"s{i}": 1.0 + i / 10 for i in range(40)}
    through, here = Poller("runpod"), Poller("vastai")
    async with child(migrated_database_url) as ingest:
        for n in range(14):
            listed = []
            for sku in prices:
                r = rng.random()
                if r < 0.1:
                    continue  # not listed this time
                if r < 0.25:
                    prices[sku] = round(prices[sku] * rng.choice([0.8, 0.9, 1.1, 1.3]), 4)
                listed.append((sku, prices[sku], rng.random() > 0.05))
            listed += [listed[0]] if n % 3 == 0 and listed else []  # a configuration listed twice
            rng.shuffle(listed)
            status = PollStatus.FAILED if n in (4, 9) else PollStatus.OK
            if n in (7, 11):
                pid = ingest.pid
                assert pid is not None
                os.kill(pid, signal.SIGKILL)
                await until(lambda: not alive(pid))  # noqa: B023
            polls = [p([offer(sku, price, in_stock=stock, provider=p.provider) for sku, price, stock in listed]
                       if status is PollStatus.OK else [], status=status) for p in (through, here)]
            done = await ingest.record(polls[0], rates=RATES)
            events = await record_poll(sm, polls[1], rates=RATES)
            assert done.events == len(events)
        # Whole: the first poll, and the first after each restart; every other poll with offers as a diff.
        assert ingest.crossed == {"whole": 3, "diff": 9}

    async def state(provider: str) -> list[tuple[object, ...]]:
        t = CurrentOffer.__table__.c
        async with sm() as s:
            got = (await s.execute(select(t.sku, t.price, t.in_stock, t.missing, t.ref_price, t.price_per_gpu_hour_rub,
                                          t.last_seen).where(t.provider == provider).order_by(t.sku))).all()
        return [tuple(r) for r in got]

    assert await state("runpod") == await state("vastai")
    assert len(await state("runpod")) == 40
    async with sm() as s:
        kinds = {p: sorted((await s.execute(select(OfferEventRow.offer_key, OfferEventRow.kind)
                                            .where(OfferEventRow.provider == p))).all()) for p in ("runpod", "vastai")}
    assert [(k.replace("runpod", "vastai"), kind) for k, kind in kinds["runpod"]] == kinds["vastai"]
    assert kinds["runpod"]


async def test_the_offers_reading_builds_what_the_bot_would_build_from_the_stored_offer(sm) -> None:
    """The child turns each offers row into `CachedOffer` fields directly; for every kind of stored offer (a vGPU
    slice read from its memory, a whole card, an unknown GPU, monthly roubles, no location, no URL) they equal
    `CachedOffer.from_stored` of the offer `storage.queries.in_stock_offers` reads."""
    from bot.offer_cache import CachedOffer
    from core.offers import Offer, Period
    from gpuradar.ingest_process import cached_offer_fields
    from storage.ingest import OFFER_COLUMNS, record_poll
    from storage.offer_tables import CurrentOffer

    listed = [
        Offer(provider="runpod", sku="slice", gpu="a16", gpu_name="A16 2GB", gpu_count=1, gpu_memory_gb=2.0,
              price=0.1, currency="USD", in_stock=True, available=3, location="EU", url="https://x.test/s"),
        Offer(provider="runpod", sku="whole", gpu="h100-sxm", gpu_name="H100", gpu_count=8, gpu_memory_gb=80.0,
              price=20.0, currency="USD", in_stock=True),
        Offer(provider="runpod", sku="odd", gpu=None, gpu_name="Mystery GPU", gpu_count=2, price=3.0,
              currency="EUR", in_stock=True, location="", url=""),
        Offer(provider="runpod", sku="rub", gpu="rtx-4090", gpu_name="RTX 4090", gpu_count=1, price=90000.0,
              currency="RUB", period=Period.MONTH, in_stock=True, location="MSK"),
    ]
    await record_poll(sm, Poller()(listed), rates=RATES)
    t = CurrentOffer.__table__.c
    async with sm() as s:
        rows = (await s.execute(select(t.key, *[t[c] for c in OFFER_COLUMNS], t.price_per_gpu_hour_rub,
                                       t.price_per_gpu_hour_usd))).all()
        stored = {o.offer.key: CachedOffer.from_stored(o) for o in await in_stock_offers(s)}
    built = {r[0]: CachedOffer(*cached_offer_fields(r[0], tuple(r[1:]))) for r in rows}
    assert built == stored and len(built) == 4
    assert built["runpod|slice|1|EU|hourly"].fraction is not None  # the slice is read as one


async def test_offers_readings_follow_the_database_when_only_the_childs_polls_wrote_and_when_others_did(
        sm, migrated_database_url) -> None:
    """After its own polls the child reads back only the rows they wrote; a run it did not record (a previous
    leader, a command-line ingest: here `record_poll` in this process) makes it read everything. Either way the
    offers the parent holds, kept up to date from the readings as `App` keeps them, equal what the database says."""
    import random

    from bot.offer_cache import CachedOffer
    from storage.ingest import record_poll

    rng = random.Random(3)
    held: dict[str, CachedOffer] = {}
    reading = None

    async def read_and_compare(ingest: IngestProcess) -> bool:
        nonlocal held, reading
        got = await ingest.offers(reading)
        held = {} if got.full else held
        for key in got.gone:
            held.pop(key, None)
        held.update((o.key, o) for o in (CachedOffer(*row) for row in got.rows))
        reading = got.reading
        async with sm() as s:
            stored = {o.offer.key: CachedOffer.from_stored(o) for o in await in_stock_offers(s)}
        assert held == stored
        return got.read_all

    prices = {f"s{i}": 1.0 + i / 10 for i in range(30)}
    poll = Poller()

    def listing() -> list:
        out = []
        for sku in prices:
            r = rng.random()
            if r < 0.15:
                prices[sku] = round(prices[sku] * rng.choice([0.7, 0.9, 1.2]), 4)
            if r > 0.9:
                continue
            out.append(offer(sku, prices[sku], in_stock=rng.random() > 0.1))
        return out

    async with child(migrated_database_url) as ingest:
        read_all = []
        for n in range(10):
            await ingest.record(poll(listing()), rates=RATES)
            if n % 3 == 1:
                await ingest.record(poll(listing()), rates=RATES)  # two polls between readings
            if n in (4, 7):  # another writer records a poll of the same provider
                await record_poll(sm, poll(listing()), rates=RATES)
            read_all.append(await read_and_compare(ingest))
    # The first reading and the one after each foreign poll read everything; the others only what was written.
    assert read_all == [True, False, False, False, True, False, False, True, False, False]
    assert held


async def test_the_thread_host_runs_the_same_child_and_ends_with_its_channel(sm, migrated_database_url) -> None:
    """INGEST__IN_PROCESS (what the rest of the suite runs on): the child's code serves the same channel from a
    thread of this process, records the same polls, and its thread is gone once the channel is closed."""
    import threading

    poll = Poller()
    ingest = IngestProcess(migrated_database_url, in_thread=True)
    before = set(threading.enumerate())
    await ingest.start()
    try:
        assert ingest.pid == os.getpid()
        assert [t for t in set(threading.enumerate()) - before if t.name == "ingest"]
        await ingest.record(poll([offer("a", 2.0), offer("b", 3.0)]), rates=RATES)
        done = await ingest.record(poll([offer("a", 1.0), offer("b", 3.0)]), rates=RATES)
        assert done.events == 1 and ingest.crossed["diff"] == 1  # the second poll crossed as what changed
        assert {r[0].split("|")[1] for r in (await ingest.offers()).rows} == {"a", "b"}
    finally:
        await ingest.stop()
    assert not [t for t in set(threading.enumerate()) - before if t.name == "ingest"]
    assert await rows(sm, ScrapeRun) == 2
