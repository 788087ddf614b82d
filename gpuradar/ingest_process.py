"""Ingest in a child process of the leader: recording polls (change detection, the offers rows, price history, the
events and the alert queue in one transaction), reading the offers inline mode answers from, and retention all run
there, with the child's own interpreter, event loop and database connections. The bot's loop never competes with
them for the GIL: all it does per poll is hand over the configurations as compact tuples and, afterwards, swap in
the offers the child read.

    ingest = IngestProcess(database_url)
    await ingest.start()
    done = await ingest.record(result, rates=rates, alerts=AlertPolicy(), fence=Fence("scrapers", holder, term))
    rows = await ingest.offers()              # CachedOffer fields, cheapest first
    await ingest.stop()

What crosses the boundary is small and typed: frozen dataclasses of tuples, pickled, one length-prefixed frame
each way per call over a socket pair (the child's stdout and stderr stay the parent's, for its logs). A poll crosses
as what changed since its provider's previous poll (`PackedPoll`): the child keeps that poll's offers and lists the
unchanged ones again; a child that does not hold it (restarted) answers `Resend` and gets the poll whole.

The child dies with its parent: it reads end-of-file on the socket when the parent goes (and finishes nothing
afterwards), and on Linux the kernel also sends it SIGTERM when the parent dies (PR_SET_PDEATHSIG), so a SIGKILLed
leader leaves no child behind. A child that dies mid-call (killed, out of memory) is restarted and the call is
made again: recording a poll is idempotent per (provider, started_at) and the transaction that died rolled back,
so the poll is recorded exactly once; reading offers and retention are safe to repeat.

Alerts: the child writes the outbox with `storage.outbox.OutboxWriter` under the leader's fence
(`gpuradar.leadership.fenced`: the lease row must still name this replica with the same term, checked inside the
transaction), and says how many alerts it queued; the parent then wakes its senders.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import os
import pickle
import socket
import struct
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import Any

from pydantic import TypeAdapter

from core.alerts import AlertPolicy
from core.offers import Offer, Rates
from core.polls import PollResult
from core.slices import CHUNK, Steps, chunks, collector_paused, run_in_slices, run_steps
from gpuradar.child_process import (
    CHILD_NICENESS,
    STOP_TIMEOUT,
    ChildHandle,
    LogConfig,
    enter_child,
    reap,
    receive,
    spawn,
    spawn_in_thread,
)
from scrapers.heap import freezing

log = logging.getLogger(__name__)

_HEADER = struct.Struct("!I")  # a part's length
PART = 2000  # list items per part of a frame that carries a long list (see `_send`)
OFFER_FIELDS: tuple[str, ...] = tuple(Offer.model_fields)
_OFFER = TypeAdapter(Offer)
_offer_values = attrgetter(*OFFER_FIELDS)
_model_dict = attrgetter("__dict__")
MINE_KEPT = 100  # polls remembered between two readings (beyond: the next reading reads every row)
READ_KEYS_AT_ONCE = 500  # keys per SELECT when an offers reading reads only what this child's polls wrote


# ------------------------------------------------------------------------------------------------ wire types
@dataclass(frozen=True, slots=True)
class Fence:
    """The leader's fencing token: the ingest writes only while the lease row still says this."""

    lease: str
    holder: str
    term: int


Sent = tuple[int, dict[int, int]]  # a poll as the parent sent it: its number, and each offer's hash -> position


def offer_values(offers: Sequence[Offer]) -> list[tuple[Any, ...]]:
    """Each offer's field values as a tuple of `OFFER_FIELDS` (at once; `reading_values` is the same in steps)."""
    return run_steps(reading_values(offers))


def reading_values(offers: Sequence[Offer]) -> Steps[list[tuple[Any, ...]]]:
    """`offer_values` as steps of `CHUNK` offers (core.slices): a model's `__dict__` holds the values in declaration
    order, checked for a whole chunk at once; else they are read one by one. The maps run in C, holding the
    interpreter lock for a whole list: 100,000 offers at once kept the bot's loop 0.7 s."""
    out: list[tuple[Any, ...]] = []
    for start in chunks(len(offers)):
        part = offers[start:start + CHUNK]
        dicts = list(map(_model_dict, part))
        if all(map(OFFER_FIELDS.__eq__, map(tuple, map(dict.keys, dicts)))):
            out += map(tuple, map(dict.values, dicts))
        else:
            out += map(_offer_values, part)
        yield
    return out


