"""The alert sender in a child process of the replica (issue 26), the default in `gpuradar run`: its own
interpreter, event loop, database engine, Bot session and pacer, so building its index, matching a poll against
every subscription and rendering thousands of digests never hold the bot's loop (a thread shared the GIL: the
bot's loop still lagged 190-370 ms while the sender worked, bench/sender_loop.py).

    spec = SenderSpec.like(bot, database_url, rate=23.6, chat_interval=1.05, window=1.0, options={...})
    sender = SenderProcess(spec)               # or SenderService(spec) to run it on this loop (tests, one process)
    task = asyncio.create_task(sender.run())   # until stop(); a child that dies is started again
    sender.wake()                              # alerts were committed: look now
    sender.share(2)                            # two replicas send for this bot: keep half
    report = await sender.report(idle=True)    # what the sender says of itself (CPU, index, stats)
    await sender.stop()                        # the messages in flight finish and are recorded

One path: `SenderService` is the sender (engine, Bot, pacer, `bot.sender.AlertSender`), wherever it runs;
`SenderProcess` only hosts a `SenderService` in a child (gpuradar/child_process.py: it dies with the replica,
runs niced) and carries its control and statistics over the socket pair: the parent sends `Wake`, `Share`,
`Ask` and `Stop`; the child sends `Counts` (its metrics, summed, every `FLUSH_EVERY` s and before it exits) and
`Answer`s. A wake-up lost on the way (the child restarting) costs nothing but time: the sender looks at the outbox
every `poll_interval` seconds on its own, and a new child resumes what the dead one left (bot/sender.py: its
deliveries' claims name a process that no longer runs, so they are taken over at once; nothing is sent twice but
what the documented crash window allows).

Pacing: Telegram's ~30 messages a second are the bot token's, replies and alerts together: replies first, alerts
take the rest. Both pacers have this replica's whole share (`Share`). The child always keeps `reply_share` of each
window free (`Pacer.hold`), which the parent's replies use without asking; while replies need more (starts in the
window and replies waiting, `Pacer.wanted`), the parent asks for it (`Reserve`, looked at every `OFFER_EVERY` s,
sent only on a change) up to `max_reply_share` (so a reply flood cannot starve alerts), the child holds it and
answers `Room` with the hold in effect and its own starts in the window, and the parent's replies then use that
room, counting those starts (`Pacer.grant`). A hold is lowered a window after the ask (the parent's replies under
the former one may still be in the window) and the parent lowers its grant at once, so at every moment the
parent's replies plus the child's alerts stay within the share. No message per alert (at 1,000 paid broadcasts a
second that would be 1,000 messages a second on the bot's loop); one per change of the replies' need.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import logging
import math
import os
import pickle
import signal
import socket
import sys
import time
from collections import Counter
from dataclasses import dataclass, field, fields
from typing import Any

from aiogram import Bot
from aiogram.client.default import DefaultBotProperties
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer

from gpuradar.child_process import LogConfig, enter_child, reap, receive, send, send_nowait, spawn

log = logging.getLogger(__name__)

OFFER_EVERY = 0.05  # seconds between two looks at the replies' need (a `Reserve` goes only when it changed)
FLUSH_EVERY = 0.5  # seconds between two `Counts` from the child (metrics lag /metrics by at most this)
RESTART_DELAY = (0.5, 30.0)  # seconds before a dead child is started again: first, then doubling up to the second
STOP_TIMEOUT = 30.0  # seconds the child gets to finish its messages in flight and exit after `Stop`
# Not niced below the bot, unlike the ingest child: the sender writes claims, cursors and deliveries in short
# transactions all the time, and on SQLite a niced process descheduled inside one holds the one write lock while the
# replicas' lease and rate-share renewals wait behind it (a loaded host lost its leader that way). The bot's loop
# does not share its GIL, which is what held replies.
SENDER_NICENESS = 0
# Prepared statements each of the sender's SQLite connections keeps (sqlite3's default: 128). Its reads name users,
# events and offer groups in IN lists (`storage.availability_cache.CHUNK` keys at most), and each length is another
# statement: a prepared 450-key IN list holds ~84 KB of SQLite's memory (measured with sqlite3_memory_used, 7 Dec
# 2026), so 128 of them per pooled connection took SQLite's memory in the child from 2 to 16 MB over 10 minutes of
# bench/soak.py, one IN-list length at a time; with 24, 1 to 5 MB over 20 minutes, and the sender's CPU for a 44,847-
# user delivery the same (65-70 s both ways, bench/sender_loop.py --deliver). Its fixed statements (claims, cursors,
# deliveries) are a few.
SENDER_SQLITE_STATEMENTS = 24


# ------------------------------------------------------------------------------------------------ what runs
@dataclass(frozen=True, slots=True)
class SenderSpec:
    """Everything a sender is made from, picklable: the database, the Bot (token, API server, defaults: the
    bot's own, `like`), its part of Telegram's limit and `bot.sender.AlertSender`'s options."""

    database_url: str
    token: str
    api: TelegramAPIServer | None
    default: DefaultBotProperties | None
    rate: float  # messages a second this sender may send, before the replicas split it (`Share`)
    chat_interval: float
    window: float = 1.0
    reply_share: float = 0.0  # the part of each window always kept for the parent's replies
    max_reply_share: float = 0.0  # the most of each window the parent's replies may be given (`Reserve`)
    options: dict[str, Any] = field(default_factory=dict)
    log: LogConfig = field(default_factory=LogConfig)

    @classmethod
    def like(cls, bot: Bot, database_url: str, **fields: Any) -> SenderSpec:
        """A sender that talks to Telegram as `bot` does (token, API server, defaults), with a session of its
        own: an HTTP session belongs to the loop it was made on."""
        return cls(database_url, bot.token, getattr(bot.session, "api", None), bot.default, **fields)

    def make_pacer(self) -> Any:
        from bot.pacing import Pacer

        return Pacer(self.rate, self.chat_interval, window=self.window,
                     per_window=max(1, int(self.rate * self.window)))

    def reply_room(self, ceiling: int) -> tuple[int, int]:
        """Sends per window the parent's replies get always, and at most, out of a pacer's `ceiling`."""
        least = min(ceiling, math.ceil(ceiling * self.reply_share))
        return least, max(least, min(ceiling, int(ceiling * self.max_reply_share)))

    def make_bot(self, pacer: Any, metrics: Any) -> Bot:
        from gpuradar.pacing import install_pacing

        session = AiohttpSession(api=self.api) if self.api is not None else AiohttpSession()
        bot = Bot(self.token, session=session, default=self.default)
        install_pacing(bot, pacer, metrics)
        return bot


@dataclass(frozen=True, slots=True)
class SenderReport:
    """What the sender says of itself (benches, tests, `/metrics`)."""

    cpu_seconds: float  # the sender's process CPU (in-process: the whole process's)
    loaded_upto: int | None  # the newest alert event its index has matched (None: index not built yet)
    pending_users: int  # users with unheard events matched, not yet planned
    stats: dict[str, Any]  # bot.sender.SenderStats, but `per_chat_sent` as `chats_sent`: how many chats
    idle: bool | None = None  # asked for: nothing queued or in flight, no unheard event due
    pid: int | None = None  # the process the sender runs in
    window_starts: list[float] = field(default_factory=list)  # its pacer's sends in the current window (monotonic)
    match_cpu_seconds: float = 0.0  # CPU its matching of queued events to users took, in all (storage.outbox.FanOut)
    share: str = "every user"  # the users it matches among the senders alive (storage.sender_shares)
    share_parts: int = 1  # the senders alive that split the users (it matches one part)
    indexed: int = 0  # subscriptions in its index: its share's active ones


class SenderService:
    """The alert sender itself, on the loop it runs on: its own engine, Bot and pacer. `gpuradar run` hosts it in
    a child (`SenderProcess`); run on the bot's loop only where one process is wanted (tests, embedding)."""

    def __init__(self, spec: SenderSpec, metrics: Any = None, pacer: Any = None) -> None:
        from gpuradar.metrics import METRICS

        self.spec = spec
        self.metrics = METRICS if metrics is None else metrics
        # On the bot's loop the replies' own pacer is shared (replies first through `Pacer.urgent`, nothing held);
        # in a child a pacer of its own that holds the replies' room.
        self._holds = pacer is None
        self.pacer = spec.make_pacer() if pacer is None else pacer
        if self._holds:
            self.pacer.hold(spec.reply_room(self.pacer.ceiling)[0])
        self.sender: Any = None  # bot.sender.AlertSender once `open`
        self.restarts = 0  # the same interface as SenderProcess: it never restarts
        self._engine: Any = None
        self._bot: Bot | None = None
        self._replicas = 1
        self._opened = asyncio.Event()

    @property
    def pid(self) -> int | None:
        return None

    async def open(self) -> None:
        from bot.sender import AlertSender
        from storage.db import make_engine, make_sessionmaker

        if self.sender is not None:
            return
        self._engine = make_engine(self.spec.database_url, sqlite_statements=SENDER_SQLITE_STATEMENTS)
        self._bot = self.spec.make_bot(self.pacer, self.metrics)
        self.sender = AlertSender(self._bot, make_sessionmaker(self._engine), pacer=self.pacer, metrics=self.metrics,
                                  **self.spec.options)
        self._opened.set()

    async def close(self) -> None:
        if self._bot is not None:
            await self._bot.session.close()
        if self._engine is not None:
            await self._engine.dispose()

    async def run(self) -> None:
        await self.open()
        try:
            await self.sender.run()
        finally:
            await self.close()

    async def stop(self) -> None:
        if self.sender is not None:
            await self.sender.stop()

    def wake(self) -> None:
        if self.sender is not None:
            self.sender.wake()

    def share(self, replicas: int) -> None:
        """`replicas` send for this bot: pace at 1/replicas of `spec.rate` (storage.rate_share)."""
        self._replicas = replicas
        self.pacer.share(replicas)
        if self._holds:
            self.pacer.hold(self.spec.reply_room(self.pacer.ceiling)[0])

    def reserve(self, n: int) -> Room:
        """Hold `n` sends per window for the parent's replies (within `SenderSpec.reply_room`); the hold now in
        effect and this sender's starts in the window."""
        least, most = self.spec.reply_room(self.pacer.ceiling)
        return Room(0, self.pacer.hold(min(most, max(least, n))), self.pacer.window_starts())

    @property
    def replicas(self) -> int:
        return self._replicas

    async def report(self, idle: bool = False) -> SenderReport:
        await self._opened.wait()
        sender = self.sender
        # Each chat's count stays in the sender: tens of thousands of entries, not for every ask over the socket.
        stats = {f.name: getattr(sender.stats, f.name) for f in fields(sender.stats) if f.name != "per_chat_sent"}
        stats["chats_sent"] = len(sender.stats.per_chat_sent)
        fanout = sender.fanout
        return SenderReport(time.process_time(), fanout._loaded_upto, len(fanout.pending), stats,
                            await sender.idle() if idle else None, os.getpid(), self.pacer.window_starts(),
                            fanout.match_cpu, str(fanout.share), fanout.share.parts, fanout.indexed)

    async def idle(self) -> bool:
        return bool((await self.report(idle=True)).idle)


# ------------------------------------------------------------------------------------------------ wire types
@dataclass(frozen=True, slots=True)
class Wake:
    """Alerts were committed: look now."""


@dataclass(frozen=True, slots=True)
class Share:
    replicas: int


@dataclass(frozen=True, slots=True)
class Reserve:
    """The parent's replies need `n` sends per window (`number`: this ask's, answered by a `Room`)."""

    number: int
    n: int


@dataclass(frozen=True, slots=True)
class Room:
    """The child holds `n` sends per window for the parent's replies; its own starts in the window (monotonic)."""

    number: int
    n: int
    starts: list[float]


@dataclass(frozen=True, slots=True)
class Ask:
    number: int
    idle: bool = False


@dataclass(frozen=True, slots=True)
class Answer:
    number: int
    report: SenderReport | None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Stop:
    """Finish the messages in flight, start no new one, exit."""


@dataclass(frozen=True, slots=True)
class Counts:
    """The child's metrics since its last `Counts`: (method, argument) -> how many."""

    counts: dict[tuple[str, str], int]


class ForwardedMetrics:
    """`bot.sender.SenderMetrics` in the child: summed here, sent to the parent's metrics every `FLUSH_EVERY` s."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, str]] = Counter()

    def alert_sent(self, count: int = 1) -> None:
        self.counts["alert_sent", ""] += count

    def alert_failed(self, reason: str = "error", count: int = 1) -> None:
        self.counts["alert_failed", reason] += count

    def telegram_rate_limited(self, method: str = "sendMessage") -> None:
        self.counts["telegram_rate_limited", method] += 1

    def take(self) -> Counts | None:
        if not self.counts:
            return None
        counts, self.counts = Counts(dict(self.counts)), Counter()
        return counts


def apply_counts(metrics: Any, counts: Counts) -> None:
    """The child's counts, into the parent's metrics."""
    for (method, arg), n in counts.counts.items():
        if method == "alert_sent":
            metrics.alert_sent(n)
        elif method == "alert_failed":
            metrics.alert_failed(arg, n)
        elif method == "telegram_rate_limited":
            for _ in range(n):
                metrics.telegram_rate_limited(arg)


# ------------------------------------------------------------------------------------------------ parent side
class SenderProcess:
    """The parent's handle on the sender child: `run()` keeps one running (started again after it dies) until
    `stop()`. It has the `gpuradar.app.Sender` protocol and `SenderService`'s controls."""

    def __init__(self, spec: SenderSpec, metrics: Any = None, replies: Any = None) -> None:
        from gpuradar.metrics import METRICS

        self.spec = spec
        self.metrics = METRICS if metrics is None else metrics
        self.replies = replies  # the replica's reply pacer (bot.pacing.Pacer): given room by the child (`Reserve`)
        self._asked: dict[int, int] = {}  # `Reserve`s not answered yet: number -> n
        self._wants = 0  # the last `Reserve`'s n
        self.reserves = 0  # `Reserve`s sent (tests, benches)
        self._reset_room()
        self.restarts = 0
        self.ready = asyncio.Event()  # a child is up and its sender made
        self._proc: asyncio.subprocess.Process | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._replicas = 1
        self._stopping = asyncio.Event()
        self._done = asyncio.Event()
        self._asks: dict[int, asyncio.Future[Answer]] = {}
        self._numbers = itertools.count(1)
        self._running = False

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def replicas(self) -> int:
        return self._replicas

    async def run(self) -> None:
        delay = RESTART_DELAY[0] / 2  # doubled before the first wait
        self._running = True
        try:
            while not self._stopping.is_set():
                started = time.monotonic()
                try:
                    await self._serve_one()
                except pickle.PicklingError:
                    raise  # options that cannot cross to a child: no restart will help
                except Exception as exc:  # it died starting (logged by the child too): started again below
                    log.warning("the sender process failed to start: %s", exc)
                if self._stopping.is_set():
                    break
                code = self._proc.returncode if self._proc is not None else None
                self.restarts += 1
                delay = RESTART_DELAY[0] if time.monotonic() - started > 60 else min(RESTART_DELAY[1], delay * 2)
                log.warning("the sender process died (exit %s); starting another in %.1f s", code, delay)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), delay)
        finally:
            self._done.set()

    async def _serve_one(self) -> None:
        proc, reader, writer = await spawn(__name__, self.spec)
        self._proc = proc
        offering: asyncio.Task[None] | None = None
        try:
            ready = await receive(reader)
            if ready != "ready":
                raise RuntimeError(f"sender child failed to start: {ready!r}")
            log.info("sender process %d started", proc.pid)
            self._writer = writer
            if self._replicas != 1:
                send_nowait(writer, Share(self._replicas))
            self._reset_room()
            self.ready.set()
            offering = asyncio.create_task(self._offer(), name="sender-room") if self.replies is not None else None
            while True:
                try:
                    message = await receive(reader)
                except (asyncio.IncompleteReadError, ConnectionError):
                    return  # the child exited (stopped, or died)
                if isinstance(message, Counts):
                    apply_counts(self.metrics, message)
                elif isinstance(message, Room):
                    self._roomed(message)
                elif isinstance(message, Answer):
                    future = self._asks.pop(message.number, None)
                    if future is not None and not future.done():
                        future.set_result(message)
        finally:
            if offering is not None:
                offering.cancel()
            self.ready.clear()
            self._writer = None
            self._reset_room()
            for future in self._asks.values():
                if not future.done():
                    future.set_exception(ConnectionError("the sender process ended"))
            self._asks.clear()
            await reap(proc, writer, STOP_TIMEOUT)

    def _reset_room(self) -> None:
        """Back to the room a child always keeps (a new child, a new replica count): answers to earlier asks are
        for another hold and are ignored."""
        self._asked.clear()
        if self.replies is not None:
            self._wants = self.spec.reply_room(self.replies.ceiling)[0]
            self.replies.grant(self._wants, [])

    async def _offer(self) -> None:
        """While replies need more or less than asked for, ask (the grant shrinks at once, grows on the answer)."""
        assert self.replies is not None
        while True:
            await asyncio.sleep(OFFER_EVERY)
            least, most = self.spec.reply_room(self.replies.ceiling)
            want = min(most, max(least, self.replies.wanted()))
            if want == self._wants:
                continue
            number = next(self._numbers)
            self._asked[number] = self._wants = want
            self.reserves += 1
            granted = self.replies.granted
            if granted is None or want < granted:
                self.replies.grant(want)
            self._tell(Reserve(number, want))

    def _roomed(self, room: Room) -> None:
        if self.replies is None or self._asked.pop(room.number, None) is None:
            return
        later = [n for number, n in self._asked.items() if number > room.number]
        self.replies.grant(min([room.n, *later]), room.starts)

    def _tell(self, message: object) -> None:
        writer = self._writer
        if writer is not None and not writer.is_closing():
            with contextlib.suppress(ConnectionError, RuntimeError):
                send_nowait(writer, message)

    def wake(self) -> None:
        """Alerts were committed (on the bot's loop). Lost while no child runs: the next one looks anyway."""
        self._tell(Wake())

    def share(self, replicas: int) -> None:
        self._replicas = replicas
        self._tell(Share(replicas))
        self._reset_room()

    async def report(self, idle: bool = False) -> SenderReport:
        ready = asyncio.ensure_future(self.ready.wait())
        done = asyncio.ensure_future(self._done.wait())
        await asyncio.wait({ready, done}, return_when=asyncio.FIRST_COMPLETED)
        ready.cancel()
        done.cancel()
        if not self.ready.is_set():
            raise RuntimeError("the sender process is not running")
        number = next(self._numbers)
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self._asks[number] = future
        self._tell(Ask(number, idle))
        answer = await future
        if answer.report is None:
            raise RuntimeError(f"the sender process could not report: {answer.error}")
        return answer.report

    async def idle(self) -> bool:
        return bool((await self.report(idle=True)).idle)

    async def stop(self) -> None:
        self._stopping.set()
        self._tell(Stop())
        if self._running:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._done.wait(), STOP_TIMEOUT + 5)


