"""The outbox hook on a real migrated database: exactly the matching active subscriptions get one row per event,
in the event's own transaction; replays add nothing; the cooldown stops flapping stock."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select, update

from core.changes import EventKind
from core.offers import Period
from core.polls import PollResult, PollStatus
from storage.ingest import record_poll
from storage.offer_tables import OfferEventRow
from storage.outbox import AlertPolicy, OutboxWriter
from storage.user_tables import Subscription, User
from tests.test_outbox_helpers import (
    NEEDS_13B_LORA,
    RATES,
    T0,
    add_sub,
    add_user,
    enqueue,
    event,
    offer,
    outbox,
    pairs,
)


async def test_events_reach_exactly_the_matching_active_subscriptions(sm) -> None:
    for uid in (1, 2, 3, 4):
        await add_user(sm, uid)
    h100_any = await add_sub(sm, 1, "H100")
    lora = await add_sub(sm, 1, "13B LoRA", kind="workload", gpu_ids=None, min_gib=NEEDS_13B_LORA)
    await add_sub(sm, 2, "H100 under $2", max_price=2.0)
    h100_rub = await add_sub(sm, 2, "H100 до 250 ₽/ч", max_price=250.0, currency="RUB")
    await add_sub(sm, 2, "H100 on vast", providers=["vastai"])
    await add_sub(sm, 3, "H100 paused", paused=True)
    await add_sub(sm, 4, "H100 of a blocked chat")
    async with sm() as s, s.begin():
        await s.execute(update(User).where(User.id == 4).values(active=False))

    h100, r4090, a100 = offer(), offer(sku="4090", gpu="rtx-4090", price=0.34), offer(sku="a100", gpu="a100-80gb")
    events = [event(h100), event(r4090), event(a100, EventKind.SOLD_OUT), event(a100, EventKind.PRICE_RISE, old=2)]
    written = await enqueue(sm, OutboxWriter(), events)

    rows = await outbox(sm)
    assert written == len(rows) == 3
    assert pairs(rows) == sorted([(h100_any, h100.key, "appeared"), (lora, h100.key, "appeared"),
                                  (h100_rub, h100.key, "appeared")])
    why = next(r for r in rows if r.subscription_id == lora).payload
    assert why["need_gib"] == 38.0 and why["usable_gib"] == pytest.approx(79.22) and why["gpu_name"] == "H100 SXM"
    assert why["price_usd"] == pytest.approx(2.49) and why["price_rub"] == pytest.approx(199.2)
    assert {r.state for r in rows} == {"pending"}


async def test_a_replayed_event_is_never_queued_twice(sm) -> None:
    await add_user(sm, 1)
    await add_sub(sm, 1)
    e = event(offer())
    no_cooldown = AlertPolicy(cooldown=timedelta(0))
    assert await enqueue(sm, OutboxWriter(no_cooldown), [e]) == 1
    # The same stored event again (a retried hook), through a fresh writer without a cooldown: the unique key holds.
    await enqueue(sm, OutboxWriter(no_cooldown), [e])
    assert len(await outbox(sm)) == 1


async def test_cooldown_stops_flapping_stock_but_a_real_price_drop_still_alerts(sm) -> None:
    await add_user(sm, 1)
    sub = await add_sub(sm, 1)
    writer = OutboxWriter(AlertPolicy(cooldown=timedelta(hours=3)))
    o = offer(price=2.50)
    assert await enqueue(sm, writer, [event(o)], T0) == 1
    assert await enqueue(sm, writer, [event(o, EventKind.BACK_IN_STOCK, old=2.5)], T0 + timedelta(minutes=10)) == 0
    small = offer(price=2.45)  # 2 % under the alerted price: still the same news
    assert await enqueue(sm, writer, [event(small, EventKind.PRICE_DROP, old=2.5)], T0 + timedelta(minutes=20)) == 0
    big = offer(price=2.00)  # 20 % under: worth telling even inside the cooldown
    assert await enqueue(sm, writer, [event(big, EventKind.PRICE_DROP, old=2.45)], T0 + timedelta(minutes=30)) == 1
    later = T0 + timedelta(minutes=30) + timedelta(hours=3)
    assert await enqueue(sm, writer, [event(big, EventKind.BACK_IN_STOCK, old=2.0)], later) == 1
    assert [(r.subscription_id, r.event_kind) for r in await outbox(sm)] == [
        (sub, "appeared"), (sub, "price_drop"), (sub, "back_in_stock")]


async def test_the_index_follows_subscription_changes(sm) -> None:
    await add_user(sm, 1)
    await add_user(sm, 2)
    writer = OutboxWriter()
    first = await add_sub(sm, 1)
    await enqueue(sm, writer, [event(offer(sku="a"))])
    second = await add_sub(sm, 2)
    await enqueue(sm, writer, [event(offer(sku="b"))])
    async with sm() as s, s.begin():
        await s.execute(update(Subscription).where(Subscription.id == first).values(paused=True))
    await enqueue(sm, writer, [event(offer(sku="c"))])
    got = [(r.subscription_id, r.offer_key.split("|")[1]) for r in await outbox(sm)]
    assert sorted(got) == sorted([(first, "a"), (first, "b"), (second, "b"), (second, "c")])


def _poll(offers, minute: int) -> PollResult:
    at = T0 + timedelta(minutes=minute)
    return PollResult(provider="selectel", status=PollStatus.OK, offers=offers, started_at=at,
                      finished_at=at + timedelta(seconds=1))


async def test_outbox_rows_commit_with_the_events_or_not_at_all(sm) -> None:
    await add_user(sm, 1, currency="RUB")
    sub = await add_sub(sm, 1, "A100", gpu_ids=["a100-80gb"], max_price=300, currency="RUB")
    writer = OutboxWriter()
    base = offer("selectel", "srv1", "a100-80gb", 1, 150_000, "RUB", period=Period.MONTH, location="ru-1")
    new = offer("selectel", "srv2", "a100-80gb", 2, 280_000, "RUB", period=Period.MONTH, location="ru-2")
    assert await record_poll(sm, _poll([base], 0), rates=RATES, on_events=writer) == []  # the baseline
    events = await record_poll(sm, _poll([base, new], 10), rates=RATES, on_events=writer)
    assert [e.kind for e in events] == [EventKind.APPEARED]
    rows = await outbox(sm)
    assert [(r.subscription_id, r.event_id) for r in rows] == [(sub, events[0].id)]
    assert rows[0].payload["price_rub"] == pytest.approx(280_000 / 730 / 2, rel=1e-3)

    class Boom(RuntimeError):
        pass

    async def failing_hook(session, evs) -> None:
        await writer(session, evs)
        raise Boom  # anything failing later in the same transaction

    third = offer("selectel", "srv3", "a100-80gb", 1, 100_000, "RUB", period=Period.MONTH)
    with pytest.raises(Boom):
        await record_poll(sm, _poll([base, new, third], 20), rates=RATES, on_events=failing_hook)
    assert len(await outbox(sm)) == 1  # no orphan alert...
    async with sm() as s:
        kinds = (await s.scalars(select(OfferEventRow.offer_key))).all()
    assert third.key not in kinds  # ...and no orphan event: a retry of the poll will produce both