@dataclass(frozen=True, slots=True)
class PackedPoll:
    """A `PollResult` as plain values: its fields except the offers, and each offer either as a tuple of
    `OFFER_FIELDS` or, when it is listed exactly as in the previous poll of its provider that this one is packed
    against (`base`, which the child holds as offers), as its position in that poll (an int).

    A 50,000-configuration poll where a few percent changed thus crosses as ~50,000 small ints and a couple of
    thousand tuples, and the child builds only the offers that changed: pickling, unpickling and rebuilding every
    offer cost ~0.5 s of CPU a poll. Which offers are "the same" the parent tells by the hash of their values
    (keeping ~100 bytes per offer of the last poll, not the poll): two different listings with equal 64-bit
    hashes would be taken as unchanged; at 50,000 offers a poll that is ~1e-10 per poll (element hashes of floats
    and ints are exact for the values offers hold, strings' are randomised per process)."""

    meta: dict[str, Any]
    offers: list[tuple[Any, ...] | int]
    token: int = 0  # this poll's number: the next poll of the provider may be packed against it
    base: int | None = None  # the number of the poll the ints refer to (None: every offer is a tuple)

    @classmethod
    def pack(cls, result: PollResult, token: int = 0, against: Sent | None = None,
             values: list[tuple[Any, ...]] | None = None) -> tuple[PackedPoll, Sent]:
        """The poll, packed against `against` (a previous poll as sent, or None: whole); and this poll as sent."""
        return run_steps(cls.packing(result, token, against, values))

    @classmethod
    def packing(cls, result: PollResult, token: int = 0, against: Sent | None = None,
                values: list[tuple[Any, ...]] | None = None) -> Steps[tuple[PackedPoll, Sent]]:
        """`pack` as steps of `CHUNK` offers (core.slices), for the bot's loop."""
        meta = {name: getattr(result, name) for name in PollResult.model_fields if name != "offers"}
        if values is None:
            values = yield from reading_values(result.offers)
        hashes: list[int] = []
        try:
            for start in chunks(len(values)):
                hashes += map(hash, values[start:start + CHUNK])
                yield
        except TypeError:  # a field that cannot be hashed (none today): this poll crosses whole, the next too
            return cls(meta, list(values), token), (token, {})
        if against is None:
            packed: list[tuple[Any, ...] | int] = list(values)
        else:
            position = against[1].get
            packed = []
            for start in chunks(len(values)):
                packed += [v if (i := position(h)) is None else i
                           for v, h in zip(values[start:start + CHUNK], hashes[start:start + CHUNK], strict=True)]
                yield
        index: dict[int, int] = {}
        for start in chunks(len(hashes)):
            part = hashes[start:start + CHUNK]
            index.update(zip(part, range(start, start + len(part)), strict=True))
            yield
        return cls(meta, packed, token, None if against is None else against[0]), (token, index)

    def unpack(self, base: Sequence[Offer] | None = None) -> PollResult:
        """The poll; `base`: the offers of the poll it was packed against (the same objects are listed again)."""
        if self.base is not None and base is None:
            raise ValueError("a poll packed against a previous one needs that poll's offers")
        # Each offer that crossed as values is validated again through pydantic's public TypeAdapter: ~4.7 us an
        # offer, against ~14 us for model_construct (measured with pydantic 2.13); only offers that changed since
        # the last poll cross as values, the rest reuse the objects of `base`.
        offers = []
        names, validate = OFFER_FIELDS, _OFFER.validate_python
        for values in self.offers:
            if isinstance(values, int):
                assert base is not None
                offers.append(base[values])
                continue
            offers.append(validate(dict(zip(names, values, strict=True))))
        return PollResult.model_construct(**self.meta, offers=offers)


@dataclass(frozen=True, slots=True)
class RecordPoll:
    poll: PackedPoll
    rates: Rates | None
    alerts: AlertPolicy | None  # None: no alert queue (embedding code without the alert pipeline)
    fence: Fence | None


@dataclass(frozen=True, slots=True)
class Recorded:
    events: int  # change events the poll produced
    queued: int  # alerts queued in the same transaction
    cooling: int  # of those, queued as cooling down (see OutboxWriter.stats)
    # The child died during the call and it was made again: the dead child may have committed the poll (and queued
    # its alerts) before it could reply, so the repeat found it recorded. The senders should look anyway.
    retried: bool = False


