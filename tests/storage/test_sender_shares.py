"""Replicas share the matching work (storage/sender_shares.py, issue 26): the senders alive split the users, each
sender's index holds only its users' subscriptions and it plans only them, together they tell everyone exactly what
one sender would; when the senders alive change, a sender starts over for its new share and its new users hear what
they had not heard, nobody twice."""

from __future__ import annotations

import asyncio
import os
import socket
from datetime import timedelta

import pytest
from sqlalchemy import update

from storage import members, sender_shares
from storage.lease_tables import SenderShareRow
from storage.outbox import FanOut, OutboxWriter
from storage.sender_shares import UserShare
from tests.storage.test_outbox_helpers import T0, add_sub, add_user, enqueue, event, offer, take, unheard


def test_a_share_is_the_senders_rank_among_those_alive() -> None:
    alive = ["host:1:a", "host:2:b", "host:3:c"]
    assert UserShare.among(alive, "host:2:b") == UserShare(1, 3)
    assert UserShare.among(alive, "host:9:z") == UserShare()  # not (yet) among them: everyone
    three = [UserShare.among(alive, me) for me in alive]
    for uid in range(1, 50):  # every user is in exactly one share
        assert sum(s.has(uid) for s in three) == 1
    assert all(UserShare().has(uid) for uid in range(1, 50))
    with pytest.raises(ValueError):
        UserShare(3, 3)


async def test_senders_check_in_and_out_by_the_databases_clock(sm) -> None:
    assert await sender_shares.check_in(sm, "b", ttl=30) == UserShare()
    assert await sender_shares.check_in(sm, "a", ttl=30) == UserShare(0, 2)
    assert await sender_shares.check_in(sm, "b", ttl=30) == UserShare(1, 2)
    await sender_shares.check_in(sm, "dead", ttl=0.2)
    assert await sender_shares.check_in(sm, "b", ttl=30) == UserShare(1, 3)
    await asyncio.sleep(0.5)  # "dead" stopped renewing: its row expires
    assert await sender_shares.check_in(sm, "b", ttl=30) == UserShare(1, 2)
    await sender_shares.check_out(sm, "a")  # a clean stop: gone at the next check-in
    assert await sender_shares.check_in(sm, "b", ttl=30) == UserShare()
    table = SenderShareRow.__table__
    assert await members.check_in(sm, table, "c", ttl=30) == ["b", "c"]  # type: ignore[arg-type]


async def test_a_renewal_moves_the_expiry_by_its_ttl_with_statements_built_once(sm) -> None:
    """The check-in's statements are built once per table and database (storage.members), the ttl a parameter: a
    renewal with a longer ttl moves the row's expiry by the difference, and no statement is built again."""
    from sqlalchemy import select

    table = SenderShareRow.__table__

    async def expiry() -> float:
        async with sm() as session:
            return float((await session.execute(select(table.c.expires_at))).scalar_one())

    await members.check_in(sm, table, "a", ttl=30)  # type: ignore[arg-type]
    first = await expiry()
    built = members._check_in_statements.cache_info().misses
    await members.check_in(sm, table, "a", ttl=3_000)  # type: ignore[arg-type]
    assert 2_960 < await expiry() - first < 3_000
    assert members._check_in_statements.cache_info().misses == built


async def test_a_sender_process_on_this_host_that_is_gone_is_not_waited_for(sm) -> None:
    """A restarted sender child has a new name (its pid): the dead child's row would hold half the users for a whole
    ttl. A sender on this host whose process is gone is dropped at the next check-in, as its claims are taken over
    at once (bot.delivery.claims.dead_local_owners); one on another host only expires."""
    from bot.delivery.claims import dead_local_owners

    proc = await asyncio.create_subprocess_exec("true")
    await proc.wait()  # reaped: its pid names no process now
    host = socket.gethostname()
    gone, me, elsewhere = f"{host}:{proc.pid}:old", f"{host}:{os.getpid()}:new", f"other-host:{proc.pid}:far"
    for sender in (gone, elsewhere):
        await sender_shares.check_in(sm, sender, ttl=60)
    share = await sender_shares.check_in(sm, me, ttl=60, dead=lambda alive: dead_local_owners(alive, me))
    assert share == UserShare.among(sorted([me, elsewhere]), me) and share.parts == 2
    assert await members.check_in(sm, SenderShareRow.__table__, me, ttl=60) == sorted([me, elsewhere])  # type: ignore[arg-type]


async def _users(sm, n: int) -> dict[int, int]:
    subs = {}
    for uid in range(1, n + 1):
        await add_user(sm, uid)
        subs[uid] = await add_sub(sm, uid)
    return subs


