"""A replica's copy of the availability changes it was asked about, refreshed by a small read per question.

`card_stats` for "any H100 × 1" over 30 days reads every change of a dozen provider families: thousands of rows, most
of the time of a /when answer (bench/availability.py). The changes table is append-only within the kept window
(retention only drops rows older than it, storage.availability.prune_availability), so a series' rows already read
do not change: a question reads only the rows stamped at or after its latest held change less `SLACK` (a poll
stamped earlier may commit a little later than one stamped after it: the slack re-reads that tail each time, and the
tail read replaces the held one), and the merged "any of them" timeline is kept: recomputed only from the time a
series or a provider's observed stretches moved (a poll's new rows: the last minutes, not 30 days). The figures are
the same as from a fresh read (tests/storage/test_availability_store.py checks both ways on both databases), so every
replica still answers the same.

Bounded: at most `max_rows` changes held, least recently asked series dropped first; a few merged timelines.

Held rows are `Change` NamedTuples, which CPython's cyclic collector never untracks: until the process freezes them
(gpuradar/heap.py) every collection of the older generations walks them. `on_load`, when set, is told how many rows a
question loaded (a replica's first question of a card reads 30 days: tens of thousands), so the application can
freeze them soon instead of at its next periodic settle.
"""

from __future__ import annotations

import bisect
import math
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import cast

from sqlalchemy import Table, func, or_, select, union_all
from sqlalchemy.ext.asyncio import AsyncSession

from core.availability import DAY, Change, Span, Timeline, combine, merge_coverage
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


@dataclass(slots=True)
class _Merged:
    """A merged timeline and the inputs it was combined from."""

    ids: list[list[int]]  # each series' slice, as row ids
    changes: list[list[Change]]
    spans: list[tuple[Span, ...]]  # each series' coverage
    merged: list[Change]
    union: list[Span]
    timeline: Timeline | None = None  # `merged` prepared for windows, once asked for


def _moved_from(old: _Merged, ids: list[list[int]], changes: Sequence[list[Change]],
                spans: list[tuple[Span, ...]]) -> float | None:
    """The earliest time the inputs differ from those `old` was merged from: None when they do not; -inf when a
    slice's start moved or the series are not the same ones."""
    if len(ids) != len(old.ids) or len(spans) != len(old.spans):
        return -math.inf
    t0 = math.inf
    for old_ids, new_ids, old_changes, new_changes in zip(old.ids, ids, old.changes, changes, strict=True):
        if old_ids[:1] != new_ids[:1]:
            return -math.inf
        n = len(old_ids)
        if new_ids[:n] == old_ids:  # the usual case: the same rows, perhaps more after them
            if len(new_ids) > n:
                t0 = min(t0, new_changes[n].at)
            continue
        i = next((i for i, (a, b) in enumerate(zip(old_ids, new_ids, strict=False)) if a != b),
                 min(n, len(new_ids)))
        t0 = min([t0] + [c[i].at for c in (old_changes, new_changes) if i < len(c)])
    for old_cov, new_cov in zip(old.spans, spans, strict=True):
        if old_cov == new_cov:
            continue
        for j in range(max(len(old_cov), len(new_cov))):
            a = old_cov[j] if j < len(old_cov) else None
            b = new_cov[j] if j < len(new_cov) else None
            if a == b:
                continue
            if a is None or b is None:
                added = a or b  # a stretch added (or gone)
                assert added is not None
                t0 = min(t0, added.start)
            elif a.start == b.start:
                t0 = min(t0, a.end, b.end)  # a stretch extended
            else:
                t0 = min(t0, a.start, b.start)
            break
    return None if t0 == math.inf else t0


def _resumed(merged: list[Change], t0: float, series: Sequence[tuple[list[Change], list[Span]]],
             caps: Sequence[float | None], currency: str) -> list[Change]:
    """`merged` before `t0`, then `combine` from each series' state in force at `t0` and its coverage from there."""
    head = merged[:bisect.bisect_left(merged, t0, key=lambda c: c.at)]
    tails = []
    for changes, cov in series:
        j = max(0, bisect.bisect_left(changes, t0, key=lambda c: c.at) - 1)
        tails.append((changes[j:], [Span(max(s.start, t0), s.end) for s in cov if s.end >= t0]))
    rest, _ = combine(tails, caps=caps, currency=currency)
    if head and rest and head[-1][1:] == rest[0][1:]:
        rest = rest[1:]
    return head + rest


