"""Availability statistics, kept current by ingest and read per question (core/availability.py computes the figures).

Write side — `track_poll`, called by `storage.ingest` inside each poll's transaction, so the aggregates move exactly
with the offers they describe (a rolled-back poll moves neither; every replica reads the same rows):

- the provider's COVERAGE: a trusted poll extends its current observed stretch, or opens a new one after a silence
  longer than `gap_allowance` (ingest down, a restart, failing polls). Untrusted polls observe nothing. A poll
  stamped earlier than the stretch's end (the clock was set back) counts as at that end: time never runs backwards
  in the statistics, so nothing is counted twice and no duration is negative.
- each SERIES touched by the poll: an offer group (provider, card, GPU count, region, billing) and its provider
  family (the same without the region); its state is its latest change row. Only configurations whose stored row
  the poll wrote can move a series; the poll recomputes just those series from an in-memory index of members (kept
  with the ingest state cache between polls, built once from the provider's state when the cache will carry it; a
  writer without the cache reads and recounts only the series whose members moved), and writes a change row only
  where a series' state (in stock, cheapest price) actually moved. An unchanged provider costs one coverage
  update.

Read side — `series_stats`, `card_stats`, `provider_strips`: one indexed range read per question, no raw history
(storage/availability_cache.py holds what a replica read, so the next question reads only what is new).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Collection, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from operator import itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from pydantic import BaseModel, ConfigDict
from sqlalchemy import Select, Table, bindparam, delete, func, insert, literal, null, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from core.availability import (
    DAY,
    WHOLE_GROUP,
    Change,
    Span,
    Stretch,
    Timeline,
    Trend,
    WindowStats,
    combining,
    series_key,
    timeline,
    trend,
    window_stats,
    windows,
)
from core.matching import region_matches
from core.offers import Offer
from core.slices import Steps, run_in_slices
from storage.availability_cache import EXTRA_PART, read_window
from storage.availability_tables import AvailabilityChange, AvailabilityCoverage, AvailabilitySeries
from storage.offer_tables import OFFER_COLUMNS

if TYPE_CHECKING:
    from storage.availability_cache import ChangeCache

log = logging.getLogger(__name__)

KEEP_DAYS = 31  # changes and coverage kept: the longest window asked for, and a day to start it from
WINDOWS = (7, 30)
MIN_GAP = timedelta(minutes=15)  # silences up to this are always observed time
FIRST_GAP = timedelta(hours=2)  # before a stretch has shown its poll interval
GAP_FACTOR = 3  # a silence longer than this many usual poll intervals is a gap

_series = cast(Table, AvailabilitySeries.__table__)
_changes = cast(Table, AvailabilityChange.__table__)
_coverage = cast(Table, AvailabilityCoverage.__table__)


class Member(NamedTuple):
    in_stock: bool  # confirmed (core.changes.OfferState.in_stock)
    usd: float | None
    rub: float | None


class SeriesState(NamedTuple):
    in_stock: bool
    usd: float | None
    rub: float | None


class Observed(NamedTuple):
    """A provider's current observed stretch (its latest availability_coverage row) as this process wrote it."""

    id: int
    start: datetime
    end: datetime
    polls: int


@dataclass(slots=True)
class SeriesIndex:
    """One provider's configurations by series, and each series' state as stored."""

    members: dict[str, dict[str, Member]] = field(default_factory=dict)
    of: dict[str, tuple[str, str]] = field(default_factory=dict)  # config key -> (group key, family key)
    state: dict[str, SeriesState] = field(default_factory=dict)
    current: dict[str, Member] = field(default_factory=dict)  # config key -> what it is as a member now
    coverage: Observed | None = None  # the provider's current observed stretch, once read or written


def gap_allowance(start: datetime, end: datetime, polls: int) -> timedelta:
    """The longest silence still counted as observed after a stretch of `polls` trusted polls from start to end."""
    if polls < 3:
        return FIRST_GAP
    return max(MIN_GAP, GAP_FACTOR * (end - start) / (polls - 1))


async def _observe(session: AsyncSession, provider: str, now: datetime, index: SeriesIndex) -> datetime:
    """Extend (or open) the provider's observed stretch; the time the poll counts at. One statement when the index
    holds the stretch (carried between this process's polls: no other writer since, see storage.ingest.StateCache),
    the row read first otherwise."""
    conn = await session.connection()
    row = index.coverage
    if row is None:
        got = (await conn.execute(select(_coverage.c.id, _coverage.c.start, _coverage.c.end, _coverage.c.polls)
                                  .where(_coverage.c.provider == provider)
                                  .order_by(_coverage.c.id.desc()).limit(1))).first()
        if got is not None:
            row = Observed(got.id, _aware(got.start), _aware(got.end), got.polls)
    if row is not None:
        at = None
        if now <= row.end:  # the clock went back (or the same instant twice): no time observed
            at = row.end
        elif now - row.end <= gap_allowance(row.start, row.end, row.polls):
            at = now
        if at is not None:
            done = await conn.execute(update(_coverage).where(_coverage.c.id == row.id)
                                      .values(end=at, polls=row.polls + 1))
            if done.rowcount == 1:
                index.coverage = Observed(row.id, row.start, at, row.polls + 1)
                return at
            # the held row is gone (retention): what the database holds counts
            index.coverage = None
            return await _observe(session, provider, now, index)
    new_id = (await conn.execute(insert(_coverage).values(provider=provider, start=now, end=now, polls=1)
                                 .returning(_coverage.c.id))).scalar_one()
    index.coverage = Observed(new_id, now, now, 1)
    return now


