"""The hand-over to the ingest child in slices (issue 26): a poll and an offers reading cross in parts of `part`
items, packed a slice at a time on the parent's loop; what arrives is exactly what was sent, what is recorded is
what the same polls recorded in this process record, and a child killed mid-poll (or between polls, so the next one
is answered `Resend` and crosses whole, in parts) still records each poll exactly once."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from sqlalchemy import func, select

from bot.offer_cache import CachedOffer
from core.alerts import AlertPolicy
from core.polls import PollStatus
from core.slices import run_in_slices
from gpuradar.ingest_process import (
    IngestProcess,
    OfferRows,
    PackedPoll,
    ReadOffers,
    RecordPoll,
    _receive,
    _send,
    offer_values,
    read_in_stock,
    reading_values,
)
from storage.alert_tables import AlertEventRow
from storage.offer_tables import CurrentOffer, OfferEventRow
from storage.queries import in_stock_offers
from testkit.waiting import until
from tests.gpuradar.test_ingest_process import alive, rows, write_lock
from tests.storage.test_ingest import RATES, Poller, offer

PART = 7  # small parts, so polls of a few dozen offers cross in many


@asynccontextmanager
async def sliced_child(url: str) -> AsyncIterator[IngestProcess]:
    ingest = IngestProcess(url, part=PART)  # both ways: the child is told its part size at start
    await ingest.start()
    try:
        yield ingest
    finally:
        await ingest.stop()


def market(rng: random.Random, n: int, provider: str = "runpod") -> list:
    return [offer(f"s{i}", round(rng.uniform(0.5, 5.0), 4), in_stock=rng.random() > 0.1,
                  available=rng.choice([None, 1, 3]), count=rng.choice([1, 2, 8]), provider=provider)
            for i in range(n)]


async def crossed(message: object, part: int) -> object:
    """`message` sent over a socket pair the way parent and child send, and read back."""
    left, right = socket.socketpair()
    _, writer = await asyncio.open_connection(sock=left)
    reader, other = await asyncio.open_connection(sock=right)
    try:
        sent = asyncio.create_task(_send(writer, message, part))
        got = await _receive(reader)
        await sent
        return got
    finally:
        writer.close()
        other.close()


@pytest.mark.parametrize("n", [0, 1, PART - 1, PART, PART + 1, 3 * PART + 2])
async def test_a_poll_and_a_reading_cross_in_parts_unchanged(n: int) -> None:
    rng = random.Random(n)
    result = Poller()(market(rng, n))
    packed, _ = PackedPoll.pack(result, 3)
    message = RecordPoll(packed, RATES, AlertPolicy(), None)
    got = await crossed(message, PART)
    assert got == message and isinstance(got, RecordPoll)
    assert got.poll.unpack() == result
    reading = OfferRows((1, 2), True, [(f"k{i}", i, None, 1.5) for i in range(n)], ["gone"], False)
    assert await crossed(reading, PART) == reading
    assert await crossed(ReadOffers((5, 6)), PART) == ReadOffers((5, 6))  # no list: one frame as before


async def test_packing_in_slices_gives_what_packing_at_once_gives() -> None:
    """The loop's way (a slice at a time) and the direct way are one computation: equal results, whole and as a
    diff against a previous poll, on a generated market with moves, gaps and duplicates."""
    rng = random.Random(26)
    poll = Poller()
    before = poll(market(rng, 2500))
    after_offers = [o.model_copy(update={"price": o.price * 0.9}) if rng.random() < 0.2 else o
                    for o in before.offers if rng.random() > 0.05]
    after = poll([*after_offers, *after_offers[:30], *market(rng, 40)])
    whole, sent = PackedPoll.pack(before, 1)
    sliced, sliced_sent = await run_in_slices(PackedPoll.packing(before, 1), budget=0.0)
    assert (sliced, sliced_sent) == (whole, sent)
    diff, diff_sent = PackedPoll.pack(after, 2, sent)
    assert await run_in_slices(PackedPoll.packing(after, 2, sent), budget=0.0) == (diff, diff_sent)
    assert await run_in_slices(reading_values(after.offers), budget=0.0) == offer_values(after.offers)
    assert diff.unpack(whole.unpack().offers) == after


async def test_polls_crossing_in_parts_record_what_polls_recorded_here_record(sm, migrated_database_url) -> None:
    """Random polls through a child whose frames carry `PART` items at a time (diffs, whole polls after a restart,
    failed polls) end in the same stored state and events as the same polls recorded in this process; and the
    offers reading, crossing back in parts, is what the database says is in stock."""
    from storage.ingest import record_poll

    rng = random.Random(27)
    prices = {f"s{i}": 1.0 + i / 10 for i in range(60)}
    through, here = Poller("runpod"), Poller("vastai")
    async with sliced_child(migrated_database_url) as ingest:
        for n in range(8):
            listed = []
            for sku in prices:
                if rng.random() < 0.1:
                    continue  # not listed this time
                if rng.random() < 0.2:
                    prices[sku] = round(prices[sku] * rng.choice([0.8, 1.1]), 4)
                listed.append((sku, prices[sku], rng.random() > 0.05))
            status = PollStatus.FAILED if n == 3 else PollStatus.OK
            if n == 5:
                pid = ingest.pid
                assert pid is not None
                os.kill(pid, signal.SIGKILL)
                await until(lambda: not alive(pid))  # noqa: B023
            polls = [p([offer(sku, price, in_stock=stock, provider=p.provider) for sku, price, stock in listed]
                       if status is PollStatus.OK else [], status=status) for p in (through, here)]
            done = await ingest.record(polls[0], rates=RATES)
            assert done.events == len(await record_poll(sm, polls[1], rates=RATES))
            reading = await ingest.offers()
            async with sm() as s:
                stored = sorted(o.offer.key for o in await in_stock_offers(s))
            assert reading.full and sorted(r[0] for r in reading.rows) == stored
        assert ingest.crossed == {"whole": 2, "diff": 5}

    async def state(provider: str) -> list[tuple[object, ...]]:
        t = CurrentOffer.__table__.c
        async with sm() as s:
            got = (await s.execute(select(t.sku, t.price, t.in_stock, t.missing, t.ref_price, t.last_seen)
                                   .where(t.provider == provider).order_by(t.sku))).all()
        return [tuple(r) for r in got]

    assert await state("runpod") == await state("vastai")
    assert len(await state("runpod")) == 60
    # Read here (a replica with no child, at start), in partitions: the offers the bot builds from the stored ones.
    here_rows = await read_in_stock(sm)
    async with sm() as s:
        stored = {o.offer.key: CachedOffer.from_stored(o) for o in await in_stock_offers(s)}
    assert {row[0]: CachedOffer(*row) for row in here_rows} == stored and len(here_rows) == len(stored) > 40


async def test_a_child_killed_mid_poll_in_parts_records_the_poll_once(sm, migrated_database_url) -> None:
    """Killed while it holds a poll that crossed in parts (waiting inside its transaction), the child is restarted
    and the poll made again: recorded once, its alerts queued once. Killed between polls, the next poll (packed as a
    diff against a poll the new child never saw) is answered `Resend`, crosses whole in parts, and is recorded once."""
    poll = Poller()
    async with sliced_child(migrated_database_url) as ingest:
        first = [offer(f"s{i}", 2.0) for i in range(50)]
        await ingest.record(poll(first), rates=RATES, alerts=AlertPolicy())
        pid = ingest.pid
        assert pid is not None
        changed = poll([offer("s0", 1.0), *first[1:], offer("new", 3.0)])
        async with write_lock(migrated_database_url):
            call = asyncio.create_task(ingest.record(changed, rates=RATES, alerts=AlertPolicy()))
            await asyncio.sleep(1.0)  # the child has the poll and waits for the lock, inside its transaction
            assert not call.done()
            os.kill(pid, signal.SIGKILL)
            await until(lambda: ingest.restarts == 1)
        done = await asyncio.wait_for(call, 60)
        assert (done.events, done.queued, done.retried) == (2, 2, True)
        # Between polls: the next poll is packed against `changed`, which only the child just killed held.
        pid = ingest.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        await until(lambda: not alive(pid))
        later = poll([offer("s1", 0.5), *changed.offers[2:], offer("s0", 1.0)])
        done = await ingest.record(later, rates=RATES, alerts=AlertPolicy())
        assert done.events == 1
        # Whole: the first poll, and both later ones, each answered Resend by a new child and sent again whole.
        assert ingest.crossed == {"whole": 3, "diff": 0}
        assert (await ingest.record(later, rates=RATES, alerts=AlertPolicy())).events == 0  # recorded already
    async with sm() as s:
        kinds = (await s.execute(select(OfferEventRow.kind, func.count()).group_by(OfferEventRow.kind))).all()
    assert sorted(kinds) == [("appeared", 1), ("price_drop", 2)]  # once each: nothing lost, nothing doubled
    assert await rows(sm, AlertEventRow) == 3


def test_a_poll_crosses_whole_when_it_has_fewer_items_than_a_part() -> None:
    """What fits in one part still crosses as the single frame it always did."""
    from gpuradar.ingest_process import _split

    packed, _ = PackedPoll.pack(Poller()([offer("a")]), 1)
    message = RecordPoll(packed, None, None, None)
    assert _split(message, PART) == (message, None)


async def test_record_hands_the_loop_back_before_its_first_slice(migrated_database_url, monkeypatch) -> None:
    """The poll's own end (the poller's return, its payload freed) runs just before `record` without handing the
    loop back: `record` lets what is waiting run before it starts packing (issue 26)."""
    import gpuradar.ingest_process as ip

    ran: list[str] = []
    real = ip.reading_values

    def reading(offers):  # type: ignore[no-untyped-def]
        ran.append("packing")
        return real(offers)

    monkeypatch.setattr(ip, "reading_values", reading)
    async with sliced_child(migrated_database_url) as ingest:
        poll = Poller("runpod")([offer("s1", 1.0)])
        asyncio.get_running_loop().call_soon(ran.append, "waiting")
        await ingest.record(poll, rates=RATES)
    assert ran == ["waiting", "packing"]
