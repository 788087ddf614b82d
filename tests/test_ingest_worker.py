"""Ingest off the bot's loop, on a real database: the worker thread records polls with its own engine, the alert
hook runs in its transaction there, the bot's loop keeps running meanwhile, and the worker's state cache never
serves a state another writer has changed."""

from __future__ import annotations

import asyncio
import threading

from sqlalchemy import select

from core.changes import EventKind
from storage.ingest import record_poll
from storage.ingest_worker import IngestWorker
from storage.offer_tables import CurrentOffer
from tests.test_ingest import RATES, Poller, kinds, offer


async def test_polls_are_recorded_in_the_worker_thread_and_only_changes_loaded(sm, migrated_database_url) -> None:
    worker = IngestWorker(migrated_database_url)
    worker.start()
    hook_threads: list[int] = []

    async def hook(session, events) -> None:
        hook_threads.append(threading.get_ident())

    poll = Poller()
    try:
        many = [offer(f"s{i}", 2.0 + i / 1000) for i in range(3000)]
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0)
                ticks += 1

        task = asyncio.create_task(ticker())
        assert await worker.record(poll(many), rates=RATES, on_events=hook) == []  # the baseline
        task.cancel()
        assert ticks > 10  # this loop kept running while the poll was recorded
        changed = [offer("s0", 1.0), *many[1:], offer("new", 3.0)]
        events = await worker.record(poll(changed), rates=RATES, on_events=hook)
        assert kinds(events) == [("appeared", "new"), ("price_drop", "s0")]
        assert worker.cache.hits == 1  # the second poll diffed against the worker's own state, loading nothing
        assert hook_threads and set(hook_threads) != {threading.get_ident()}  # inside the worker's transaction
        async with sm() as s:
            s0 = await s.get(CurrentOffer, offer("s0").key)
            assert s0 is not None and s0.price == 1.0

        # Another writer (a previous leader) records a poll of the same provider: the cache is stale now, so the
        # worker reloads and reports exactly what changed since that poll, nothing twice.
        foreign = [offer("s0", 1.0), *many[1:], offer("new", 3.0), offer("other", 5.0)]
        assert kinds(await record_poll(sm, poll(foreign), rates=RATES)) == [("appeared", "other")]
        events = await worker.record(poll([*foreign, offer("third", 6.0)]), rates=RATES, on_events=hook)
        assert kinds(events) == [("appeared", "third")]
        assert worker.cache.hits == 1
        # Sold out after the hysteresis, through the cache again.
        rest = [*foreign, offer("third", 6.0)]
        rest = [o for o in rest if o.sku != "s5"]
        assert await worker.record(poll(rest), rates=RATES, on_events=hook) == []
        events = await worker.record(poll(rest), rates=RATES, on_events=hook)
        assert [(e.kind, e.offer.sku) for e in events] == [(EventKind.SOLD_OUT, "s5")]
        async with sm() as s:
            s5 = (await s.scalars(select(CurrentOffer).where(CurrentOffer.sku == "s5"))).one()
            assert s5.in_stock is False
    finally:
        await worker.stop()