@dataclass(frozen=True, slots=True)
class ReadOffers:
    """The in-stock offers inline mode answers from, as `bot.offer_cache.CachedOffer` init-field tuples: all of
    them, or only what changed since the reading `since` names (when the child still has that one)."""

    since: tuple[int, int] | None = None  # (child pid, reading number) the parent holds


@dataclass(frozen=True, slots=True)
class OfferRows:
    reading: tuple[int, int]
    full: bool  # True: `rows` is every offer; False: only those added or changed since `since`
    rows: list[tuple[Any, ...]]
    gone: list[str]  # keys no longer in stock (when not full)
    read_all: bool = True  # the child read every in-stock row (False: only those its own polls wrote since)


@dataclass(frozen=True, slots=True)
class Retention:
    settings: Any  # storage.retention_settings.RetentionSettings


@dataclass(frozen=True, slots=True)
class Resend:
    """The child does not hold the poll a `RecordPoll` was packed against (it was restarted, or a call failed):
    the parent sends the poll whole."""


@dataclass(frozen=True, slots=True)
class Failed:
    error: BaseException


@dataclass(frozen=True, slots=True)
class ChildConfig:
    database_url: str
    log_level: int = logging.INFO
    log_json: bool | None = None  # None: no logging set up by the parent (leave Python's defaults)
    log_secrets: list[str] = field(default_factory=list)
    part: int = PART  # list items per part of a frame (see `_send`)
    settle_heap: bool = True  # a child process's own heap (`_settle_heap`); not a thread's, which shares its host's


class IngestProcessDied(RuntimeError):
    """The ingest child died twice in a row on the same call."""


# ------------------------------------------------------------------------------------------------ framing
# A message crosses as one frame, or, when it carries a long list (a poll's offers, a reading's rows), as a frame of
# the message without the list and then the list in parts of `PART` items, each pickled on its own: pickling or
# unpickling 100,000 rows at once is one C call (0.2 s and 0.1 s of CPU), which holds the bot's loop for all of it.
_HEAD = struct.Struct("!II")  # the message's frame length, and how many parts of its list follow


def _split(message: object, part: int) -> tuple[object, list[Any] | None]:
    """The message without its long list, and the list (None: the message crosses whole)."""
    if isinstance(message, RecordPoll) and len(message.poll.offers) > part:
        return replace(message, poll=replace(message.poll, offers=[])), message.poll.offers
    if isinstance(message, OfferRows) and len(message.rows) > part:
        return replace(message, rows=[]), message.rows
    return message, None


def _join(head: object, items: list[Any]) -> object:
    if isinstance(head, RecordPoll):
        return replace(head, poll=replace(head.poll, offers=items))
    if isinstance(head, OfferRows):
        return replace(head, rows=items)
    raise TypeError(f"no list to join to a {type(head).__name__}")


async def _send(writer: asyncio.StreamWriter, message: object, part: int = PART) -> None:
    head, items = _split(message, part)
    data = pickle.dumps(head, protocol=pickle.HIGHEST_PROTOCOL)
    parts = chunks(len(items), part) if items is not None else range(0)
    writer.write(_HEAD.pack(len(data), len(parts)))
    writer.write(data)  # not joined to the header: a whole poll is megabytes, copied once more for nothing
    for start in parts:
        await writer.drain()
        await asyncio.sleep(0)  # the loop runs between two parts
        assert items is not None
        data = pickle.dumps(items[start:start + part], protocol=pickle.HIGHEST_PROTOCOL)
        writer.write(_HEADER.pack(len(data)))
        writer.write(data)
    await writer.drain()


async def _receive(reader: asyncio.StreamReader) -> Any:
    size, parts = _HEAD.unpack(await reader.readexactly(_HEAD.size))
    message = pickle.loads(await reader.readexactly(size))
    if not parts:
        return message
    items: list[Any] = []
    for _ in range(parts):
        (size,) = _HEADER.unpack(await reader.readexactly(_HEADER.size))
        items += pickle.loads(await reader.readexactly(size))
        await asyncio.sleep(0)
    return _join(message, items)