def _aware(at: datetime) -> datetime:
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


# A row of `storage.ingest`'s provider state, read without building an Offer: see storage.ingest.Raw.
_RAW_IN_STOCK, _RAW_RUB, _RAW_USD, _RAW = 1, 3, 4, 5
_PROVIDER, _GPU, _GPU_NAME, _COUNT, _LOCATION, _BILLING = (OFFER_COLUMNS.index(name) for name in (
    "provider", "gpu", "gpu_name", "gpu_count", "location", "billing"))


def _keys_of(provider: str, gpu: str | None, gpu_name: str, count: int, location: str | None,
             billing: str) -> tuple[str, str, tuple[str, str, int, str, str]]:
    card = gpu if gpu is not None else f"?{gpu_name}"
    region = location or ""
    return (series_key(provider, card, count, region, billing), series_key(provider, card, count, WHOLE_GROUP, billing),
            (provider, card, count, region, billing))


def _aggregate(members: dict[str, Member]) -> SeriesState:
    in_stock, usd, rub = False, None, None
    for m in members.values():
        if m.in_stock:
            in_stock = True
            if m.usd is not None and (usd is None or m.usd < usd):
                usd = m.usd
            if m.rub is not None and (rub is None or m.rub < rub):
                rub = m.rub
    return SeriesState(in_stock, usd, rub)


# The series a poll touched, each with its members' moves (old, new), or None: recount it from its members.
_Touched = dict[str, list[tuple[Member | None, Member]] | None]


async def track_poll(session: AsyncSession, provider: str, now: datetime, state: Any, written: Iterable[str],
                     *, trusted: bool, keep: bool = True) -> None:
    """Keep the provider's coverage and series current after one poll (inside its transaction). `state`: the
    provider's `storage.ingest.ProviderState` after the poll; `written`: the keys of the offers rows it wrote.
    `keep`: the state is carried to the next poll (the ingest process's state cache), so an index of every series
    is worth building when the state has none; without it (a state loaded from the database for this poll alone)
    only the series of the configurations that moved are read and recounted."""
    if not trusted:
        return
    index: SeriesIndex | None = state.availability
    meta: dict[str, tuple[str, str, int, str, str]] = {}
    touched: _Touched
    inserts: list[dict[str, Any]] = []
    moves = _Moves()
    if index is None and not keep:
        index, touched = await _touched_only(session, provider, state, written, meta)
    elif index is None:
        index = SeriesIndex()
        await _build(session, provider, state, index, meta)
        # every series recounted from its members (None: no moves to go by)
        touched = dict.fromkeys(index.members)
    else:
        touched = _moved_members(state, index, written, meta, moves)
    if keep:
        state.availability = index
    at = await _observe(session, provider, now, index)
    keys_, stock_, usd_, rub_ = moves.keys, moves.stock, moves.usd, moves.rub
    states, all_members = index.state, index.members
    for series, moved_by in touched.items():
        before = states.get(series)
        members = all_members[series]
        after = _aggregate(members) if moved_by is None else _moved(before, moved_by, members)
        if before == after:
            continue
        if before is None:
            provider_, card, count, region, billing = meta[series]
            inserts.append({"key": series, "provider": provider_, "card": card, "gpu_count": count,
                            "region": region, "billing": billing, "first_seen": at})
        keys_.append(series)
        stock_.append(after[0])
        usd_.append(after[1])
        rub_.append(after[2])
        states[series] = after
    conn = await session.connection()
    if inserts:
        await conn.execute(insert(_series), inserts)
    await _write_moves(conn, at, moves)


