"""The users owed a withdrawn alert, stored (`alert_owed`) beside the sender's memory of them: over seeded random
runs of alerts, sell-outs, price rises and drops on a real migrated database, what is stored after each round of plans
is exactly what the sender holds in memory, and a sender restarted then reads back the same (unless the memory's cap
let some go: the store then keeps what the memory dropped only until the next plan's write)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

import pytest
from sqlalchemy import select

from core.changes import EventKind, OfferEvent
from storage.alert_tables import AlertOwed
from storage.outbox import AlertPolicy, FanOut, OutboxWriter
from tests.storage.test_outbox_helpers import T0, add_sub, add_user, enqueue, event, offer, take

OFFERS = 6


def owed_in(fanout: FanOut) -> list[tuple[int, str]]:
    return sorted((uid, key) for key, users in fanout._owed.items() for uid in users)


async def stored(sm) -> list[tuple[int, str]]:
    async with sm() as s:
        return sorted((r.user_id, r.offer_key) for r in (await s.execute(
            select(AlertOwed.user_id, AlertOwed.offer_key))).all())


def next_event(rnd: random.Random, prices: dict[str, float], sku: str, at: datetime) -> OfferEvent:
    price = prices.get(sku)
    kind = rnd.choice(["back", "gone", "rise", "drop"])
    if price is None or kind == "back":
        prices[sku] = new = rnd.choice([2.2, 2.5, 2.9])
        return event(offer(sku=sku, price=new), EventKind.BACK_IN_STOCK, at=at)
    if kind == "gone":
        del prices[sku]
        return event(offer(sku=sku, in_stock=False, price=price), EventKind.SOLD_OUT, at=at)
    prices[sku] = new = round(price + 0.3 if kind == "rise" else price - 0.25, 2)
    return event(offer(sku=sku, price=new), EventKind.PRICE_RISE if kind == "rise" else EventKind.PRICE_DROP,
                 old=price, at=at)


@pytest.mark.parametrize(("seed", "cap"), [(seed, cap) for seed in range(4) for cap in (8, 1_000)])
async def test_the_stored_owed_users_are_the_senders_and_a_restart_reads_them_back(sm, monkeypatch, seed: int,
                                                                                   cap: int) -> None:
    import storage.outbox as outbox

    monkeypatch.setattr(outbox, "OWED_CAP", cap)
    rnd = random.Random(seed)
    for uid in range(1, 21):
        await add_user(sm, uid)
        await add_sub(sm, uid, "H100", max_price=rnd.choice([None, 2.3, 2.6, 3.0]))
    writer = OutboxWriter(AlertPolicy(cooldown=timedelta(minutes=30)))  # many events land inside it: cooling ones
    fanout = FanOut()
    now, prices = T0, {}
    owed_seen = 0
    for round_ in range(40):
        for k in rnd.sample(range(OFFERS), 3):  # queued one by one: a poll's events, withdrawals among them
            now += timedelta(minutes=rnd.choice([1, 5, 20, 40]))
            await enqueue(sm, writer, [next_event(rnd, prices, f"o{k}", now)], now)
        if round_ % 2 == 0:
            continue  # two polls' events before the users are planned: alerts withdrawn before anyone heard them
        await take(sm, fanout, now)
        await take(sm, fanout, now)  # nothing new to plan: its write deletes what the last plans let go
        assert await stored(sm) == owed_in(fanout)
        owed_seen = max(owed_seen, len(owed_in(fanout)))
        restarted = FanOut()
        async with sm() as s:
            await restarted.refresh(s, now)
        if cap > 100:
            assert owed_in(restarted) == owed_in(fanout)
        else:
            assert len(owed_in(restarted)) <= cap
    assert owed_seen > (8 if cap > 100 else 0)  # the runs do owe users (past the small cap)


class Conflict(Exception):
    """Stands for what rolls a plan's transaction back once its owed rows are written: another sender moved one of
    its users' cursors (`ClaimConflict`), or the database failed at commit."""


async def take_rolled_back(sm, fanout: FanOut, now: datetime) -> int:
    """A plan's transaction that rolls back after `record_owed`, handled as the sender's planner does. Returns the
    deletes it carried (voided offers and users let go)."""
    from storage.outbox import advance_cursors

    carried = 0
    with pytest.raises(Conflict):
        async with sm() as s, s.begin():
            await fanout.refresh(s, now)
            plans = await fanout.plans(s, list(fanout.pending))
            await advance_cursors(s, [(p.user_id, p.cursor, p.upto) for p in plans])
            taken = await fanout.record_owed(s, plans, now)
            carried = len(taken.void) + sum(len(users) for _, users in taken.gone)
            fanout.owed_not_written(taken)  # what the planner does once the transaction failed
            raise Conflict
    return carried


@pytest.mark.parametrize("seed", range(4))
async def test_the_deletes_of_a_rolled_back_plan_go_with_the_next_one(sm, monkeypatch, seed: int) -> None:
    """Rows the memory let go (by the cap, or voided by a fresh alert) are deleted by the next plan's write; when
    that transaction rolls back, the plan after it deletes them: the store matches the memory, and a restarted sender
    does not owe users what the running one let go."""
    import storage.outbox as outbox

    monkeypatch.setattr(outbox, "OWED_CAP", 6)
    rnd = random.Random(100 + seed)
    for uid in range(1, 21):
        await add_user(sm, uid)
        await add_sub(sm, uid, "H100", max_price=rnd.choice([None, 2.3, 2.6, 3.0]))
    writer = OutboxWriter(AlertPolicy(cooldown=timedelta(minutes=30)))
    fanout = FanOut()
    now, prices = T0, {}
    carried = 0
    for round_ in range(40):
        for k in rnd.sample(range(OFFERS), 3):
            now += timedelta(minutes=rnd.choice([1, 5, 20, 40]))
            await enqueue(sm, writer, [next_event(rnd, prices, f"o{k}", now)], now)
        if round_ % 2 == 0:
            continue
        carried += await take_rolled_back(sm, fanout, now)
        await take(sm, fanout, now)
        await take(sm, fanout, now)
        assert await stored(sm) == owed_in(fanout)
    assert carried > 0  # some rolled-back plans did carry deletes