# ------------------------------------------------------------------------------------------------ parent side
class IngestProcess:
    """The parent's handle on the ingest child: one call at a time, in the order made."""

    def __init__(self, database_url: str, *, part: int = PART, in_thread: bool = False) -> None:
        self.database_url = database_url
        self.part = part  # list items per part of a frame, both ways (see `_send`)
        # True: the child's code serves the channel from a thread of this process (child_process.ThreadChild):
        # tests and single-process embedding (INGEST__IN_PROCESS); every frame and every step are the same.
        self.in_thread = in_thread
        self.restarts = 0
        self._proc: ChildHandle | None = None
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._lock = asyncio.Lock()
        self._closing = False
        self._polls = 0  # polls handed over (numbers them)
        self._sent: dict[str, Sent] = {}  # each provider's latest poll as the child holds it
        self.crossed = {"whole": 0, "diff": 0}  # polls with offers, by how they crossed

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    async def start(self) -> None:
        async with self._lock:
            if self._proc is None:
                await self._spawn()

    async def _spawn(self) -> None:
        # The config crosses as child_process's one plain frame; every later message in `_send`'s parts.
        config = replace(_child_config(self.database_url), part=self.part, settle_heap=not self.in_thread)
        if self.in_thread:
            self._proc, self._reader, self._writer = await spawn_in_thread(_child_main, config, "ingest")
        else:
            self._proc, self._reader, self._writer = await spawn(__name__, config)
        try:
            ready = await _receive(self._reader)  # the child has imported everything and made its engine
            if ready != "ready":
                raise RuntimeError(f"ingest child failed to start: {ready!r}")
        except BaseException:
            # Cancelled (a leader stepping down while its child starts) or failed half-way: no half-started child
            # is kept, whose "ready" the next call would read as its reply.
            await self._reap()
            raise
        log.info("ingest process %d started", self._proc.pid)

    async def _reap(self) -> None:
        proc, writer = self._proc, self._writer
        self._proc = self._reader = self._writer = None
        await reap(proc, writer, STOP_TIMEOUT)

    async def _exchange(self, message: object) -> Any:
        async with self._lock:
            for attempt in (1, 2):
                if self._closing:
                    raise RuntimeError("the ingest process is stopping")
                if self._proc is None:
                    await self._spawn()
                assert self._reader is not None and self._writer is not None
                try:
                    await _send(self._writer, message, self.part)
                    reply = await _receive(self._reader)
                except (asyncio.IncompleteReadError, ConnectionError, OSError):
                    code = self._proc.returncode if self._proc is not None else None
                    log.warning("ingest process died during a call (exit %s); %s", code,
                                "restarting it" if attempt == 1 and not self._closing else "giving up")
                    await self._reap()
                    self.restarts += 1
                    continue
                if isinstance(reply, Failed):
                    raise reply.error
                return reply
            raise IngestProcessDied("the ingest process died twice on the same call")

    async def _call(self, message: object) -> Any:
        # Shielded: a caller cancelled mid-call must not leave a reply unread on the channel (the next call would
        # read it); the exchange finishes on its own and the lock passes on after it.
        return await asyncio.shield(self._exchange(message))

    async def record(self, result: PollResult, *, rates: Rates | None = None, alerts: AlertPolicy | None = None,
                     fence: Fence | None = None) -> Recorded:
        """Record one poll in the child (`storage.ingest.record_poll`, with the child's state cache)."""
        restarts = self.restarts
        provider = result.provider
        # Packed against the provider's previous poll as sent; popped, so a call that fails leaves none behind
        # (the next poll then crosses whole).
        against = self._sent.pop(provider, None)
        self._polls += 1
        # Packed a slice at a time (core.slices): 100,000 offers read, hashed and looked up at once kept the loop
        # most of a second. With the collector paused, and what was built frozen where the process freezes its heap
        # (scrapers.heap): a young collection meanwhile walked the new values (40-70 ms at 100,000 offers).
        # The loop answers first: the poll's own end ran just before without handing it back (its payload freed as
        # the poller returned, 11-13 ms at 100,000 configurations), and the first slice would have added to that.
        await asyncio.sleep(0)
        with collector_paused():
            values = await run_in_slices(reading_values(result.offers))
            packed, sent = await run_in_slices(
                PackedPoll.packing(result, self._polls, against if result.offers else None, values))
            if freezing():
                gc.freeze()
        reply = await self._call(RecordPoll(packed, rates, alerts, fence))
        if isinstance(reply, Resend):  # a new child (or one that missed a poll): the poll crosses whole
            packed, sent = await run_in_slices(PackedPoll.packing(result, self._polls, None, values))
            reply = await self._call(RecordPoll(packed, rates, alerts, fence))
        assert isinstance(reply, Recorded)
        if result.offers:
            self.crossed["whole" if packed.base is None else "diff"] += 1
        # A poll with no offers (failed, suspect) leaves the previous one as what the next is packed against.
        if result.offers:
            self._sent[provider] = sent
        elif against is not None:
            self._sent[provider] = against
        return replace(reply, retried=True) if self.restarts != restarts else reply

    async def offers(self, since: tuple[int, int] | None = None) -> OfferRows:
        reply = await self._call(ReadOffers(since))
        assert isinstance(reply, OfferRows)
        return reply

    async def retention(self, settings: Any) -> Any:
        return await self._call(Retention(settings))

    async def stop(self) -> None:
        """Let the call in flight finish, then close the channel: the child exits on end-of-file."""
        self._closing = True
        async with self._lock:
            await self._reap()