def _moved_members(state: Any, index: SeriesIndex, written: Iterable[str],
                   meta: dict[str, tuple[str, str, int, str, str]], moves: _Moves) -> _Touched:
    """The index moved to the poll's written rows. A configuration that is its group's only member (most of a
    Vast-like store) moves its group right here, into `moves`; every other touched series is returned with the
    moves of its members, to be recounted."""
    # The hot loop of a moving poll (thousands of rows written): locals, one lookup per configuration.
    touched: _Touched = {}
    by_key, get, current, of, series_members = state.by_key, state.get, index.current, index.of, index.members
    states = index.state
    keys_, stock_, usd_, rub_ = moves.keys, moves.stock, moves.usd, moves.rub
    new = tuple.__new__  # a Member without NamedTuple's Python-level constructor
    for key in written:
        stored = by_key.get(key)  # what this poll wrote (a raw row only when it wrote nothing new there)
        if stored is None:
            stored = get(key)
            if stored is None:
                continue
        in_stock, usd, rub = stored.in_stock, stored.usd, stored.rub
        old = current.get(key)
        if old is not None and old[0] == in_stock and old[1] == usd and old[2] == rub:
            continue  # written for another reason (last seen, listing details): no series moved
        member = current[key] = new(Member, (in_stock, usd, rub))
        keys = of.get(key)
        if keys is None:
            offer: Offer = stored.offer
            group, family, m = _keys_of(offer.provider, offer.gpu, offer.gpu_name, offer.gpu_count,
                                        offer.location, offer.billing.value)
            keys = of[key] = (group, family)
            meta[group] = m
            meta[family] = (m[0], m[1], m[2], WHOLE_GROUP, m[4])
        group, family = keys
        members = series_members.get(group)
        if members is None:
            members = series_members[group] = {}
        members[key] = member
        before = states.get(group)
        if before is not None and len(members) == 1:
            # its only member is the group: in stock at its prices, or sold out
            after = new(SeriesState, (True, usd, rub)) if in_stock else _SOLD_OUT
            if before != after:
                keys_.append(group)
                stock_.append(in_stock)
                usd_.append(after[1])
                rub_.append(after[2])
                states[group] = after
        else:
            moved = touched.get(group)
            if moved is None:
                touched[group] = [(old, member)]
            else:
                moved.append((old, member))
        members = series_members.get(family)
        if members is None:
            members = series_members[family] = {}
        members[key] = member
        moved = touched.get(family)
        if moved is None:
            touched[family] = [(old, member)]
        else:
            moved.append((old, member))
    return touched


async def _touched_only(session: AsyncSession, provider: str, state: Any, written: Iterable[str],
                        meta: dict[str, tuple[str, str, int, str, str]]
                        ) -> tuple[SeriesIndex, _Touched]:
    """For a state loaded from the database for this poll alone (its `raw` rows are what the database held
    before the poll; `by_key` what the poll wrote): an index of just the series whose members moved, each
    recounted from all its members, and those series' stored states. The same figures as `_build`'s full index
    (a series none of whose members moved keeps the state it has), for the work of what moved: one pass over the
    configurations with a set lookup each, and one read of the touched series' states."""
    by_key, raw_rows = state.by_key, state.raw
    families: set[tuple[str, int, str]] = set()
    moved: list[Offer] = []
    for key in written:
        stored = by_key.get(key)
        if stored is None:
            continue  # nothing new written there: its member is as loaded
        raw = raw_rows.get(key)
        if (raw is not None and bool(raw[_RAW_IN_STOCK]) == stored.in_stock and raw[_RAW_USD] == stored.usd
                and raw[_RAW_RUB] == stored.rub):
            continue  # written for another reason (last seen, listing details): no series moved
        o = stored.offer
        moved.append(o)
        families.add((o.gpu if o.gpu is not None else f"?{o.gpu_name}", o.gpu_count, o.billing.value))
    index = SeriesIndex()
    if not families:
        return index, {}
    # Every member of a touched family (a touched group's family is touched too), by its parts after the poll.
    groups: dict[str, dict[str, Member]] = {}
    members = index.members

    def add(key: str, gpu: str | None, gpu_name: str, count: int, location: str | None, billing: str,
            member: Member) -> None:
        group, family, m = _keys_of(provider, gpu, gpu_name, count, location, billing)
        groups.setdefault(group, {})[key] = member
        members.setdefault(family, {})[key] = member
        meta[group] = m
        meta[family] = (m[0], m[1], m[2], WHOLE_GROUP, m[4])

    for key, stored in by_key.items():
        o = stored.offer
        if (o.gpu if o.gpu is not None else f"?{o.gpu_name}", o.gpu_count, o.billing.value) in families:
            add(key, o.gpu, o.gpu_name, o.gpu_count, o.location, o.billing.value,
                Member(stored.in_stock, stored.usd, stored.rub))
    # The loaded rows: one C-level getter and one set lookup each (a card the catalog cannot name is matched by
    # its spelling: its family is marked by a None card)
    marks = {(None, count, billing) if card.startswith("?") else (card, count, billing)
             for card, count, billing in families}
    family_of = itemgetter(_RAW + _GPU, _RAW + _COUNT, _RAW + _BILLING)
    for key, raw in raw_rows.items():
        if family_of(raw) not in marks or key in by_key:
            continue
        gpu, name = raw[_RAW + _GPU], raw[_RAW + _GPU_NAME]
        if gpu is None and (f"?{name}", raw[_RAW + _COUNT], raw[_RAW + _BILLING]) not in families:
            continue
        add(key, gpu, name, raw[_RAW + _COUNT], raw[_RAW + _LOCATION], raw[_RAW + _BILLING],
            Member(bool(raw[_RAW_IN_STOCK]), raw[_RAW_USD], raw[_RAW_RUB]))
    # Of the touched families' groups, those with a member that moved.
    for o in moved:
        group = _keys_of(provider, o.gpu, o.gpu_name, o.gpu_count, o.location, o.billing.value)[0]
        members[group] = groups[group]
    await _read_states(session, index, list(members))
    return index, dict.fromkeys(members)


