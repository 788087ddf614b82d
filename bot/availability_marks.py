"""Which offers are short-lived (usually gone within the hour), for the ⚡ mark of /offers and inline rows.

Read per page from the availability aggregates (storage/availability.py: one indexed read for the groups shown) and
kept a few minutes per offer group, so a page turned or an inline query typed again reads nothing: the figures
describe the last 7 days and barely move within minutes.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Iterable

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.availability_view import short_lived
from bot.offer_cache import CachedOffer
from core.availability import series_key
from storage.availability import series_stats

log = logging.getLogger(__name__)

TTL = 300.0
KEPT = 20_000  # group verdicts kept (a few dozen bytes each)


def offer_group(offer: CachedOffer) -> str:
    card = offer.gpu if offer.gpu is not None else f"?{offer.gpu_name}"
    return series_key(offer.provider, card, offer.gpu_count, offer.location, offer.billing)


class StayMarks:
    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], *, ttl: float = TTL) -> None:
        self.sessionmaker = sessionmaker
        self.ttl = ttl
        self._known: OrderedDict[str, tuple[float, bool]] = OrderedDict()

    async def short(self, offers: Iterable[CachedOffer]) -> frozenset[str]:
        """The keys of those offers whose group is short-lived (nothing when the figures cannot be read: a mark is
        never worth an error)."""
        now = time.monotonic()
        by_group: dict[str, list[str]] = {}
        for o in offers:
            by_group.setdefault(offer_group(o), []).append(o.key)
        missing = [g for g in by_group if (hit := self._known.get(g)) is None or hit[0] < now]
        if missing:
            try:
                async with self.sessionmaker() as session:
                    stats = {s.key: s for s in await series_stats(session, keys=missing, days=(7,))}
            except SQLAlchemyError as e:
                log.warning("availability marks unavailable: %s", e)
                stats = {}
            for g in missing:
                s = stats.get(g)
                self._known[g] = (now + self.ttl, s is not None and short_lived(s.window(7)))
                self._known.move_to_end(g)
            while len(self._known) > KEPT:
                self._known.popitem(last=False)
        return frozenset(k for g, keys in by_group.items() if self._known[g][1] for k in keys)