def _child_config(database_url: str) -> ChildConfig:
    """The parent's logging, so the child's lines look the same and redact the same secrets."""
    logs = LogConfig.of_parent()
    return ChildConfig(database_url, logs.level, logs.json_lines, logs.secrets)


# ------------------------------------------------------------------------------------------------ heap
@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None


def trim_heap() -> None:
    """Hand the heap's free pages back to the system (glibc's `malloc_trim`). A poll's transients (the provider's
    JSON parsed into dicts, a poll crossing whole) are freed when it is done, but glibc keeps the pages they leave
    free between live allocations: the process's RSS would stay at its high-water mark. A few ms per poll."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


# ------------------------------------------------------------------------------------------------ child side
class _Child:
    def __init__(self, config: ChildConfig) -> None:
        from storage.db import make_engine, make_sessionmaker
        from storage.ingest import WRITER_CACHE_MB, StateCache

        self.engine = make_engine(config.database_url, sqlite_cache_mb=WRITER_CACHE_MB)
        self.sessionmaker = make_sessionmaker(self.engine)
        self.cache = StateCache()
        self._readings = 0
        self._polls: dict[str, tuple[int, list[Offer]]] = {}  # each provider's latest poll with offers, numbered
        self._sent: dict[str, tuple[Any, ...]] = {}  # the offers of the latest reading, by key
        self._raw: dict[str, int] = {}  # and the hashes of the rows they were built from
        self._upto: int | None = None  # the newest scrape run when the latest reading was made
        self._mine: dict[int, set[str]] = {}  # this child's polls committed since: run id -> keys written

    async def handle(self, message: object) -> object:
        if isinstance(message, RecordPoll):
            return await self.record(message)
        if isinstance(message, ReadOffers):
            return await self.offers(message.since)
        if isinstance(message, Retention):
            from storage.retention import run_retention

            return await run_retention(self.sessionmaker, message.settings)
        raise TypeError(f"unknown ingest request {type(message).__name__}")

    async def record(self, job: RecordPoll) -> Recorded | Resend:
        from storage.ingest import record_poll
        from storage.outbox import OutboxWriter

        packed = job.poll
        provider = packed.meta["provider"]
        held = self._polls.get(provider)
        if packed.base is not None and (held is None or held[0] != packed.base):
            return Resend()
        result = packed.unpack(held[1] if packed.base is not None and held is not None else None)
        if result.offers:  # as the parent does: what the provider's next poll is packed against
            self._polls[provider] = (packed.token, result.offers)
        hook: Any = None
        writer: OutboxWriter | None = None
        if job.alerts is not None:
            writer = OutboxWriter(job.alerts)
        if job.fence is not None:
            from gpuradar.leadership import fenced
            from storage.lease import LeaderLease

            lease = LeaderLease(self.sessionmaker, job.fence.lease, holder=job.fence.holder)
            hook = fenced(writer, lease, job.fence.term)
        else:
            hook = writer
        if len(self._mine) >= MINE_KEPT:  # polls without readings (embedding code): the next reading reads all
            self._mine.clear()
            self._upto = None
        events = await record_poll(self.sessionmaker, result, rates=job.rates, on_events=hook, cache=self.cache,
                                   written=self._mine if self._upto is not None else None)
        stats = writer.stats if writer is not None else {"queued": 0, "cooling": 0}
        return Recorded(len(events), stats["queued"], stats["cooling"])

    async def offers(self, since: tuple[int, int] | None) -> OfferRows:
        """The in-stock offers as `CachedOffer` fields. Incremental where it can be: when every scrape run recorded
        since the last reading is one of this child's own polls, only the rows those polls wrote are read again
        (a 50,000-configuration provider is not re-read whole after each poll); any other writer's run (a previous
        leader, a command-line ingest) and the first reading read every in-stock row."""
        from sqlalchemy import func, select

        from storage.offer_tables import CurrentOffer, ScrapeRun

        t = CurrentOffer.__table__.c
        columns = _reading_select()
        keys: set[str] | None = None
        async with self.sessionmaker() as session:  # what storage.queries.in_stock_offers reads, as plain rows
            # The runs first, then the rows: a run committed in between is read again next time, never missed.
            if self._upto is None:
                upto = await session.scalar(select(func.max(ScrapeRun.id)))
            else:
                runs = (await session.execute(select(ScrapeRun.id).where(ScrapeRun.id > self._upto))).scalars().all()
                upto = max(runs, default=self._upto)
                if all(run in self._mine for run in runs):
                    keys = set().union(*(self._mine[run] for run in runs))
            if keys is None:
                listed = (await session.execute(select(*columns).where(t.in_stock.is_(True), t.missing == 0))).all()
            else:
                listed = []
                ordered = sorted(keys)
                for i in range(0, len(ordered), READ_KEYS_AT_ONCE):
                    listed += (await session.execute(
                        select(*columns).where(t.key.in_(ordered[i:i + READ_KEYS_AT_ONCE]), t.in_stock.is_(True),
                                               t.missing == 0))).all()
        self._mine.clear()
        self._upto = upto
        # A row as read last time (the same hash of its values: see PackedPoll on hashes) keeps its offer: only new
        # and changed rows are built into offers.
        raw, sent = self._raw, self._sent
        if keys is None:
            rows: dict[str, tuple[Any, ...]] = {}
            hashes: dict[str, int] = {}
        else:  # the other rows are as last read; the written ones as read now (absent: no longer in stock)
            rows, hashes = dict(sent), dict(raw)
            for key in keys:
                rows.pop(key, None)
                hashes.pop(key, None)
        for r in listed:
            key, values = r[0], tuple(r[1:])
            digest = hash(values)
            rows[key] = sent[key] if raw.get(key) == digest else cached_offer_fields(key, values)
            hashes[key] = digest
        self._raw = hashes
        current = (os.getpid(), self._readings)
        self._readings += 1
        self._sent = rows
        reading = (os.getpid(), self._readings)
        if since != current:  # the parent holds another reading (or none): everything
            return OfferRows(reading, True, list(rows.values()), [], keys is None)
        looked_at = rows.keys() | sent.keys() if keys is None else keys
        changed = [rows[key] for key in looked_at if key in rows and sent.get(key) != rows[key]]
        return OfferRows(reading, False, changed, [key for key in looked_at if key in sent and key not in rows],
                         keys is None)

    async def close(self) -> None:
        await self.engine.dispose()


def _reading_select() -> tuple[Any, ...]:
    """The columns an offers reading selects: the key, `OFFER_COLUMNS`, then the prices."""
    from storage.ingest import OFFER_COLUMNS
    from storage.offer_tables import CurrentOffer

    t = CurrentOffer.__table__.c
    return (t.key, *[t[c] for c in OFFER_COLUMNS], t.price_per_gpu_hour_rub, t.price_per_gpu_hour_usd)


async def read_in_stock(sessionmaker: Any) -> list[tuple[Any, ...]]:
    """Every in-stock offer as `CachedOffer` fields, read here (a replica with no ingest child: at start), as the
    child reads them, in partitions of `PART` rows with the loop let run between them: 100,000 stored offers built
    into models at once held the loop for seconds."""
    from sqlalchemy import select

    from storage.offer_tables import CurrentOffer

    t = CurrentOffer.__table__.c
    rows: list[tuple[Any, ...]] = []
    async with sessionmaker() as session:
        result = await session.stream(select(*_reading_select()).where(t.in_stock.is_(True), t.missing == 0))
        async for part in result.partitions(PART):
            rows += [cached_offer_fields(r[0], tuple(r[1:])) for r in part]
            await asyncio.sleep(0)
    return rows


@functools.cache
def _reading_columns() -> dict[str, int]:
    """Where each value sits in a row of the offers reading, after its key: `OFFER_COLUMNS`, then the prices."""
    from storage.ingest import OFFER_COLUMNS

    return {name: i for i, name in enumerate((*OFFER_COLUMNS, "price_per_gpu_hour_rub", "price_per_gpu_hour_usd"))}


def cached_offer_fields(key: str, row: Sequence[Any]) -> tuple[Any, ...]:
    """`bot.offer_cache.CachedOffer`'s init fields, in order, for a row of the offers reading, without building the
    stored offer's models on the way: the values `CachedOffer.from_stored` gives for that offer (the key column is
    the offer's key; the slice share is the stored `gpu_fraction`, else read from the memory as `Offer.fraction`
    does). ~25 us a row less: 50,000 rows are read whole after every restart."""
    from core.offers import gpu_fraction

    at = _reading_columns()
    gpu, count = row[at["gpu"]], row[at["gpu_count"]]
    return (key, row[at["provider"]], gpu, row[at["gpu_name"]], count, row[at["location"]] or "", row[at["billing"]],
            row[at["price_per_gpu_hour_rub"]], row[at["price_per_gpu_hour_usd"]], row[at["url"]] or "",
            row[at["available"]], row[at["gpu_fraction"]] or gpu_fraction(gpu, count, row[at["gpu_memory_gb"]]),
            row[at["gpu_memory_gb"]])


async def _child_main(fd: int) -> None:
    sock = socket.socket(fileno=fd)
    reader, writer = await asyncio.open_connection(sock=sock)
    try:
        config: ChildConfig = await receive(reader)
    except (asyncio.IncompleteReadError, ConnectionError):
        return  # the parent gave up on this child before it was configured
    LogConfig(config.log_level, config.log_json, config.log_secrets).apply()
    child = _Child(config)
    calls = 0
    try:
        settle = _settle_heap if config.settle_heap else lambda full: None
        settle(full=False)  # what was imported and built at start lives as long as the child
        try:
            await _send(writer, "ready")
        except ConnectionError:
            return  # the parent stopped (SIGTERM right after start) before we were ready: nothing to do
        while True:
            try:
                message = await _receive(reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                return  # the parent closed the channel (stop) or died
            try:
                reply: object = await child.handle(message)
            except Exception as exc:  # handed to the parent, which raises it for its caller
                log.debug("ingest call failed", exc_info=True)
                reply = Failed(_picklable(exc))
            await _send(writer, reply, config.part)
            del message, reply
            calls += 1
            settle(full=calls % FULL_COLLECTION_EVERY == 0)
    finally:
        await child.close()


FULL_COLLECTION_EVERY = 50  # calls between collections that walk the frozen state too


def _settle_heap(full: bool) -> None:
    """Between calls, once the reply is sent: what the call left unreachable is collected, and what is still alive
    (the state cache, the last poll's offers: ~10 objects per configuration) is frozen, out of the cyclic
    collector's reach, so a full collection during the next poll walks only what that poll allocated. Measured on a
    50,000-configuration poll: ~0.15 s of collection inside the poll, ~30 % of it, gone. Reference counting frees
    frozen objects as usual; a frozen object that becomes part of unreachable cycle waits for the next full
    collection (every `FULL_COLLECTION_EVERY` calls, unfrozen first). Then the freed pages go back (`trim_heap`)."""
    if full:
        gc.unfreeze()
    gc.collect()
    gc.freeze()
    trim_heap()


def _picklable(exc: BaseException) -> BaseException:
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


def main(argv: list[str] | None = None, run: Callable[..., Any] = asyncio.run) -> None:
    # Niced (gpuradar.child_process): where the machine's cores are busy, the bot's loop (answers users wait for) runs
    # first and a poll is recorded a little later. Measured by bench/inline.py --ingest at load ~3 on 2 cores: inline
    # p99 9-20 ms with this, 21-41 ms without.
    fd = enter_child(sys.argv[1:] if argv is None else argv, CHILD_NICENESS)
    if fd is not None:
        run(_child_main(fd))

