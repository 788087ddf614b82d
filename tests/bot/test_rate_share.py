"""Replicas split Telegram's overall limit (storage/rate_share.py, `Pacer.share`): on a real database, against the
stand-in server enforcing the limit, and through the real App."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiogram import Bot
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.pacing import Pacer, RateLimitedSession
from gpuradar.app import App
from gpuradar.settings import Settings
from storage.lease_tables import RateShareRow
from storage.rate_share import RateShare, check_in
from testkit.fake_telegram import FakeTelegram, busiest_window
from testkit.waiting import until

SCALE = 0.5  # the stand-in's one-second window lasts 0.5 s; the limiters are scaled the same way


def scaled_pacer() -> Pacer:
    return Pacer(30 / SCALE, 1.05 * SCALE, window=SCALE, per_window=29)


async def rows(sm: async_sessionmaker[AsyncSession]) -> set[str]:
    async with sm() as session:
        return set((await session.execute(select(RateShareRow.replica))).scalars())


async def test_replicas_split_the_rate_and_take_a_stopped_or_dead_ones_part_back(
        sm: async_sessionmaker[AsyncSession]) -> None:
    pacers = [scaled_pacer() for _ in range(3)]
    shares = [RateShare(sm, p, ttl=30, replica=f"r{i}") for i, p in enumerate(pacers)]
    assert [await s.renew() for s in shares] == [1, 2, 3]  # each counts those already in
    await shares[0].renew()
    await shares[1].renew()
    for p in pacers:
        assert p.replicas == 3 and p.ceiling == 29 // 3 and p.per_window == 29 // 3
        assert p.spacing == pytest.approx(3 / (30 / SCALE))
    # one stops: its row goes, and the others take its part back at their next renewal
    stop = asyncio.Event()
    stop.set()
    await shares[2].run(stop)  # renews once more, then checks out
    assert await rows(sm) == {"r0", "r1"}
    assert [await s.renew() for s in shares[:2]] == [2, 2]
    assert pacers[0].ceiling == 29 // 2 and pacers[0].spacing == pytest.approx(2 / (30 / SCALE))
    # one dies without checking out: its row expires after its ttl and no longer counts
    await check_in(sm, "dead", ttl=0.3)
    assert await shares[0].renew() == 3
    await asyncio.sleep(0.5)
    assert await shares[0].renew() == 2 and "dead" not in await rows(sm)
    # alone again: the whole limit, and a narrowing after a 429 carries over
    await shares[1].run(stop)
    pacers[0].overflowed()
    assert await shares[0].renew() == 1
    assert (pacers[0].ceiling, pacers[0].per_window) == (29, 28) and pacers[0].spacing == pytest.approx(SCALE / 30)


async def burst(tg: FakeTelegram, pacers: list[Pacer], per_bot: int) -> list[float]:
    """Every bot sends `per_bot` messages at once, each to a chat of its own (so only the overall limit binds).
    Returns when each request really left (after its pacer let it go, retries included), all bots together."""
    started: list[float] = []

    async def record(make_request: Any, bot: Bot, method: Any) -> Any:
        started.append(time.monotonic())
        return await make_request(bot, method)

    bots = []
    for p in pacers:
        bot = Bot(tg.token, session=tg.session())
        bot.session.middleware(RateLimitedSession(p, time_scale=SCALE, max_retries=50))
        bot.session.middleware(record)  # inside the pacer: what it let through
        bots.append(bot)
    try:
        await asyncio.gather(*(bot.send_message(1000 * i + n, f"message {n}")
                               for i, bot in enumerate(bots) for n in range(per_bot)))
    finally:
        for bot in bots:
            await bot.session.close()
    return sorted(started)


async def test_two_replicas_sharing_keep_the_bots_overall_limit(sm: async_sessionmaker[AsyncSession]) -> None:
    """What the shared pacing guarantees is what leaves the replicas: together never more than the bot's overall
    room in any window, and every message delivered. (Telegram counts arrivals, which a loaded machine can bunch
    up; a 429 that causes is waited out and retried, so the stand-in's refusals are not the guarantee.)"""
    per_bot = 40
    async with FakeTelegram() as tg:
        tg.enforce_limits(global_rate=30, per_chat_rate=1, window=SCALE)
        # each replica alone keeps the whole room: two of them together offer Telegram twice what it allows
        alone = [scaled_pacer(), scaled_pacer()]
        assert sum(p.per_window for p in alone) > 30
        await burst(tg, alone, per_bot)
        assert len([c for c in tg.calls_of("sendMessage") if c.status == 200]) == 2 * per_bot
    async with FakeTelegram() as tg:
        tg.enforce_limits(global_rate=30, per_chat_rate=1, window=SCALE)
        pacers = [scaled_pacer(), scaled_pacer()]
        for i, p in enumerate(pacers):
            await RateShare(sm, p, ttl=30, replica=f"replica-{i}").renew()
        await RateShare(sm, pacers[0], ttl=30, replica="replica-0").renew()  # sees the second one too
        assert [p.replicas for p in pacers] == [2, 2]
        assert sum(p.per_window for p in pacers) <= 29
        starts = await burst(tg, pacers, per_bot)
        assert len([c for c in tg.calls_of("sendMessage") if c.status == 200]) == 2 * per_bot
        assert busiest_window(starts, SCALE) <= 29, starts


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as server:
        yield server


async def test_each_running_app_keeps_its_part_and_gives_it_back_when_it_stops(
        tg: FakeTelegram, migrated_database_url: str) -> None:
    def app() -> App:
        settings = Settings(database_url=migrated_database_url, bot_token=tg.token, telegram_api_url=tg.base_url,
                            sender={"share_ttl": 6})  # both share this loop: room for a blocking start-up step
        return App(settings, scrape=False, polling_timeout=1, webhook=False)

    first = app()
    await first.start()
    second: App | None = None
    try:
        assert first.sessionmaker is not None and first.pacer.replicas == 1
        assert len(await rows(first.sessionmaker)) == 1
        second = app()
        await second.start()
        assert second.pacer.replicas == 2  # a newcomer counts the others before its first message
        await until(lambda: first.pacer.replicas == 2, limit=10)
        assert first.pacer.spacing == pytest.approx(2 / 29.5)
        await second.stop()
        second = None
        await until(lambda: first.pacer.replicas == 1, limit=10)
        assert len(await rows(first.sessionmaker)) == 1
    finally:
        if second is not None:
            await second.stop()
        await first.stop()
    # a stopped app leaves no row behind
    from storage.db import make_engine, make_sessionmaker

    engine = make_engine(migrated_database_url)
    try:
        assert await rows(make_sessionmaker(engine)) == set()
    finally:
        await engine.dispose()
