"""One rate-aware path for every outgoing Bot API call: replies, edits, answers to callbacks and alerts share one
limiter (`Pacer`) that keeps Telegram's limits — about 30 messages a second overall, one a second per chat — and
waits out a 429's `retry_after` for everyone instead of dropping the call.

- `RateLimitedSession` is an aiogram request middleware on the bot's session (`gpuradar.app.make_bot`): every call
  that writes to a chat (send*, edit*, copy/forward) waits for its turn in the overall limit as a reply (ahead of
  alerts) and for any 429 pause of its chat; every call, whatever it is, is tried again after a 429 for as long as
  Telegram says, up to `max_retries` times.
- The alert sender (bot/sender.py) takes its slots from the same `Pacer` itself (so it can stop between waiting
  and sending) and marks its own calls `paced()`, so the middleware neither paces them twice nor retries them
  (the sender has its own crash-safe retry). Alerts yield to replies: while a reply waits, no alert starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from aiogram.client.session.middlewares.base import BaseRequestMiddleware, NextRequestMiddlewareType
from aiogram.exceptions import TelegramRetryAfter
from aiogram.methods import Response, TelegramMethod
from aiogram.methods.base import TelegramType

log = logging.getLogger(__name__)

_PACED: contextvars.ContextVar[bool] = contextvars.ContextVar("gpuradar_paced", default=False)
# Calls that put something in a chat, and so count against its one-a-second (edits included, to be safe).
_CHAT_WRITES = ("send", "edit", "copy", "forward")


_F = TypeVar("_F", bound=Callable[..., Any])


def _locked(method: _F) -> _F:
    """A Pacer may be shared by threads (embedding code running a sender on a thread of its own; `gpuradar run`'s
    sender has a pacer of its own in its child process): each read-and-update of its state is done whole, so two
    threads never take the same slot."""

    @functools.wraps(method)
    def wrapper(self: Pacer, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


@contextlib.contextmanager
def paced() -> Iterator[None]:
    """The calls made inside already have their slot (the alert sender's)."""
    token = _PACED.set(True)
    try:
        yield
    finally:
        _PACED.reset(token)


class Pacer:
    """Schedules sends so Telegram's flood limits are never hit: slots at least 1/global_rate apart overall and
    `chat_interval` apart per chat. Slots are reserved, so concurrent workers never crowd the same instant.
    A 429 pauses everything for its retry_after (Telegram says how long; guessing only earns more 429s)."""

    def __init__(self, global_rate: float, chat_interval: float, clock: Callable[[], float] = time.monotonic, *,
                 window: float = 1.0, per_window: int = 29):
        self.global_rate = global_rate  # the bot's whole limit; this replica keeps 1/`replicas` of it (`share`)
        self.full_window = per_window
        self.replicas = 1
        self.spacing = 1.0 / global_rate
        self.chat_interval = chat_interval
        self.clock = clock
        self._lock = threading.RLock()
        self.window = window
        self.per_window = per_window  # room per window now (narrowed after an overall 429, see `overflowed`)
        self.ceiling = per_window
        self._floor = max(1, math.ceil(per_window * 0.9))
        self._narrowed_at = -math.inf
        self._next = 0.0
        self._chat_next: dict[int, float] = {}
        self._paused_until = 0.0
        self._started: deque[float] = deque()  # when the sends of the last window really started
        self.urgent = 0  # replies waiting for room right now: alerts hold back until they are through
        self._chat_paused: dict[int, float] = {}  # chats Telegram answered 429 for, until when
        self._chat_started: dict[int, float] = {}  # when the last send to each chat really started
        # Another process sending for the same bot (gpuradar/sender_process.py: the replica's replies and its sender
        # child): the room this one keeps free for it (`hold`), or the room it leaves this one (`granted`) and the
        # starts it last told of (`others`).
        self._held: deque[tuple[float, int]] = deque()
        self._granted: int | None = None
        self._others: deque[float] = deque()

    @_locked
    def share(self, replicas: int) -> None:
        """Keep an equal part of the overall limit while `replicas` processes send for the same bot
        (storage.rate_share): the spacing and the room per window shrink with it; a narrowing after a 429 carries
        over. The per-chat interval stays as it is: it is one chat's, whichever replica sends."""
        n = max(1, replicas)
        if n == self.replicas:
            return
        narrowed = self.ceiling - self.per_window
        self.replicas = n
        self.spacing = n / self.global_rate
        self.ceiling = max(1, self.full_window // n)
        self.per_window = max(1, self.ceiling - narrowed)
        self._floor = max(1, math.ceil(self.ceiling * 0.9))

    @_locked
    def window_wait(self, *, urgent: bool = False) -> float:
        """Seconds until one more send fits the sliding window (0: now). A stalled event loop wakes several
        reserved slots at once; counting real send starts in a window, as Telegram does, keeps such a burst from
        ever exceeding the limit."""
        now = self.clock()
        if not urgent and self.urgent:
            return self.spacing  # replies go first; look again a slot later
        self._forget(now)
        if self.per_window < self.ceiling and now - self._narrowed_at >= 10 * self.window:
            self.per_window += 1  # ten windows without an overall 429: give one send of room back
            self._narrowed_at = now
        # Never back to back either: at least half a slot between real starts, so a window never fills in a burst
        # whose arrival jitter could spill over Telegram's own count.
        gap = self._started[-1] + self.spacing / 2 - now if self._started else 0.0
        both = sorted((*self._started, *self._others)) if self._others else self._started
        return max(0.0, gap, self._until_below(self._started, self._own_limit(now), now),
                   self._until_below(both, self.per_window, now))

    def _forget(self, now: float) -> None:
        for starts in (self._started, self._others):
            while starts and now - starts[0] >= self.window:
                starts.popleft()

    def _own_limit(self, now: float) -> int:
        limit = self.per_window - self.held(now)
        return limit if self._granted is None else min(limit, self._granted)

    def _until_below(self, starts: Any, limit: int, now: float) -> float:
        """Seconds until fewer than `limit` of `starts` (sorted) are in the window."""
        if len(starts) < limit:
            return 0.0
        return self.window if limit <= 0 else float(starts[-limit] + self.window - now)

    @_locked
    def hold(self, n: int) -> int:
        """Keep `n` sends per window free for another process sending for the same bot (the sender child, for the
        replica's replies): the room narrows at once; a lowering takes effect a window later, since the other's
        sends made under the former hold may still be in the window. Returns the hold now in effect."""
        self._held.append((self.clock(), max(0, n)))
        return self.held()

    @_locked
    def held(self, now: float | None = None) -> int:
        """Sends per window kept free for the other process now (`hold`)."""
        now = self.clock() if now is None else now
        while len(self._held) > 1 and now - self._held[1][0] >= self.window:
            self._held.popleft()  # replaced more than a window ago
        return max((n for _, n in self._held), default=0)

    @_locked
    def grant(self, n: int | None, others: list[float] | None = None) -> None:
        """The other process sending for the same bot leaves this one at most `n` sends per window (None: no
        limit) and, where `others` is given, started its sends in the window at those times (this clock's: both
        processes read the host's monotonic clock); both count in this one's window."""
        self._granted = n
        if others is not None:
            self._others = deque(sorted(others))

    @property
    def granted(self) -> int | None:
        return self._granted

    @_locked
    def window_starts(self) -> list[float]:
        """When this pacer's sends in the current window started."""
        self._forget(self.clock())
        return list(self._started)

    @_locked
    def wanted(self) -> int:
        """Sends per window this pacer's callers use now: starts in the window and replies waiting."""
        self._forget(self.clock())
        return len(self._started) + self.urgent

    @_locked
    def room(self) -> bool:
        """Whether one more send fits the sliding window now, with no reply waiting (no slot is taken)."""
        now = self.clock()
        self._forget(now)
        return (not self.urgent and now >= self._paused_until and len(self._started) < self._own_limit(now)
                and len(self._started) + len(self._others) < self.per_window)

    @_locked
    def overflowed(self) -> bool:
        """A 429 the overall limit is the likely cause of, though no window had more starts than allowed: the sends
        arrive bunched (network or scheduling jitter). Leave one more send of room per window, down to 90 % of
        the ceiling. True when another came less than a window ago: then it is a flood, not a bunch that has
        slid out of the window by the time the answer is in, and everything must wait."""
        now = self.clock()
        repeated = now - self._narrowed_at < self.window
        self.per_window = max(self._floor, self.per_window - 1)
        self._narrowed_at = now
        return repeated

    @_locked
    def started(self, chat_id: int | None = None) -> float | None:
        """A send really starts now; returns the seconds since the last start to the same chat (None: none known)."""
        now = self.clock()
        self._started.append(now)
        since = None
        if chat_id is not None:
            last = self._chat_started.get(chat_id)
            since = None if last is None else now - last
            self._chat_started[chat_id] = now
            if len(self._chat_started) > 50_000:
                self._chat_started = {c: t for c, t in self._chat_started.items() if now - t < self.chat_interval}
        return since

    @_locked
    def chat_gap(self, chat_id: int) -> float:
        """Seconds until this chat's last real start is `chat_interval` ago (a reserved slot can come early when the
        previous send to the chat started late)."""
        last = self._chat_started.get(chat_id)
        return 0.0 if last is None else max(0.0, last + self.chat_interval - self.clock())

    @_locked
    def reserve(self, chat_id: int) -> float:
        """Seconds to wait before this chat's next message may go (the slot is taken now)."""
        now = self.clock()
        overall = max(now, self._next, self._paused_until)
        chat = self._chat_next.get(chat_id, 0.0)
        slot = max(overall, chat)
        if chat <= overall:
            # This send takes the next overall slot. One that waits for its chat instead takes none ahead of time
            # (it would push every other chat's slot behind it); the sliding window still counts it when it starts.
            self._next = overall + self.spacing
        self._chat_next[chat_id] = slot + self.chat_interval
        if len(self._chat_next) > 50_000:  # forget chats whose slot is long past
            self._chat_next = {c: t for c, t in self._chat_next.items() if t > now}
        return slot - now

    def paused_for(self) -> float:
        return self._paused_until - self.clock()

    @_locked
    def pause(self, seconds: float, chat_id: int | None = None) -> None:
        until = self.clock() + seconds
        self._paused_until = max(self._paused_until, until)
        if chat_id is not None:
            self._chat_next[chat_id] = max(self._chat_next.get(chat_id, 0.0), until)
            self._chat_paused[chat_id] = max(self._chat_paused.get(chat_id, 0.0), until)
            if len(self._chat_paused) > 10_000:
                now = self.clock()
                self._chat_paused = {c: t for c, t in self._chat_paused.items() if t > now}

    @_locked
    def pause_chat(self, seconds: float, chat_id: int) -> None:
        """A 429 on a reply: our overall pacing keeps the global limit, so it is that chat's; only it waits."""
        until = self.clock() + seconds
        self._chat_next[chat_id] = max(self._chat_next.get(chat_id, 0.0), until)
        self._chat_paused[chat_id] = max(self._chat_paused.get(chat_id, 0.0), until)

    @_locked
    def chat_wait(self, chat_id: int) -> float:
        """Seconds until this chat may get its next message (without reserving a global slot)."""
        return max(0.0, self._chat_next.get(chat_id, 0.0) - self.clock(), self.paused_for())

    @_locked
    def chat_paused_for(self, chat_id: int) -> float:
        """Seconds left of a 429 pause on this chat (or on everything)."""
        return max(0.0, self._chat_paused.get(chat_id, 0.0) - self.clock(), self.paused_for())

    @_locked
    def take_chat(self, chat_id: int) -> None:
        self._chat_next[chat_id] = max(self._chat_next.get(chat_id, 0.0), self.clock() + self.chat_interval)

    async def acquire_urgent(self, chat_id: int) -> None:
        """A reply's turn: room in the overall window, and any 429 pause of this chat or of everything — ahead of
        alerts, which see `urgent` and wait. The one-a-second per chat is kept for replies only once Telegram asked
        for it (a 429 pauses that chat): a reply is awaited inside its handler, whose database transaction must not
        wait a second per earlier reply; Telegram tolerates a short burst of answers to a user's own messages."""
        with self._lock:
            self.urgent += 1
        try:
            while True:
                wait = max(self.chat_paused_for(chat_id), self.window_wait(urgent=True))
                if wait <= 0:
                    break
                await asyncio.sleep(wait)
            self.take_chat(chat_id)
            self.started(chat_id)
        finally:
            with self._lock:
                self.urgent -= 1



class RateLimitedSession(BaseRequestMiddleware):
    """The aiogram request middleware: pace chat writes as replies, retry every call after a 429."""

    def __init__(self, pacer: Pacer, *, max_retries: int = 5, on_retry_after: Callable[[str], Any] | None = None,
                 time_scale: float = 1.0) -> None:
        self.pacer = pacer
        self.max_retries = max_retries
        self.on_retry_after = on_retry_after
        self.time_scale = time_scale  # seconds per Telegram second (benches with a scaled stand-in)
        self.retried = 0

    async def __call__(self, make_request: NextRequestMiddlewareType[TelegramType], bot: Any,
                       method: TelegramMethod[TelegramType]) -> Response[TelegramType]:
        if _PACED.get():
            return await make_request(bot, method)
        name = type(method).__name__
        chat_id = getattr(method, "chat_id", None)
        writes = isinstance(chat_id, int) and name.lower().startswith(_CHAT_WRITES)
        attempt = 0
        while True:
            if writes:
                assert isinstance(chat_id, int)
                await self.pacer.acquire_urgent(chat_id)
            else:
                paused = self.pacer.paused_for()
                if paused > 0:
                    await asyncio.sleep(paused)
            try:
                return await make_request(bot, method)
            except TelegramRetryAfter as e:
                attempt += 1
                self.retried += 1
                if self.on_retry_after is not None:
                    self.on_retry_after(getattr(method, "__api_method__", name))
                if isinstance(chat_id, int):
                    self.pacer.pause_chat(e.retry_after * self.time_scale, chat_id)
                else:
                    self.pacer.pause(e.retry_after * self.time_scale)
                if attempt > self.max_retries:
                    raise
                log.info("Telegram asked to wait %s s before %s; waiting", e.retry_after, name)
