"""The sender's planner (`bot.delivery.planning.DigestPlanner`) on a real migrated database: a plan whose
transaction rolls back after its owed users' rows were written (the commit failing) hands the deletes it carried to
the next plan, so what is stored of the users owed a withdrawn alert stays what the sender holds in memory."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncSession

import storage.outbox as outbox
from bot.alert_texts import DIGEST_MESSAGES
from bot.delivery.planning import DigestPlanner
from bot.delivery.rendering import DigestRenderer
from storage.outbox import AlertPolicy, FanOut, OutboxWriter
from tests.storage.test_outbox_helpers import T0, add_sub, add_user, enqueue
from tests.storage.test_owed_store import OFFERS, next_event, owed_in, stored


class CommitFailed(Exception):
    pass


@pytest.mark.parametrize("seed", range(3))
async def test_a_plan_rolled_back_at_commit_leaves_its_owed_deletes_to_the_next(sm, monkeypatch, seed: int) -> None:
    monkeypatch.setattr(outbox, "OWED_CAP", 6)  # users let go by the cap: rows the next plan's write deletes
    rnd = random.Random(200 + seed)
    for uid in range(1, 21):
        await add_user(sm, uid)
        await add_sub(sm, uid, "H100", max_price=rnd.choice([None, 2.3, 2.6, 3.0]))
    fail = False

    @asynccontextmanager
    async def write() -> AsyncIterator[AsyncSession]:
        async with sm() as session, session.begin():
            yield session
            if fail:  # everything was written; the commit does not happen
                raise CommitFailed

    clock = {"now": T0}
    fanout = FanOut()
    planner = DigestPlanner(sm, write, fanout, DigestRenderer(DIGEST_MESSAGES), owner="test", claim_ttl=30.0,
                            clock=lambda: clock["now"])
    writer = OutboxWriter(AlertPolicy(cooldown=timedelta(minutes=30)))
    prices: dict[str, float] = {}
    now: datetime = T0
    failed = 0
    for round_ in range(30):
        for k in rnd.sample(range(OFFERS), 3):
            now += timedelta(minutes=rnd.choice([1, 5, 20, 40]))
            await enqueue(sm, writer, [next_event(rnd, prices, f"o{k}", now)], now)
        clock["now"] = now
        if round_ % 2 == 0:
            continue
        fail = bool(fanout._owed_gone or fanout._owed_void)  # a plan that carries deletes rolls back
        if fail:
            with pytest.raises(CommitFailed):
                await planner.plan(100)
            failed += 1
            fail = False
        while (await planner.plan(100))[0]:
            pass
        # What the memory owes is stored; what else is stored, the next plan's write deletes (the memory let it go).
        held, kept = set(owed_in(fanout)), set(await stored(sm))
        assert held <= kept
        assert {(u, k) for u, k in kept - held if k not in fanout._owed_void} <= {
            (u, k) for k, users in fanout._owed_gone for u in users}
    assert failed > 0