_SOLD_OUT = SeriesState(False, None, None)


class _Moves:
    """The change rows of one poll, column by column (what PostgreSQL's unnest takes as they are)."""

    __slots__ = ("keys", "rub", "stock", "usd")

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.stock: list[bool] = []
        self.usd: list[float | None] = []
        self.rub: list[float | None] = []

    def __len__(self) -> int:
        return len(self.keys)


def _moved(before: SeriesState | None, moves: Sequence[tuple[Member | None, Member]],
           members: dict[str, Member]) -> SeriesState:
    """The series' state after its members moved: from the state before when no move can have taken away its
    cheapest in-stock member (a family holds thousands of configurations, a poll moves a few of them), else
    recounted from every member. The same answer as `_aggregate(members)` either way."""
    if before is None:
        return _aggregate(members)
    in_stock, usd, rub = before
    for old, new in moves:
        if old is not None and old.in_stock and (not new.in_stock or new.usd != old.usd or new.rub != old.rub) \
                and (old.usd == usd or old.rub == rub or (usd is None and rub is None)):
            return _aggregate(members)  # the cheapest (or the only known) in-stock member moved away
        if new.in_stock:
            in_stock = True
            if new.usd is not None and (usd is None or new.usd < usd):
                usd = new.usd
            if new.rub is not None and (rub is None or new.rub < rub):
                rub = new.rub
    return SeriesState(in_stock, usd, rub)


# The statement every moving poll runs: a Vast-sized poll moves thousands of series. On PostgreSQL one INSERT of
# the poll's columns as arrays (unnest): one statement, one round trip, the server planning and executing it once
# (the driver's executemany ran one INSERT per row: most of the upkeep's time on PostgreSQL, bench/availability.py);
# elsewhere the driver's own executemany (SQLite's runs in-process; SQLAlchemy's per-row parameter handling was
# most of the upkeep's time there).
_PLACEHOLDER = {"qmark": lambda i: "?", "format": lambda i: "%s", "numeric": lambda i: f":{i}",
                "numeric_dollar": lambda i: f"${i}"}


async def _write_moves(conn: Any, at: datetime, moves: _Moves) -> None:
    """INSERT the series' change rows, `at` and booleans bound as SQLAlchemy binds them."""
    if not moves:
        return
    dialect = conn.dialect
    mark = _PLACEHOLDER.get(dialect.paramstyle)
    stamp = _bind(_changes.c.at, dialect, at)
    q = dialect.identifier_preparer.quote
    columns = f"{q('series_key')}, {q('at')}, {q('in_stock')}, {q('price_usd')}, {q('price_rub')}"
    if mark is not None and dialect.name == "postgresql":
        sql = (f"INSERT INTO {q(_changes.name)} ({columns}) SELECT k, {mark(1)}::timestamptz, s, u, r FROM "
               f"unnest({mark(2)}::varchar[], {mark(3)}::boolean[], {mark(4)}::float8[], {mark(5)}::float8[]) "
               "AS m(k, s, u, r)")
        await conn.exec_driver_sql(sql, (stamp, moves.keys, moves.stock, moves.usd, moves.rub))
        return
    if mark is None:  # a driver with named parameters: SQLAlchemy's own executemany
        await conn.execute(insert(_changes), [{"series_key": k, "at": at, "in_stock": i, "price_usd": u,
                                               "price_rub": r} for k, i, u, r in
                                              zip(moves.keys, moves.stock, moves.usd, moves.rub, strict=True)])
        return
    flag = _changes.c.in_stock.type.bind_processor(dialect) or bool
    sql = (f"INSERT INTO {q(_changes.name)} ({columns}) "
           f"VALUES ({mark(1)}, {mark(2)}, {mark(3)}, {mark(4)}, {mark(5)})")
    # In key order: the (series_key, at) index takes them in one sweep, not one random descent each (on SQLite's
    # small page cache most of the statement's time). A poll writes one row per series, so the order among them
    # means nothing to the reads.
    rows = sorted(zip(moves.keys, moves.stock, moves.usd, moves.rub, strict=True), key=itemgetter(0))
    await conn.exec_driver_sql(sql, [(k, stamp, flag(i), u, r) for k, i, u, r in rows])


