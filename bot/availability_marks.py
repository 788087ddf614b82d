"""Which offers are short-lived (usually gone within the hour), for the ⚡ mark of /offers and inline rows.

Read per page from the availability history (storage/availability.py `series_stats`: two indexed reads for the
groups shown) and kept a few minutes per offer group, so a page turned or an inline query typed again reads nothing:
the figures describe the last 7 days and barely move within minutes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Iterable
from typing import NamedTuple

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.availability_view import short_lived
from bot.offer_cache import CachedOffer
from core.availability import series_key
from storage.availability import series_stats

log = logging.getLogger(__name__)


class Marks(NamedTuple):
    keys: frozenset[str]  # offers to mark short-lived
    complete: bool  # every group's verdict was known (False: `wait` ran out first; marks may be missing)


TTL = 300.0
KEPT = 20_000  # group verdicts kept (a few dozen bytes each)


def offer_group(offer: CachedOffer) -> str:
    card = offer.gpu if offer.gpu is not None else f"?{offer.gpu_name}"
    return series_key(offer.provider, card, offer.gpu_count, offer.location, offer.billing)


class StayMarks:
    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], *, ttl: float = TTL) -> None:
        self.sessionmaker = sessionmaker
        self.ttl = ttl
        self._known: OrderedDict[str, tuple[float, bool]] = OrderedDict()  # group -> (fresh until, short-lived)
        self._reading: dict[str, asyncio.Task[None]] = {}  # group -> the read of its figures under way

    async def short(self, offers: Iterable[CachedOffer], wait: float | None = None) -> Marks:
        """The keys of those offers whose group is short-lived (nothing when the figures cannot be read: a mark is
        never worth an error). `wait`: the longest to wait for groups not known yet (None: until they are read);
        past it the answer goes without their marks, `complete` False, and the read goes on for the next asker (a
        mark is not worth a slow answer either: the soak's slowest inline answer, 98 ms, spent 91 of them here).
        A group whose verdict is older than the TTL keeps it until the new one is read."""
        now = time.monotonic()
        by_group: dict[str, list[str]] = {}
        for o in offers:
            by_group.setdefault(offer_group(o), []).append(o.key)
        missing = [g for g in by_group if (hit := self._known.get(g)) is None or hit[0] < now]
        if missing:
            unread = [g for g in missing if g not in self._reading]
            if unread:
                task = asyncio.get_running_loop().create_task(self._read(unread))
                for g in unread:
                    self._reading[g] = task
            await asyncio.wait({self._reading[g] for g in missing}, timeout=wait)
        verdicts = {g: hit[1] for g in by_group if (hit := self._known.get(g)) is not None}
        return Marks(frozenset(k for g, keys in by_group.items() if verdicts.get(g) for k in keys),
                     len(verdicts) == len(by_group))

    async def close(self, timeout: float = 5.0) -> None:
        """At shutdown, before the database goes: the reads under way end (given `timeout`, then cancelled), so
        none is left pending on a closed loop or reading through a disposed engine."""
        reading = set(self._reading.values())
        if not reading:
            return
        _, late = await asyncio.wait(reading, timeout=timeout)
        for task in late:
            task.cancel()
        if late:
            await asyncio.wait(late)

    async def _read(self, groups: list[str]) -> None:
        """Read the groups' figures into the verdicts kept: one read per group at a time, however many ask."""
        try:
            try:
                async with self.sessionmaker() as session:
                    stats = {s.key: s for s in await series_stats(session, keys=groups, days=(7,))}
            except Exception as e:  # no one may be waiting to hear of it: a mark is never worth an error
                log.warning("availability marks unavailable: %s", e)
                stats = {}
            until = time.monotonic() + self.ttl
            for g in groups:
                s = stats.get(g)
                self._known[g] = (until, s is not None and short_lived(s.window(7)))
                self._known.move_to_end(g)
            while len(self._known) > KEPT:
                self._known.popitem(last=False)
        finally:
            me = asyncio.current_task()
            for g in groups:
                if self._reading.get(g) is me:
                    del self._reading[g]
