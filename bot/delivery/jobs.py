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
    """Jobs waiting per chat, in arrival order within a chat, handed out chat by chat in the order the chats may
    next take a message (Telegram's one a second per chat; `chat_wait` says how long a chat still has to wait)."""

    def __init__(self, clock: Callable[[], float], chat_wait: Callable[[int], float], interval: float) -> None:
        self.clock = clock
        self.chat_wait = chat_wait
        self.interval = interval
        self._chats: dict[int, deque[Job]] = {}
        self._heap: list[tuple[float, int, int]] = []  # (ready at, arrival, chat id), one entry per chat
        self._order = itertools.count()

    def put(self, job: Job) -> None:
        line = self._chats.get(job.chat_id)
        if line is None:
            line = self._chats[job.chat_id] = deque()
            ready = self.clock() + self.chat_wait(job.chat_id)
            heapq.heappush(self._heap, (ready, next(self._order), job.chat_id))
        line.append(job)

    def take(self) -> tuple[Job | None, float | None]:
        """The next job whose chat may take a message now, or (None, seconds until one may; None: nothing waits).
        A chat handed a job comes round again a chat interval later at the earliest."""
        if not self._heap:
            return None, None
        now = self.clock()
        ready, order, chat = self._heap[0]
        if ready > now:
            return None, ready - now
        heapq.heappop(self._heap)
        line = self._chats[chat]
        job = line.popleft()
        if line:
            heapq.heappush(self._heap, (now + max(self.interval, self.chat_wait(chat)), order, chat))
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