def _bind(column: Any, dialect: Any, value: Any) -> Any:
    process = column.type.bind_processor(dialect)
    return process(value) if process is not None else value


async def _build(session: AsyncSession, provider: str, state: Any, index: SeriesIndex,
                 meta: dict[str, tuple[str, str, int, str, str]]) -> None:
    """The index from the provider's whole state (once per process, or after another writer), and the series'
    states as stored (so only what differs from them is written)."""
    def add(key: str, parts: tuple[str, str, tuple[str, str, int, str, str]], member: Member) -> None:
        group, family, m = parts
        index.of[key] = (group, family)
        index.current[key] = member
        index.members.setdefault(group, {})[key] = member
        index.members.setdefault(family, {})[key] = member
        meta[group] = m
        meta[family] = (m[0], m[1], m[2], WHOLE_GROUP, m[4])

    for key, stored in state.by_key.items():
        o = stored.offer
        add(key, _keys_of(o.provider, o.gpu, o.gpu_name, o.gpu_count, o.location, o.billing.value),
            Member(stored.in_stock, stored.usd, stored.rub))
    for key, raw in state.raw.items():
        if key in state.by_key:
            continue
        r = raw[_RAW:]
        add(key, _keys_of(r[_PROVIDER], r[_GPU], r[_GPU_NAME], r[_COUNT], r[_LOCATION], r[_BILLING]),
            Member(bool(raw[_RAW_IN_STOCK]), raw[_RAW_USD], raw[_RAW_RUB]))
    # Each stored series' state: its latest change (by time, then id: the order ingest wrote them in), one index
    # probe per series.
    await _read_states(session, index, None, provider)


_STATE_CHUNK = 10_000  # keys per read: within SQLite's 32,766 and asyncpg's 32,767 parameters


async def _read_states(session: AsyncSession, index: SeriesIndex, keys: Sequence[str] | None,
                       provider: str | None = None) -> None:
    """The stored state (latest change, by time then id: the order ingest wrote them in) of the series named by
    `keys`, or of every series of `provider`, into `index.state`: one index probe per series."""
    conn = await session.connection()
    c = _changes.alias("c")
    latest = (select(c.c.id).where(c.c.series_key == _series.c.key).order_by(c.c.at.desc(), c.c.id.desc())
              .limit(1).correlate(_series).scalar_subquery())
    cols = (_changes.c.series_key, _changes.c.in_stock, _changes.c.price_usd, _changes.c.price_rub)
    if keys is None:
        chunks = [select(latest).where(_series.c.provider == provider)]
    else:  # bounded IN lists, few: PostgreSQL may answer each with one pass over the changes (a hash semi-join)
        chunks = [select(latest).where(_series.c.key.in_(keys[i:i + _STATE_CHUNK]))
                  for i in range(0, len(keys), _STATE_CHUNK)]
    for ids in chunks:
        for key, in_stock, usd, rub in (await conn.execute(select(*cols).where(_changes.c.id.in_(ids)))).all():
            index.state[key] = SeriesState(bool(in_stock), usd, rub)


# ---------------------------------------------------------------------------------------------------------- reads

class SeriesStats(BaseModel):
    """One series' figures over the last 7 and 30 days (the Mini App's and the CLI's unit)."""

    model_config = ConfigDict(frozen=True)

    key: str
    provider: str
    card: str
    gpu_count: int
    region: str  # "*" for a provider family
    billing: str
    windows: dict[int, WindowStats]
    trend: Trend | None  # the current price against the 7-day median

    def window(self, days: int) -> WindowStats:
        return self.windows[days]


def _ts(at: datetime) -> float:
    return _aware(at).timestamp()


async def _coverage_of(session: AsyncSession, providers: Iterable[str], since: datetime) -> dict[str, list[Span]]:
    names = sorted(set(providers))
    out: dict[str, list[Span]] = {p: [] for p in names}
    if not names:
        return out
    rows = (await session.execute(select(_coverage.c.provider, _coverage.c.start, _coverage.c.end)
                                  .where(_coverage.c.provider.in_(names), _coverage.c.end >= since)
                                  .order_by(_coverage.c.provider, _coverage.c.id))).all()
    for p, s, e in rows:
        out[p].append(Span(_ts(s), _ts(e)))
    return out


async def _changes_of(session: AsyncSession, keys: Sequence[str], since: datetime) -> dict[str, list[Change]]:
    """Each series' changes from `since` on, preceded by the one in force at `since`."""
    return {k: changes for k, (changes, _) in (await read_window(session, keys, since)).items()}


