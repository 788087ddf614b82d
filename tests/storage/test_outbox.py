"""The alert queue on a real migrated database: one row per alerting event in the event's own transaction, whatever
the number of subscribers; exactly the matching active subscriptions hear it; replays add nothing; the cooldown
stops flapping stock without hiding news from a subscriber who had not heard it."""

from __future__ import annotations

from array import array
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import delete, select, update

from core.alerts import DEFAULT_COOLDOWN, AlertEvent
from core.changes import EventKind
from core.offers import Period
from core.polls import PollResult, PollStatus
from storage.alert_tables import AlertEventRow
from storage.ingest import record_poll
from storage.offer_tables import OfferEventRow
from storage.outbox import AlertPolicy, FanOut, OutboxWriter
from storage.user_tables import Subscription, User
from tests.storage.test_outbox_helpers import (
    NEEDS_13B_LORA,
    RATES,
    T0,
    add_sub,
    add_user,
    enqueue,
    event,
    offer,
    pairs,
    queued,
    take,
    unheard,
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

    rows = await queued(sm)
    assert written == len(rows) == 2  # one row per alerting event, not per subscriber
    assert pairs(await unheard(sm)) == sorted([(h100_any, h100.key, "appeared"), (lora, h100.key, "appeared"),
                                               (h100_rub, h100.key, "appeared")])
    fanout = FanOut()
    async with sm() as s:
        await fanout.refresh(s, T0)
        (plan1,) = await fanout.plans(s, [1])
    (item,) = plan1.by_chat[1]  # user 1's two subscriptions match the same offer: it is named once...
    assert sorted(r.subscription_id for r in item.reasons) == sorted([h100_any, lora])  # ...with both
    why = next(r for r in item.reasons if r.subscription_id == lora)
    assert why.need_gib == 38.0 and why.usable_gib == pytest.approx(79.22) and why.gpu_name == "H100 SXM"
    assert item.event.price_usd == pytest.approx(2.49) and item.event.price_rub == pytest.approx(199.2)


async def test_a_replayed_event_is_never_queued_twice(sm) -> None:
    await add_user(sm, 1)
    await add_sub(sm, 1)
    e = event(offer())
    no_cooldown = AlertPolicy(cooldown=timedelta(0))
    assert await enqueue(sm, OutboxWriter(no_cooldown), [e]) == 1
    # The same stored event again (a retried hook), through a fresh writer without a cooldown: the unique key holds.
    await enqueue(sm, OutboxWriter(no_cooldown), [e])
    assert len(await queued(sm)) == 1
    assert len(await unheard(sm)) == 1


async def heard_after(sm, writer: OutboxWriter, events, at) -> list:
    """Queue these events at `at`; return what users would hear of them (then mark everything heard)."""
    async with sm() as s, s.begin():
        await writer.enqueue(s, events, now=at)
    got = await unheard(sm)
    async with sm() as s, s.begin():
        newest = max(r.id for r in await queued(sm))
        await s.execute(update(User).values(alert_cursor=newest))
    return got


async def test_cooldown_stops_flapping_stock_but_a_real_price_drop_still_alerts(sm) -> None:
    await add_user(sm, 1)
    sub = await add_sub(sm, 1)
    writer = OutboxWriter(AlertPolicy(cooldown=timedelta(hours=3)))
    o = offer(price=2.50)
    assert len(await heard_after(sm, writer, [event(o)], T0)) == 1
    assert await heard_after(sm, writer, [event(o, EventKind.BACK_IN_STOCK, old=2.5)], T0 + timedelta(minutes=10)) \
        == []
    small = offer(price=2.45)  # 2 % under the alerted price: still the same news
    assert await heard_after(sm, writer, [event(small, EventKind.PRICE_DROP, old=2.5)],
                             T0 + timedelta(minutes=20)) == []
    big = offer(price=2.00)  # 20 % under: worth telling even inside the cooldown
    assert pairs(await heard_after(sm, writer, [event(big, EventKind.PRICE_DROP, old=2.45)],
                                   T0 + timedelta(minutes=30))) == [(sub, big.key, "price_drop")]
    later = T0 + timedelta(minutes=30) + timedelta(hours=3)
    assert pairs(await heard_after(sm, writer, [event(big, EventKind.BACK_IN_STOCK, old=2.0)], later)) \
        == [(sub, big.key, "back_in_stock")]


async def alerted_at_250(sm, writer: OutboxWriter, *, cap: float) -> tuple[int, int]:
    """An H100 offer alerted at $2.50 to a subscriber without a cap; one capped at `cap` (which 2.50 misses) and one
    made five minutes after the alert heard nothing. Returns the last two's subscription ids."""
    for uid in (1, 2, 3):
        await add_user(sm, uid)
    old = await add_sub(sm, 1, "H100")
    capped = await add_sub(sm, 2, f"H100 under ${cap:.2f}", max_price=cap)
    assert pairs(await heard_after(sm, writer, [event(offer(price=2.50))], T0)) == [(old, offer().key, "appeared")]
    async with sm() as s, s.begin():
        s.add(Subscription(user_id=3, chat_id=3, kind="gpu", query_text="H100 new", gpu_ids=["h100-sxm"],
                           price_currency="USD", paused=False, created_at=T0 + timedelta(minutes=5)))
    return capped, (await unheard_subs(sm))[-1]


async def test_inside_the_cooldown_a_subscriber_who_had_not_heard_still_hears(sm) -> None:
    """The cooldown is kept per offer, but never hides news from whom the last alert did not reach: a subscription
    made since, or one whose price cap the last alerted price did not meet."""
    writer = OutboxWriter(AlertPolicy(cooldown=timedelta(hours=3)))
    capped, new = await alerted_at_250(sm, writer, cap=2.40)
    # 2.45: inside the cooldown and not a real drop, so the one who heard 2.50 hears nothing; 2.45 is still over
    # the capped watcher's 2.40, so nothing for them either; the newcomer hears it.
    cheaper = offer(price=2.45)
    got = await heard_after(sm, writer, [event(cheaper, EventKind.PRICE_DROP, old=2.5, at=T0)],
                            T0 + timedelta(minutes=10))
    assert pairs(got) == [(new, cheaper.key, "price_drop")]
    # 2.38 (5 % under 2.50 is 2.375: not a re-arm) meets the cap of 2.40 for the first time: the capped one hears.
    # The newcomer heard 2.45 ten minutes ago, and 2.38 is no re-arm: the same news, as for the first subscriber.
    cap_met = offer(price=2.38)
    got = await heard_after(sm, writer, [event(cap_met, EventKind.PRICE_DROP, old=2.45)],
                            T0 + timedelta(minutes=20))
    assert pairs(got) == [(capped, cap_met.key, "price_drop")]


async def test_whom_a_cooling_alert_reached_is_not_told_again_when_the_offer_flaps_back(sm) -> None:
    """A cooling alert is news to a subscriber whose cap the last alert's price missed, or who subscribed since; the
    cooldown then treats them as having heard it, so stock flapping at that price tells nobody twice, while a price
    under theirs that they have not heard still reaches them."""
    writer = OutboxWriter(AlertPolicy(cooldown=timedelta(hours=3)))
    capped, new = await alerted_at_250(sm, writer, cap=2.45)
    at_244 = offer(price=2.44)  # under the cap for the first time, not a re-arm: the capped one and the newcomer hear
    got = await heard_after(sm, writer, [event(at_244, EventKind.PRICE_DROP, old=2.5)], T0 + timedelta(minutes=10))
    assert pairs(got) == sorted([(capped, at_244.key, "price_drop"), (new, at_244.key, "price_drop")])
    for minutes in (20, 40):  # it sells out and comes back at the same price, twice: everyone heard that already
        assert await heard_after(sm, writer, [event(at_244, EventKind.BACK_IN_STOCK, old=2.44)],
                                 T0 + timedelta(minutes=minutes)) == []
    # Back at a price it was not announced at, still under the cap: still cooling, nothing new to anyone.
    at_245 = offer(price=2.45)
    assert await heard_after(sm, writer, [event(at_245, EventKind.BACK_IN_STOCK, old=2.45)],
                             T0 + timedelta(minutes=50)) == []
    # A subscriber whose cap only a cheaper price meets (2.39: not yet a re-arm under 2.50) hears it, once.
    await add_user(sm, 4)
    cheap = await add_sub(sm, 4, "H100 under $2.40", max_price=2.40)
    at_239 = offer(price=2.39)
    got = await heard_after(sm, writer, [event(at_239, EventKind.PRICE_DROP, old=2.45)], T0 + timedelta(minutes=60))
    assert pairs(got) == [(cheap, at_239.key, "price_drop")]
    assert await heard_after(sm, writer, [event(at_239, EventKind.BACK_IN_STOCK, old=2.39)],
                             T0 + timedelta(minutes=70)) == []


async def test_a_subscriber_made_after_the_cheapest_cooling_alert_hears_a_dearer_flap_once(sm) -> None:
    """Made after the cheapest cooling alert, a subscription hears the offer back at a dearer price under its cap;
    the offer flapping back at that price again is not news to it (nor to anyone else)."""
    writer = OutboxWriter(AlertPolicy(cooldown=timedelta(hours=3)))
    capped, new = await alerted_at_250(sm, writer, cap=2.45)
    at_240 = offer(price=2.40)  # the cheapest cooling alert: the capped one and the newcomer hear it
    got = await heard_after(sm, writer, [event(at_240, EventKind.PRICE_DROP, old=2.5)], T0 + timedelta(minutes=10))
    assert pairs(got) == sorted([(capped, at_240.key, "price_drop"), (new, at_240.key, "price_drop")])
    async with sm() as s, s.begin():
        s.add(Subscription(user_id=3, chat_id=3, kind="gpu", query_text="H100 under $2.46", gpu_ids=["h100-sxm"],
                           max_price=2.46, price_currency="USD", paused=False,
                           created_at=T0 + timedelta(minutes=15)))
    later = (await unheard_subs(sm))[-1]
    at_244 = offer(price=2.44)  # dearer than 2.40, under 2.46: news to the one made since, only
    for minutes, news in ((20, [(later, at_244.key, "back_in_stock")]), (30, []), (40, [])):  # back, thrice
        got = await heard_after(sm, writer, [event(at_244, EventKind.BACK_IN_STOCK, old=2.40)],
                                T0 + timedelta(minutes=minutes))
        assert pairs(got) == news


async def unheard_subs(sm) -> list[int]:
    async with sm() as s:
        return list((await s.scalars(select(Subscription.id).order_by(Subscription.id))).all())


async def test_the_index_follows_subscription_changes(sm) -> None:
    await add_user(sm, 1)
    await add_user(sm, 2)
    writer = OutboxWriter()
    fanout = FanOut()  # one sender's view, kept across cycles
    first = await add_sub(sm, 1)
    await enqueue(sm, writer, [event(offer(sku="a"))], T0)
    got = await take(sm, fanout, T0)
    second = await add_sub(sm, 2, created_at=T0 + timedelta(minutes=1))  # after "a": never hears it
    await enqueue(sm, writer, [event(offer(sku="b"))], T0 + timedelta(minutes=2))
    got += await take(sm, fanout, T0 + timedelta(minutes=2))
    async with sm() as s, s.begin():
        await s.execute(update(Subscription).where(Subscription.id == first).values(paused=True))
    await enqueue(sm, writer, [event(offer(sku="c"))], T0 + timedelta(minutes=3))
    got += await take(sm, fanout, T0 + timedelta(minutes=3))
    assert sorted((sub, key.split("|")[1]) for _, sub, key, _ in got) == sorted(
        [(first, "a"), (first, "b"), (second, "b"), (second, "c")])
    assert await take(sm, fanout, T0 + timedelta(minutes=4)) == []  # each heard once
    # Issue 26: built once, then only the changed users reloaded (from the change log the triggers write).
    assert fanout.stats["builds"] == 1
    assert fanout.stats["users_reloaded"] >= 2


async def test_the_index_follows_deletes_blocks_and_returns_without_a_rebuild(sm) -> None:
    for uid in (1, 2, 3):
        await add_user(sm, uid)
    writer = OutboxWriter()
    fanout = FanOut(index_check=0.0)
    one, two, three = await add_sub(sm, 1), await add_sub(sm, 2), await add_sub(sm, 3)
    async with sm() as s:
        await fanout.refresh(s, T0)  # built: nothing queued yet
    async with sm() as s, s.begin():
        await s.execute(delete(Subscription).where(Subscription.id == one))  # deleted
        await s.execute(update(User).where(User.id == 2).values(active=False))  # blocked the bot
    await enqueue(sm, writer, [event(offer(sku="a"))], T0)
    async with sm() as s:
        await fanout.refresh(s, T0)
    assert set(fanout.pending) == {3}  # only the one left is matched at all
    got = await take(sm, fanout, T0)
    assert [(uid, sub) for uid, sub, _, _ in got] == [(3, three)]
    async with sm() as s, s.begin():
        await s.execute(update(User).where(User.id == 2).values(active=True))  # came back
    await enqueue(sm, writer, [event(offer(sku="b"))], T0 + timedelta(minutes=1))
    got = await take(sm, fanout, T0 + timedelta(minutes=1))
    assert sorted((uid, sub) for uid, sub, _, _ in got) == [(2, two), (3, three)]
    assert fanout.stats["builds"] == 1


def _poll(offers, minute: int) -> PollResult:
    at = T0 + timedelta(minutes=minute)
    return PollResult(provider="selectel", status=PollStatus.OK, offers=offers, started_at=at,
                      finished_at=at + timedelta(seconds=1))


async def test_outbox_rows_commit_with_the_events_or_not_at_all(sm) -> None:
    await add_user(sm, 1, currency="RUB")
    # 300 ₽ per GPU-hour: the new 2 x A100 costs 383 ₽/h in all, 191 ₽ per GPU-hour
    sub = await add_sub(sm, 1, "A100", gpu_ids=["a100-80gb"], max_price=300, currency="RUB", price_basis="gpu")
    writer = OutboxWriter()
    base = offer("selectel", "srv1", "a100-80gb", 1, 150_000, "RUB", period=Period.MONTH, location="ru-1")
    new = offer("selectel", "srv2", "a100-80gb", 2, 280_000, "RUB", period=Period.MONTH, location="ru-2")
    assert await record_poll(sm, _poll([base], 0), rates=RATES, on_events=writer) == []  # the baseline
    events = await record_poll(sm, _poll([base, new], 10), rates=RATES, on_events=writer)
    assert [e.kind for e in events] == [EventKind.APPEARED]
    rows = await queued(sm)
    assert [r.event_id for r in rows] == [events[0].id]
    assert [(u, s) for u, s, _, _ in await unheard(sm)] == [(1, sub)]
    assert rows[0].payload["price_rub"] == pytest.approx(280_000 / 730 / 2, rel=1e-3)

    class Boom(RuntimeError):
        pass

    async def failing_hook(session, evs) -> None:
        await writer(session, evs)
        raise Boom  # anything failing later in the same transaction

    third = offer("selectel", "srv3", "a100-80gb", 1, 100_000, "RUB", period=Period.MONTH)
    with pytest.raises(Boom):
        await record_poll(sm, _poll([base, new, third], 20), rates=RATES, on_events=failing_hook)
    assert len(await queued(sm)) == 1  # no orphan alert...
    async with sm() as s:
        kinds = (await s.scalars(select(OfferEventRow.offer_key))).all()
    assert third.key not in kinds  # ...and no orphan event: a retry of the poll will produce both


async def test_overlapping_refreshes_file_each_event_once(sm) -> None:
    """The claim loop and an idle check may refresh the same fan-out at once: each event still reaches each user
    once (filed twice, a user's digest would name every offer twice)."""
    import asyncio

    for uid in (1, 2):
        await add_user(sm, uid)
        await add_sub(sm, uid)
    await enqueue(sm, OutboxWriter(), [event(offer(sku=f"h{i}")) for i in range(5)])
    fanout = FanOut()

    async def look() -> None:
        async with sm() as s:
            await fanout.refresh(s, T0)

    await asyncio.gather(look(), look(), look())
    assert {uid: len(ids) for uid, ids in fanout.pending.items()} == {1: 5, 2: 5}
    got = await take(sm, fanout, T0)
    assert len(got) == 10 and len(set(got)) == 10


async def test_unheard_events_are_kept_as_packed_ids(sm) -> None:
    """The (user, event) pairs waiting for Telegram's 30 messages a second are the sender's structure that grows
    with the backlog (a million after 7 minutes of bench/soak.py): 4-byte ids in an array per user, not a list of
    int objects; what is left after a user is planned stays packed."""
    await add_user(sm, 1)
    await add_sub(sm, 1, "H100")
    await enqueue(sm, OutboxWriter(), [event(offer(sku=f"h{i}")) for i in range(3)])
    fanout = FanOut()
    async with sm() as s:
        await fanout.refresh(s, T0)
    ids = fanout.pending[1]
    assert isinstance(ids, array) and ids.itemsize == 4 and list(ids) == sorted(ids) and len(ids) == 3
    async with sm() as s:
        (plan,) = await fanout.plans(s, [1])
    fanout.planned(replace(plan, upto=ids[0]))  # as if only the first was heard
    assert isinstance(fanout.pending[1], array) and list(fanout.pending[1]) == list(ids[1:])


async def test_the_sender_keeps_only_events_someone_has_still_to_hear(sm) -> None:
    """Every replica's sender reads every queued event; one that matches no subscription is not kept (it was kept
    until some user was next told something, so a bot whose users watch other cards held every event it read)."""
    await add_user(sm, 1)
    await add_sub(sm, 1, "H100")
    await enqueue(sm, OutboxWriter(), [event(offer(sku=f"h{i}")) for i in range(3)]
                  + [event(offer(sku=f"r{i}", gpu="rtx-4090", price=0.34)) for i in range(20)])
    fanout = FanOut()
    async with sm() as s:
        assert await fanout.refresh(s, T0) == 23  # every event read...
    assert fanout.held_events == 3  # ...the H100 ones kept, for the one user who watches H100
    assert {uid: len(ids) for uid, ids in fanout.pending.items()} == {1: 3}
    got = await take(sm, fanout, T0)
    assert len(got) == 3 and fanout.held_events == 0  # heard: nothing left


async def test_who_hears_first_rotates_from_poll_to_poll(sm) -> None:
    """Issue 26: when thousands match, the order users are planned in is a rotation of their ids whose starting
    point moves every poll (a golden-ratio step), so the same users are not always last."""
    for uid in range(1, 11):
        await add_user(sm, uid)
        await add_sub(sm, uid)
    writer = OutboxWriter(AlertPolicy(cooldown=timedelta(0)))
    fanout = FanOut()
    orders = []
    for n in range(4):
        await enqueue(sm, writer, [event(offer(sku=f"p{n}"))], T0 + timedelta(minutes=n))
        async with sm() as s:
            await fanout.refresh(s, T0 + timedelta(minutes=n))
        orders.append(list(fanout.pending))
        await take(sm, fanout, T0 + timedelta(minutes=n))
    ids = list(range(1, 11))
    for order in orders:
        start = ids.index(order[0])
        assert order == ids[start:] + ids[:start]  # a rotation: everyone once
    assert len({o[0] for o in orders}) == 4  # a new starting point each poll
    assert len({o[-1] for o in orders}) == 4  # and never the same user last



async def test_a_digest_too_long_for_its_place_starts_before_the_rotation(sm) -> None:
    """A user whose many unheard events would still be going out, one message per chat interval, after everyone
    filed behind them is moved to the front; everyone else keeps the rotation. With more messages after it than
    its digest outlasts, the long one keeps its rotated place too."""
    for uid in range(1, 13):
        await add_user(sm, uid)
        await add_sub(sm, uid)  # H100: every event below
    await add_sub(sm, 7, "A100", gpu_ids=["a100-80gb"])  # user 7 alone hears the A100s too
    writer = OutboxWriter(AlertPolicy(cooldown=timedelta(0)))
    everyone = list(range(1, 13))
    others = [u for u in everyone if u != 7]
    fanout = FanOut(sends_per_chat_interval=30.0)  # one sender's view, kept across polls
    for n in range(5):
        if n == 4:
            fanout.sends_per_chat_interval = 0.5  # its 4 extra messages outlast 2 of the others' then: 11 follow
        now = T0 + timedelta(minutes=n)
        events = [event(offer(sku=f"h{n}"))] + [event(offer(sku=f"a{n}-{k}", gpu="a100-80gb", name="A100 80GB"))
                                               for k in range(4)]
        await enqueue(sm, writer, events, now)
        async with sm() as s:
            await fanout.refresh(s, now)
        order = list(fanout.pending)
        assert len(fanout.pending[7]) == 5 and all(len(fanout.pending[u]) == 1 for u in others)
        if n < 4:  # 4 more messages than anyone's, 11 after it at 30 a chat interval: it goes first
            assert order[0] == 7
            rest = order[1:]
            start = others.index(rest[0])
            assert rest == others[start:] + others[:start]  # the light ones: a rotation, untouched
        else:  # unless it is among the last two, its rotated place holds
            start = everyone.index(order[0])
            rotation = everyone[start:] + everyone[:start]
            if rotation.index(7) < len(rotation) - 2:
                assert order == rotation
            else:
                assert order[0] == 7 and order[1:] == [u for u in rotation if u != 7]
        await take(sm, fanout, now)


async def test_a_plans_subscriptions_are_read_by_user_not_by_walking_the_table(tmp_path) -> None:
    """The per-plan read of the planned users' subscriptions must search the (user_id, paused) index: SQLite chose
    the `paused` index for `... ORDER BY id` (every row of a table where almost nothing is paused, 23 ms a plan at
    100,000 subscriptions), and the sender fell behind Telegram's rate."""
    from sqlalchemy import event as sa_event

    from storage.db import make_engine, make_sessionmaker
    from storage.migrate import upgrade_async

    url = f"sqlite+aiosqlite:///{tmp_path / 'plans.sqlite3'}"
    await upgrade_async(url)
    engine = make_engine(url)
    sm = make_sessionmaker(engine)
    try:
        for uid in (1, 2):
            await add_user(sm, uid)
        later = await add_sub(sm, 2, "H100", created_at=T0)
        first = await add_sub(sm, 1, "H100 under $3", max_price=3.0)
        await add_sub(sm, 1, "H100 paused", paused=True)
        seen: list[tuple[str, Any]] = []

        def record(conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: bool) -> None:
            if statement.lstrip().upper().startswith("SELECT") and "FROM subscriptions" in statement:
                seen.append((statement, params))

        sa_event.listen(engine.sync_engine, "before_cursor_execute", record)
        async with sm() as s:
            subs = await FanOut()._user_subscriptions(s, [2, 1])
        sa_event.remove(engine.sync_engine, "before_cursor_execute", record)
        assert {uid: [m.id for m, _ in rows] for uid, rows in subs.items()} == {1: [first], 2: [later]}
        assert seen
        async with engine.connect() as c:
            for statement, params in seen:
                plan = " ".join(str(r[3]) for r in await c.exec_driver_sql("EXPLAIN QUERY PLAN " + statement,
                                                                            tuple(params)))
                assert "ix_subscriptions_user_paused" in plan, plan
    finally:
        await engine.dispose()


async def test_cursors_move_together_or_not_at_all_when_another_sender_moved_one(sm) -> None:
    """advance_cursors is the plan's compare-and-set: every cursor moves where it is still the one read; if another
    sender moved any of them first (even to the same value), the plan raises and its transaction writes nothing."""
    from storage.outbox import ClaimConflict, advance_cursors
    from tests.storage.test_outbox_helpers import user

    for uid in range(1, 6):
        await add_user(sm, uid)
    async with sm() as s, s.begin():
        await advance_cursors(s, [(uid, 0, 10 + uid) for uid in range(1, 6)])
    assert [(await user(sm, uid)).alert_cursor for uid in range(1, 6)] == [11, 12, 13, 14, 15]
    # Another sender planned user 3 to the very value this one would: still a conflict, and users 1, 2, 4, 5
    # (whose cursors were as read) keep theirs.
    async with sm() as s, s.begin():
        await advance_cursors(s, [(3, 13, 20)])
    with pytest.raises(ClaimConflict):
        async with sm() as s, s.begin():
            await advance_cursors(s, [(1, 11, 20), (2, 12, 20), (3, 13, 20), (4, 14, 20), (5, 15, 20)])
    assert [(await user(sm, uid)).alert_cursor for uid in range(1, 6)] == [11, 12, 20, 14, 15]
    with pytest.raises(ValueError):
        async with sm() as s, s.begin():
            await advance_cursors(s, [(1, 11, 12), (1, 12, 13)])


async def test_cursor_moves_of_any_plan_size_are_written_by_a_few_statements(sm) -> None:
    """Every distinct statement is compiled and kept by SQLAlchemy (~6.5 KB per user it names): one shape per plan
    size made the sender grow by steps as new sizes came. Plans of 1 to 40 users (PLAN_USERS) share four shapes, and
    each still moves exactly its own users' cursors."""
    from sqlalchemy import event as sa_event

    from storage.outbox import advance_cursors
    from tests.storage.test_outbox_helpers import user

    for uid in range(1, 41):
        await add_user(sm, uid)
    engine = sm.kw["bind"].sync_engine
    updates: set[str] = set()

    def record(conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: bool) -> None:
        if statement.lstrip().upper().startswith("UPDATE USERS"):
            updates.add(statement)

    cursors = dict.fromkeys(range(1, 41), 0)
    sa_event.listen(engine, "before_cursor_execute", record)
    try:
        for size in range(1, 41):
            async with sm() as s, s.begin():
                await advance_cursors(s, [(uid, cursors[uid], cursors[uid] + 1) for uid in range(1, size + 1)])
            for uid in range(1, size + 1):
                cursors[uid] += 1
    finally:
        sa_event.remove(engine, "before_cursor_execute", record)
    assert len(updates) == 4, len(updates)  # 8, 16, 32 and 64 users named
    # User k was in the plans of sizes k..40: each moved it one step, none moved it twice or skipped it.
    assert [(await user(sm, uid)).alert_cursor for uid in (1, 2, 39, 40)] == [40, 39, 2, 1]


async def test_an_offer_is_named_once_per_digest_as_its_latest_event_says(sm) -> None:
    """A user behind a backlog who missed "available at $2.49" and then "cheaper: $1.99" of the same offer hears of
    it once, as the later event says; the other offer of the backlog is still there, and both events are heard."""
    await add_user(sm, 1)
    sub_id = await add_sub(sm, 1, "H100")
    first, other = offer(), offer(sku="h100-b", location="eu")
    assert await enqueue(sm, OutboxWriter(), [event(first), event(other)]) == 2
    cheaper = offer(price=1.99)
    assert await enqueue(sm, OutboxWriter(), [event(cheaper, EventKind.PRICE_DROP, old=2.49,
                                                     at=T0 + timedelta(minutes=1))],
                         T0 + timedelta(minutes=1)) == 1
    assert pairs(await unheard(sm, T0 + timedelta(minutes=2))) == sorted([(sub_id, first.key, "price_drop"),
                                                                          (sub_id, other.key, "appeared")])
    fanout = FanOut()
    assert len(await take(sm, fanout, T0 + timedelta(minutes=2))) == 2
    assert await unheard(sm, T0 + timedelta(minutes=2)) == []  # the superseded "available" is heard too


async def test_a_newer_event_of_an_offer_makes_the_older_stale_for_everyone(sm) -> None:
    """"Available at $2.49" then, after it sold out and its cooldown passed, "back in stock at $3.50": a user under
    a $3 cap who has not heard the first is not told a price that no longer exists; a user without a cap hears the
    newer one. Inside the cooldown the newer event is only for who did not hear the older (a cooling event): the
    older then stays, or the user without a cap, for whom the cooling one is suppressed, would hear nothing."""
    await add_user(sm, 1)
    await add_user(sm, 2)
    capped = await add_sub(sm, 1, "H100 under $3", max_price=3.0)
    any_price = await add_sub(sm, 2, "H100")
    cooling, stale = offer(sku="h100-a"), offer(sku="h100-b")
    assert await enqueue(sm, OutboxWriter(), [event(cooling), event(stale)]) == 2
    soon = T0 + timedelta(minutes=30)  # inside the cooldown
    assert await enqueue(sm, OutboxWriter(), [event(offer(sku="h100-a", price=3.5), EventKind.BACK_IN_STOCK,
                                                    at=soon)], soon) == 1
    later = T0 + DEFAULT_COOLDOWN + timedelta(minutes=1)  # past it
    back = offer(sku="h100-b", price=3.5)
    assert await enqueue(sm, OutboxWriter(), [event(back, EventKind.BACK_IN_STOCK, at=later)], later) == 1
    fanout = FanOut()
    assert pairs(await take(sm, fanout, later)) == sorted([
        (capped, cooling.key, "appeared"), (any_price, cooling.key, "appeared"),  # the cooling one: for no one
        (any_price, back.key, "back_in_stock")])  # the stale $2.49 of h100-b: for no one
    assert fanout.stats["superseded"] == 1
    assert await unheard(sm, later) == []


async def test_compaction_drops_forgotten_events_from_the_users_waiting(sm, monkeypatch) -> None:
    """Polls that keep changing the same offers leave each waiting user one id per offer, not one per poll."""
    import storage.outbox as outbox

    monkeypatch.setattr(outbox, "COMPACT_PAIRS", 10)
    for uid in range(1, 6):
        await add_user(sm, uid)
        await add_sub(sm, uid, "H100")
    fanout = FanOut()
    at = T0
    skus = [f"h100-{i}" for i in range(4)]
    for step in range(6):  # every offer gets cheaper at every poll; nobody is planned meanwhile
        at = T0 + timedelta(minutes=step)
        events = [event(offer(sku=s, price=2.49 - 0.2 * step), EventKind.PRICE_DROP if step else EventKind.APPEARED,
                        old=2.49 - 0.2 * (step - 1) if step else None, at=at) for s in skus]
        assert await enqueue(sm, OutboxWriter(), events, at) == 4
        async with sm() as s:
            await fanout.refresh(s, at)
    assert fanout.stats["compactions"] >= 1
    assert fanout.stats["superseded"] == 4 * 5
    assert sorted(fanout.pending) == [1, 2, 3, 4, 5]
    assert all(len(ids) <= 8 for ids in fanout.pending.values())  # at most a poll's 4 since the last compaction
    newest = {max(ids) for ids in fanout.pending.values()}
    planned = await take(sm, fanout, at)
    assert len(planned) == 5 * 4  # each user: every offer once, as its last poll priced it
    assert {kind for *_, kind in planned} == {"price_drop"}
    assert len(newest) == 1 and await unheard(sm, at) == []


async def test_a_user_with_more_unheard_events_than_the_cap_keeps_one_id_and_hears_the_same(sm) -> None:
    """Issue 26, memory flat: past PENDING_CAP a user's unheard events are no longer listed one by one (their entry
    is one id, their place); their plan is matched from the held events instead and says exactly what the listed
    one says: the same offers, events and subscriptions, the unmatched and the ones made after an event left out;
    an event read after the plan was made is heard at the next one, and a user left with nothing is forgotten."""
    for uid in (1, 2):
        await add_user(sm, uid)
        await add_sub(sm, uid, "H100")
        await add_sub(sm, uid, "4090 under $0.5", gpu_ids=["rtx-4090"], max_price=0.5)
        await add_sub(sm, uid, "A100, made later", gpu_ids=["a100-80gb"], created_at=T0 + timedelta(days=1))
    await add_user(sm, 3)
    await add_sub(sm, 3, "A100 only", gpu_ids=["a100-80gb"])
    await add_user(sm, 4)
    await add_sub(sm, 4, "H100")  # waiting too, not planned here
    events = ([event(offer(sku=f"h{i}")) for i in range(6)]
              + [event(offer(sku=f"r{i}", gpu="rtx-4090", price=0.3 + 0.1 * i)) for i in range(4)]  # 3 within the cap
              + [event(offer(sku=f"a{i}", gpu="a100-80gb")) for i in range(3)])
    await enqueue(sm, OutboxWriter(), events)
    listed, capped = FanOut(), FanOut(pending_cap=3)
    async with sm() as s:
        await listed.refresh(s, T0)
        await capped.refresh(s, T0)
        assert capped.overflowed == {1, 2, 4} and not listed.overflowed  # 9 and 6 over the cap of 3; user 3 has 3
        assert all(len(capped.pending[u]) == 1 for u in (1, 2)) and len(capped.pending[3]) == 3
        assert set(capped.pending) == set(listed.pending)
        assert capped.pending[1][0] == listed.pending[1][0]  # the oldest kept
        want = await listed.plans(s, [1, 2, 3])
        got = await capped.plans(s, [1, 2, 3])
    capped.pending[4] = capped.pending.pop(4)  # user 4 last in line: planned users must still go behind them

    def said(plans: list[Any]) -> list[Any]:
        return [(p.user_id, p.upto, sorted((chat, i.event_id, i.subscriptions) for chat, items in p.by_chat.items()
                                           for i in items)) for p in plans]

    assert said(got) == said(want)
    assert [len(p.by_chat[p.user_id]) for p in got] == [9, 9, 3]  # 6 H100 + 3 4090s at most $0.5; A100s: user 3
    # A new event read before the plans were committed: the overflowed users hear it next time, listed or not.
    late = event(offer(sku="h-late"))
    await enqueue(sm, OutboxWriter(), [late])
    async with sm() as s, s.begin():
        await capped.refresh(s, T0)
        from storage.outbox import advance_cursors

        await advance_cursors(s, [(p.user_id, p.cursor, p.upto) for p in got])
    for p in got:
        capped.planned(p)
    assert capped.overflowed == {1, 2, 4} and list(capped.pending) == [4, 1, 2]  # behind the one still waiting
    async with sm() as s:
        again = await capped.plans(s, [1, 2])
    assert [[i.event.offer.key for i in p.by_chat[p.user_id]] for p in again] == [[late.key], [late.key]]
    for p in again:
        capped.planned(p)
    assert list(capped.pending) == [4] and capped.overflowed == {4}  # nothing newer: 1 and 2 forgotten


async def test_held_events_stay_in_their_rows_and_are_read_again_when_planned(sm, monkeypatch) -> None:
    """A backlog holds every poll's events until everyone heard them: what matching reads is kept (the target, its
    names shared between events), the event itself stays in its row, with only the last PARSED_EVENTS parsed; an event
    read again says what it said. An event whose row is gone meanwhile (retention) is left out, not failed on."""
    import storage.outbox as outbox

    monkeypatch.setattr(outbox, "PARSED_EVENTS", 2)
    for uid in (1, 2, 3):
        await add_user(sm, uid)
        await add_sub(sm, uid, "H100")
    events = [event(offer(sku=f"h{i}", price=2.0 + i / 10)) for i in range(5)]
    await enqueue(sm, OutboxWriter(), events)
    fanout = FanOut()
    async with sm() as s:
        await fanout.refresh(s, T0)
        held = list(fanout._events.values())
        assert not hasattr(held[0], "payload") and len(held) == 5
        assert len({id(q.target.provider) for q in held}) == 1 and len({id(q.target.gpu) for q in held}) == 1
        assert len(fanout._parsed) == 2  # the two last read
        plans = await fanout.plans(s, [1, 2])
    for p in plans:
        items = p.by_chat[p.user_id]
        assert sorted(i.event.offer.sku for i in items) == [f"h{i}" for i in range(5)]
        assert sorted(round(i.event.price_usd, 2) for i in items) == [2.0, 2.1, 2.2, 2.3, 2.4]
    assert len(fanout._parsed) == 2
    first = min(fanout._events)
    async with sm() as s, s.begin():
        await s.execute(delete(AlertEventRow).where(AlertEventRow.id == first))
    fanout._parsed.clear()
    async with sm() as s:
        (plan,) = await fanout.plans(s, [3])
    assert sorted(i.event.offer.sku for i in plan.by_chat[3]) == [f"h{i}" for i in range(1, 5)]


async def test_an_alert_not_yet_heard_is_withdrawn_when_its_offer_sells_out_or_gets_dearer(sm) -> None:
    """A user behind a backlog (or in quiet hours) is not told of an offer that has gone since, nor of a price it no
    longer has: a sold-out offer's alert is dropped; a dearer one's is restated at the new price to those it was
    owed to, when it still meets their cap (a user who heard the first price hears nothing more). The sender lets
    the withdrawn alerts go from memory at once. An offer nobody was alerted about writes no withdrawal (the queue
    does not grow with every sell-out of the market)."""
    from bot.alert_texts import render_offer
    from storage.outbox import advance_cursors

    for uid in (1, 2, 3):
        await add_user(sm, uid)
    waiting = await add_sub(sm, 1, "H100")
    capped = await add_sub(sm, 2, "H100 under $2.80", max_price=2.80)
    await add_sub(sm, 3, "H100")
    gone, dearer, stays = offer(sku="h100-a"), offer(sku="h100-b"), offer(sku="h100-c")
    writer = OutboxWriter()
    assert await enqueue(sm, writer, [event(gone), event(dearer), event(stays)]) == 3
    fanout = FanOut()
    async with sm() as s, s.begin():  # user 3 hears the first prices; users 1 and 2 wait behind them
        await fanout.refresh(s, T0)
        plans = await fanout.plans(s, [3])
        await advance_cursors(s, [(p.user_id, p.cursor, p.upto) for p in plans])
    for p in plans:
        fanout.planned(p)
    assert fanout.held_events == 3
    soon = T0 + timedelta(minutes=10)
    never_alerted = offer(sku="h100-z")
    risen = offer(sku="h100-b", price=2.99)
    assert await enqueue(sm, writer, [event(offer(sku="h100-a", in_stock=False), EventKind.SOLD_OUT, at=soon),
                                      event(risen, EventKind.PRICE_RISE, old=2.49, at=soon),
                                      event(never_alerted, EventKind.SOLD_OUT, at=soon)], soon) == 0
    assert writer.stats["withdrawals"] == 2
    assert [r.event_kind for r in await queued(sm)][3:] == ["sold_out", "price_rise"]
    async with sm() as s:
        await fanout.refresh(s, soon)
    assert fanout.held_events == 2 and fanout.stats["withdrawn"] == 2  # the restated rise and the one that stays
    expected = sorted([(1, waiting, stays.key, "appeared"), (1, waiting, dearer.key, "price_rise"),
                       (2, capped, stays.key, "appeared")])  # $2.99 is over user 2's cap; user 3 heard $2.49
    assert await unheard(sm, soon) == expected  # a restarted sender reads the withdrawals in the same order
    assert await take(sm, fanout, soon) == expected
    assert await unheard(sm, soon) == []
    restated = next(AlertEvent.model_validate(r.payload) for r in await queued(sm) if r.event_kind == "price_rise")
    text, _ = render_offer(restated, "en", "USD")
    assert "$2.99" in text and "$2.49" not in text  # said as it is now, not as a change


async def test_an_alert_queued_and_withdrawn_between_two_looks_is_never_held(sm) -> None:
    await add_user(sm, 1)
    await add_sub(sm, 1, "H100")
    writer = OutboxWriter()
    o = offer()
    assert await enqueue(sm, writer, [event(o)]) == 1
    soon = T0 + timedelta(minutes=1)
    await enqueue(sm, writer, [event(offer(in_stock=False), EventKind.SOLD_OUT, at=soon)], soon)
    fanout = FanOut()
    assert await take(sm, fanout, soon) == []
    assert fanout.held_events == 0 and fanout.stats["withdrawn"] == 1


async def plan_users(sm, fanout: FanOut, uids: list[int]) -> None:
    """Plan these users as the sender does (their cursors moved, the fan-out told), without sending anything."""
    from storage.outbox import advance_cursors

    async with sm() as s, s.begin():
        await fanout.refresh(s, T0)
        plans = await fanout.plans(s, uids)
        await advance_cursors(s, [(p.user_id, p.cursor, p.upto) for p in plans])
        await fanout.record_owed(s, plans, T0)
    for p in plans:
        fanout.planned(p)


async def test_an_offer_back_inside_its_cooldown_reaches_who_its_withdrawn_alert_did_not(sm) -> None:
    """User 2 heard "available", user 1 was still waiting when it sold out (their alert withdrawn). Back in stock
    inside the cooldown is a cooling event, only for who did not hear the last alert: user 1 hears it, user 2 does
    not hear the same offer twice. The same from a sender that kept its memory and from one that restarted."""
    await add_user(sm, 1)
    await add_user(sm, 2)
    waiting = await add_sub(sm, 1, "H100")
    await add_sub(sm, 2, "H100")
    writer = OutboxWriter(AlertPolicy(cooldown=timedelta(hours=3)))
    o = offer()
    assert await enqueue(sm, writer, [event(o)]) == 1
    fanout = FanOut()
    await plan_users(sm, fanout, [2])  # user 2 is planned; user 1 waits behind them
    soon, back_at = T0 + timedelta(minutes=10), T0 + timedelta(minutes=40)
    await enqueue(sm, writer, [event(offer(in_stock=False), EventKind.SOLD_OUT, at=soon)], soon)
    assert await unheard(sm, soon) == []  # nothing is said of an offer that is gone
    assert await enqueue(sm, writer, [event(o, EventKind.BACK_IN_STOCK, at=back_at)], back_at) == 1
    assert [r.payload["cooling_since"] is not None for r in await queued(sm)][-1]  # inside the cooldown
    assert await unheard(sm, back_at) == [(1, waiting, o.key, "back_in_stock")]  # a restarted sender
    assert await take(sm, fanout, back_at) == [(1, waiting, o.key, "back_in_stock")]  # the one that kept its memory
    assert await unheard(sm, back_at) == []


async def test_a_user_planned_past_a_withdrawn_alert_still_hears_its_offer_back_inside_the_cooldown(sm) -> None:
    """User 1 was waiting for "X available" when X sold out (withdrawn), and was then told of another offer, which
    moved their cursor past X's alert: they still never heard of X, so X back inside its cooldown reaches them.
    User 2 heard X before it went and is not told twice; user 3's cap was under X's price, so the cooldown never
    concerned them and they hear X now that it meets it. Having heard X back, user 1 is no longer owed: X selling
    out and coming back again inside the cooldown is not said to them (nor to user 2) again."""
    from tests.storage.test_outbox_helpers import user

    for uid in (1, 2, 3):
        await add_user(sm, uid)
    waiting = await add_sub(sm, 1, "H100")
    await add_sub(sm, 2, "H100")
    capped = await add_sub(sm, 3, "H100 under $2.30", max_price=2.30)
    writer = OutboxWriter(AlertPolicy(cooldown=timedelta(hours=3)))
    x = offer(sku="h100-x")
    assert await enqueue(sm, writer, [event(x)]) == 1
    fanout = FanOut()
    await plan_users(sm, fanout, [2])  # user 2 hears X; user 1 waits behind them
    gone_at, other_at = T0 + timedelta(minutes=10), T0 + timedelta(minutes=11)
    sold_out = event(offer(sku="h100-x", in_stock=False), EventKind.SOLD_OUT, at=gone_at)
    await enqueue(sm, writer, [sold_out], gone_at)
    y = offer(sku="h100-y")
    assert await enqueue(sm, writer, [event(y, at=other_at)], other_at) == 1
    told = await take(sm, fanout, other_at)
    assert (1, waiting, y.key, "appeared") in told and all(k != x.key for _, _, k, _ in told)
    assert (await user(sm, 1)).alert_cursor > (await queued(sm))[0].id  # past X's withdrawn alert
    assert fanout.owed_users == 1  # user 1 only: user 3's cap never met X's price
    back_at = T0 + timedelta(minutes=40)
    cheaper = offer(sku="h100-x", price=2.20)
    assert await enqueue(sm, writer, [event(cheaper, EventKind.BACK_IN_STOCK, at=back_at)], back_at) == 1
    assert (await queued(sm))[-1].payload["cooling_since"] is not None  # inside the cooldown
    expected = [(1, waiting, x.key, "back_in_stock"), (3, capped, x.key, "back_in_stock")]
    assert await unheard(sm, back_at) == expected  # a restarted sender owes user 1 the same (stored with the plan)
    assert await take(sm, fanout, back_at) == expected
    again_gone, again_back = back_at + timedelta(minutes=5), back_at + timedelta(minutes=9)
    await enqueue(sm, writer, [event(offer(sku="h100-x", in_stock=False), EventKind.SOLD_OUT, at=again_gone)],
                  again_gone)
    await enqueue(sm, writer, [event(cheaper, EventKind.BACK_IN_STOCK, at=again_back)], again_back)
    assert [uid for uid, *_ in await unheard(sm, again_back) if uid in (1, 2)] == []  # nor after a restart
    assert [uid for uid, *_ in await take(sm, fanout, again_back) if uid in (1, 2)] == []
    assert fanout.owed_users == 0


async def owed_after_restart(sm, now) -> int:
    restarted = FanOut()
    async with sm() as s:
        await restarted.refresh(s, now)
    return restarted.owed_users


async def test_users_owed_a_withdrawn_alert_are_stored_until_a_fresh_alert_of_the_offer(sm) -> None:
    """Whom a plan moved past a withdrawn alert is written with the plan, so a restarted sender owes them too; the
    events it reads again (X's first alert, older than the withdrawal) do not void that. X's fresh alert after its
    cooldown (everyone matching hears it) voids it, in the sender that read it and in one restarted after, even for
    a user whose cap that price is over (so no plan told them and their row is still stored)."""
    for uid in (1, 2):
        await add_user(sm, uid)
    await add_sub(sm, 1, "H100 under $2.60", max_price=2.60)
    any_price = await add_sub(sm, 2, "H100")
    writer = OutboxWriter(AlertPolicy(cooldown=timedelta(hours=3)))
    x = offer(sku="h100-x")
    assert await enqueue(sm, writer, [event(x)]) == 1
    fanout = FanOut()
    async with sm() as s:
        await fanout.refresh(s, T0)
    gone_at, other_at = T0 + timedelta(minutes=10), T0 + timedelta(minutes=11)
    await enqueue(sm, writer, [event(offer(sku="h100-x", in_stock=False), EventKind.SOLD_OUT, at=gone_at)], gone_at)
    assert await enqueue(sm, writer, [event(offer(sku="h100-y"), at=other_at)], other_at) == 1
    await take(sm, fanout, other_at)  # both users hear Y: their cursors move past X's withdrawn alert
    assert fanout.owed_users == 2
    assert await owed_after_restart(sm, other_at) == 2
    assert await owed_rows(sm) == [(1, x.key), (2, x.key)]
    fresh_at = T0 + timedelta(hours=4)  # past the cooldown: a fresh alert, everyone matching hears it
    assert await enqueue(sm, writer, [event(offer(sku="h100-x", price=2.90), EventKind.BACK_IN_STOCK, at=fresh_at)],
                         fresh_at) == 1
    assert (await queued(sm))[-1].payload["cooling_since"] is None
    assert await take(sm, fanout, fresh_at) == [(2, any_price, x.key, "back_in_stock")]  # $2.90 is over user 1's cap
    assert fanout.owed_users == 0
    assert await owed_after_restart(sm, fresh_at) == 0  # void, and deleted with the next plan's write
    assert await owed_rows(sm) == []


async def owed_rows(sm) -> list[tuple[int, str]]:
    from storage.alert_tables import AlertOwed

    async with sm() as s:
        return sorted((r.user_id, r.offer_key) for r in (await s.execute(
            select(AlertOwed.user_id, AlertOwed.offer_key))).all())


async def test_users_owed_a_withdrawn_alert_are_remembered_up_to_a_cap(sm, monkeypatch) -> None:
    """Past OWED_CAP the oldest offers' owed users are let go (memory stays bounded): they are then taken to have
    heard the withdrawn alert, as a restarted sender takes them."""
    import storage.outbox as outbox

    monkeypatch.setattr(outbox, "OWED_CAP", 2)
    for uid in (1, 2, 3, 4):
        await add_user(sm, uid)
        await add_sub(sm, uid, "H100")
    writer = OutboxWriter(AlertPolicy(cooldown=timedelta(hours=3)))
    x, y, z = offer(sku="h100-x"), offer(sku="h100-y"), offer(sku="h100-z")
    assert await enqueue(sm, writer, [event(x), event(y)]) == 2
    fanout = FanOut()
    async with sm() as s:
        await fanout.refresh(s, T0)
    gone_at, other_at = T0 + timedelta(minutes=10), T0 + timedelta(minutes=11)
    await enqueue(sm, writer, [event(offer(sku="h100-x", in_stock=False), EventKind.SOLD_OUT, at=gone_at),
                               event(offer(sku="h100-y", in_stock=False), EventKind.SOLD_OUT, at=gone_at)], gone_at)
    assert await enqueue(sm, writer, [event(z, at=other_at)], other_at) == 1
    assert {k for _, _, k, _ in await take(sm, fanout, other_at)} == {z.key}  # 4 users past 2 withdrawn alerts
    assert fanout.owed_users == 2  # 8 owed, the cap kept the newest offer's 2...
    await take(sm, fanout, other_at)  # the next plan's write deletes the rows the cap let go
    assert {k for _, k in await owed_rows(sm)} == {y.key}
    back_at = T0 + timedelta(minutes=40)
    await enqueue(sm, writer, [event(x, EventKind.BACK_IN_STOCK, at=back_at),
                               event(y, EventKind.BACK_IN_STOCK, at=back_at)], back_at)
    told = await take(sm, fanout, back_at)
    assert len(told) == 2 and {k for _, _, k, _ in told} == {y.key}  # ...who hear it back; X's went unremembered


async def test_a_sell_out_recorded_by_the_ingest_withdraws_the_alert_in_its_own_transaction(sm) -> None:
    """The whole path a poll takes: the offer appears (an alert), then is missing from enough trusted polls to be
    sold out; the withdrawal is written with that poll's events, and the user still waiting hears nothing of it."""
    await add_user(sm, 1)
    await add_sub(sm, 1, "H100")
    writer = OutboxWriter()
    base = offer("selectel", "base", "h100-sxm", 1, 2.0)
    new = offer("selectel", "new", "h100-sxm", 1, 2.2)
    assert await record_poll(sm, _poll([base], 0), rates=RATES, on_events=writer) == []  # the baseline
    assert [e.kind for e in await record_poll(sm, _poll([base, new], 10), rates=RATES, on_events=writer)] \
        == [EventKind.APPEARED]
    assert [key for _, _, key, _ in await unheard(sm, T0 + timedelta(minutes=10))] == [new.key]
    kinds: list[EventKind] = []
    minute = 10
    while EventKind.SOLD_OUT not in kinds:  # the hysteresis: missing from consecutive trusted polls
        minute += 10
        assert minute < 100
        kinds = [e.kind for e in await record_poll(sm, _poll([base], minute), rates=RATES, on_events=writer)]
    assert [r.event_kind for r in await queued(sm)] == ["appeared", "sold_out"]
    assert await unheard(sm, T0 + timedelta(minutes=minute)) == []


async def test_a_poll_whose_sell_outs_withdraw_nothing_queues_without_the_queues_lock(sm) -> None:
    """Most of a market's sell-outs are of offers nobody was alerted on lately: such a poll writes nothing and, on
    PostgreSQL, does not take the lock that puts queuing transactions in line (it neither waits on nor holds up the
    pollers that do queue). A sell-out of an offer alerted on recently still takes it and is withdrawn."""
    from sqlalchemy import text

    from storage.outbox import _EVENTS_LOCK

    await add_user(sm, 1)
    await add_sub(sm, 1, "H100")
    writer = OutboxWriter()
    assert await enqueue(sm, writer, [event(offer(sku="h100-a"))]) == 1
    later = T0 + timedelta(hours=30)  # past MAX_EVENT_AGE: no sender can still hold that alert
    soon = T0 + timedelta(minutes=5)
    postgres = sm.kw["bind"].dialect.name == "postgresql"
    async with sm() as holder:
        if postgres:  # another queuing transaction, mid-way
            await holder.execute(text("SELECT pg_advisory_lock(:k)"), {"k": _EVENTS_LOCK})
        async with sm() as s, s.begin():
            if postgres:  # waiting for the lock is an error at once, not a hang
                await s.execute(text("SET LOCAL lock_timeout = '1ms'"))
            old_and_unknown = [event(offer(sku="h100-a", in_stock=False), EventKind.SOLD_OUT, at=later),
                               event(offer(sku="h100-z"), EventKind.PRICE_RISE, old=2.0, at=later)]
            assert await writer.enqueue(s, old_and_unknown, now=later) == 0
        if postgres:
            await holder.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": _EVENTS_LOCK})
    assert writer.stats["withdrawals"] == 0
    assert [r.event_kind for r in await queued(sm)] == ["appeared"]
    assert await enqueue(sm, writer, [event(offer(sku="h100-a", in_stock=False), EventKind.SOLD_OUT, at=soon)],
                         soon) == 0
    assert writer.stats["withdrawals"] == 1
    assert [r.event_kind for r in await queued(sm)] == ["appeared", "sold_out"]
