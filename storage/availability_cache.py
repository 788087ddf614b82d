"""A replica's copy of the availability changes it was asked about, refreshed by a small read per question.

`card_stats` for "any H100 × 1" over 30 days reads every change of a dozen provider families: thousands of rows, most
of the time of a /when answer (bench/availability.py). The changes table is append-only within the kept window
(retention only drops rows older than it, storage.availability.prune_availability), so a series' rows already read
do not change: a question reads no held row again. One statement per question gives each series' tail tally (count
and id sum of the rows stamped from the floor on: an hour before the newest stamp the previous refresh saw, since a
poll stamped earlier may commit a little later than one stamped after it) and the rows after the held ids (a poll's
new ones); equal tallies prove nothing else moved, and a tail they do not account for is read further (`_refresh`).
The merged "any of them" timeline is kept with the edit version of each series it was combined from: recomputed
only from the time a series or a provider's observed stretches moved (a poll's new rows: the last minutes, not 30
days). The figures are the same as from a fresh read (tests/storage/test_availability_store.py checks both ways on
both databases), so every replica still answers the same.

Bounded: at most `max_rows` changes held, least recently asked series dropped first; a few merged timelines.

Held rows are `Change` NamedTuples, which CPython's cyclic collector never untracks: until the process freezes them
(gpuradar/heap.py) every collection of the older generations walks them. `on_load`, when set, is told how many rows a
question loaded (a replica's first question of a card reads 30 days: tens of thousands), so the application can
freeze them soon instead of at its next periodic settle.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NamedTuple, cast

from sqlalchemy import DateTime, Select, Table, bindparam, func, literal, null, select, type_coerce, union_all
from sqlalchemy.ext.asyncio import AsyncSession

from core.availability import DAY, Change, Span, Timeline, change_time, combine, combining, merge_coverage
from core.slices import run_in_slices
from storage.availability_tables import AvailabilityChange

SLACK = 3600.0  # seconds: how long after its stamp a row may still be committed (a poll written late)
TRIM = DAY  # held rows older than the asked window by more than this are dropped
CHUNK = 500  # bounded IN lists
PART = 2000  # rows of a read converted between two hand-backs to the loop (`read_window`): a few ms

_changes = cast(Table, AvailabilityChange.__table__)
EXTRA_PART = 3  # the first part number of `changes_with`'s extra parts


class ExtraRow(NamedTuple):
    """A row of an extra part of `changes_with`: the refresh statement's columns, which every extra part has too
    (NULL where it has nothing): its part number, a string, three integers, a time stamp, a boolean, two floats."""

    part: int
    key: Any
    n: Any
    total: Any
    last: Any
    at: Any
    in_stock: Any
    price_usd: Any
    price_rub: Any
_COLS = (_changes.c.series_key, _changes.c.id, _changes.c.at, _changes.c.in_stock, _changes.c.price_usd,
         _changes.c.price_rub)


EDITS = 64  # the latest edits each held series remembers (a merged timeline older than them is merged afresh)


@dataclass(slots=True)
class _Held:
    since: float  # held from here on (and the change in force here)
    changes: list[Change]
    ids: list[int]  # the rows' ids, alongside `changes`
    # The newest stamp of any row the latest refresh (or load) of it saw held or read first: every row committed
    # after that is stamped at most SLACK before it (-inf: none seen; then its floor is `since`'s).
    seen: float = -math.inf
    # The largest row id (of any series) the cache knew at that refresh: rows committed since have larger ids on
    # SQLite; elsewhere one committed late may not, and the tally shows it.
    seen_id: int = 0
    version: int = 0  # counts the edits
    # (version, time): from which time on each edit changed the rows (-inf: rows dropped at the front, their
    # positions moved); the latest EDITS of them
    edits: list[tuple[int, float]] = field(default_factory=list)

    def edited(self, at: float) -> None:
        self.version += 1
        self.edits.append((self.version, at))
        if len(self.edits) > EDITS:
            del self.edits[0]

    def moved_since(self, version: int) -> float | None:
        """The earliest time the rows changed from since `version`: None when they did not; -inf when that is no
        longer known."""
        if version == self.version:
            return None
        if not self.edits or self.edits[0][0] > version + 1:
            return -math.inf
        return min(at for v, at in self.edits if v > version)


@dataclass(frozen=True, slots=True)
class _Slice:
    """Which rows of a held series a merged timeline was combined from: the held rows as of `version`, from the row
    `first` on (the change in force at the window's start)."""

    held: _Held
    version: int
    first: int | None  # its row id (None: no rows)


MergedKey = tuple[tuple[str, ...], tuple[float | None, ...], str]


@dataclass(slots=True)
class _Merged:
    """A merged timeline and the inputs it was combined from."""

    slices: list[_Slice]
    spans: list[tuple[Span, ...]]  # each series' coverage
    merged: list[Change]
    union: list[Span]
    timeline: Timeline | None = None  # `merged` prepared for windows, once asked for


def _moved_from(old: _Merged, slices: list[_Slice], spans: list[tuple[Span, ...]]) -> float | None:
    """The earliest time the inputs differ from those `old` was merged from: None when they do not; -inf when a
    slice's start moved, the series are not the same ones or their edits are no longer known."""
    if len(slices) != len(old.slices) or len(spans) != len(old.spans):
        return -math.inf
    t0 = math.inf
    for was, now in zip(old.slices, slices, strict=True):
        if was.held is not now.held or was.first != now.first:
            return -math.inf
        moved = now.held.moved_since(was.version)
        if moved is not None:
            t0 = min(t0, moved)
    if t0 == -math.inf:
        return t0
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
    head = merged[:bisect.bisect_left(merged, t0, key=change_time)]
    tails = []
    for changes, cov in series:
        j = max(0, bisect.bisect_left(changes, t0, key=change_time) - 1)
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
        self._max_id = 0  # the largest row id read so far
        self._other: OrderedDict[Hashable, tuple[Any, ...]] = OrderedDict()  # `hold_rows`

    def __len__(self) -> int:
        return self._rows

    async def changes(self, session: AsyncSession, keys: Sequence[str], since: datetime,
                      now: datetime | None = None) -> dict[str, list[Change]]:
        """Each series' changes from `since` on, preceded by the one in force at `since`: exactly the rows a fresh
        read returns (storage.availability._changes_of), so the figures never depend on what a replica held.
        `now`: this replica's clock, which bounds what a stamp from a writer's clock set ahead may claim."""
        return (await self.changes_with(session, keys, since, now))[0]

    async def changes_with(self, session: AsyncSession, keys: Sequence[str], since: datetime,
                           now: datetime | None = None, extra: tuple[Select[*tuple[Any, ...]], ...] = (),
                           params: Mapping[str, Any] | None = None
                           ) -> tuple[dict[str, list[Change]], list[ExtraRow]]:
        """`changes`, and the rows of `extra`: selects of the refresh statement's shape (`ExtraRow`) that the
        caller wants answered by the same statement (its other tables' rows a question needs: one round trip
        instead of one per table), their bound parameters in `params` (names other than the refresh's own: keys,
        cut, after_id, firsts). Their first column numbers the part, from `EXTRA_PART` on. Keep `extra` and pass
        the same tuple again: the statement built around it is kept (built, and its cache key computed, once)."""
        at = since.timestamp()
        cap = now.timestamp() if now is not None else math.inf
        fresh = [k for k in keys if k not in self._held or self._held[k].since > at]
        held = [k for k in keys if k not in fresh]
        rows: list[ExtraRow] = []
        for i in range(0, len(held), CHUNK):
            gone, rows_ = await self._refresh(session, held[i:i + CHUNK], at, cap, *((extra, params) if i == 0 else ()))
            fresh += gone
            rows += rows_
        if extra and not held:  # no refresh ran to carry them
            rows = [ExtraRow(*r) for r in await session.execute(_extra_statement(extra), params or {})]
        loaded = self._rows
        for i in range(0, len(fresh), CHUNK):
            await self._load(session, fresh[i:i + CHUNK], since, cap)
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
        return out, rows

    def held_rows(self, key: Hashable) -> tuple[Any, ...] | None:
        """Rows of another table a caller keeps here between questions (`hold_rows`), by its own key."""
        hit = self._other.get(key)
        if hit is not None:
            self._other.move_to_end(key)
        return hit

    def hold_rows(self, key: Hashable, rows: tuple[Any, ...] | None) -> None:
        """Keep `rows` under `key` (None: forget them); the latest `max_merged` keys are kept."""
        if rows is None:
            self._other.pop(key, None)
            return
        self._other[key] = rows
        self._other.move_to_end(key)
        while len(self._other) > self.max_merged:
            self._other.popitem(last=False)

    @staticmethod
    def _start(h: _Held, at: float) -> int:
        """Where the rows a window from `at` needs begin: the one in force at `at` (the last before it)."""
        return max(0, bisect.bisect_left(h.changes, at, key=change_time) - 1)

    async def merged(self, key: MergedKey, keys: Sequence[str], series: Sequence[tuple[list[Change], list[Span]]],
                     caps: Sequence[float | None], currency: str) -> tuple[list[Change], list[Span], Timeline]:
        """`combine` of the series (`keys`' slices from the latest `changes`, with their coverage), kept: the
        same inputs give it back; inputs that moved only from some time T on (a poll's new rows, a stretch
        extended) keep what was merged before T and combine the rest from the states in force at T (combine is
        causal: what it says at a time depends on nothing later). A window whose start moved (a row left it) is
        merged afresh. With it the merged timeline prepared for windows (core.availability.Timeline), kept as long
        as the inputs do not move (a question then computes only its window's figures) and resumed from T when
        they moved from T on (`Timeline.resumed`: only the stretches from T are cut into pieces again)."""
        slices = []
        for k in keys:
            h = self._held[k]
            start = self._slices[k]
            slices.append(_Slice(h, h.version, h.ids[start] if start < len(h.ids) else None))
        spans = [tuple(cov) for _, cov in series]
        hit = self._merged.get(key)
        merged: list[Change] | None = None
        prepared: Timeline | None = None
        if hit is not None:
            t0 = _moved_from(hit, slices, spans)
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
        if merged is None:  # in slices: a dozen families' 30 days (the held rows are copied first: see `combining`)
            fresh, union = await run_in_slices(combining(series, caps=caps, currency=currency))
            merged = fresh
        if prepared is None:
            prepared = Timeline(merged, union, currency)
        self._merged[key] = _Merged(slices, spans, merged, union, prepared)
        self._merged.move_to_end(key)
        while len(self._merged) > self.max_merged:
            self._merged.popitem(last=False)
        return merged, union, prepared

    async def _load(self, session: AsyncSession, keys: list[str], since: datetime, cap: float = math.inf) -> None:
        read = await read_window(session, keys, since)
        for k, (changes, ids) in read.items():
            old = self._held.pop(k, None)
            if old is not None:
                self._rows -= len(old.ids)
            self._held[k] = _Held(since.timestamp(), changes, ids)
            self._rows += len(ids)
            self._max_id = max(self._max_id, max(ids, default=0))
        seen = min(cap, max((self._held[k].changes[-1].at for k in keys if self._held[k].changes), default=-math.inf))
        for k in keys:
            self._held[k].seen, self._held[k].seen_id = seen, self._max_id

    async def _refresh(self, session: AsyncSession, keys: list[str], since: float, cap: float = math.inf,
                       extra: tuple[Select[*tuple[Any, ...]], ...] = (), extra_params: Mapping[str, Any] | None = None
                       ) -> tuple[list[str], list[ExtraRow]]:
        """Bring the held series' tails up to date; returns those to load afresh: where the first row a window from
        `since` needs is gone (retention cut inside the window: then what the database holds is what counts), and
        the rows of the `extra` parts, which ride on the same statement.

        A tail is the rows stamped from the floor on: SLACK before the newest stamp the series' previous refresh
        saw (of any row held or read by its first statement, all committed before that statement ran; `cap` bounds
        it), so no row committed since is stamped before it. A series that has not moved for hours has an empty
        tail. Rows are only added in a tail (a poll, or a late commit), except that retention deletes rows older
        than the kept window, whose ids are smaller than any row added since. So a tail is unchanged exactly when
        the database's count and id sum for it are the held ones. One statement per question reads each tail's
        tally and the rows after the largest id the cache knew at the series' previous refresh (a poll's new ones);
        no held row is read again (re-reading the slack's hour of rows was most of a /when after a poll). Only a
        tail those rows do not account for (a row committed late under a smaller id, one deleted) is read further:
        its rows after its largest held id, and if that is not enough, the whole tail."""
        firsts = {h.ids[self._start(h, since)]: k for k in keys if (h := self._held[k]).ids}
        floor = min(self._floor(self._held[k]) for k in keys)
        cut = _dt(floor)
        starts = {k: bisect.bisect_left(self._held[k].changes, floor, key=change_time) for k in keys}
        after = {k: max(self._held[k].ids[start:], default=0) for k, start in starts.items()}
        key_, id_ = _changes.c.series_key, _changes.c.id
        params = {**(extra_params or {}), "keys": keys, "cut": cut, "firsts": list(firsts),
                  "after_id": min(self._held[k].seen_id for k in keys)}
        present: set[int] = set()
        tally: dict[str, tuple[int, int, int]] = {}
        got: dict[str, list[tuple[Change, int]]] = {k: [] for k in keys}
        seen = max((self._held[k].changes[-1].at for k in keys if self._held[k].changes), default=-math.inf)
        largest = self._max_id
        others: list[ExtraRow] = []
        for row in await session.execute(_refresh_statement(extra), params):
            part, key, n, total, last, when, in_stock, usd, rub = row
            if part >= EXTRA_PART:
                others.append(ExtraRow(*row))
                continue
            largest = max(largest, int(last))
            if part == 0:
                tally[key] = (int(n), int(total), int(last))
            elif part == 1:
                present.add(int(last))
            else:
                change = _change(when, in_stock, usd, rub)
                seen = max(seen, change.at)
                if int(last) > after[key]:
                    got[key].append((change, int(last)))
        self._max_id = largest
        for k in keys:
            self._held[k].seen, self._held[k].seen_id = min(seen, cap), largest
        gone = {k for row_id, k in firsts.items() if row_id not in present}
        unexplained = [k for k in keys if k not in gone and not self._take(k, starts[k], got[k], tally)]
        late: list[str] = []  # moved in a way the rows after the tail's ids do not account for
        for i in range(0, len(unexplained), CHUNK):
            chunk = unexplained[i:i + CHUNK]
            more: dict[str, list[tuple[Change, int]]] = {k: [] for k in chunk}
            for key, row_id, when, in_stock, usd, rub in await session.execute(
                    select(*_COLS).where(key_.in_(chunk), id_ > min(after[k] for k in chunk), _changes.c.at >= cut)):
                if row_id > after[key]:
                    more[key].append((_change(when, in_stock, usd, rub), row_id))
            late += [k for k in chunk if not self._take(k, starts[k], more[k], tally)]
        if late:
            await self._reread(session, late, floor)
        return [k for k in keys if k in gone], others

    def _take(self, key: str, start: int, rows: list[tuple[Change, int]],
              tally: dict[str, tuple[int, int, int]]) -> bool:
        """Add `rows` (read after the tail's largest id) to the held tail of `key` from `start`, if the database's
        tally of the tail is then met; whether it is."""
        h = self._held[key]
        want = tally.get(key, _NONE)
        if not rows:
            return _tally(h.ids[start:]) == want
        last = (h.changes[-1].at, h.ids[-1]) if h.ids else None
        if (last is None or (rows[0][0].at, rows[0][1]) > last) and all(
                (a[0].at, a[1]) < (b[0].at, b[1]) for a, b in itertools.pairwise(rows)):
            # a poll's rows, after every held one in order (the usual case): appended, nothing re-sorted
            held_n, held_sum, held_max = _tally(h.ids[start:])
            new_ids = [row_id for _, row_id in rows]
            if (held_n + len(new_ids), held_sum + sum(new_ids), max(held_max, *new_ids)) != want:
                return False
            self._rows += len(rows)
            h.edited(rows[0][0].at)
            h.changes.extend(c for c, _ in rows)
            h.ids.extend(new_ids)
            return True
        tail = sorted([*zip(h.changes[start:], h.ids[start:], strict=True), *rows],
                      key=lambda pair: (pair[0].at, pair[1]))
        ids = [row_id for _, row_id in tail]
        if _tally(ids) != want:
            return False
        self._splice(h, start, [c for c, _ in tail], ids)
        return True

    async def _reread(self, session: AsyncSession, keys: list[str], floor: float) -> None:
        """Replace the held tails (rows stamped from `floor` on) of `keys` by what the database holds."""
        cut = _dt(floor)
        tails: dict[str, tuple[list[Change], list[int]]] = {k: ([], []) for k in keys}
        for i in range(0, len(keys), CHUNK):
            rows = await session.execute(select(*_COLS).where(_changes.c.series_key.in_(keys[i:i + CHUNK]),
                                                              _changes.c.at >= cut)
                                         .order_by(_changes.c.series_key, _changes.c.at, _changes.c.id))
            for key, row_id, at, in_stock, usd, rub in rows:
                tails[key][0].append(_change(at, in_stock, usd, rub))
                tails[key][1].append(row_id)
        for k, (changes, ids) in tails.items():
            h = self._held[k]
            self._splice(h, bisect.bisect_left(h.changes, floor, key=change_time), changes, ids)

    def _splice(self, h: _Held, start: int, changes: list[Change], ids: list[int]) -> None:
        """Replace `h`'s rows from `start` on, noting the edit from the first row that differs."""
        old_ids = h.ids
        i = next((i for i, (a, b) in enumerate(zip(old_ids[start:], ids, strict=False)) if a != b),
                 min(len(old_ids) - start, len(ids)))
        if start + i == len(old_ids) and i == len(ids):
            return  # the same rows
        differs = [h.changes[start + i].at] if start + i < len(old_ids) else []  # the first old row that differs
        if i < len(ids):
            differs.append(changes[i].at)  # and the first new one
        h.edited(min(differs))
        self._rows += len(ids) - (len(old_ids) - start)
        h.changes[start:] = changes
        h.ids[start:] = ids

    @staticmethod
    def _floor(h: _Held) -> float:
        return (h.seen if h.seen > -math.inf else h.since) - SLACK

    def _trim(self, h: _Held, start: int, at: float) -> None:
        """Drop the rows before `start` (no window from `at` needs them)."""
        del h.changes[:start], h.ids[:start]
        h.since = at
        h.edited(-math.inf)  # positions moved: a merged timeline of it is merged afresh
        self._rows -= start

    def _evict(self, keep: set[str]) -> None:
        while self._rows > self.max_rows and self._held:
            key = next(iter(self._held))
            if key in keep:
                break
            self._rows -= len(self._held.pop(key).ids)


_NONE = (0, 0, 0)  # the tally of no rows
_STATEMENTS: dict[tuple[Select[*tuple[Any, ...]], ...], Any] = {}  # `_refresh_statement`'s, by their extra parts
_ALONE: dict[tuple[Select[*tuple[Any, ...]], ...], Any] = {}  # `_extra_statement`'s


async def read_window(session: AsyncSession, keys: Sequence[str], since: datetime
                      ) -> dict[str, tuple[list[Change], list[int]]]:
    """Each series' changes from `since` on, preceded by the one in force at `since` (the row with the largest id
    among those stamped before it), in order of time then id, with their row ids.

    Two index range reads per `CHUNK` keys: the rows in force at `since`, then the window's own rows, so the kept
    history before `since` is not walked (with "from `since` on, or the one in force" as one condition, each series'
    whole 31 days was). The rows are converted a partition of `PART` at a time, the loop let run between two: a week
    of a series that changes every few minutes is thousands of rows, and the ⚡ marks of a page of fifty such groups,
    read at once, held the bot's loop 0.5 s (issue 26). Stamps are read as the database gives them (`_ts` takes a
    naive one as UTC, as `UTCDateTime` does), not through the column type's per-row conversion."""
    out: dict[str, tuple[list[Change], list[int]]] = {k: ([], []) for k in keys}
    key_, id_, at_ = _changes.c.series_key, _changes.c.id, _changes.c.at
    cols = (key_, id_, type_coerce(at_, DateTime(timezone=True)), _changes.c.in_stock, _changes.c.price_usd,
            _changes.c.price_rub)
    for i in range(0, len(keys), CHUNK):
        chunk = list(keys[i:i + CHUNK])
        in_force = select(func.max(id_)).where(key_.in_(chunk), at_ < since).group_by(key_)
        for stmt in (select(*cols).where(id_.in_(in_force)),  # at most one row a series, each before any of its own
                     select(*cols).where(key_.in_(chunk), at_ >= since).order_by(key_, at_, id_)):
            result = await session.stream(stmt.execution_options(yield_per=PART))
            async for part in result.partitions():
                for key, row_id, at, in_stock, usd, rub in part:
                    changes, ids = out[key]
                    changes.append(_change(at, in_stock, usd, rub))
                    ids.append(row_id)
    return out


def _refresh_statement(extra: tuple[Select[*tuple[Any, ...]], ...]) -> Any:
    """The refresh's one statement: the rows committed since the series' previous refreshes (after the largest id
    the cache knew then), each tail's tally, which of the first rows are there, and the caller's `extra` parts (the
    rows come first: their columns' types are the statement's). Built once per `extra` and kept: a kept statement
    keeps its SQLAlchemy cache key, so a question neither builds nor keys it again."""
    hit = _STATEMENTS.get(extra)
    if hit is not None:
        return hit
    key_, id_, at_ = _changes.c.series_key, _changes.c.id, _changes.c.at
    keys = bindparam("keys", expanding=True, type_=key_.type)
    cut = bindparam("cut", type_=at_.type)
    nothing = (null(), null(), null(), null())
    statement = union_all(
        select(literal(2), key_, literal(1), id_, id_, *_COLS[2:]).where(
            key_.in_(keys), at_ >= cut, id_ > bindparam("after_id", type_=id_.type)),
        select(literal(0).label("part"), key_, func.count().label("n"), func.sum(id_).label("total"),
               func.max(id_).label("last"), *nothing).where(key_.in_(keys), at_ >= cut).group_by(key_),
        select(literal(1), key_, literal(1), id_, id_, *nothing).where(
            id_.in_(bindparam("firsts", expanding=True, type_=id_.type))),
        *extra)
    if len(_STATEMENTS) >= 64:
        _STATEMENTS.clear()
    _STATEMENTS[extra] = statement
    return statement


def _extra_statement(extra: tuple[Select[*tuple[Any, ...]], ...]) -> Any:
    """The extra parts alone (no held series to refresh), kept like `_refresh_statement`'s."""
    hit = _ALONE.get(extra)
    if hit is None:
        if len(_ALONE) >= 64:
            _ALONE.clear()
        hit = _ALONE[extra] = union_all(*extra) if len(extra) > 1 else extra[0]
    return hit


def _tally(ids: Sequence[int]) -> tuple[int, int, int]:
    """What the tally read gives for a tail: its count, id sum and largest id (0 for none)."""
    return len(ids), sum(ids), max(ids, default=0)


def _change(at: datetime, in_stock: object, usd: float | None, rub: float | None) -> Change:
    """A change row as held."""
    return Change(_ts(at), bool(in_stock), usd, rub)


def _aware(at: datetime) -> datetime:
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def _ts(at: datetime) -> float:
    return _aware(at).timestamp()


def _dt(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, UTC)