def _stats_of(row: Any, changes: list[Change], coverage: list[Span], until: float, currency: str,
              days: Sequence[int]) -> SeriesStats:
    figures = windows(changes, coverage, until=until, days=days, currency=currency)
    week = figures.get(7)
    return SeriesStats(key=row.key, provider=row.provider, card=row.card, gpu_count=row.gpu_count, region=row.region,
                       billing=row.billing, windows=figures,
                       trend=None if week is None else trend(week.price_now, week.price_median))


async def series_stats(session: AsyncSession, *, keys: Sequence[str] | None = None, cards: Sequence[str] | None = None,
                       provider: str | None = None, gpu_count: int | None = None, families: bool = False,
                       now: datetime | None = None, currency: str = "USD",
                       days: Sequence[int] = WINDOWS) -> list[SeriesStats]:
    """Figures over each of `days` of the series named by `keys`, or of every group (`families`: provider
    family) matching the filters; sorted by key."""
    now = now or datetime.now(UTC)
    q = select(_series.c.key, _series.c.provider, _series.c.card, _series.c.gpu_count, _series.c.region,
               _series.c.billing)
    if keys is not None:
        q = q.where(_series.c.key.in_(list(keys)))
    else:
        q = q.where((_series.c.region == WHOLE_GROUP) if families else (_series.c.region != WHOLE_GROUP))
    if cards is not None:
        q = q.where(_series.c.card.in_(list(cards)))
    if provider is not None:
        q = q.where(_series.c.provider == provider)
    if gpu_count is not None:
        q = q.where(_series.c.gpu_count == gpu_count)
    rows = (await session.execute(q.order_by(_series.c.key))).all()
    since = now - timedelta(days=max(days))
    coverage = await _coverage_of(session, (r.provider for r in rows), since)
    changes = await _changes_of(session, [r.key for r in rows], since)
    until = now.timestamp()

    def figuring() -> Steps[list[SeriesStats]]:
        out = []
        for r in rows:
            out.append(_stats_of(r, changes[r.key], coverage[r.provider], until, currency, days))
            yield  # a series with a change every few minutes is thousands of rows: a few ms each
        return out

    return await run_in_slices(figuring())


async def offer_stats(session: AsyncSession, offers: Iterable[Offer], *, now: datetime | None = None,
                      currency: str = "USD", days: Sequence[int] = WINDOWS) -> dict[str, SeriesStats]:
    """Group figures for offers, by offer key (offers of one group share them)."""
    from core.availability import group_key

    by_group: dict[str, list[str]] = {}
    for o in offers:
        by_group.setdefault(group_key(o), []).append(o.key)
    stats = await series_stats(session, keys=sorted(by_group), now=now, currency=currency, days=days)
    return {k: s for s in stats for k in by_group[s.key]}


class CardStats(BaseModel):
    """"Any <card> × n (under a cap)" across providers, over one window."""

    model_config = ConfigDict(frozen=True)

    cards: tuple[str, ...]  # those with history
    gpu_count: int | None
    cap: float | None
    cap_per_gpu: bool  # the cap is per GPU-hour (else per hour for the whole configuration)
    currency: str
    providers: tuple[str, ...]
    window: WindowStats


DEFAULT_BILLINGS = ("hourly", "monthly")  # spot is interruptible: not what "in stock" means to a buyer by default


async def card_stats(session: AsyncSession, cards: Sequence[str] | None, gpu_count: int | None, *,
                     fits: Callable[[str, int], bool] | None = None, cap: float | None = None,
                     cap_per_gpu: bool = True, currency: str = "USD", days: int = 30, now: datetime | None = None,
                     billings: Sequence[str] = DEFAULT_BILLINGS, cache: ChangeCache | None = None,
                     providers: Collection[str] | None = None, region: str | None = None) -> CardStats:
    """Figures for "any of `cards` × `gpu_count` at any provider (at or under `cap`)": the provider families merged,
    each counted only where its provider was observed; with `providers`, at those only; with `region` (a filter as
    /subscribe reads it, `core.matching.region_matches`), the series of the places it holds instead of the families
    (a family is in stock wherever any of its places is). `cap` is per GPU-hour, or with `cap_per_gpu=False` per hour
    for the whole configuration (a family of n GPUs then meets it at `cap / n` per GPU-hour: every member of a
    family has the same count). None for `cards` / `gpu_count`: any; `fits(card, count)` narrows further (a
    workload's fitting configurations). `cache`: a replica's held changes (storage/availability_cache.py), the
    same figures with a small read."""
    now = now or datetime.now(UTC)
    where = _series_where(cards, gpu_count, billings, providers, region)
    since = now - timedelta(days=days)
    if cache is None:
        listed = map(_Family._make, (await session.execute(_family_rows(where))).all())
        rows = [r for r in listed if r.kept(fits, region)]
        coverage = await _coverage_of(session, (r.provider for r in rows), since)
        keys = [r.key for r in rows]
        caps = [_cap_of(cap, cap_per_gpu, r.gpu_count) for r in rows]
        changes = await _changes_of(session, keys, since)
        merged, spans = await run_in_slices(combining([(changes[r.key], coverage[r.provider]) for r in rows], caps=caps,
                                                      currency=currency))
        prepared = Timeline(merged, spans, currency)
    else:  # the merged timeline held, prepared: only this window's figures computed
        asked = (None if cards is None else tuple(cards), gpu_count, tuple(billings),
                 None if providers is None else tuple(sorted(providers)), region is not None)
        rows, coverage, changes = await _held_question(session, cache, where, asked, fits, region, since, now)
        keys = [r.key for r in rows]
        caps = [_cap_of(cap, cap_per_gpu, r.gpu_count) for r in rows]
        merged, spans, prepared = await cache.merged((tuple(keys), tuple(caps), currency), keys,
                                               [(changes[r.key], coverage[r.provider]) for r in rows], caps, currency)
    until = now.timestamp()
    window = (prepared.window(until=until, days=days) if prepared.covers(until)
              else window_stats(merged, spans, until=until, days=days, currency=currency))
    return CardStats(cards=tuple(sorted({r.card for r in rows})), gpu_count=gpu_count, cap=cap,
                     cap_per_gpu=cap_per_gpu, currency=currency,
                     providers=tuple(sorted({r.provider for r in rows})), window=window)


