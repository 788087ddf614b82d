"""A replica's copy of the availability changes it was asked about, refreshed by a small read per question.

`card_stats` for "any H100 × 1" over 30 days reads every change of a dozen provider families: thousands of rows, most
of the time of a /when answer (bench/availability.py). The changes table is append-only within the kept window
(retention only drops rows older than it, storage.availability.prune_availability), so a series' rows already read
do not change: a question reads only the rows stamped at or after its latest held change less `SLACK` (a poll
stamped earlier may commit a little later than one stamped after it: the slack re-reads that tail each time, and the
tail read replaces the held one), and the merged "any of them" timeline is recomputed only when a series or a
provider's observed stretches moved. The figures are the same as from a fresh read (tests/test_availability_store.py
checks both ways on both databases), so every replica still answers the same.

Bounded: at most `max_rows` changes held, least recently asked series dropped first; a few merged timelines.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import Table, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from core.availability import DAY, Change, Span, combine
from storage.availability_tables import AvailabilityChange

SLACK = 3600.0  # seconds: how much earlier than the latest held change a row may still be committed
TRIM = DAY  # held rows older than the asked window by more than this are dropped
CHUNK = 500  # bounded IN lists

_changes = cast(Table, AvailabilityChange.__table__)
_COLS = (_changes.c.series_key, _changes.c.id, _changes.c.at, _changes.c.in_stock, _changes.c.price_usd,
         _changes.c.price_rub)


@dataclass(slots=True)
class _Held:
    since: float  # held from here on (and the change in force here)
    changes: list[Change]
    ids: list[int]  # the rows' ids, alongside `changes`


MergedKey = tuple[tuple[str, ...], tuple[float | None, ...], str]


class ChangeCache:
    def __init__(self, max_rows: int = 200_000, max_merged: int = 32) -> None:
        self.max_rows = max_rows
        self.max_merged = max_merged
        self._held: OrderedDict[str, _Held] = OrderedDict()
        self._rows = 0
        self._merged: OrderedDict[MergedKey, tuple[tuple[Any, ...], list[Change], list[Span]]] = OrderedDict()
        self._slices: dict[str, tuple[int | None, int | None, int]] = {}

    def __len__(self) -> int:
        return self._rows

    async def changes(self, session: AsyncSession, keys: Sequence[str], since: datetime) -> dict[str, list[Change]]:
        """Each series' changes from `since` on, preceded by the one in force at `since`: exactly the rows a fresh
        read returns (storage.availability._changes_of), so the figures never depend on what a replica held."""
        at = since.timestamp()
        fresh = [k for k in keys if k not in self._held or self._held[k].since > at]
        held = [k for k in keys if k not in fresh]
        for i in range(0, len(held), CHUNK):
            fresh += await self._refresh(session, held[i:i + CHUNK], at)
        for i in range(0, len(fresh), CHUNK):
            await self._load(session, fresh[i:i + CHUNK], since)
        out: dict[str, list[Change]] = {}
        self._slices = {}
        for k in keys:
            h = self._held[k]
            self._held.move_to_end(k)
            start = self._start(h, at)
            if start > 0 and at - h.changes[0].at > TRIM:
                self._trim(h, start, at)
                start = 0
            out[k] = h.changes[start:] if start else h.changes
            self._slices[k] = (h.ids[start] if h.ids else None, h.ids[-1] if h.ids else None, len(h.ids) - start)
        self._evict(keep=set(keys))
        return out

    @staticmethod
    def _start(h: _Held, at: float) -> int:
        """Where the rows a window from `at` needs begin: the one in force at `at` (the last before it)."""
        return max(0, bisect.bisect_left(h.changes, at, key=lambda c: c.at) - 1)

    def merged(self, key: MergedKey, version: tuple[Any, ...], series: Sequence[tuple[list[Change], list[Span]]],
               caps: Sequence[float | None], currency: str) -> tuple[list[Change], list[Span]]:
        """`combine` of the series, reused while `version` (the series' held rows and coverage) is unchanged."""
        hit = self._merged.get(key)
        if hit is not None and hit[0] == version:
            self._merged.move_to_end(key)
            return hit[1], hit[2]
        merged, spans = combine(series, caps=caps, currency=currency)
        self._merged[key] = (version, merged, spans)
        self._merged.move_to_end(key)
        while len(self._merged) > self.max_merged:
            self._merged.popitem(last=False)
        return merged, spans

    def version(self, keys: Sequence[str]) -> tuple[Any, ...]:
        """What the latest `changes` returned for `keys`: each slice's first and last ids and length."""
        return tuple(self._slices[k] for k in keys)

    async def _load(self, session: AsyncSession, keys: list[str], since: datetime) -> None:
        before = (select(func.max(_changes.c.id)).where(_changes.c.series_key.in_(keys), _changes.c.at < since)
                  .group_by(_changes.c.series_key))
        rows = (await session.execute(
            select(*_COLS).where(_changes.c.series_key.in_(keys), or_(_changes.c.at >= since,
                                                                       _changes.c.id.in_(before)))
            .order_by(_changes.c.series_key, _changes.c.at, _changes.c.id))).all()
        for k in keys:
            old = self._held.pop(k, None)
            if old is not None:
                self._rows -= len(old.ids)
            self._held[k] = _Held(since.timestamp(), [], [])
        for key, row_id, at, in_stock, usd, rub in rows:
            h = self._held[key]
            h.changes.append(Change(_ts(at), bool(in_stock), usd, rub))
            h.ids.append(row_id)
        self._rows += len(rows)

    async def _refresh(self, session: AsyncSession, keys: list[str], since: float) -> list[str]:
        """Re-read the held series' tails; returns those to load afresh: where the first row a window from `since`
        needs is gone (retention cut inside the window: then what the database holds is what counts)."""
        firsts = {h.ids[self._start(h, since)]: k for k in keys if (h := self._held[k]).ids}
        present = set((await session.scalars(select(_changes.c.id).where(_changes.c.id.in_(list(firsts))))).all())
        gone = [k for row_id, k in firsts.items() if row_id not in present]
        keys = [k for k in keys if k not in gone]
        if not keys:
            return gone
        floor = min(self._floor(self._held[k]) for k in keys)
        rows = (await session.execute(
            select(*_COLS).where(_changes.c.series_key.in_(keys), _changes.c.at >= _dt(floor))
            .order_by(_changes.c.series_key, _changes.c.at, _changes.c.id))).all()
        tails: dict[str, tuple[list[Change], list[int]]] = {k: ([], []) for k in keys}
        for key, row_id, at, in_stock, usd, rub in rows:
            changes, ids = tails[key]
            changes.append(Change(_ts(at), bool(in_stock), usd, rub))
            ids.append(row_id)
        for k in keys:
            h = self._held[k]
            changes, ids = tails[k]
            cut = bisect.bisect_left(h.changes, floor, key=lambda c: c.at)
            if h.ids[cut:] == ids:
                continue  # the usual case: nothing new
            self._rows += len(ids) - (len(h.ids) - cut)
            h.changes[cut:] = changes
            h.ids[cut:] = ids
        return gone

    @staticmethod
    def _floor(h: _Held) -> float:
        return (h.changes[-1].at if h.changes else h.since) - SLACK

    def _trim(self, h: _Held, start: int, at: float) -> None:
        """Drop the rows before `start` (no window from `at` needs them)."""
        del h.changes[:start], h.ids[:start]
        h.since = at
        self._rows -= start

    def _evict(self, keep: set[str]) -> None:
        while self._rows > self.max_rows and self._held:
            key = next(iter(self._held))
            if key in keep:
                break
            self._rows -= len(self._held.pop(key).ids)


def _ts(at: datetime) -> float:
    return (at if at.tzinfo is not None else at.replace(tzinfo=UTC)).timestamp()


def _dt(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, UTC)
