"""The alert sender: drains the outbox into Telegram, keeping Telegram's limits by itself.

Flow per cycle: claim the due outbox rows (holding those in their user's quiet hours, dropping those of blocked
chats) -> render one message per user (or per offer when the user turned grouping off), each written to
`alert_deliveries` with its final text in the same transaction that claims the rows -> send through a pacing
limiter (about 30 messages a second overall, one a second per chat) -> record Telegram's message id.

Crash safety (SIGKILL at any moment), per delivery:
  1. claimed: rows and delivery committed together, state "queued"   (crash here: re-sent after restart, safe)
  2. the HTTP request goes out (a retry first commits "sending")      (crash here: see below)
  3. Telegram's answer, then "sent" + message id committed at once    (crash after this: nothing to redo)
On start every queued or sending delivery is sent again with the same text, so no alert is ever lost. The one
window where a restart can duplicate is a crash after Telegram accepted the message but before step 3 committed:
the time of the answer's trip back plus one small UPDATE (milliseconds). Exactly-once delivery to Telegram is
impossible in general (sendMessage has no idempotency key), so we choose at-least-once inside that window — a lost
alert costs the user the GPU, a duplicate costs a glance — and keep it as short as we can: the "sent" commit is
the first thing done with the answer, before any other work. Deliveries that restarted from "sending" are logged
as possible duplicates. A request that dies before Telegram processed it (connection dropped, 5xx, 429) is not
delivered, and is simply sent again.

SIGTERM (`stop()`): no new message starts; the ones already in flight finish and are recorded; then `run()`
returns. What was claimed but not started stays queued and goes out after the restart.

Several senders (one per replica) on one outbox: outbox rows are claimed with FOR UPDATE SKIP LOCKED on PostgreSQL
and a pending-check that rolls the claim back on conflict (SQLite), so each row joins exactly one delivery. Each
delivery carries its sender's claim (`owner`, unique per process) with an expiry by the database's clock, renewed
every `claim_ttl / 3`. Another sender takes a delivery over when its claim has lapsed, or at once when its owner
was a process on this host that no longer runs (after a SIGKILL and restart nothing waits). A sender whose renewal
is late starts no new message until one succeeds: a message starts only while at least its whole request timeout
(capped at `claim_ttl / 2`) is left on the claim, so a stalled sender's request has ended before anyone may take
its deliveries over; deliveries taken over meanwhile are dropped from its memory, not sent. What remains is the
crash window above: a sender killed after Telegram accepted a message and before "sent" was committed; the taker
sends that message again (logged as a possible duplicate). A clean stop releases the claims at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import signal
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from aiogram import Bot
from aiogram.methods import SendMessage
from aiogram.types import InlineKeyboardMarkup, Message
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.alert_texts import DIGEST_MESSAGES
from bot.delivery.budget import StarsBudget
from bot.delivery.claims import Claims, dead_local_owners
from bot.delivery.jobs import ChatLine, Job
from bot.delivery.planning import PLAN_USERS, DigestPlanner, quiet_until
from bot.delivery.policy import Action, Verdict, classify
from bot.delivery.rendering import DigestRenderer
from bot.delivery.sending import Requests, posts_directly
from bot.pacing import Pacer, paced
from bot.response_types import keep
from storage import sender_shares
from storage.alert_tables import DeliveryState
from storage.lease import default_holder_id
from storage.outbox import (
    ClaimConflict,
    FanOut,
    deactivate_user,
    group_chat_gone,
    mark_failed,
    mark_sending,
    mark_sent,
    migrate_chat,
    requeue_delivery,
    unfinished_deliveries,
)
from storage.paid_spend import BudgetPeriod

__all__ = ["AlertSender", "NoMetrics", "SenderMetrics", "SenderStats", "dead_local_owners", "quiet_until",
           "run_standalone"]

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]
# Paid broadcasts: "Pass True to allow up to 1000 messages per second, ignoring broadcasting limits for a fee of 0.1
# Telegram Stars per message" (Bot API, sendMessage `allow_paid_broadcast`, https://core.telegram.org/bots/api#sendmessage;
# the Bots FAQ: the fee is for the messages beyond the free ~30 a second, https://core.telegram.org/bots/faq).
# The flag is set only on alerts beyond the free limit's window, so each flagged one costs PAID_STARS either way.
PAID_RATE_MAX = 1000.0
PAID_STARS = 0.1
# aiogram reads every answer as `Response[SendMessage.__returning__]`, which pydantic keeps only weakly: held here
# (bot.response_types) even on a bot without gpuradar.app's middlewares, or each full garbage collection made the
# next answer build its schema again (~50 ms; a twentieth of the sender's CPU in bench/sender_loop.py --deliver).
keep(Message)
_SHORT_SLEEP = 0.05  # seconds: waits up to this long are plain sleeps (a stop is noticed at their end)


class SenderMetrics(Protocol):
    """What the sender reports (gpuradar.metrics.Metrics has these; injected, so bot/ never imports gpuradar/)."""

    def alert_sent(self, count: int = 1) -> None: ...

    def alert_failed(self, reason: str = "error", count: int = 1) -> None: ...

    def telegram_rate_limited(self, method: str = "sendMessage") -> None: ...


class NoMetrics:
    def alert_sent(self, count: int = 1) -> None:
        pass

    def alert_failed(self, reason: str = "error", count: int = 1) -> None:
        pass

    def telegram_rate_limited(self, method: str = "sendMessage") -> None:
        pass


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass
class SenderStats:
    sent: int = 0
    retry_after: int = 0  # 429s received
    retry_after_chat: int = 0  # of which taken for one chat's limit (only that chat waited)
    network_errors: int = 0
    blocked: int = 0
    migrated: int = 0
    failed: int = 0
    resumed_sending: int = 0  # deliveries found "sending" at start: possible duplicates
    paid_sent: int = 0  # sends that asked for a paid broadcast (beyond the free limit)
    stars_spent: float = 0.0  # what those cost at PAID_STARS each (attempts counted, so never under); this
    # process's part: the period's total, every sender and restart, is in the database (storage.paid_spend)
    per_chat_sent: dict[int, int] = field(default_factory=lambda: defaultdict(int))


class AlertSender:
    """Drain the outbox until stopped: the claim cycle plans users into deliveries (`bot.delivery.planning`), a
    dispatcher hands the workers the jobs whose chat may take a message (`bot.delivery.jobs`), each worker sends
    one and carries out what `bot.delivery.policy` says of its failure; `bot.delivery.claims` keeps replicas apart.
    `time_scale` shrinks every limit and wait (benches against a stand-in server whose limit window is scaled the
    same way); 1.0 is Telegram's real time."""

    def __init__(self, bot: Bot, sessionmaker: async_sessionmaker[AsyncSession], *, global_rate: float = 29.5,
                 chat_interval: float = 1.05, time_scale: float = 1.0, workers: int = 8, poll_interval: float = 1.0,
                 batch: int = 500, max_attempts: int = 8, request_timeout: float = 15.0,
                 clock: Clock = utcnow, owner: str | None = None, claim_ttl: float = 30.0,
                 metrics: SenderMetrics | None = None, fanout: FanOut | None = None,
                 pacer: Pacer | None = None, paid_broadcast: bool = False, paid_rate: float = PAID_RATE_MAX,
                 paid_budget_stars: float = 0.0, paid_budget_period: BudgetPeriod = "month",
                 digest_messages: int = DIGEST_MESSAGES) -> None:
        self.bot = bot
        # The sender's sendMessage calls go as JSON bodies (bot.delivery.sending: aiogram's urlencoded form cost
        # more CPU than the rest of a message's sending together); False: another session, aiogram's way.
        self._json = posts_directly(bot)
        self._requests = Requests()
        self.metrics: SenderMetrics = metrics or NoMetrics()
        self.sessionmaker = sessionmaker
        self.time_scale = time_scale
        # Slots 1/global_rate apart, and never more than floor(global_rate) real starts in any window. The bot's
        # replies share the same limiter (bot.pacing, when `pacer` is given) and go first.
        self.pacer = pacer or Pacer(global_rate / time_scale, chat_interval * time_scale, window=time_scale,
                                    per_window=max(1, int(global_rate)))
        # Paid broadcasts (Bot API sendMessage `allow_paid_broadcast`): while the budget lasts, alerts are paced at
        # `paid_rate` overall by a limiter of their own, and the free limiter above only counts the alerts that
        # fit its window; each alert beyond it carries the flag and is counted at PAID_STARS. Replies keep the free
        # limiter (and go first: while one waits, every alert is a paid one). The budget is per period (a UTC
        # calendar month by default) and counted in the database before the sends (bot.delivery.budget), so a
        # restarted sender, or another replica, goes on counting within the same period.
        self.free_pacer = self.pacer
        self.paid_budget_stars = paid_budget_stars
        cap = int(paid_budget_stars / PAID_STARS + 1e-9)  # paid attempts the budget pays for, per period
        self.paid = paid_broadcast and cap >= 1
        self._paid_pacer: Pacer | None = None
        self.budget: StarsBudget | None = None
        if self.paid:
            rate = min(PAID_RATE_MAX, paid_rate)
            self._paid_pacer = self.pacer = Pacer(rate / time_scale, chat_interval * time_scale, window=time_scale,
                                                  per_window=max(1, int(rate)))
            workers = max(workers, int(rate / 8))  # requests in flight for the rate even at ~100 ms a round trip
            self.budget = StarsBudget(sessionmaker, self._write, cap=cap, slice_size=max(1, int(rate / 10)),
                                      period=paid_budget_period, clock=clock)
        self.workers = workers
        self.poll_interval = poll_interval
        self.batch = batch  # messages kept ready in memory; users are planned lazily so backlogs merge into digests
        self.max_attempts = max_attempts
        self.clock = clock
        self.owner = owner or default_holder_id()
        self._write_lock = asyncio.Lock()
        self._known: set[int] = set()  # delivery ids queued in memory or in flight
        self._users_held: Counter[int] = Counter()  # user id -> how many of `_known` are theirs
        self._known_lock = asyncio.Lock()
        # A send must end before our claim can lapse (see the module docstring), so it may not outlast half of it.
        self.request_timeout = min(request_timeout, claim_ttl / 2)
        self.claims = Claims(sessionmaker, self._write, owner=self.owner, claim_ttl=claim_ttl,
                             request_timeout=self.request_timeout, known=lambda: self._known)
        # How many messages go out overall while one chat may take one more (the pacer in effect, paid or free; the
        # time scale cancels out): where a long digest must start.
        fanout = fanout or FanOut(sends_per_chat_interval=self.pacer.global_rate * self.pacer.chat_interval)
        self.planner = DigestPlanner(sessionmaker, self._write, fanout, DigestRenderer(digest_messages),
                                     owner=self.owner, claim_ttl=claim_ttl, clock=clock)
        self.stats = SenderStats()
        self._queue: asyncio.Queue[Job] = asyncio.Queue()  # jobs whose chat may take a message now
        self._by_chat = ChatLine(lambda: self.pacer.clock(), lambda c: self.pacer.chat_wait(c),
                                 self.pacer.chat_interval)
        self._dispatch = asyncio.Event()  # a job arrived, or a worker took one: look at the chat line again
        self._sent_batch: list[tuple[int, int, asyncio.Future[None]]] = []
        self._requeued = False  # a delivery was put back after a failed attempt: look for it when due
        self._stop = asyncio.Event()
        self._wake = asyncio.Event()
        self._done = asyncio.Event()

    @property
    def fanout(self) -> FanOut:
        return self.planner.fanout

    # ------------------------------------------------------------------ control
    def wake(self) -> None:
        """New outbox rows were committed: look now instead of at the next poll."""
        self._wake.set()

    async def stop(self) -> None:
        """Finish the messages in flight, start no new one; `run()` then returns."""
        self._stop.set()
        self._wake.set()
        self._dispatch.set()
        await self._done.wait()

    async def run(self) -> None:
        self._done.clear()
        workers = [asyncio.create_task(self._worker(i), name=f"alert-worker-{i}") for i in range(self.workers)]
        workers.append(asyncio.create_task(self._dispatcher(), name="alert-dispatcher"))
        heartbeat: asyncio.Task[None] | None = None
        try:
            await self._check_in()  # before the first look: a newcomer starts with its part of the users
            await self.claims.renew()
            await self._resume_unfinished(first=True)
            heartbeat = asyncio.create_task(self._heartbeat(), name="alert-claims")
            while not self._stop.is_set():
                try:
                    if await self._plan() >= PLAN_USERS:
                        continue  # more may be due: plan the next users now, sending has already started
                    if self._requeued:
                        self._requeued = False
                        await self._resume_unfinished()
                except ClaimConflict as e:  # another sender took some of these rows first: look again at once
                    log.info("alert claim cycle lost a race: %s", e)
                    continue
                except Exception:  # a database hiccup must not end alerting; the next cycle tries again
                    log.exception("alert claim cycle failed")
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.poll_interval)
        finally:
            self._stop.set()
            self._dispatch.set()
            if heartbeat is not None:
                heartbeat.cancel()
            await asyncio.gather(*workers, *([heartbeat] if heartbeat else []), return_exceptions=True)
            if self.budget is not None:
                with contextlib.suppress(Exception):
                    await self.budget.close()  # what was reserved and not sent goes back to the period's budget
            with contextlib.suppress(Exception):
                await sender_shares.check_out(self.sessionmaker, self.owner)  # the others take its users now
            with contextlib.suppress(Exception):
                await self.claims.release()
            self._done.set()

    async def idle(self) -> bool:
        """True when nothing is queued in memory or in flight and no user has an unheard event that is due (for
        tests and benches)."""
        return not self._known and not await self.planner.any_due()

    # ------------------------------------------------------------------ claims across replicas
    async def _heartbeat(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.claims.ttl / 3)
            if self._stop.is_set():
                return
            await self._check_in()
            try:
                await self.claims.renew()
                await self._resume_unfinished()
                if self.budget is not None and not self.paid and self.budget.period_changed():
                    self._paid_on()  # a new budget period began: paid broadcasts may go on
            except Exception:  # the database is away: sends pause once the claim margin runs out (Claims.hold)
                log.warning("renewing alert claims failed", exc_info=True)

    async def _check_in(self) -> None:
        """Keep this sender among those alive and take its share of the users (storage.sender_shares); a change
        makes it look again at once. On a database error it keeps the share it has."""
        try:
            share = await sender_shares.check_in(self.sessionmaker, self.owner, self.claims.ttl,
                                                 dead=lambda alive: dead_local_owners(alive, self.owner))
        except Exception:
            log.warning("checking in among the alert senders failed", exc_info=True)
            return
        if self.fanout.reshare(share):
            self._wake.set()

    # ------------------------------------------------------------------ planning
    async def _resume_unfinished(self, *, first: bool = False) -> None:
        """Deliveries already written (ours, a dead sender's, or requeued after a network error) whose time came."""
        taken = await self.claims.take_over()
        now = self.clock()
        # The lock makes the snapshot and `_known` agree: a worker forgets a job only after its final state is
        # committed, so a delivery read here as "sending" just before it was sent is still known, never re-sent.
        async with self._known_lock:
            async with self.sessionmaker() as session:
                # After start-up only deliveries put back after a failed attempt (or just taken over) can be
                # missing from memory.
                rows = await unfinished_deliveries(session, retried_only=not (first or taken), owner=self.owner)
            for d in rows:
                if d.id in self._known or d.not_before > now:
                    continue
                if (first or taken) and d.state == DeliveryState.SENDING:
                    self.stats.resumed_sending += 1
                    log.warning("delivery %s was in flight when the last process died: sending again "
                                "(a duplicate is possible if Telegram had already accepted it)", d.id)
                self._push(Job(d.id, d.user_id, d.chat_id, d.text, d.reply_markup, d.attempts,
                               marked=d.state == DeliveryState.SENDING))

    def _room(self) -> int:
        """How many more users to plan now. Enough messages ready for `batch`, and at the paid rate enough *users*
        with messages ready for the rate: a chat takes one a second, so `rate` a second needs `rate` x interval
        chats sending at once, whatever their digests' lengths. A 500-message batch of 4-message digests held 125
        chats, and 1,000 a second became ~100 (bench/sender_loop.py --deliver); the cap on messages still bounds
        memory then. The rest wait in the outbox and merge into later digests."""
        room = self.batch - len(self._known)
        if self.pacer is self._paid_pacer:
            users = math.ceil(2 * self.pacer.global_rate * self.pacer.chat_interval)
            if len(self._users_held) < users:
                room = max(room, min(users - len(self._users_held), max(self.batch, 4 * users) - len(self._known)))
        return room

    async def _plan(self) -> int:
        """Plan as many users as `_room` says; returns how many users were looked at."""
        room = self._room()
        if room <= 0:
            return 0
        users, jobs = await self.planner.plan(room)
        for job in jobs:
            self._push(job)
        return users

    def _push(self, job: Job) -> None:
        self._known.add(job.id)
        self._users_held[job.user_id] += 1
        self._by_chat.put(job)
        self._dispatch.set()

    async def _dispatcher(self) -> None:
        """Hand the workers only jobs whose chat may take a message now, a few more than there are workers.
        A plain queue let the workers fill up with the later messages of a few long digests, each worker
        waiting a chat interval or more for its chat while other chats' messages waited behind them: at a
        scaled window the rate fell to a fifth for a minute in bench/fanout_cycle.py."""
        while not self._stop.is_set():
            self._dispatch.clear()
            wait: float | None = None
            while self._queue.qsize() < self.workers:
                job, wait = self._by_chat.take()
                if job is None:
                    break
                self._queue.put_nowait(job)
            else:
                wait = None  # the workers have enough: a worker taking one wakes us
            if wait is None:
                await self._dispatch.wait()
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._dispatch.wait(), max(wait, 0.001))

    # ------------------------------------------------------------------ sending
    async def _worker(self, n: int) -> None:
        while True:
            job = await self._next_job()
            if job is None:
                return
            try:
                await self._deliver(job)
            except Exception:
                log.exception("delivery %s failed unexpectedly; it will be retried", job.id)
                await self._requeue(job, "unexpected error", backoff=self._backoff(job.attempts))
            finally:
                async with self._known_lock:
                    if job.id in self._known:
                        self._known.discard(job.id)
                        self._users_held[job.user_id] -= 1
                        if not self._users_held[job.user_id]:
                            del self._users_held[job.user_id]
                    self.claims.forget(job.id)
                if self._room() > (self.batch // 2 if self.pacer is not self._paid_pacer else
                                   min(self.batch // 2, PLAN_USERS)):
                    self._wake.set()  # room for more: plan the next users

    async def _next_job(self) -> Job | None:
        if not self._stop.is_set() and not self._queue.empty():
            self._dispatch.set()
            return self._queue.get_nowait()  # the usual case while a backlog drains: no waiting machinery
        while not self._stop.is_set():
            getter = asyncio.ensure_future(self._queue.get())
            stopper = asyncio.ensure_future(self._stop.wait())
            done, _ = await asyncio.wait({getter, stopper}, return_when=asyncio.FIRST_COMPLETED)
            stopper.cancel()
            if getter in done:
                self._dispatch.set()  # room in the workers' queue again
                return getter.result()
            getter.cancel()
        return None

    async def _sleep_unless_stopped(self, seconds: float) -> bool:
        """Sleep; False when stop() came first (the caller must not start a send then)."""
        if 0 < seconds <= _SHORT_SLEEP:
            # The wait for a slot, many times per message: a plain sleep (a waiter on the stop event costs a task
            # each time), after which a stop that came meanwhile is still seen before anything starts.
            await asyncio.sleep(seconds)
        elif seconds > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), seconds)
        return not self._stop.is_set()

    async def _deliver(self, job: Job) -> None:
        while True:
            if not await self._wait_for_slot(job):
                return  # stopping: still queued in the database, sent after the restart
            if job.user_id in self.planner.blocked:
                return  # blocked while this one waited for its slot (the database already dropped it)
            if not await self.claims.hold(job.id, self._sleep_unless_stopped):
                return  # taken over by another sender (it sends it), or stopping (still queued)
            if job.attempts and not job.marked:
                # A retry: the earlier attempt may have reached Telegram (a lost answer), so say so durably, once.
                # First attempts skip this commit: a restart re-sends queued and sending deliveries alike.
                async with self._write() as session:
                    await mark_sending(session, job.id, self.clock())
                job.marked = True
            paid = await self._paid_slot(job)
            if paid is None:
                continue  # the budget ran out just now: this one waits for a free slot instead
            job.attempts += 1
            try:
                if self._json:  # this slot was taken above (bot.delivery.sending: posted past aiogram's pacing)
                    body = self._requests.body(job.chat_id, job.text, job.reply_markup, paid)
                    message_id = await self._requests.post(self.bot, job.chat_id, job.text, body,
                                                           self.request_timeout)
                else:
                    with paced():  # this slot was taken above: the session's limiter must not take another
                        message_id = (await self.bot(self._request(job, paid),
                                                     request_timeout=int(self.request_timeout))).message_id
            except Exception as e:
                verdict = classify(e)
                if verdict is None:
                    raise
                if await self._act(job, verdict):
                    continue
                return
            # The answer is in: record it before anything else (this is the duplicate window's end).
            await self._record_sent(job.id, message_id)
            self.stats.sent += 1
            self.metrics.alert_sent()
            self.stats.per_chat_sent[job.chat_id] += 1
            return

    @staticmethod
    def _request(job: Job, paid: bool) -> SendMessage:
        """The job's request, validated once (at its first attempt, or after its chat moved), then only copied with
        the paid flag: aiogram's `Bot.send_message` validated the request and its buttons again at every send."""
        request = job.request
        if request is None or request.chat_id != job.chat_id:
            markup = InlineKeyboardMarkup.model_validate(job.reply_markup) if job.reply_markup else None
            request = job.request = SendMessage(chat_id=job.chat_id, text=job.text, parse_mode="HTML",
                                                reply_markup=markup)
        return request.model_copy(update={"allow_paid_broadcast": True}) if paid else request

    async def _paid_slot(self, job: Job) -> bool | None:
        """With paid broadcasts on: False when the free limit has room for this alert (it is counted there, no
        fee), True when it goes as a paid one (its fee taken from the period's budget in the database first), None
        when the budget cannot pay for it (paid broadcasts end here, until the next period: the free limiter paces
        every alert). Off: always False."""
        while self.paid and self.budget is not None:
            # Telegram's free ~30 a second counts every message, paid or not (the fee is for those beyond it): the
            # free limiter counts them all, so a message goes unflagged only where it is sure to be inside the free
            # ones.
            if self.free_pacer.room():
                self.free_pacer.started(job.chat_id)
                return False
            if self.budget.take():
                self.stats.paid_sent += 1
                self.stats.stars_spent += PAID_STARS
                self.free_pacer.started(job.chat_id)
                return True
            if not await self.budget.refill():
                if self.paid:
                    self.paid = False
                    self.pacer = self.free_pacer
                    log.warning("paid broadcasts stop: the %s budget of %.1f Stars is spent (%.1f by this sender); "
                                "alerts go at the free rate", self.budget.current(), self.paid_budget_stars,
                                self.stats.stars_spent)
                return None
        return False

    def _paid_on(self) -> None:
        assert self._paid_pacer is not None
        self.paid = True
        self.pacer = self._paid_pacer
        log.info("paid broadcasts start again: a new budget period (%s)", self.budget and self.budget.current())

    async def _act(self, job: Job, verdict: Verdict) -> bool:
        """Carry out what the policy said of a failed send; True: send this job again now."""
        match verdict.action:
            case Action.WAIT:
                self._rate_limited(job, verdict.retry_after)
                return True
            case Action.MOVE_CHAT:
                self.stats.migrated += 1
                async with self._write() as session:
                    await migrate_chat(session, job.user_id, job.chat_id, verdict.migrate_to)
                job.chat_id = verdict.migrate_to
                return True
            case Action.CHAT_REFUSED:
                if await self._group_gone(job):
                    return True
                await self._blocked(job, verdict.detail)
                return False
            case Action.FAIL:
                await self._failed(job, verdict.detail, verdict.metric)
                if verdict.metric == "bad_request":
                    log.warning("delivery %s refused by Telegram: %s", job.id, verdict.detail)
                return False
            case Action.RETRY:
                self.stats.network_errors += 1
                if job.attempts >= self.max_attempts:
                    await self._failed(job, f"gave up: {verdict.detail}", "retries_exhausted")
                    return False
                delay = self._backoff(job.attempts)
                if job.attempts < 4 and not self._stop.is_set() and await self._sleep_unless_stopped(delay):
                    return True  # short outage: retry in place, keeping the chat's order
                await self._requeue(job, verdict.detail, backoff=delay)
                return False

    def _rate_limited(self, job: Job, retry_after: float) -> None:
        """A 429: not delivered, so the retry is a first attempt again. It does not say which limit it was. When
        this chat had a message just before (under two chat intervals: its one-a-second is the likely limit, e.g.
        the earlier one arrived late) only this chat waits. Otherwise the overall limit is the likely one, though
        our own count of starts kept it: the sends arrived bunched, and the pacer leaves more room per window from
        now on; only a second such 429 within a window (a flood, not a bunch) makes everyone wait. Each whole
        window of silence costs 30 messages: paid for every 429 it cost more than a tenth of the rate in
        bench/fanout_cycle.py."""
        self.stats.retry_after += 1
        self.metrics.telegram_rate_limited("sendMessage")
        job.attempts -= 1
        wait = retry_after * self.time_scale
        if job.since_chat is not None and job.since_chat < 2 * self.pacer.chat_interval:
            self.stats.retry_after_chat += 1
            self.pacer.pause_chat(wait, job.chat_id)
        elif self.pacer.overflowed():
            self.pacer.pause(wait, job.chat_id)
        else:
            self.pacer.pause_chat(wait, job.chat_id)

    async def _wait_for_slot(self, job: Job) -> bool:
        """Wait for this chat's reserved slot, then for any 429 pause that came meanwhile and for room in the
        sliding window (without taking a new slot: that would waste one). False when stop() came first."""
        if not await self._sleep_unless_stopped(self.pacer.reserve(job.chat_id)):
            return False
        while True:
            wait = max(self.pacer.paused_for(), self.pacer.window_wait(), self.pacer.chat_gap(job.chat_id))
            if wait <= 0:
                job.since_chat = self.pacer.started(job.chat_id)
                return True
            if not await self._sleep_unless_stopped(wait):
                return False

    def _backoff(self, attempts: int) -> float:
        return min(30.0, 0.5 * 2 ** max(0, attempts - 1)) * self.time_scale

    async def _failed(self, job: Job, error: str, reason: str) -> None:
        self.stats.failed += 1
        self.metrics.alert_failed(reason)
        async with self._write() as session:
            await mark_failed(session, job.id, error, self.clock())

    async def _requeue(self, job: Job, error: str, *, backoff: float) -> None:
        async with self._write() as session:
            await requeue_delivery(session, job.id, self.clock() + timedelta(seconds=backoff), error, job.attempts)
        if not self._stop.is_set():
            # Look for it again once the backoff is over.
            asyncio.get_running_loop().call_later(backoff, self._retry_due)

    async def _record_sent(self, delivery_id: int, message_id: int) -> None:
        """Commit "sent" as soon as possible: the first answer in starts a commit at once; answers arriving while it
        runs are committed together in the next one (group commit). Returns once this one is durable."""
        done = asyncio.get_running_loop().create_future()
        self._sent_batch.append((delivery_id, message_id, done))
        if len(self._sent_batch) == 1:
            async with self._write_lock:  # waits for a commit in progress; the batch grows meanwhile
                batch, self._sent_batch = self._sent_batch, []
                try:
                    async with self.sessionmaker() as session, session.begin():
                        await mark_sent(session, [(d, m) for d, m, _ in batch], self.clock())
                except Exception as e:
                    for *_, fut in batch:
                        fut.set_exception(e)
                else:
                    for *_, fut in batch:
                        fut.set_result(None)
        await done

    @contextlib.asynccontextmanager
    async def _write(self) -> AsyncIterator[AsyncSession]:
        """One write transaction at a time from this sender. Its workers would otherwise contend for SQLite's
        single write lock from several pooled connections, and SQLite's busy handler backs off in sleeps of up
        to 100 ms: serialising here turns that into a queue of ~1 ms commits."""
        async with self._write_lock, self.sessionmaker() as session, session.begin():
            yield session

    def _retry_due(self) -> None:
        self._requeued = True
        self._wake.set()

    async def _group_gone(self, job: Job) -> bool:
        """A group chosen for alerts refuses them: not the user blocking the bot. The alert (and that group's
        subscriptions of this user) go to the user's private chat instead; True when it was a group."""
        if job.chat_id == job.user_id:
            return False
        log.warning("delivery %s: the group chosen for its alerts refuses them; sending to the private chat", job.id)
        async with self._write() as session:
            await group_chat_gone(session, job.user_id, job.chat_id)
        job.chat_id = job.user_id
        return True

    async def _blocked(self, job: Job, reason: str) -> None:
        self.stats.blocked += 1
        self.metrics.alert_failed("blocked")
        self.planner.blocked.add(job.user_id)
        async with self._write() as session:
            await deactivate_user(session, job.user_id, reason, self.clock())


