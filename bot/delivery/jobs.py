"""Messages waiting in memory to be sent, and the order they go in."""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass
class Job:
    """One delivery on its way: its row id, where it goes and what it says, and how its attempts went."""

    id: int
    user_id: int
    chat_id: int
    text: str
    reply_markup: dict[str, Any] | None
    attempts: int = 0
    since_chat: float | None = None  # seconds between this attempt's start and the chat's previous start
    marked: bool = False  # its state "sending" is committed (a retry after an attempt that may have arrived)
    request: Any = None  # its aiogram SendMessage, built at the first attempt (bot.sender.AlertSender._request)


class ChatLine:
    """Jobs waiting per chat, in arrival order within a chat, handed out oldest job first among the chats that may
    take a message now (Telegram's one a second per chat; `chat_wait` says how long a chat still has to wait).

    Oldest job first, not the chat that became free first: a chat's next message then competes with the messages
    planned after it, never with them all again. Handing out by the time a chat became free sent a long digest at
    one message per round of every chat with messages in memory (~100 chats, 0.8 s apart at a scaled 120 a
    second instead of the chat's 0.25 s), so it was still going alone long after the others had ended
    (bench/fanout_cycle.py). No job waits behind younger ones: every job is someone's oldest in time."""

    def __init__(self, clock: Callable[[], float], chat_wait: Callable[[int], float], interval: float) -> None:
        self.clock = clock
        self.chat_wait = chat_wait
        self.interval = interval
        self._chats: dict[int, deque[tuple[int, Job]]] = {}  # chat id -> (arrival, job), oldest first
        self._waiting: list[tuple[float, int, int]] = []  # (ready at, arrival of its oldest job, chat id)
        self._ready: list[tuple[int, int]] = []  # (arrival of its oldest job, chat id): may take one now
        self._order = itertools.count()

    def put(self, job: Job) -> None:
        arrival = next(self._order)
        line = self._chats.get(job.chat_id)
        if line is None:
            line = self._chats[job.chat_id] = deque()
            ready = self.clock() + self.chat_wait(job.chat_id)
            heapq.heappush(self._waiting, (ready, arrival, job.chat_id))
        line.append((arrival, job))

    def take(self) -> tuple[Job | None, float | None]:
        """The oldest job whose chat may take a message now, or (None, seconds until one may; None: nothing waits).
        A chat handed a job comes round again a chat interval later at the earliest."""
        now = self.clock()
        waiting, ready = self._waiting, self._ready
        while waiting and waiting[0][0] <= now:
            _, arrival, chat = heapq.heappop(waiting)
            heapq.heappush(ready, (arrival, chat))
        if not ready:
            return (None, waiting[0][0] - now) if waiting else (None, None)
        _, chat = heapq.heappop(ready)
        line = self._chats[chat]
        _, job = line.popleft()
        if line:
            heapq.heappush(waiting, (now + max(self.interval, self.chat_wait(chat)), line[0][0], chat))
        else:
            del self._chats[chat]
        return job, None


def round_robin(jobs: list[Job]) -> list[Job]:
    """Every chat's first message, then every chat's second...: a digest of several messages to one chat must not
    keep the workers waiting for that chat's one-a-second while other chats' messages could go."""
    by_chat: dict[int, list[Job]] = {}
    for job in jobs:
        by_chat.setdefault(job.chat_id, []).append(job)
    out: list[Job] = []
    rank = 0
    while len(out) < len(jobs):
        out.extend(q[rank] for q in by_chat.values() if rank < len(q))
        rank += 1
    return out
