"""Several senders on one outbox (in-process, on a real database: SQLite file, or PostgreSQL with
TEST_DATABASE_URL): each alert is claimed by one of them, claims are renewed while their holder lives, and a claim
whose holder died is taken over: at once when the holder was a process on this host that is gone, after the claim
expires otherwise."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
from collections import Counter
from collections.abc import AsyncIterator

import pytest
from aiogram import Bot
from aiogram.client.default import DefaultBotProperties
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.delivery.claims import Claims, dead_local_owners
from bot.sender import AlertSender
from gpuradar.metrics import METRICS
from storage import sender_shares
from storage.alert_tables import AlertDelivery, DeliveryState
from storage.outbox import OutboxWriter, take_over_deliveries
from storage.sender_shares import UserShare
from testkit.fake_telegram import FakeTelegram
from testkit.waiting import until
from tests.storage.test_outbox_helpers import T0, add_sub, add_user, enqueue, event, offer

HOST = socket.gethostname()


@pytest.fixture
async def tg():
    async with FakeTelegram() as server:
        yield server


def bot_for(tg: FakeTelegram) -> Bot:
    return Bot(tg.token, session=tg.session(), default=DefaultBotProperties(parse_mode="HTML"))




async def sent_outbox_rows(sm) -> int:
    """Messages recorded as sent (one per user: one alert each)."""
    async with sm() as s:
        return len((await s.scalars(select(AlertDelivery.id).where(AlertDelivery.state == "sent"))).all())


async def test_three_senders_share_one_outbox_and_send_each_alert_once(tg: FakeTelegram, sm) -> None:
    users = 60
    for uid in range(1, users + 1):
        await add_user(sm, uid)
        await add_sub(sm, uid)
    await enqueue(sm, OutboxWriter(), [event(offer(sku="h100-shared"))])
    bots = [bot_for(tg) for _ in range(3)]
    # Small batches, so that all three claim while the others are claiming too.
    senders = [AlertSender(b, sm, poll_interval=0.02, batch=5, claim_ttl=5.0, owner=f"test:{n}", metrics=METRICS)
               for n, b in enumerate(bots)]
    sent_before = METRICS.registry.get_sample_value("gpuradar_alerts_sent_total") or 0.0
    tasks = [asyncio.create_task(s.run()) for s in senders]
    try:
        await until(lambda: _eq(sent_outbox_rows(sm), users))
    finally:
        await _stop(senders, tasks, bots)
    assert _sent_per_chat(tg) == dict.fromkeys(range(1, users + 1), 1)
    assert sum(s.stats.sent for s in senders) == users
    assert METRICS.registry.get_sample_value("gpuradar_alerts_sent_total") == sent_before + users  # /metrics
    # Which sender wins each claim race is up to the scheduler (on SQLite one may win them all): the properties are
    # exactly-once delivery and that every claim belongs to one of the three, not an even split.
    async with sm() as s:
        owners = Counter((await s.scalars(select(AlertDelivery.claimed_by))).all())
    assert set(owners) <= {"test:0", "test:1", "test:2"} and sum(owners.values()) == users


async def test_the_senders_alive_split_the_users_and_take_over_a_stopped_senders_share(tg: FakeTelegram, sm) -> None:
    """Replicas share the matching work (storage.sender_shares): with three senders alive each indexes, matches and
    plans only its third of the users; when one stops, the other two split everyone at their next check-in, and
    the next alert still reaches every user once."""
    users = 30
    for uid in range(1, users + 1):
        await add_user(sm, uid)
        await add_sub(sm, uid)
    owners = [f"split:{n}" for n in range(3)]  # sorted as the database returns them: sender n has users n mod 3
    for owner in owners:  # all three alive before anyone looks, so each looks once, at its own share
        await sender_shares.check_in(sm, owner, ttl=60)
    await enqueue(sm, OutboxWriter(), [event(offer(sku="h100-split"))])
    bots = [bot_for(tg) for _ in owners]
    # claim_ttl 9 s: the check-in (and claim renewal) every 3 s; no claim lapses on a loaded machine.
    senders = [AlertSender(b, sm, poll_interval=0.02, batch=5, claim_ttl=9.0, owner=o, metrics=METRICS)
               for o, b in zip(owners, bots, strict=True)]
    tasks = [asyncio.create_task(s.run()) for s in senders]
    try:
        await until(lambda: _eq(sent_outbox_rows(sm), users))
        async with sm() as s:
            rows = await s.execute(select(AlertDelivery.user_id, AlertDelivery.claimed_by))
            claimed = {r.user_id: r.claimed_by for r in rows}
        assert claimed == {uid: owners[uid % 3] for uid in range(1, users + 1)}
        assert [f.fanout.share for f in senders] == [UserShare(n, 3) for n in range(3)]
        assert [f.fanout.indexed for f in senders] == [10, 10, 10]
        await senders[2].stop()  # checks out: the others take its users at their next check-in
        await until(lambda: [f.fanout.share for f in senders[:2]] == [UserShare(0, 2), UserShare(1, 2)], limit=60)
        await enqueue(sm, OutboxWriter(), [event(offer(sku="h100-after"))])
        for sender in senders[:2]:
            sender.wake()
        await until(lambda: _eq(sent_outbox_rows(sm), 2 * users), limit=60)
    finally:
        await _stop(senders, tasks, bots)
    assert _sent_per_chat(tg) == dict.fromkeys(range(1, users + 1), 2)  # both alerts, each once
    assert [f.fanout.indexed for f in senders[:2]] == [15, 15]


async def _stop(senders: list[AlertSender], tasks: list[asyncio.Task[None]], bots: list[Bot]) -> None:
    for sender in senders:
        await sender.stop()
    await asyncio.gather(*tasks)
    for b in bots:
        await b.session.close()


def _sent_per_chat(tg: FakeTelegram) -> Counter[int]:
    return Counter(c.chat_id for c in tg.calls_of("sendMessage") if c.status == 200)


async def _eq(value, expected) -> bool:
    return await value == expected


async def _deliveries_of(sm, owner: str, n: int) -> list[int]:
    """n unsent deliveries claimed by `owner` for another minute (as a live sender elsewhere would hold them).
    Loopback: the database's clock is this machine's, so time.time() is on the same scale as its claims."""
    async with sm() as s, s.begin():
        rows = [AlertDelivery(user_id=uid, chat_id=uid, text=f"alert {uid}", state=DeliveryState.QUEUED,
                              attempts=0, not_before=T0, created_at=T0, claimed_by=owner,
                              claim_expires_at=time.time() + 60) for uid in range(1, n + 1)]
        s.add_all(rows)
        await s.flush()
        return [r.id for r in rows]


async def _take(sm, owner: str, dead: tuple[str, ...] = ()) -> list[int]:
    async with sm() as s, s.begin():
        return await take_over_deliveries(s, owner, 30.0, dead)


async def test_a_live_claim_is_kept_an_expired_one_is_taken_over(sm) -> None:
    ids = await _deliveries_of(sm, "elsewhere:1:aaaa", 3)
    assert await _take(sm, "me:2:bbbb") == []  # live: its holder may be sending them right now
    async with sm() as s, s.begin():  # the holder stops renewing: its claim lapses
        await s.execute(update(AlertDelivery).where(AlertDelivery.id == ids[0]).values(claim_expires_at=0.0))
    assert await _take(sm, "me:2:bbbb") == [ids[0]]
    assert await _take(sm, "third:3:cccc") == []  # and now it is ours, renewed: nobody else takes it


async def test_a_dead_process_on_this_host_is_taken_over_at_once(sm) -> None:
    proc = await asyncio.create_subprocess_exec("true")
    await proc.wait()  # reaped: its pid names no process now
    dead = f"{HOST}:{proc.pid}:dead"
    alive = f"{HOST}:{os.getppid()}:live"  # our parent: certainly running
    foreign = f"other-host-{os.getpid()}:{proc.pid}:far"  # same pid number, another machine: unknown, kept
    me = f"{HOST}:{os.getpid()}:mine"
    predecessor = f"{HOST}:{os.getpid()}:prev"  # our own pid, another process: a restarted container's pid 1
    assert dead_local_owners([dead, alive, foreign, me, predecessor], me) == [dead, predecessor]
    ids_dead = await _deliveries_of(sm, dead, 2)
    async with sm() as s, s.begin():
        await s.execute(update(AlertDelivery).where(AlertDelivery.id == ids_dead[1]).values(claimed_by=alive))
    assert await _take(sm, me, (dead,)) == [ids_dead[0]]


async def test_a_stalled_sender_does_not_send_what_was_taken_over(sm) -> None:
    """A sender that could not renew (a long stall) finds on its next renewal that its deliveries went to another
    sender: it drops them instead of sending them a second time (the sender's claims part, alone)."""
    ids = await _deliveries_of(sm, "stalled:1:aaaa", 2)
    known = set(ids)  # as if claimed and queued in the sender's memory

    @contextlib.asynccontextmanager
    async def write() -> AsyncIterator[AsyncSession]:
        async with sm() as session, session.begin():
            yield session

    async def never_stopping(seconds: float) -> bool:
        return True

    stalled = Claims(sm, write, owner="stalled:1:aaaa", claim_ttl=30.0, request_timeout=15.0, known=lambda: known)
    await stalled.renew()
    assert stalled.lost == set() and await stalled.hold(ids[0], never_stopping)  # still ours: may be sent
    async with sm() as s, s.begin():  # it stalls past its claim; another sender takes the first one over
        await s.execute(update(AlertDelivery).where(AlertDelivery.id == ids[0]).values(claim_expires_at=0.0))
    assert await _take(sm, "other:2:bbbb") == [ids[0]]
    await stalled.renew()
    assert stalled.lost == {ids[0]}
    assert not await stalled.hold(ids[0], never_stopping)
    assert await stalled.hold(ids[1], never_stopping)