def _series_where(cards: Sequence[str] | None, gpu_count: int | None, billings: Sequence[str],
                  providers: Collection[str] | None, region: str | None) -> list[Any]:
    """The series a question reads: the provider families, or with a region every place (`_Family.kept` then
    keeps those it holds), of these cards, count, billings and providers (None: any)."""
    where = [_series.c.region == WHOLE_GROUP if region is None else _series.c.region != WHOLE_GROUP,
             _series.c.billing.in_(list(billings))]
    if providers is not None:
        where.append(_series.c.provider.in_(sorted(providers)))
    if cards is not None:
        where.append(_series.c.card.in_(list(cards)))
    if gpu_count is not None:
        where.append(_series.c.gpu_count == gpu_count)
    return where


def _cap_of(cap: float | None, per_gpu: bool, gpu_count: int) -> float | None:
    return None if cap is None else cap if per_gpu else cap / gpu_count


def _family_rows(where: Sequence[Any]) -> Any:
    return (select(_series.c.key, _series.c.provider, _series.c.card, _series.c.gpu_count, _series.c.region)
            .where(*where).order_by(_series.c.key))


class _Family(NamedTuple):
    """A series `card_stats` reads: a provider family, or one place of it when a region was asked for."""

    key: str
    provider: str
    card: str
    gpu_count: int
    region: str

    def kept(self, fits: Callable[[str, int], bool] | None, region: str | None) -> bool:
        return (fits is None or fits(self.card, self.gpu_count)) and (region is None
                                                                       or region_matches(region, self.region))


def _question_parts(where: Sequence[Any]) -> tuple[Select[*tuple[Any, ...]], ...]:
    """What a held question asks beside the changes (`ChangeCache.changes_with`'s extra parts, kept with the
    series list so the statement around them is built once): the coverage of the providers asked about (their
    stretches' starts and ends as two parts, in the statement's time-stamp column; first, since read alone the
    statement's column types are its first part's), then how many series `where` selects."""
    c = _coverage.c
    covered = [c.provider.in_(bindparam("providers", expanding=True, type_=c.provider.type)),
               c.end >= bindparam("covered", type_=c.end.type)]
    none = (null(), null(), null(), null())
    return (select(literal(EXTRA_PART + 1), c.provider, c.id, c.polls, c.id, c.start, null(), null(), null())
            .where(*covered),
            select(literal(EXTRA_PART + 2), c.provider, c.id, c.polls, c.id, c.end, null(), null(), null())
            .where(*covered),
            select(literal(EXTRA_PART), null(), func.count(), literal(0), literal(0), *none)
            .select_from(_series).where(*where))