async def test_two_senders_split_the_users_and_together_tell_everyone_once(sm) -> None:
    subs = await _users(sm, 10)
    writer = OutboxWriter()
    await enqueue(sm, writer, [event(offer(sku="a")), event(offer(sku="b", gpu="h100-sxm"))], T0)
    alone = await unheard(sm, T0)  # what one sender would tell
    senders = [FanOut(), FanOut()]
    for k, fanout in enumerate(senders):
        assert fanout.reshare(UserShare(k, 2))
    got = [await take(sm, fanout, T0) for fanout in senders]
    assert sorted(got[0] + got[1]) == alone  # together: everything, once
    assert {uid for uid, *_ in got[0]} == {2, 4, 6, 8, 10} and {uid for uid, *_ in got[1]} == {1, 3, 5, 7, 9}
    # Each holds only its users' subscriptions, and matched the poll only against them.
    assert [f.indexed for f in senders] == [5, 5]
    assert await take(sm, senders[0], T0) == [] and await take(sm, senders[1], T0) == []
    # A change of user 7's subscriptions is sender 1's alone: sender 0 reloads nobody.
    async with sm() as s, s.begin():
        from storage.user_tables import Subscription

        await s.execute(update(Subscription).where(Subscription.id == subs[7]).values(paused=True))
    await enqueue(sm, writer, [event(offer(sku="c"))], T0 + timedelta(minutes=1))
    later = [await take(sm, fanout, T0 + timedelta(minutes=1)) for fanout in senders]
    assert {uid for uid, *_ in later[0]} == {2, 4, 6, 8, 10} and {uid for uid, *_ in later[1]} == {1, 3, 5, 9}
    assert senders[0].stats["users_reloaded"] == 0 and senders[1].stats["users_reloaded"] == 1
    assert [f.stats["builds"] for f in senders] == [1, 1]


async def test_a_sender_taking_over_a_gone_senders_users_tells_them_what_they_had_not_heard(sm) -> None:
    await _users(sm, 6)
    writer = OutboxWriter()
    await enqueue(sm, writer, [event(offer(sku="a"))], T0)
    stays, goes = FanOut(), FanOut()
    stays.reshare(UserShare(0, 2))
    goes.reshare(UserShare(1, 2))
    first = await take(sm, stays, T0)
    assert {uid for uid, *_ in first} == {2, 4, 6}
    async with sm() as s:
        await goes.refresh(s, T0)  # it matched its users (1, 3, 5), then died before planning them
    assert set(goes.pending) == {1, 3, 5}
    await enqueue(sm, writer, [event(offer(sku="b"))], T0 + timedelta(minutes=1))
    assert stays.reshare(UserShare()) and not stays.reshare(UserShare())  # the only one alive now
    taken = await take(sm, stays, T0 + timedelta(minutes=1))
    keys = {(uid, key.split("|")[1]) for uid, _, key, _ in taken}
    # Users 1, 3, 5 hear both offers (one digest), users 2, 4, 6 only "b": "a" was theirs already.
    assert keys == {(u, "a") for u in (1, 3, 5)} | {(u, k) for u in range(1, 7) for k in ("b",)}
    assert stays.stats["reshares"] == 2 and stays.stats["builds"] == 2 and stays.indexed == 6
    assert await take(sm, stays, T0 + timedelta(minutes=2)) == []


async def test_a_sender_whose_share_changed_still_owes_its_new_users_a_withdrawn_alert(sm) -> None:
    """Each sender planned its users past X's withdrawn alert (they heard Y, never X). One dies; the other, now
    everyone's, starts over for its new share, and X back inside its cooldown still reaches all four: who is owed
    was stored with the plans, not only in the memory of the sender that made them."""
    from core.changes import EventKind
    from storage.outbox import AlertPolicy

    await _users(sm, 4)
    writer = OutboxWriter(AlertPolicy(cooldown=timedelta(hours=3)))
    await enqueue(sm, writer, [event(offer(sku="x"))], T0)
    stays, goes = FanOut(), FanOut()
    stays.reshare(UserShare(0, 2))
    goes.reshare(UserShare(1, 2))
    for fanout in (stays, goes):
        async with sm() as s:
            await fanout.refresh(s, T0)  # X is held for every user, not yet planned
    gone_at, other_at = T0 + timedelta(minutes=10), T0 + timedelta(minutes=11)
    await enqueue(sm, writer, [event(offer(sku="x", in_stock=False), EventKind.SOLD_OUT, at=gone_at)], gone_at)
    await enqueue(sm, writer, [event(offer(sku="y"), at=other_at)], other_at)
    for fanout in (stays, goes):
        assert {key.split("|")[1] for _, _, key, _ in await take(sm, fanout, other_at)} == {"y"}
    assert stays.owed_users == goes.owed_users == 2
    assert stays.reshare(UserShare())  # `goes` died: `stays` is the only one alive
    back_at = T0 + timedelta(minutes=40)
    await enqueue(sm, writer, [event(offer(sku="x"), EventKind.BACK_IN_STOCK, at=back_at)], back_at)
    back = await take(sm, stays, back_at)
    assert sorted(uid for uid, _, key, _ in back if key.split("|")[1] == "x") == [1, 2, 3, 4]
    assert stays.owed_users == 0


async def test_a_plan_made_while_the_sender_started_over_is_void(sm, monkeypatch) -> None:
    """A plan whose events were let go meanwhile would move its users' cursors past them: it is dropped instead,
    and the users are planned again after the new look."""
    await _users(sm, 4)
    await enqueue(sm, OutboxWriter(), [event(offer(sku="a"))], T0)
    fanout = FanOut()
    async with sm() as s:
        await fanout.refresh(s, T0)
    load = fanout._load

    async def load_across_a_new_share(session, ids):
        found = await load(session, ids)
        fanout.reshare(UserShare(0, 2))
        async with sm() as other:
            await fanout.refresh(other, T0)  # an overlapping look takes the new share
        return found

    monkeypatch.setattr(fanout, "_load", load_across_a_new_share)
    async with sm() as s:
        assert await fanout.plans(s, [1, 2, 3, 4]) == []
    monkeypatch.undo()
    assert {uid for uid, *_ in await take(sm, fanout, T0)} == {2, 4}  # nothing was lost on the way