# ------------------------------------------------------------------------------------------------ child side
# The child's cyclic garbage collector (its own process: the bot's is untouched). The sender's long-lived heap is its
# subscription index, built once and then changed in place, and its short-lived one the objects of each plan (an
# offer a user is told of, a message); with the default thresholds every full collection scanned the index again,
# and the planning of a user cost 0.85 ms of CPU instead of 0.41 (FanOut.plans on bench/sender_loop.py's database:
# 50,000 users, 480 offers a poll). So: young collections ten times rarer (a plan makes thousands of objects
# at once), and once the index is built, what survives a full collection is moved out of the collector's sight
# (`gc.freeze`), again after each rebuild. Frozen objects are still freed by their reference counts when dropped;
# the index holds no cycles.
GC_THRESHOLDS = (20_000, 20, 20)
GC_SETTLE_EVERY = 1.0  # seconds between looks at whether the index was (re)built


async def _freeze_built_index(service: SenderService) -> None:
    frozen_at = 0
    while True:
        await asyncio.sleep(GC_SETTLE_EVERY)
        builds = service.sender.fanout.stats["builds"] if service.sender is not None else 0
        if builds != frozen_at:
            gc.collect()
            gc.freeze()
            frozen_at = builds


async def _child_main(fd: int) -> None:
    reader, writer = await asyncio.open_connection(sock=socket.socket(fileno=fd))
    spec: SenderSpec = await receive(reader)
    spec.log.apply()
    metrics = ForwardedMetrics()
    service = SenderService(spec, metrics)
    await service.open()
    gc.set_threshold(*GC_THRESHOLDS)
    settle = asyncio.create_task(_freeze_built_index(service), name="sender-gc")
    try:
        await send(writer, "ready")
    except ConnectionError:
        await service.close()
        return
    running = asyncio.create_task(service.run(), name="sender")
    # SIGTERM (the service manager stopping the replica's whole group) stops the sender as `Stop` does: the messages
    # in flight finish and are recorded, no new one starts.
    stopped = asyncio.Event()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stopped.set)
    answering: set[asyncio.Task[None]] = set()

    async def flush() -> None:
        while True:
            await asyncio.sleep(FLUSH_EVERY)
            counts = metrics.take()
            if counts is not None:
                await send(writer, counts)

    async def answer(ask: Ask) -> None:
        try:
            reply = Answer(ask.number, await service.report(ask.idle))
        except Exception as exc:  # told to the parent, which raises it for its caller
            reply = Answer(ask.number, None, f"{type(exc).__name__}: {exc}")
        await send(writer, reply)

    async def control() -> None:
        while True:
            try:
                message = await receive(reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                return  # the parent closed the channel or died: stop as on `Stop`
            if isinstance(message, Wake):
                service.wake()
            elif isinstance(message, Share):
                service.share(message.replicas)
            elif isinstance(message, Reserve):
                room = service.reserve(message.n)
                send_nowait(writer, Room(message.number, room.n, room.starts))
            elif isinstance(message, Ask):
                task = asyncio.create_task(answer(message))
                answering.add(task)
                task.add_done_callback(answering.discard)
            elif isinstance(message, Stop):
                return

    flusher = asyncio.create_task(flush(), name="sender-counts")
    controller = asyncio.create_task(control(), name="sender-control")
    terminated = asyncio.create_task(stopped.wait(), name="sender-sigterm")
    try:
        await asyncio.wait({running, controller, terminated}, return_when=asyncio.FIRST_COMPLETED)
        await service.stop()  # the messages in flight finish and are recorded
        with contextlib.suppress(Exception):
            await running  # a sender that failed: logged below, the parent starts another
        if running.done() and not running.cancelled() and running.exception() is not None:
            log.error("the alert sender failed", exc_info=running.exception())
    finally:
        flusher.cancel()
        settle.cancel()
        controller.cancel()
        terminated.cancel()
        counts = metrics.take()
        if counts is not None:
            with contextlib.suppress(Exception):
                await send(writer, counts)
        writer.close()
    if running.exception() is not None:
        raise SystemExit(1)


def main(argv: list[str] | None = None) -> None:
    # A replica that dies takes its sender with it, as if one process (SIGKILL: a kill stays a kill, and the one
    # crash window of bot/sender.py is all it can leave); SIGTERM is kept for a clean stop.
    fd = enter_child(sys.argv[1:] if argv is None else argv, SENDER_NICENESS, death_signal=signal.SIGKILL)
    if fd is not None:
        asyncio.run(_child_main(fd))
