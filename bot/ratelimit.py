"""Per-user rate limits on the expensive commands: one mechanism for all of them.

A handler opts in with a flag naming its kind, `@router.message(Command("history"), flags={"rate": "history"})`;
`RateLimitMiddleware` (an inner middleware, so it sees the matched handler's flags) takes one token from that
user's bucket for the kind and, when it is empty, answers "too many requests, try again in N s" instead of running
the handler. The user hears that once per streak of refused requests (a flood does not become a flood of replies);
a pressed button is always acknowledged, so it stops spinning.

Buckets live in this process's memory, bounded by an LRU of users: with several replicas a user's allowance is at
most the replica count times the rate, which still bounds the work, without a database write per request.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aiogram import BaseMiddleware
from aiogram.dispatcher.flags import get_flag
from aiogram.types import (
    CallbackQuery,
    InlineQuery,
    InlineQueryResultArticle,
    InputTextMessageContent,
    Message,
    TelegramObject,
)

from bot.texts import t

FLAG = "rate"


@dataclass(frozen=True)
class Rate:
    burst: int  # requests allowed back to back
    per: float  # seconds to earn one more


# Sized so that a person never meets them (a dozen estimates in a row, a wizard restarted a few times a minute)
# while a script is held to a few expensive answers a minute.
RATES: Mapping[str, Rate] = {
    "estimate": Rate(burst=12, per=3.0),  # /estimate, a workload typed as text, /offers <workload>: estimator + offers
    "wizard": Rate(burst=5, per=10.0),  # a bare /subscribe (re)starting the wizard: a database write each time
    "deep_link": Rate(burst=5, per=10.0),  # /start sub_<token> and "Notify me": estimate + subscription write
    "history": Rate(burst=4, per=15.0),  # /history: a price-history query and a chart drawn
    # Inline queries come one per keystroke (clients debounce them): a fast typist's sentence fits the burst, a
    # script's flood is held to four a second, so it cannot crowd the shared send queue other users' replies use.
    "inline": Rate(burst=30, per=0.25),
    # Hub lookups of names not known yet (a known one costs nothing and is not counted): a few a minute.
    "hub": Rate(burst=5, per=12.0),
}


@dataclass
class _Bucket:
    tokens: float
    at: float
    told: bool = False  # the user has been told about the current streak of refusals


class RateLimiter:
    def __init__(self, rates: Mapping[str, Rate] = RATES, *, clock: Callable[[], float] = time.monotonic,
                 capacity: int = 100_000) -> None:
        self.rates = rates
        self.clock = clock
        self.capacity = capacity
        self._buckets: OrderedDict[tuple[int, str], _Bucket] = OrderedDict()

    def take(self, user_id: int, kind: str) -> float:
        """Take one request of `kind` for the user: 0.0 when allowed, else the seconds until one will be."""
        rate = self.rates[kind]
        now = self.clock()
        key = (user_id, kind)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = _Bucket(tokens=float(rate.burst), at=now)
            self._buckets[key] = bucket
            while len(self._buckets) > self.capacity:
                self._buckets.popitem(last=False)  # the longest-unseen user: at worst they get a fresh allowance
        else:
            self._buckets.move_to_end(key)
            bucket.tokens = min(float(rate.burst), bucket.tokens + (now - bucket.at) / rate.per)
            bucket.at = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            bucket.told = False
            return 0.0
        return (1.0 - bucket.tokens) * rate.per

    def first_refusal(self, user_id: int, kind: str) -> bool:
        """True once per streak of refusals: whether to tell the user (a reply per refused message would let a
        flood of messages become a flood of replies)."""
        bucket = self._buckets.get((user_id, kind))
        if bucket is None or bucket.told:
            return False
        bucket.told = True
        return True


Handler = Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]]


class RateLimitMiddleware(BaseMiddleware):
    """Inner middleware for messages, callback queries and inline queries: applies the handler's `rate` flag."""

    def __init__(self, limiter: RateLimiter) -> None:
        self.limiter = limiter

    async def __call__(self, handler: Handler, event: TelegramObject, data: dict[str, Any]) -> Any:
        kind = get_flag(data, FLAG)
        from_user = getattr(event, "from_user", None)
        if not isinstance(kind, str) or from_user is None:
            return await handler(event, data)
        wait = self.limiter.take(from_user.id, kind)
        if wait <= 0:
            return await handler(event, data)
        code = str(getattr(from_user, "language_code", None) or "")
        lang = str(data.get("lang") or ("ru" if code.startswith("ru") else "en"))  # inline: no user middleware
        text = t(lang, "rate_limited", seconds=max(1, math.ceil(wait)))
        # A pressed button is always answered (it keeps spinning otherwise); a message only once per streak.
        tell = isinstance(event, CallbackQuery) or self.limiter.first_refusal(from_user.id, kind)
        if tell and isinstance(event, Message | CallbackQuery):
            await event.answer(text)
        elif tell and isinstance(event, InlineQuery):  # one result saying so; the rest of the streak unanswered
            await event.answer([InlineQueryResultArticle(id="rate", title=text[:200],
                                                         input_message_content=InputTextMessageContent(
                                                             message_text=text))],
                               cache_time=max(1, math.ceil(wait)), is_personal=True)
        return None
