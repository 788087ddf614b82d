"""The alert sender in its child process (gpuradar/sender_process.py), as `gpuradar run` starts it: the child
SIGKILLed in the middle of a burst is started again by the replica and every alert reaches its chat exactly once;
its statistics and metrics come over the socket; `SENDER__IN_PROCESS` runs the same sender on the bot's loop.

Real parts on loopback: the App, the sender child, the stand-in Bot API server (tests/gpuradar/test_crash.py's
KillingTelegram) and the database."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpuradar.app import App, alert_hook
from gpuradar.metrics import Metrics, sender_refresher
from gpuradar.sender_process import SenderProcess, SenderService
from gpuradar.settings import Settings
from storage.outbox import OutboxWriter
from testkit.fake_telegram import busiest_window
from testkit.waiting import until
from tests.gpuradar.test_crash import KillingTelegram, _all_sent, accepted, states
from tests.storage.test_outbox_helpers import add_sub, add_user, enqueue, event, offer, unheard

USERS = 30


@pytest.fixture
async def tg():
    async with KillingTelegram() as server:
        yield server


def app_for(tg: KillingTelegram, url: str, metrics: Metrics, **sender: Any) -> App:
    sender.setdefault("in_process", False)  # these tests are the child process's (tests/conftest.py runs in-process)
    settings = Settings(database_url=url, bot_token=tg.token, telegram_api_url=tg.base_url, sender=sender)
    return App(settings, alerts=alert_hook(poll_interval=0.05), scrape=False, polling_timeout=1, metrics=metrics)


async def subscribers(sm: Any, n: int) -> None:
    for uid in range(1, n + 1):
        await add_user(sm, uid)
        await add_sub(sm, uid)


def sent_metric(metrics: Metrics) -> float:
    return metrics.registry.get_sample_value("gpuradar_alerts_sent_total") or 0.0


async def test_a_sender_child_sigkilled_mid_burst_is_restarted_and_no_alert_is_lost_or_doubled(
        tg: KillingTelegram, sm: Any, migrated_database_url: str) -> None:
    await subscribers(sm, USERS)
    metrics = Metrics(process=False)
    app = app_for(tg, migrated_database_url, metrics)
    await app.start()
    try:
        sender = app._sender
        assert isinstance(sender, SenderProcess)
        await asyncio.wait_for(sender.ready.wait(), 60)
        first = sender.pid
        assert first is not None and first != os.getpid()
        # SIGKILL the child with its 8th message in flight (never accepted), once the 7 before it are recorded.
        tg.pid, tg.kill_at = first, 8
        tg.settle = lambda: until(lambda: _all_sent(sm, 7), limit=20)
        await enqueue(sm, OutboxWriter(), [event(offer(sku="h100"))])
        app.alerts.wake()  # as the ingest child's "alerts queued" does
        await until(lambda: sender.restarts >= 1, limit=60)  # the replica saw its child die
        assert sum(accepted(tg).values()) == 7
        tg.kill_at = tg.settle = None  # the dead child's requests are over; the new child's go through
        await until(lambda: sender.pid not in (None, first), limit=60)
        await until(lambda: _all_sent(sm, USERS), limit=60)
        assert accepted(tg) == {uid: 1 for uid in range(1, USERS + 1)}  # nobody lost, nobody twice
        assert await states(sm) == {"sent": USERS}
        assert await unheard(sm) == []
        # The new child's statistics cross the socket: what it sent is in the replica's metrics.
        report = await sender.report(idle=True)
        assert report.pid == sender.pid
        assert report.idle is True and report.stats["sent"] == USERS - 7 and report.cpu_seconds > 0
        await until(lambda: sent_metric(metrics) >= USERS - 7, limit=10)
    finally:
        await app.stop()
    assert sender.pid is None or sender._proc is None or sender._proc.returncode is not None  # the child exited


async def test_a_woken_sender_child_delivers_and_reports_over_its_socket(
        tg: KillingTelegram, sm: Any, migrated_database_url: str) -> None:
    await subscribers(sm, 3)
    metrics = Metrics(process=False)
    app = app_for(tg, migrated_database_url, metrics, poll_interval=30)  # only a wake-up makes it look soon
    await app.start()
    try:
        sender = app._sender
        assert isinstance(sender, SenderProcess)
        await asyncio.wait_for(sender.ready.wait(), 60)
        await until(lambda: sender.report(), limit=30)  # started: it has looked once
        await enqueue(sm, OutboxWriter(), [event(offer(sku="h100"))])
        app.alerts.wake()
        await until(lambda: _all_sent(sm, 3), limit=20)
        await until(lambda: sent_metric(metrics) == 3, limit=10)  # counts arrive every FLUSH_EVERY s
        assert accepted(tg) == {1: 1, 2: 1, 3: 1}
        report = await sender.report()
        assert report.stats["sent"] == 3 and report.loaded_upto is not None and report.pending_users == 0
        # /metrics: the one sender alive matches every user, its index their 3 subscriptions
        await sender_refresher(sender, metrics)()
        assert metrics.registry.get_sample_value("gpuradar_sender_share_parts") == 1
        assert metrics.registry.get_sample_value("gpuradar_sender_subscriptions_indexed") == 3
        # its CPU is not ours: the replica's own process collector cannot see it
        proc = sender.pid
        assert proc is not None
        os.kill(proc, 0)
    finally:
        await app.stop()
    with pytest.raises(ProcessLookupError):
        os.kill(proc, 0)  # stopped with the replica


async def test_in_process_the_same_sender_runs_on_the_bot_loop(
        tg: KillingTelegram, sm: Any, migrated_database_url: str) -> None:
    await subscribers(sm, 3)
    metrics = Metrics(process=False)
    app = app_for(tg, migrated_database_url, metrics, in_process=True)
    await app.start()
    try:
        sender = app._sender
        assert isinstance(sender, SenderService) and sender.pid is None
        await enqueue(sm, OutboxWriter(), [event(offer(sku="h100"))])
        app.alerts.wake()
        await until(lambda: _all_sent(sm, 3), limit=20)
        assert accepted(tg) == {1: 1, 2: 1, 3: 1} and sent_metric(metrics) == 3
        assert (await sender.report()).stats["sent"] == 3
        # on the bot's loop the replies' pacer itself: replies first through `Pacer.urgent`, nothing held for them
        assert sender.pacer is app.pacer and sender.pacer.global_rate == pytest.approx(29.5)
        assert sender.pacer.held() == 0
    finally:
        await app.stop()



SCALE = 1.0  # the window, in seconds (scaled stand-in and limiters where smaller)


async def test_replies_go_first_while_the_sender_child_sends_a_burst(
        tg: KillingTelegram, sm: Any, migrated_database_url: str) -> None:
    """Replies first, alerts take the rest, across the two processes: replies to 30 users sent in the middle of a
    burst of alerts arrive within the next two windows' worth of alerts (not behind the burst), the bot's sends in
    any window stay within Telegram's limit, and every alert arrives exactly once."""
    users, chats = 150, range(10_001, 10_031)
    await subscribers(sm, users)
    tg.enforce_limits(global_rate=30, per_chat_rate=1, window=SCALE)
    metrics = Metrics(process=False)
    app = app_for(tg, migrated_database_url, metrics, window=SCALE, global_rate=29.5 / SCALE,
                  chat_interval=1.05 * SCALE)
    await app.start()
    try:
        sender = app._sender
        assert isinstance(sender, SenderProcess)
        await asyncio.wait_for(sender.ready.wait(), 60)
        # Every send's start, as each process's pacer saw it (client side: Telegram counts arrivals, which a loaded
        # machine bunches up; a 429 that causes is waited out and retried): looked at well within each window.
        starts: set[float] = set()
        watching = True

        async def watch() -> None:
            while watching:
                starts.update(app.pacer.window_starts(), (await sender.report()).window_starts)
                await asyncio.sleep(SCALE / 20)

        watcher = asyncio.create_task(watch())
        await enqueue(sm, OutboxWriter(), [event(offer(sku="h100"))])
        app.alerts.wake()
        await until(lambda: sum(accepted(tg).values()) >= 20, limit=60)
        alerts_before = sum(n for chat, n in accepted(tg).items() if chat not in chats)
        assert app.bot is not None
        await asyncio.gather(*(app.bot.send_message(chat, "an answer") for chat in chats))
        got = accepted(tg)
        alerts_during = sum(n for chat, n in got.items() if chat not in chats) - alerts_before
        assert {chat: got[chat] for chat in chats} == dict.fromkeys(chats, 1), got
        # not behind the burst: the replies took room of their own (asked of the child), ahead of the ~130 alerts left
        # (with a fixed 6 of each window for replies, 30 replies would let some 115 alerts through first)
        assert sender.reserves >= 1
        assert alerts_during <= 2 * 29, alerts_during
        await until(lambda: _all_sent(sm, users), limit=120)
        got = accepted(tg)
        assert {uid: got[uid] for uid in range(1, users + 1)} == dict.fromkeys(range(1, users + 1), 1)
        assert await unheard(sm) == []
        watching = False
        await watcher
        # The watcher saw the run (not a vacuous window check below): most starts. A start it missed (its loop late
        # by a window on a loaded machine) can only hide an excess, never make one, so this is no exact count.
        calls = tg.calls_of("sendMessage")
        assert len(starts) >= (users + len(chats)) // 2, (len(starts), len(calls), tg.stats.too_many)
        assert busiest_window(sorted(starts), SCALE) <= 29, sorted(starts)
    finally:
        await app.stop()


def test_the_sender_child_makes_its_bot_without_importing_the_application() -> None:
    """The child's Bot gets the replica's pacing middlewares from gpuradar/pacing.py: importing gpuradar.app for
    them put the whole application (handlers, web server, estimator) in every sender child, ~20 MB of its RSS."""
    code = (
        "import sys\n"
        "from gpuradar.metrics import METRICS\n"
        "from gpuradar.sender_process import SenderSpec\n"
        "spec = SenderSpec('sqlite+aiosqlite:///x.db', '123:abc', None, None, rate=20.0, chat_interval=1.0)\n"
        "bot = spec.make_bot(spec.make_pacer(), METRICS)\n"
        "assert len(bot.session.middleware) == 2, bot.session.middleware\n"
        "print('gpuradar.app' in sys.modules, 'bot.handlers' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=Path(__file__).resolve().parents[2], check=True)
    assert out.stdout.split() == ["False", "False"], out.stderr