class ChangeCache:
    def __init__(self, max_rows: int = 200_000, max_merged: int = 32,
                 on_load: Callable[[int], None] | None = None) -> None:
        self.max_rows = max_rows
        self.max_merged = max_merged
        self.on_load = on_load  # told the rows each question loaded afresh (none: not called)
        self._held: OrderedDict[str, _Held] = OrderedDict()
        self._rows = 0
        self._merged: OrderedDict[MergedKey, _Merged] = OrderedDict()
        self._slices: dict[str, int] = {}  # where each key's latest slice began

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
        loaded = self._rows
        for i in range(0, len(fresh), CHUNK):
            await self._load(session, fresh[i:i + CHUNK], since)
        if fresh and self.on_load is not None and self._rows > loaded:
            self.on_load(self._rows - loaded)
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
            self._slices[k] = start
        self._evict(keep=set(keys))
        return out

    @staticmethod
    def _start(h: _Held, at: float) -> int:
        """Where the rows a window from `at` needs begin: the one in force at `at` (the last before it)."""
        return max(0, bisect.bisect_left(h.changes, at, key=lambda c: c.at) - 1)

    def merged(self, key: MergedKey, keys: Sequence[str], series: Sequence[tuple[list[Change], list[Span]]],
               caps: Sequence[float | None], currency: str) -> tuple[list[Change], list[Span], Timeline]:
        """`combine` of the series (`keys`' slices from the latest `changes`, with their coverage), kept: the
        same inputs give it back; inputs that moved only from some time T on (a poll's new rows, a stretch
        extended) keep what was merged before T and combine the rest from the states in force at T (combine is
        causal: what it says at a time depends on nothing later). A window whose start moved (a row left it) is
        merged afresh. With it the merged timeline prepared for windows (core.availability.Timeline), kept as long
        as the inputs do not move (a question then computes only its window's figures) and resumed from T when
        they moved from T on (`Timeline.resumed`: only the stretches from T are cut into pieces again)."""
        ids = [self._held[k].ids[self._slices[k]:] for k in keys]
        spans = [tuple(cov) for _, cov in series]
        hit = self._merged.get(key)
        merged: list[Change] | None = None
        prepared: Timeline | None = None
        if hit is not None:
            t0 = _moved_from(hit, ids, [c for c, _ in series], spans)
            if t0 is None:
                self._merged.move_to_end(key)
                if hit.timeline is None:
                    hit.timeline = Timeline(hit.merged, hit.union, currency)
                return hit.merged, hit.union, hit.timeline
            if t0 != -math.inf:
                merged = _resumed(hit.merged, t0, series, caps, currency)
                union = merge_coverage(s for cov in spans for s in cov)
                if hit.timeline is not None:  # its pieces before t0 are the new timeline's too
                    prepared = hit.timeline.resumed(merged, union, t0)
        if merged is None:
            merged, union = combine(series, caps=caps, currency=currency)
        if prepared is None:
            prepared = Timeline(merged, union, currency)
        self._merged[key] = _Merged(ids, [list(c) for c, _ in series], spans, merged, union, prepared)
        self._merged.move_to_end(key)
        while len(self._merged) > self.max_merged:
            self._merged.popitem(last=False)
        return merged, union, prepared

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
        needs is gone (retention cut inside the window: then what the database holds is what counts). One read:
        the tails, and those first rows by id (present or not)."""
        firsts = {h.ids[self._start(h, since)]: k for k in keys if (h := self._held[k]).ids}
        floor = min(self._floor(self._held[k]) for k in keys)
        cut = _dt(floor)
        # Two index searches in one statement (an OR of the two would walk every held row of the series on SQLite).
        tails_q = select(*_COLS).where(_changes.c.series_key.in_(keys), _changes.c.at >= cut)
        firsts_q = select(*_COLS).where(_changes.c.id.in_(list(firsts)), _changes.c.at < cut)
        rows = sorted((await session.execute(union_all(tails_q, firsts_q))).all(),
                      key=lambda r: (r[0], _aware(r[2]), r[1]))
        present = {row_id for _, row_id, *_ in rows if row_id in firsts}
        gone = {k for row_id, k in firsts.items() if row_id not in present}
        tails: dict[str, tuple[list[Change], list[int]]] = {k: ([], []) for k in keys if k not in gone}
        for key, row_id, at, in_stock, usd, rub in rows:
            tail = tails.get(key)
            if tail is None or _aware(at) < cut:  # a gone series, or a first row read only to see it is there
                continue
            tail[0].append(Change(_ts(at), bool(in_stock), usd, rub))
            tail[1].append(row_id)
        for k, (changes, ids) in tails.items():
            h = self._held[k]
            start = bisect.bisect_left(h.changes, floor, key=lambda c: c.at)
            if h.ids[start:] == ids:
                continue  # the usual case: nothing new
            self._rows += len(ids) - (len(h.ids) - start)
            h.changes[start:] = changes
            h.ids[start:] = ids
        return [k for k in keys if k in gone]

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


def _aware(at: datetime) -> datetime:
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def _ts(at: datetime) -> float:
    return _aware(at).timestamp()


def _dt(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, UTC)
