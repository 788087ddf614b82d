"""Three REAL replicas (`gpuradar run --webhook` subprocesses) on one database (a SQLite file, or PostgreSQL with
TEST_DATABASE_URL), the stand-in Bot API server enforcing Telegram's flood limits, and the provider stand-in.

The provider's payload changes so that an alert fans out to every subscriber; mid-fan-out the scraper leader and
another replica that is sending are SIGKILLed. Then: every alert reached its chat exactly once, the survivor
became the leader (a new lease term) and kept scraping, and a later payload change still alerts.

Exactly once is asserted outside the one documented duplicate window (a crash after Telegram accepted a message
and before "sent" was committed, `bot/sender.py`): the victims are killed while their next requests are held at
the stand-in and after everything Telegram accepted from them is recorded, as a kill between two messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError

from scrapers.registry import PROVIDERS
from storage.alert_tables import AlertDelivery, DeliveryState
from storage.db import make_engine, make_sessionmaker
from storage.lease import LeaderLease
from storage.migrate import upgrade_async
from storage.offer_tables import ScrapeRun
from testkit.provider_server import RUNPOD_PATH, ProviderServer
from testkit.waiting import unlocked
from tests.bot.test_alerts_e2e import B200, H100, R4090, runpod
from tests.gpuradar.test_webhook import WebhookTelegram
from tests.storage.test_outbox_helpers import add_sub, add_user

ROOT = Path(__file__).resolve().parents[2]
SUBSCRIBERS = 90
B200_FANS = 5  # users 1..5 also watch the B200: the alert after the kill goes to them
KILL_AFTER = 25  # accepted alerts before the kill


class ReplicaTelegram(WebhookTelegram):
    """Tells the replicas apart: replica i uses TELEGRAM_API_URL=<base>/r<i>, so its calls arrive under /r<i>/.
    `hold(i)` keeps replica i's calls unanswered (never accepted) until `release()`."""

    def __init__(self) -> None:
        super().__init__()
        self.by_replica: Counter[str] = Counter()
        self.accepted: list[tuple[str, int, str]] = []  # (replica, chat id, text) of accepted alerts
        self._held: set[str] = set()
        self._release = asyncio.Event()

    async def start(self) -> ReplicaTelegram:
        # FakeTelegram.start() with one more route: the same handler under a /<replica> prefix.
        self._cond = asyncio.Condition()
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_route("*", "/{replica}/bot{token}/{method}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        assert site._server is not None
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    def hold(self, *replicas: str) -> None:
        self._held.update(replicas)
        self._release.clear()

    def release(self) -> None:
        self._held.clear()
        self._release.set()

    async def _answer(self, request: web.Request, method: str, params: dict[str, Any], chat_id: Any,
                      call: Any) -> web.Response | None:
        replica = request.match_info.get("replica", "")
        call.params["_replica"] = replica
        if method == "sendMessage" and replica in self._held:
            await self._release.wait()
            return None  # its sender is dead by now: nothing to answer
        response = await super()._answer(request, method, params, chat_id, call)
        if method == "sendMessage" and response is not None and response.status == 200:
            self.by_replica[replica] += 1
            self.accepted.append((replica, int(chat_id), str(params.get("text", ""))))
        return response

    def accepted_message_ids(self, replica: str) -> list[int]:
        return [c.params["_result_message_id"] for c in self.calls_of("sendMessage")
                if c.status == 200 and c.params.get("_replica") == replica and "_result_message_id" in c.params]


# Every provider the app knows (read from the registry, so a new one can never reach its live API from a test).
OTHER_PROVIDERS = tuple(name for name in PROVIDERS if name != "runpod")
OUR_PREFIXES = ("PROVIDERS__", "WEBHOOK__", "WEB__", "LEASE__", "SENDER__", "INGEST__", "LOG__", "DATABASE_URL",
                "BOT_TOKEN", "TELEGRAM_API_URL", "FX_", "ADMIN_IDS")


def replica_env(i: int, url: str, tg: ReplicaTelegram, server: ProviderServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(OUR_PREFIXES)}
    env.update({
        "DATABASE_URL": url, "BOT_TOKEN": tg.token, "TELEGRAM_API_URL": f"{tg.base_url}/r{i}",
        "WEBHOOK__URL": "https://bot.example.com/telegram/webhook", "WEBHOOK__SECRET": "replicas-Secret_1",
        "WEB__HOST": "127.0.0.1", "WEB__PORT": "0",
        "LEASE__TTL": "2", "SENDER__POLL_INTERVAL": "0.2", "SENDER__BATCH": "10", "SENDER__CLAIM_TTL": "4",
        "PROVIDERS__RUNPOD__INTERVAL": "1", "PROVIDERS__RUNPOD__JITTER": "0", "PROVIDERS__RUNPOD__TIMEOUT": "2",
        "FX_URL": f"{server.base_url}/no-rates-here", "PYTHONPATH": str(ROOT),
    })  # fmt: skip
    # A nested variable replaces the provider's whole default, so each names its base URL (the stand-in) too.
    for name in ("runpod", *OTHER_PROVIDERS):
        env[f"PROVIDERS__{name.upper()}__BASE_URL"] = server.base_url
        env[f"PROVIDERS__{name.upper()}__ENABLED"] = "true" if name == "runpod" else "false"
    return env


def children(pid: int) -> set[int]:
    """The processes `pid` started (Linux /proc): a replica's ingest and sender children."""
    found: set[int] = set()
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found.update(int(child) for child in f.read().split())
    return found


PROCS: dict[str, asyncio.subprocess.Process] = {}  # the replicas that must stay alive (checked while waiting)


# Every wait below is a guard against a hang, never a timing assertion: each replica starts two children (ingest,
# sender) that import the app, so on a loaded 2-core machine a step can take a minute.
GUARD = 120.0


async def until(predicate: Any, limit: float = GUARD, what: str = "condition") -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while True:
        died = [name for name, p in PROCS.items() if p.returncode is not None]
        if died:
            raise AssertionError(f"{what}: replica {died} exited early (see its replica.log)")
        try:
            result = predicate()
            if asyncio.iscoroutine(result):
                result = await result
        except OperationalError as exc:  # SQLite: the replicas hold the one write lock longer than its busy timeout
            if "locked" not in str(exc):
                raise
            result = False
        if result:
            return
        if loop.time() > deadline:
            raise AssertionError(f"{what}: not reached; {sqlite_locks()}")
        await asyncio.sleep(0.05)


def sqlite_locks() -> str:
    """Which of our processes hold POSIX locks (SQLite's, on its database and -shm files) and of what kind, from
    /proc/locks: a replica stuck holding the write lock is named by a failure, not guessed at afterwards."""
    names = {p.pid: name for name, p in PROCS.items()}
    for name, p in PROCS.items():
        names.update({child: f"{name}'s child" for child in children(p.pid)})
    names[os.getpid()] = "the test"
    held: list[str] = []
    with contextlib.suppress(OSError), open("/proc/locks") as f:
        for line in f:
            parts = line.split()  # "1: POSIX ADVISORY WRITE <pid> <dev:inode> <start> <end>"
            if len(parts) >= 8 and parts[1] == "POSIX" and parts[4].isdigit() and int(parts[4]) in names:
                held.append(f"{names[int(parts[4])]} {parts[3]} {parts[5]}@{parts[6]}")
    return "locks held: " + (", ".join(held) or "none")


@pytest.fixture
async def tg() -> Any:
    server = ReplicaTelegram()
    await server.start()
    yield server
    server.release()
    await server.close()


async def test_three_replicas_survive_the_leader_and_a_sender_being_killed_mid_fan_out(
        tg: ReplicaTelegram, provider_server: ProviderServer, database_url: str, tmp_path: Path) -> None:
    server = provider_server
    server.serve(RUNPOD_PATH, runpod({R4090: (0.69, 8), B200: (5.99, 0)}))
    engine = make_engine(database_url)
    sm = make_sessionmaker(engine)
    procs = PROCS
    procs.clear()
    try:
        # Three replicas at once on an EMPTY database: they migrate one after another (gpuradar.migrate_lock).
        for i in range(3):
            workdir = tmp_path / f"r{i}"
            workdir.mkdir()
            log = open(workdir / "replica.log", "wb")  # noqa: SIM115 - the child writes to it until it dies
            procs[f"r{i}"] = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "gpuradar.cli", "run", "--webhook", cwd=workdir,
                env=replica_env(i, database_url, tg, server), stdout=log, stderr=log)
        await until(lambda: len(tg.calls_of("setWebhook")) == 3, 120, "three replicas up")  # a loaded CI host
        assert all(p.returncode is None for p in procs.values())
        await unlocked(lambda: upgrade_async(database_url))  # a no-op now: proves they reached head

        lease = LeaderLease(sm, "scrapers", holder="observer")

        async def baseline_recorded() -> bool:
            async with sm() as s:
                return bool(await s.scalar(select(func.count()).select_from(ScrapeRun)
                                           .where(ScrapeRun.status == "ok")))

        # The leader's first poll waits for its ingest child, which imports the app niced below everything else
        # running (gpuradar.child_process.CHILD_NICENESS): on a 2-core host busy with other work that takes far
        # longer than any later step, so this one guard is longer.
        await until(baseline_recorded, 3 * GUARD, "baseline poll")
        for uid in range(1, SUBSCRIBERS + 1):
            await unlocked(lambda uid=uid: add_user(sm, uid))
            await unlocked(lambda uid=uid: add_sub(sm, uid))  # H100
            if uid <= B200_FANS:
                await unlocked(lambda uid=uid: add_sub(sm, uid, "B200", gpu_ids=["b200"]))

        # The H100 appears: one alert per subscriber, stretched by the stand-in's flood limits.
        tg.enforce_limits(global_rate=30, per_chat_rate=1, window=1.0)
        server.serve(RUNPOD_PATH, runpod({R4090: (0.69, 8), B200: (5.99, 0), H100: (2.39, 4)}))
        await until(lambda: len(tg.accepted) >= KILL_AFTER, GUARD, "fan-out under way")

        # The victims: the scraper leader, and another replica with alerts of its own still to send.
        state = await lease.state()
        assert state is not None
        leader = next(name for name, p in procs.items() if f":{p.pid}:" in state.holder)
        async with sm() as s:
            owners = Counter((await s.scalars(select(AlertDelivery.claimed_by).where(
                AlertDelivery.state.in_((DeliveryState.QUEUED, DeliveryState.SENDING))))).all())
        # A replica's alerts are claimed by its sender, in a child process of the replica (gpuradar/sender_process.py).
        family = {name: {p.pid, *children(p.pid)} for name, p in procs.items()}
        pending_by = {name: sum(n for owner, n in owners.items()
                                if owner and any(f":{pid}:" in owner for pid in family[name]))
                      for name in procs}
        sender = max((n for n in procs if n != leader), key=lambda n: pending_by[n])
        assert pending_by[sender] > 0 or pending_by[leader] > 0, "nothing left in flight to kill"
        survivor = next(n for n in procs if n not in (leader, sender))
        survivor_pid = procs[survivor].pid
        victims = (leader, sender)

        # Kill as between two messages: hold their next requests, let what Telegram accepted be recorded, kill.
        tg.hold(*victims)

        async def victims_recorded() -> bool:
            ids = {m for v in victims for m in tg.accepted_message_ids(v)}
            async with sm() as s:
                recorded = await s.scalar(select(func.count()).select_from(AlertDelivery).where(
                    AlertDelivery.telegram_message_id.in_(ids), AlertDelivery.state == DeliveryState.SENT))
            return recorded == len(ids)

        await until(victims_recorded, GUARD, "victims' accepted alerts recorded")
        for v in victims:
            procs[v].send_signal(signal.SIGKILL)
        for v in victims:
            assert await asyncio.wait_for(procs.pop(v).wait(), 15) == -signal.SIGKILL
        tg.release()
        async with sm() as s:
            last_run_before_kill = await s.scalar(select(func.max(ScrapeRun.id)))
        in_flight_at_kill = SUBSCRIBERS - len(tg.accepted)
        assert in_flight_at_kill > 0  # it really was mid-fan-out

        # Every H100 alert arrives, each chat exactly once, sent by whoever is left.
        async def all_sent() -> bool:
            async with sm() as s:
                return await s.scalar(select(func.count()).select_from(AlertDelivery)
                                      .where(AlertDelivery.state == "sent")) == SUBSCRIBERS

        await until(all_sent, GUARD, "every alert sent")
        h100 = Counter(chat for _, chat, text in tg.accepted if "H100" in text)
        assert h100 == dict.fromkeys(range(1, SUBSCRIBERS + 1), 1)

        # Scraping continues under a new leader: the survivor holds a later term and polls...
        async def survivor_leads() -> bool:
            now = await lease.state()
            return now is not None and f":{survivor_pid}:" in now.holder and now.term > state.term

        await until(survivor_leads, GUARD, "survivor takes the lease")
        # ...and a later payload change still alerts (the B200 comes into stock for its five watchers).
        server.serve(RUNPOD_PATH, runpod({R4090: (0.69, 8), B200: (5.49, 3), H100: (2.39, 4)}))
        await until(lambda: len([1 for _, _, text in tg.accepted if "B200" in text]) >= B200_FANS, GUARD, "B200 alerts")
        async with sm() as s:
            assert await s.scalar(select(func.count()).select_from(ScrapeRun)
                                  .where(ScrapeRun.id > last_run_before_kill)) >= 1
        b200 = Counter(chat for _, chat, text in tg.accepted if "B200" in text)
        assert b200 == dict.fromkeys(range(1, B200_FANS + 1), 1)
        assert tg.by_replica[survivor] >= 1
        # nothing half-done is left behind (a delivery re-queued after the stand-in's 429 may still be on its way)
        async def all_final() -> bool:
            async with sm() as s:
                states = Counter((await s.scalars(select(AlertDelivery.state))).all())
            return set(states) == {DeliveryState.SENT}

        await until(all_final, GUARD, "every delivery sent")

        last = procs.pop(survivor)
        last.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(last.wait(), 30) == 0  # clean stop
        # `gpuradar run` logged JSON lines, with neither the bot token nor the webhook secret in them.
        for name in ("r0", "r1", "r2"):
            lines = (tmp_path / name / "replica.log").read_text().splitlines()
            assert lines and not any(tg.token in line or "replicas-Secret_1" in line for line in lines)
            if name == survivor:  # (a killed replica's last line may be cut short)
                assert all(json.loads(line)["level"] for line in lines)
                # SIGTERM is a clean stop: nothing of it at error level (issue 24: a CancelledError was)
                assert not any("CancelledError" in line for line in lines)
    finally:
        for p in procs.values():
            if p.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    p.kill()
                await p.wait()
        procs.clear()
        await engine.dispose()
