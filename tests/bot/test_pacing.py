"""Every outgoing Bot API call through one limiter, against the stand-in server enforcing Telegram's limits:
a burst of replies is paced (never refused for flooding, never dropped), a 429 is waited out and retried, and
alerts yield to replies."""

from __future__ import annotations

import asyncio
from collections import Counter

from aiogram import Bot
from aiogram.client.default import DefaultBotProperties

from bot.pacing import Pacer, RateLimitedSession, paced
from testkit.fake_telegram import FakeTelegram

SCALE = 0.1  # the stand-in's one-second window lasts 0.1 s; the limiter is scaled the same way


def scaled_pacer() -> Pacer:
    return Pacer(30 / SCALE, 1.05 * SCALE, window=SCALE, per_window=29)


async def test_a_burst_of_replies_is_paced_and_every_one_delivered() -> None:
    async with FakeTelegram() as tg:
        tg.enforce_limits(global_rate=30, per_chat_rate=1, window=SCALE)
        bot = Bot(tg.token, session=tg.session(), default=DefaultBotProperties(parse_mode="HTML"))
        limiter = RateLimitedSession(scaled_pacer(), time_scale=SCALE)
        bot.session.middleware(limiter)
        try:
            # 40 users, 3 replies each, all at once (what a burst of /estimate looks like to the bot)
            await asyncio.gather(*(bot.send_message(chat, f"answer {n} to {chat}")
                                   for chat in range(1, 41) for n in range(3)))
        finally:
            await bot.session.close()
        sent = Counter(c.chat_id for c in tg.calls_of("sendMessage") if c.status == 200)
        assert sent == dict.fromkeys(range(1, 41), 3)
        # The overall limit is kept ahead of time; a chat's one-a-second is kept once Telegram asks (a reply waits in
        # its handler's transaction), so each chat's extra replies may be refused once each — then waited out and
        # retried, so nothing above was lost.
        assert tg.stats.too_many < 120  # fewer refusals than messages: the overall limit was never the cause
        assert max(tg.stats.too_many_per_chat.values(), default=0) <= 4


async def test_a_429_is_waited_out_and_retried_for_every_kind_of_call() -> None:
    async with FakeTelegram() as tg:
        bot = Bot(tg.token, session=tg.session())
        pacer = scaled_pacer()
        seen: list[str] = []
        bot.session.middleware(RateLimitedSession(pacer, time_scale=SCALE, on_retry_after=seen.append))
        tg.fail("sendMessage", "429", times=2, retry_after=1)
        tg.fail("getMe", "429", times=1, retry_after=1)
        try:
            message = await bot.send_message(7, "hello")
            me = await bot.get_me()
        finally:
            await bot.session.close()
        assert message.text == "hello" and me.is_bot
        calls = tg.calls_of("sendMessage")
        assert [c.status for c in calls] == [429, 429, 200]
        assert calls[1].at - calls[0].at >= SCALE * 0.95  # retry_after (1 window) was respected
        assert seen == ["sendMessage", "sendMessage", "getMe"]


async def test_alerts_yield_to_a_waiting_reply() -> None:
    pacer = scaled_pacer()
    for _ in range(29):  # the window is full
        pacer.started()
    reply = asyncio.create_task(pacer.acquire_urgent(5))
    await asyncio.sleep(0)
    assert pacer.urgent == 1
    assert pacer.window_wait() > 0  # an alert looking now must wait: the reply is first in line
    await asyncio.wait_for(reply, 2)
    assert pacer.urgent == 0


async def test_the_senders_own_calls_are_not_paced_twice() -> None:
    async with FakeTelegram() as tg:
        bot = Bot(tg.token, session=tg.session())
        pacer = scaled_pacer()
        pacer.pause(60)  # a reply would wait a minute now...
        bot.session.middleware(RateLimitedSession(pacer, time_scale=SCALE))
        try:
            with paced():  # ...but a call whose slot the sender already took goes straight out
                await asyncio.wait_for(bot.send_message(3, "alert"), 5)
        finally:
            await bot.session.close()


def test_an_overall_429_narrows_the_window_down_to_90_percent_and_quiet_windows_give_it_back() -> None:
    now = [0.0]
    pacer = Pacer(30, 1.05, lambda: now[0], window=1.0, per_window=30)
    assert pacer.overflowed() is False  # one bunch: no flood, nobody else has to wait
    assert pacer.overflowed() is True  # a second within a window: a flood, everyone waits
    for _ in range(8):
        pacer.overflowed()
    assert pacer.per_window == 27  # never below 90 % of the limit
    for t in range(30):  # 29 sends in the second after the last 429: the 28th waits for the window to move
        now[0] = t / 30
        if pacer.window_wait() > 0:
            break
        pacer.started(t)
    assert t == 27
    now[0] = 10.0  # ten windows without another 429: one send of room back per ten windows
    pacer.window_wait()
    assert pacer.per_window == 28
    now[0] = 40.0
    pacer.window_wait()
    now[0] = 50.0
    pacer.window_wait()
    assert pacer.per_window == 30  # back to the ceiling, never above it
    now[0] = 60.0
    pacer.window_wait()
    assert pacer.per_window == 30


def test_started_tells_how_long_ago_the_chat_had_its_last_message() -> None:
    now = [5.0]
    pacer = Pacer(30, 1.0, lambda: now[0])
    assert pacer.started(7) is None
    now[0] = 6.25
    assert pacer.started(7) == 1.25
    assert pacer.started(8) is None


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def fill(pacer: Pacer) -> int:
    """Start sends, a slot apart, while one fits the window now; how many."""
    n = 0
    while pacer.window_wait() == 0:
        pacer.started()
        n += 1
        pacer.clock.now += pacer.spacing / 2  # type: ignore[attr-defined]
    return n


def test_a_hold_narrows_the_room_at_once_and_widens_it_a_window_later() -> None:
    """Two processes send for one bot (gpuradar/sender_process.py): the one that holds `n` for the other never fills
    more than `per_window - n` of any window; a lowered hold counts until a window after it was lowered."""
    clock = Clock()
    pacer = Pacer(30, 1.0, clock, window=1.0, per_window=29)
    assert pacer.hold(6) == 6 and fill(pacer) == 23
    clock.now += 0.5
    assert pacer.hold(20) == 20 and pacer.window_wait() > 0  # 23 sends still in the window: none more
    clock.now += 1.0
    assert fill(pacer) == 9
    assert pacer.hold(6) == 20  # lowered: the other's sends under 20 may still be in the window
    clock.now += 1.0
    assert pacer.held() == 6 and fill(pacer) == 23


def test_a_grant_and_the_others_starts_bound_the_room() -> None:
    clock = Clock()
    pacer = Pacer(30, 1.0, clock, window=1.0, per_window=29)
    pacer.grant(6)
    assert fill(pacer) == 6  # what the other process always leaves
    clock.now += 1.0
    # granted 20, but the other's 15 sends in the window count as well: 14 more fit
    pacer.grant(20, [clock.now - 0.5 + i * 0.01 for i in range(15)])
    assert fill(pacer) == 14
    assert pacer.wanted() == 14
    clock.now += 1.0
    assert fill(pacer) == 20
    pacer.grant(None, [])
    clock.now += 1.0
    assert fill(pacer) == 29


def test_wanted_counts_the_replies_waiting() -> None:
    clock = Clock()
    pacer = Pacer(30, 1.0, clock, window=1.0, per_window=29)
    pacer.started(1)
    pacer.urgent = 3
    assert pacer.wanted() == 4 and not pacer.room()
