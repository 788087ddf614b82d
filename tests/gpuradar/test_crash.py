"""A REAL sender process (`gpuradar sender`) killed in the middle of a fan-out and started again: no alert is
lost and none is sent twice. SIGTERM lets the message in flight finish and exits cleanly.

The stand-in Bot API server runs in this test's event loop; the sender talks to it over loopback like to Telegram.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from storage.alert_tables import AlertDelivery
from storage.outbox import OutboxWriter
from testkit.fake_telegram import FakeTelegram
from testkit.waiting import until
from tests.storage.test_outbox_helpers import add_sub, add_user, enqueue, event, offer, unheard

ROOT = Path(__file__).resolve().parents[2]


class KillingTelegram(FakeTelegram):
    """Kills the sender with SIGKILL when its `kill_at`-th sendMessage arrives, before processing it: the process
    dies with a request in flight that Telegram never accepted. Requests that arrive while the kill is pending die
    with the process too (never accepted).

    `settle`, when set, is awaited first: what Telegram already accepted gets recorded, so the kill lands on the
    in-flight message alone. Without it the kill also lands in the window between Telegram's answer and the
    sender's record of it, the one window that may send twice (bot.sender's docstring), which
    `test_sigkill_with_rendered_digests_waiting_then_restart` bounds; how wide it is at the moment of the kill
    depends on the machine's load, so a test asserting exact counts settles first."""

    kill_at: int | None = None
    pid: int | None = None
    settle: Callable[[], Awaitable[object]] | None = None
    _seen = 0
    _killed: asyncio.Event | None = None

    async def _answer(self, request: Any, method: str, params: dict[str, Any], chat_id: Any, call: Any) -> Any:
        if method == "sendMessage" and self.kill_at is not None and self.pid is not None:
            self._seen += 1
            if self._seen >= self.kill_at:
                if self._seen == self.kill_at:
                    self._killed = killed = asyncio.Event()
                    if self.settle is not None:
                        with contextlib.suppress(AssertionError):  # not settled in time: kill anyway, the test tells
                            await self.settle()
                    os.kill(self.pid, signal.SIGKILL)
                    killed.set()
                elif self._killed is not None:
                    await self._killed.wait()
                if request.transport is not None:
                    request.transport.abort()
                return None
        return await super()._answer(request, method, params, chat_id, call)


@pytest.fixture
async def tg():
    async with KillingTelegram() as server:
        yield server


async def start_sender(url: str, tg: FakeTelegram, tmp_path: Path) -> asyncio.subprocess.Process:
    env = {**os.environ, "DATABASE_URL": url, "BOT_TOKEN": tg.token, "TELEGRAM_API_URL": tg.base_url,
           "PYTHONPATH": str(ROOT),
           # digests of several messages (one by default): a kill between a digest's messages must lose none
           "SENDER__DIGEST_MESSAGES": "20"}
    log = open(tmp_path / "sender.log", "ab")  # noqa: SIM115 - the child writes to it until it dies
    return await asyncio.create_subprocess_exec(sys.executable, "-m", "gpuradar.cli", "sender", cwd=tmp_path, env=env,
                                                stdout=log, stderr=log)




def accepted(tg: FakeTelegram) -> Counter[Any]:
    """Messages Telegram accepted, per chat (a killed or dropped request is not one)."""
    return Counter(c.chat_id for c in tg.calls_of("sendMessage") if c.status == 200)


async def states(sm) -> Counter[str]:
    async with sm() as s:
        return Counter((await s.scalars(select(AlertDelivery.state))).all())


async def sent_rows(sm) -> int:
    """Messages recorded as sent (one per user here: grouping on, or one user with grouping off)."""
    return (await states(sm))["sent"]


async def setup_fanout(sm, users: int, *, grouping: bool = True, offers: int = 1) -> None:
    for uid in range(1, users + 1):
        await add_user(sm, uid, grouping=grouping)
        await add_sub(sm, uid)
    await enqueue(sm, OutboxWriter(), [event(offer(sku=f"h100-{i}")) for i in range(offers)])


async def test_sigkill_in_flight_restart_sigterm_in_flight_restart(tg: KillingTelegram, sm, migrated_database_url,
                                                                   tmp_path) -> None:
    await setup_fanout(sm, 12)
    # 1. SIGKILL with the 5th message in flight (Telegram never processed it), once the 4 before it are recorded.
    tg.kill_at = 5
    tg.settle = lambda: until(lambda: _all_sent(sm, 4), limit=20)
    proc = await start_sender(migrated_database_url, tg, tmp_path)
    tg.pid = proc.pid
    assert await asyncio.wait_for(proc.wait(), 60) == -signal.SIGKILL
    assert sum(accepted(tg).values()) == 4  # died mid-fan-out: 4 accepted, the 5th in flight, 7 never started
    tg.kill_at = tg.settle = None

    # 2. Restart; SIGTERM while its first message is slow to be answered: that one finishes, the process exits 0.
    tg.fail("sendMessage", "delay", times=1, delay=0.8)
    before = len(tg.calls_of("sendMessage"))  # the killed process's, the aborted ones included
    proc = await start_sender(migrated_database_url, tg, tmp_path)
    await until(lambda: len(tg.calls_of("sendMessage")) > before)  # its first message is in flight now
    proc.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(proc.wait(), 60) == 0  # clean exit
    dels = await states(sm)
    done = sum(accepted(tg).values())
    assert done >= 5 and dels["sent"] == done  # the message in flight was finished and recorded
    assert dels["sending"] == 0  # nothing left half-done
    waiting = {u for u, *_ in await unheard(sm)}  # users whose message is not even written yet
    assert dels["sent"] + dels["queued"] + len(waiting) == 12  # each user's alert is somewhere, once

    # 3. Restart: the rest goes out.
    proc = await start_sender(migrated_database_url, tg, tmp_path)
    try:
        await until(lambda: _all_sent(sm, 12))
    finally:
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 60) == 0
    assert accepted(tg) == {uid: 1 for uid in range(1, 13)}  # nobody lost, nobody twice
    assert await states(sm) == {"sent": 12}
    assert await unheard(sm) == []