async def _held_question(session: AsyncSession, cache: ChangeCache, where: Sequence[Any], asked: Hashable,
                         fits: Callable[[str, int], bool] | None, region: str | None, since: datetime,
                         now: datetime) -> tuple[list[_Family], dict[str, list[Span]], dict[str, list[Change]]]:
    """The series `where` selects (narrowed by `fits` and `region`), their providers' coverage and their changes, as
    `card_stats` reads them fresh, in one statement when the series list is held: the changes' refresh carries the
    coverage rows and a count of the series `where` selects. Series are never deleted, so an equal count is the
    held list; a larger one (a new series) reads the list again and asks once more."""
    held_key = ("families", asked)  # `asked`: what `where` says, as a key
    for attempt in range(2):
        hit = cache.held_rows(held_key)
        read_now = hit is None
        if hit is None:
            listed = tuple(map(_Family._make, (await session.execute(_family_rows(where))).all()))
            hit = (listed, _question_parts(where))
            cache.hold_rows(held_key, hit)
        listed, extra = hit
        rows = [r for r in listed if r.kept(fits, region)]
        providers = sorted({r.provider for r in rows})
        changes, got = await cache.changes_with(session, [r.key for r in rows], since, now, extra,
                                                {"providers": providers, "covered": since})
        count = next(int(r.n) for r in got if r.part == EXTRA_PART)
        if count == len(listed) or read_now or attempt:
            break
        cache.hold_rows(held_key, None)  # a series was added since the list was read
    # a stretch's start and end come as two rows, each with the stretch's id (`n`) and its provider (`key`)
    starts = {r.n: r for r in got if r.part == EXTRA_PART + 1}
    ends = {r.n: r.at for r in got if r.part == EXTRA_PART + 2}
    coverage: dict[str, list[Span]] = {p: [] for p in providers}
    for row_id, r in sorted(starts.items(), key=lambda item: (item[1].key, item[0])):
        coverage[r.key].append(Span(_ts(r.at), _ts(ends[row_id])))
    return rows, coverage, changes


class ProviderStrip(BaseModel):
    """"Any of these cards at this provider" over a window: observed stretches in stock or not (the /history strip)
    and the window's figures."""

    model_config = ConfigDict(frozen=True)

    provider: str
    stretches: tuple[Stretch, ...]
    window: WindowStats


async def provider_strips(session: AsyncSession, cards: Sequence[str], *, days: int,
                          now: datetime | None = None, billings: Sequence[str] = DEFAULT_BILLINGS,
                          cache: ChangeCache | None = None, gpu_count: int | None = None,
                          providers: Collection[str] | None = None, region: str | None = None) -> list[ProviderStrip]:
    """Per provider that has history for any of `cards` (any GPU count, or `gpu_count`): when it had one in stock,
    over the observed time of the last `days` (at most the kept window, 30 days: older time was not kept, so nothing
    is claimed about it); sorted by provider. One read of the providers' families (or of the places `region` holds),
    like card_stats."""
    now = now or datetime.now(UTC)
    days = max(1, min(days, KEEP_DAYS - 1))
    since = now - timedelta(days=days)
    listed = map(_Family._make, (await session.execute(
        _family_rows(_series_where(cards, gpu_count, billings, providers, region)))).all())
    rows = sorted((r for r in listed if r.kept(None, region)), key=lambda r: (r.provider, r.key))
    if not rows:
        return []
    coverage = await _coverage_of(session, (r.provider for r in rows), since)
    keys = [r.key for r in rows]
    changes = await (cache.changes(session, keys, since, now) if cache is not None
                     else _changes_of(session, keys, since))
    by_provider: dict[str, list[str]] = {}
    for r in rows:
        by_provider.setdefault(r.provider, []).append(r.key)
    until, start = now.timestamp(), since.timestamp()
    out = []
    for provider, members in by_provider.items():
        merged, spans = await run_in_slices(combining([(changes[k], coverage[provider]) for k in members]))
        out.append(ProviderStrip(provider=provider, stretches=tuple(timeline(merged, spans, since=start, until=until)),
                                 window=window_stats(merged, spans, until=until, days=days)))
    return out


# ------------------------------------------------------------------------------------------------------ retention

async def prune_availability(sm: async_sessionmaker[AsyncSession], now: datetime, *, keep_days: float = KEEP_DAYS,
                             batch: int = 5000) -> int:
    """Changes and coverage older than `keep_days`; each series keeps the change in force at the cut, so a
    window starting there still knows its state. Returns the rows deleted."""
    cut = now - timedelta(days=keep_days)
    done = 0
    while True:
        async with sm() as s, s.begin():
            keep = select(func.max(_changes.c.id)).where(_changes.c.at < cut).group_by(_changes.c.series_key)
            ids = (await s.scalars(select(_changes.c.id).where(_changes.c.at < cut, _changes.c.id.not_in(keep))
                                   .limit(batch))).all()
            if ids:
                await s.execute(delete(_changes).where(_changes.c.id.in_(ids)))
        done += len(ids)
        if len(ids) < batch:
            break
    async with sm() as s, s.begin():
        result = await s.execute(delete(_coverage).where(_coverage.c.end < cut))
        done += int(result.rowcount or 0)  # type: ignore[attr-defined]
    return done


def days_ago(now: datetime, days: float) -> datetime:
    return now - timedelta(seconds=days * DAY)


async def stream_rows(session: AsyncSession, stmt: Any, size: int = 2000) -> AsyncIterator[Any]:
    """Rows of a query a batch at a time (a server-side cursor on PostgreSQL): constant memory."""
    result = await session.stream(stmt.execution_options(yield_per=size))
    async for row in result:
        yield row