# ---------------------------------------------------------------------- a sender of its own
async def run_standalone(bot: Bot, sessionmaker: async_sessionmaker[AsyncSession], *, claim_ttl: float,
                         metrics: SenderMetrics | None = None, pacer: Pacer | None = None,
                         share_ttl: float | None = None, **options: Any) -> int:
    """Only the sender, until SIGTERM / SIGINT (`gpuradar sender`; the crash tests run it as a process). With
    `pacer` and `share_ttl` it is one of the bot's senders in `rate_shares` (storage.rate_share), as each replica
    is, and keeps its equal part of Telegram's overall limit: the replicas and it together stay within it."""
    from storage.rate_share import RateShare

    sender = AlertSender(bot, sessionmaker, poll_interval=0.2, claim_ttl=claim_ttl, metrics=metrics, pacer=pacer,
                         **options)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, lambda: asyncio.ensure_future(sender.stop()))
    stopped = asyncio.Event()
    share = None
    if pacer is not None and share_ttl is not None:
        share = asyncio.create_task(RateShare(sessionmaker, pacer, ttl=share_ttl).run(stopped), name="rate share")
    try:
        await sender.run()
    finally:
        stopped.set()
        if share is not None:
            await share  # checks out: the replicas take its part back at their next renewal
    log.info("sender stopped cleanly: %s sent", sender.stats.sent)
    return 0