async def _all_sent(sm, n: int) -> bool:
    return await sent_rows(sm) == n


async def test_sigkill_between_messages_then_restart(tg: KillingTelegram, sm, migrated_database_url,
                                                    tmp_path) -> None:
    # One chat, grouping off: four messages at Telegram's one-a-second pace for a chat.
    await setup_fanout(sm, 1, grouping=False, offers=4)
    proc = await start_sender(migrated_database_url, tg, tmp_path)
    await until(lambda: _all_sent(sm, 2))  # the second is recorded; the third waits for its slot
    proc.kill()
    assert await asyncio.wait_for(proc.wait(), 60) == -signal.SIGKILL
    before = sum(accepted(tg).values())
    assert before == 2
    proc = await start_sender(migrated_database_url, tg, tmp_path)
    try:
        await until(lambda: _all_sent(sm, 4))
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 60)
    texts = [c.text for c in tg.calls_of("sendMessage") if c.status == 200]
    assert len(texts) == 4 and len(set(texts)) == 4  # four different alerts, each once


async def test_sigkill_with_rendered_digests_waiting_then_restart(tg: KillingTelegram, sm, migrated_database_url,
                                                                 tmp_path) -> None:
    """The sender prepares (matches, renders, commits) the next users' digests while earlier ones are being sent.
    Killed with digests prepared but not sent, and with a one-chat 429 just before: after the restart every offer
    reaches every user exactly once (a digest of several messages included), and nothing stays half-done."""
    users, offers = 6, 30
    for uid in range(1, users + 1):
        await add_user(sm, uid)
        await add_sub(sm, uid)
    await enqueue(sm, OutboxWriter(), [event(offer(sku=f"h100-{i}")) for i in range(offers)])
    tg.fail("sendMessage", "429", times=1, chat_id=2)
    tg.kill_at = 5
    proc = await start_sender(migrated_database_url, tg, tmp_path)
    tg.pid = proc.pid
    assert await asyncio.wait_for(proc.wait(), 60) == -signal.SIGKILL
    dels = await states(sm)
    assert dels["queued"] > 0  # rendered and committed, not sent: what the restart must send once
    assert await unheard(sm) == []  # every user's digest was prepared before the kill
    # The one duplicate window (module docstring of bot.sender): accepted by Telegram, killed before "sent" was
    # committed. Only those may go out twice.
    window = sum(accepted(tg).values()) - dels["sent"]
    tg.kill_at = None

    proc = await start_sender(migrated_database_url, tg, tmp_path)
    try:
        await until(lambda: _none_waiting(sm))
    finally:
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 60) == 0
    heard: Counter[tuple[Any, str]] = Counter()
    for c in tg.calls_of("sendMessage"):
        if c.status == 200:
            heard.update((c.chat_id, link) for link in re.findall(r'href="([^"]+)"', c.text))
    want = {(uid, f"https://runpod.example/h100-{i}") for uid in range(1, users + 1) for i in range(offers)}
    assert set(heard) == want  # nobody lost an offer
    twice = {chat for (chat, _), n in heard.items() if n > 1}
    assert max(heard.values()) <= 2 and len(twice) <= window  # nothing twice but what was in the crash window
    assert sum(accepted(tg).values()) - (await states(sm))["sent"] == window  # each message recorded once
    assert (await states(sm))["sent"] > users  # digests of several messages each, all recorded sent


async def _none_waiting(sm) -> bool:
    s = await states(sm)
    return s["queued"] == 0 and s["sending"] == 0 and s["sent"] > 0


async def test_a_standalone_sender_takes_its_part_of_the_limit_with_the_replicas(tg: KillingTelegram, sm,
                                                                                 migrated_database_url,
                                                                                 tmp_path) -> None:
    """`gpuradar sender` beside a running replica: both are in `rate_shares`, so each paces at half of Telegram's
    overall limit (before, the sender took all of it on top of the replicas' parts); SIGTERM gives its part back."""
    from storage.lease_tables import RateShareRow
    from storage.rate_share import check_in

    async def members() -> list[str]:
        async with sm() as s:
            return sorted((await s.scalars(select(RateShareRow.replica))).all())

    await check_in(sm, "replica-a", ttl=600)  # a bot replica, alive for the whole test
    await setup_fanout(sm, 3)
    proc = await start_sender(migrated_database_url, tg, tmp_path)
    try:
        await until(lambda: _count_is(members, 2))
        await until(lambda: _all_sent(sm, 3))
    finally:
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 60) == 0
    assert await members() == ["replica-a"]  # checked out at its stop
    log = (tmp_path / "sender.log").read_text()
    assert "2 replica(s) send to Telegram: this one keeps 1/2" in log


async def _count_is(members: Callable[[], Awaitable[list[str]]], n: int) -> bool:
    return len(await members()) == n
