"""Record one poll: the scrape run, the verdict, change detection against stored state, and everything it changes,
in ONE transaction.

Why one transaction: the events, the new stock state and whatever the `on_events` hook writes (the alert outbox)
must land together or not at all. Then a crash or restart can neither lose an alert nor replay one: the next poll
compares against the state that was committed with the events it produced.

The scrape run is the first row written. On SQLite that makes the transaction take the write lock at once (no
read-then-upgrade deadlock between concurrent pollers), and its (provider, started_at) uniqueness makes recording
the same PollResult twice a no-op.
"""

from __future__ import annotations

import contextlib
import gc
import inspect
import logging
import operator
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, bindparam, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession, async_sessionmaker

from core.changes import (
    DEFAULT_HYSTERESIS,
    DEFAULT_PRICE_THRESHOLD,
    OfferEvent,
    OfferState,
    dedupe,
    detect_changes,
    is_available,
)
from core.offers import HOURS_PER_MONTH, Billing, Offer, Period, Rates
from core.polls import PollResult, PollStatus
from core.providers import vat_terms
from core.redaction import redact
from core.verdict import shrink_verdict
from storage.availability import SeriesIndex, track_poll
from storage.offer_tables import OFFER_COLUMNS, CurrentOffer, OfferEventRow, PricePoint, ProviderHealth, ScrapeRun

log = logging.getLogger(__name__)

OnEvents = Callable[[AsyncSession, list[OfferEvent]], Awaitable[None] | None]
HISTORY_RUNS = 20  # previous runs read for the shrink verdict


# The SQLite page cache of the engine that records polls (the leader's ingest child), MiB. A Vast-sized poll updates
# thousands of offers rows and adds as many availability change rows, each at its own place in the changes' series
# index: far more pages than SQLite's default 2 MB cache holds, so each poll re-read them from the OS through
# syscalls, and the statistics' pages pushed the offers' out. bench/availability.py, 50,000 groups, 8 polls, four
# runs each way, interleaved: the upkeep added +9.1/+9.4/+13.2/+10.0 % to a poll with the default cache and
# +4.7/+5.5/+5.5/+7.4 % with 64 MiB. Allocated as pages are used, by that one connection.
WRITER_CACHE_MB = 64


async def record_poll(
    sessionmaker: async_sessionmaker[AsyncSession],
    result: PollResult,
    *,
    rates: Rates | None = None,
    now: datetime | None = None,
    on_events: OnEvents | None = None,
    hysteresis: int = DEFAULT_HYSTERESIS,
    price_threshold: float = DEFAULT_PRICE_THRESHOLD,
    cache: StateCache | None = None,
    written: dict[int, set[str]] | None = None,
) -> list[OfferEvent]:
    """Store one poll and return the events it produced (with their stored ids). Idempotent per poll.
    `cache` (the ingest process's) spares reloading the provider's stored state between its own polls. `written`:
    once committed, the poll's scrape run id -> the keys of the offers rows it inserted or updated (none for a
    poll that changed nothing, or was not trusted)."""
    outcome_state: dict[str, ProviderState] = {}
    keys: set[str] = set()
    try:
        async with sessionmaker() as session, session.begin():
            events, run_id = await _record(
                session, result, rates=rates, now=now or result.finished_at, on_events=on_events,
                hysteresis=hysteresis, price_threshold=price_threshold, cache=cache, outcome_state=outcome_state,
                written=keys)
    except IntegrityError:
        if cache is not None:
            cache.forget(result.provider)
        async with sessionmaker() as session:
            seen = await session.scalar(select(ScrapeRun.id).where(
                ScrapeRun.provider == result.provider, ScrapeRun.started_at == result.started_at))
        if seen is None:
            raise
        log.info("poll of %s started at %s was already recorded (run %s)", result.provider, result.started_at, seen)
        return []
    except BaseException:
        if cache is not None:
            cache.forget(result.provider)
        raise
    if written is not None:
        written[run_id] = keys
    if cache is not None:  # committed: the cache now describes the database
        state = outcome_state.get(result.provider)
        if state is None:
            cache.forget(result.provider)
        else:
            cache.put(result.provider, run_id, state)
    return events


async def _record(session: AsyncSession, result: PollResult, *, rates: Rates | None, now: datetime,
                  on_events: OnEvents | None, hysteresis: int, price_threshold: float, cache: StateCache | None,
                  outcome_state: dict[str, ProviderState], written: set[str]) -> tuple[list[OfferEvent], int]:
    provider = result.provider
    # Whoever made the result, its error text is stored redacted (an answer may echo the request, key included).
    reported = redact(result.error) if result.error is not None else None
    run = ScrapeRun(provider=provider, started_at=result.started_at, finished_at=result.finished_at,
                    reported_status=result.status.value, status=result.status.value, shrink=False,
                    offer_count=len(result.offers), event_count=0, error=reported)
    session.add(run)
    await session.flush()  # the write lock, the run id, and the duplicate check

    previous = (await session.execute(
        select(ScrapeRun.id, ScrapeRun.status, ScrapeRun.shrink, ScrapeRun.offer_count)
        .where(ScrapeRun.provider == provider, ScrapeRun.id < run.id)
        .order_by(ScrapeRun.id.desc()).limit(HISTORY_RUNS))).all()

    status, error = result.status, reported
    if status is PollStatus.OK:
        verdict = shrink_verdict(len(result.offers), [r.offer_count for r in previous if r.status == PollStatus.OK],
                                 recent_shrunk=_shrunk_streak(previous))
        if verdict.suspect:
            status, error = PollStatus.SUSPECT, verdict.reason
            run.status, run.shrink, run.error = status.value, True, error
            log.warning("poll of %s is suspect: %s", provider, error)

    events: list[OfferEvent] = []
    if status is PollStatus.OK:
        had_trusted = await session.scalar(select(ScrapeRun.id).where(
            ScrapeRun.provider == provider, ScrapeRun.status == PollStatus.OK.value, ScrapeRun.id < run.id).limit(1))
        cached = cache.get(provider, previous[0].id if previous else None) if cache is not None else None
        stored = cached if cached is not None else await _load_stored(session, provider)
        events, after = await _apply_snapshot(session, run, _never_in_stock(provider, result.offers), rates=rates,
                                              now=now,
                                              baseline=had_trusted is None, hysteresis=hysteresis,
                                              price_threshold=price_threshold, stored=stored, written=written)
        run.event_count = len(events)
        with _gc_paused():  # the same allocation pattern as the diff: thousands of small objects that live on
            await track_poll(session, provider, now, after, written, trusted=True, keep=cache is not None)
        if cache is not None:
            outcome_state[provider] = after
    elif cache is not None and previous:
        cached = cache.get(provider, previous[0].id)
        if cached is not None:
            outcome_state[provider] = cached  # nothing changed: carry the state over to this run

    await _update_health(session, provider, trusted=status is PollStatus.OK, reason=error or status.value, now=now)

    if events and on_events is not None:
        outcome = on_events(session, events)
        if inspect.isawaitable(outcome):
            await outcome
    return events, run.id


def _shrunk_streak(previous: Sequence[Any]) -> list[int]:
    """Offer counts of the shrink-suspect polls since the last trusted one (newest first); failed polls in
    between neither count nor break the streak."""
    counts = []
    for r in previous:
        if r.status == PollStatus.OK.value:
            break
        if r.shrink:
            counts.append(r.offer_count)
    return counts


def normalised(offer: Offer, rates: Rates | None) -> tuple[float | None, float | None]:
    """Per-GPU-hour price in RUB and USD; None where no rate is known (never a guess)."""
    per_gpu_hour = offer.price_per_gpu_hour
    out: list[float | None] = []
    for target in ("RUB", "USD"):
        if offer.currency.upper() == target or (target == "RUB" and offer.currency.upper() == "RUR"):
            out.append(round(per_gpu_hour, 4))
        elif rates is None:
            out.append(None)
        else:
            try:
                out.append(round(rates.convert(per_gpu_hour, offer.currency, target), 4))
            except KeyError:
                out.append(None)
    return out[0], out[1]


Factors = dict[str, tuple[float | None, float | None]]  # currency -> multipliers to RUB and USD


@dataclass(slots=True)
class Stored:
    """A configuration's state as this process last wrote it: the change-detection state, the normalised prices,
    and the listing."""

    ref_price: float
    in_stock: bool
    missing: int
    rub: float | None
    usd: float | None
    offer: Offer

    def state(self, key: str) -> OfferState:
        return OfferState(key, self.offer, self.ref_price, self.in_stock, self.missing)


# A row as loaded from the database, as the SELECT returns it: no object per configuration until it changes.
Raw = Sequence[Any]  # ref_price, in_stock, missing, rub, usd, *OFFER_COLUMNS, key
_RAW_REF_PRICE, _RAW_IN_STOCK, _RAW_MISSING, _RAW_RUB, _RAW_USD = range(5)  # positions in a Raw row
_RAW_LISTING = 5  # where OFFER_COLUMNS start in a Raw row


def _stored(raw: Raw) -> Stored:
    return Stored(raw[_RAW_REF_PRICE], raw[_RAW_IN_STOCK], raw[_RAW_MISSING], raw[_RAW_RUB], raw[_RAW_USD],
                  offer_from_row(raw[_RAW_LISTING:-1]))


def offer_from_row(row: Sequence[Any]) -> Offer:
    """The listing an `offers` row holds (its `OFFER_COLUMNS`), not validated again: it was when it was written."""
    fields = dict(zip(OFFER_COLUMNS, row, strict=True))
    fields["in_stock"] = fields.pop("listed_in_stock")
    fields["billing"], fields["period"] = Billing(fields["billing"]), Period(fields["period"])
    fields["location"] = fields["location"] or ""
    fields["url"] = fields["url"] or ""
    return Offer.model_construct(**fields)


# The offer as its row's `OFFER_COLUMNS`, for comparing with one tuple equality (the StrEnums equal their stored
# values); an attrgetter: one C call per listing on the skip path, no Python frame.
_row_tuple: Callable[[Offer], tuple[Any, ...]] = operator.attrgetter(
    *("in_stock" if c == "listed_in_stock" else c for c in OFFER_COLUMNS))


@dataclass(slots=True)
class ProviderState:
    """One provider's stored state by configuration key: what this process wrote (`by_key`, which wins) and the
    rest as loaded from the database (`raw`); and the exchange factors every stored normalised price agrees with
    (None when loaded from the database: each unchanged listing's prices are then re-checked)."""

    by_key: dict[str, Stored]
    raw: dict[str, Raw] = field(default_factory=dict)
    factors: Factors | None = None
    availability: SeriesIndex | None = None  # storage.availability's index of this state, carried between polls

    def get(self, key: str) -> Stored | None:
        stored = self.by_key.get(key)
        if stored is None:
            raw = self.raw.get(key)
            if raw is not None:
                stored = _stored(raw)
        return stored

    def keys(self) -> set[str]:
        return self.by_key.keys() | self.raw.keys()


class StateCache:
    """The ingest process's copy of each provider's stored state, so a poll loads nothing when nothing else wrote
    since this process's last poll of that provider (checked against the provider's latest scrape run id: any
    other writer — a previous leader — makes it reload). Only what a poll changed is written back."""

    def __init__(self) -> None:
        self._by_provider: dict[str, tuple[int, ProviderState]] = {}
        self.hits = 0
        self.loads = 0

    def get(self, provider: str, last_run_id: int | None) -> ProviderState | None:
        entry = self._by_provider.get(provider)
        if entry is None or last_run_id is None or entry[0] != last_run_id:
            return None
        self.hits += 1
        return entry[1]

    def put(self, provider: str, run_id: int, stored: ProviderState) -> None:
        self._by_provider[provider] = (run_id, stored)

    def forget(self, provider: str) -> None:
        self._by_provider.pop(provider, None)


async def _load_stored(session: AsyncSession, provider: str) -> ProviderState:
    """The provider's rows as plain tuples: no ORM objects, and no `Offer` until a configuration changes."""
    t = cast(Table, CurrentOffer.__table__)
    cols = [t.c[name] for name in OFFER_COLUMNS]
    rows = (await session.execute(select(t.c.ref_price, t.c.in_stock, t.c.missing, t.c.price_per_gpu_hour_rub,
                                         t.c.price_per_gpu_hour_usd, *cols, t.c.key)
                                  .where(t.c.provider == provider))).all()
    return ProviderState({}, {r[-1]: r for r in rows})


def _factors(currency: str, rates: Rates | None) -> tuple[float | None, float | None]:
    """Multipliers from the offer's currency to RUB and USD (None where no rate is known), once per poll; the same
    figures `normalised` gives, without a conversion per offer."""
    out: list[float | None] = []
    for target in ("RUB", "USD"):
        cur = currency.upper()
        if cur == target or (target == "RUB" and cur == "RUR"):
            out.append(1.0)
        elif rates is None:
            out.append(None)
        else:
            try:
                out.append(rates.convert(1.0, currency, target))
            except KeyError:
                out.append(None)
    return out[0], out[1]


def _row_values(offer: Offer) -> dict[str, Any]:
    return {"provider": offer.provider, "sku": offer.sku, "gpu": offer.gpu, "gpu_name": offer.gpu_name,
            "gpu_count": offer.gpu_count, "gpu_memory_gb": offer.gpu_memory_gb,
            "gpu_fraction": offer.gpu_fraction, "vcpu": offer.vcpu,
            "ram_gb": offer.ram_gb, "disk_gb": offer.disk_gb, "location": offer.location,
            "billing": offer.billing.value, "price": offer.price, "currency": offer.currency,
            "period": offer.period.value, "listed_in_stock": offer.in_stock, "available": offer.available,
            "url": offer.url}


async def _apply_snapshot(session: AsyncSession, run: ScrapeRun, offers: list[Offer], *, rates: Rates | None,
                          now: datetime, baseline: bool, hysteresis: int, price_threshold: float,
                          stored: ProviderState, written: set[str]) -> tuple[list[OfferEvent], ProviderState]:
    """Diff the poll against the stored state and write only what changed (a few executemany statements).
    Returns the events (with their stored ids) and the provider's state after the poll; `written` gets the keys
    of the rows written."""
    with _gc_paused():
        return await _apply(session, run, offers, rates=rates, now=now, baseline=baseline, hysteresis=hysteresis,
                            price_threshold=price_threshold, stored=stored, written=written)


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """A poll allocates tens of thousands of small objects that all live until it ends: the cyclic collector would
    re-scan the whole heap many times over meanwhile (measured: a third of a 50,000-configuration ingest)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _prices_at(per_gpu_hour: float, factor: tuple[float | None, float | None]) -> tuple[float | None, float | None]:
    """A per-GPU-hour price in RUB and USD by the poll's factors, rounded as stored (None where no rate is known)."""
    return (None if factor[0] is None else round(per_gpu_hour * factor[0], 4),
            None if factor[1] is None else round(per_gpu_hour * factor[1], 4))


# A (provider, currency)'s terms for one poll, as the skip of unchanged listings reads them: the multiplier `gross`
# applies for the provider's VAT terms (1.0 where VAT is included or none applies: x * 1.0 is x exactly, so the
# figures stay `gross`'s), the exchange factors to RUB and USD, and whether those factors are the ones every stored
# normalised price of that currency was written with (then nothing needs re-checking).
_Terms = tuple[float, float | None, float | None, bool]


def _vat_multiplier(vat: tuple[float, bool]) -> float:
    rate, included = vat
    return 1.0 if included or not rate else 1 + rate


class _Pricing:
    """One poll's exchange factors per currency, and its `_Terms` per (provider, currency) (the provider's VAT
    terms with the currency's factors), each looked up once: a dict lookup per listing on the skip path."""

    __slots__ = ("factors", "rates", "same_factors", "terms")

    def __init__(self, rates: Rates | None, same_factors: Factors | None = None) -> None:
        self.rates = rates
        self.factors: Factors = {}
        self.same_factors = same_factors  # the factors the stored prices agree with (None: unknown, re-check)
        self.terms: dict[tuple[str, str], _Terms] = {}

    def terms_of(self, offer: Offer) -> _Terms:
        """The offer's provider and currency's `_Terms`, computed on the first listing of the pair in this poll
        (the provider's VAT terms: an offer's own override is not in them)."""
        provider, currency = offer.provider, offer.currency
        factor = self.factor(currency)
        vat = vat_terms(provider, currency)  # `Offer.vat` with no override
        same = self.same_factors is not None and self.same_factors.get(currency) == factor
        terms = self.terms[provider, currency] = (_vat_multiplier(vat), factor[0], factor[1], same)
        return terms

    def factor(self, currency: str) -> tuple[float | None, float | None]:
        factor = self.factors.get(currency)
        if factor is None:
            factor = self.factors[currency] = _factors(currency, self.rates)
        return factor

    def prices(self, offer: Offer) -> tuple[float | None, float | None]:
        """The offer's normalised prices (`normalised`'s figures, by this poll's factors)."""
        return _prices_at(offer.price_per_gpu_hour, self.factor(offer.currency))


def _what_changed(current: dict[str, Offer], stored: ProviderState,
                  pricing: _Pricing) -> tuple[dict[str, Stored], list[Offer]]:
    """The configurations change detection must see: the stored state of the vanished and changed ones, and the
    listings that are new or differ. The common case is skipped with no model built and nothing computed: a
    configuration listed, available and in stock as before, every field the same (and, where the exchange factors
    moved, its normalised prices re-checked) keeps its state exactly (`detect_changes` would return it unchanged).
    That skip runs for nearly every listing of every poll, so it is written out here with no call of ours: one
    dict lookup for the pair's `_Terms`, one tuple equality against a loaded row."""
    by_key, raw_rows = stored.by_key, stored.raw
    terms = pricing.terms
    before_of: dict[str, Stored] = {}
    for key in stored.keys() - current.keys():
        s = stored.get(key)
        assert s is not None
        before_of[key] = s
    changed: list[Offer] = []
    for key, offer in current.items():
        before = by_key.get(key)
        raw = raw_rows.get(key) if before is None else None
        # A card the catalog cannot name is never skipped: its last_seen must follow each listing, since the
        # operators' count of unknown GPU names reads it (storage.queries.unknown_gpu_offers). Such rows are few.
        if offer.gpu is not None and offer.in_stock and (offer.available is None or offer.available > 0):
            # Listed as before: equal field for field to the Stored this process wrote, else to the Raw row loaded.
            if before is not None:
                unchanged = before.in_stock and not before.missing and (before.offer is offer or before.offer == offer)
                rub, usd = before.rub, before.usd
            elif raw is not None:
                unchanged = bool(raw[_RAW_IN_STOCK] and not raw[_RAW_MISSING]
                                 and raw[_RAW_LISTING:-1] == _row_tuple(offer))
                rub, usd = raw[_RAW_RUB], raw[_RAW_USD]
            else:
                unchanged = False
            if unchanged:
                vat_by, to_rub, to_usd, same = terms.get((offer.provider, offer.currency)) or pricing.terms_of(offer)
                # The columns hold no VAT override: a loaded row matches a listing with one by its stored prices,
                # which only its own terms give (checked whatever the factors: the row may be from before them).
                own_vat = offer.vat_rate is not None or offer.vat_included is not None
                if same and not (own_vat and raw is not None):
                    continue  # stored with this poll's exchange factors
                if own_vat:
                    vat_by = _vat_multiplier(offer.vat)
                # The stored normalised prices re-checked: `_Pricing.prices`' figures (gross, hourly, per GPU,
                # `_prices_at`'s rounding), the same floats.
                per_gpu_hour = offer.price * vat_by
                if offer.period is Period.MONTH:
                    per_gpu_hour = per_gpu_hour / HOURS_PER_MONTH
                per_gpu_hour = per_gpu_hour / offer.gpu_count
                if ((None if to_rub is None else round(per_gpu_hour * to_rub, 4)),
                        (None if to_usd is None else round(per_gpu_hour * to_usd, 4))) == (rub, usd):
                    if own_vat and raw is not None:
                        # the loaded row is this listing's, bar the override it cannot hold: kept as the listing
                        # (no write), so the next poll compares the whole listing, override included
                        by_key[key] = Stored(raw[_RAW_REF_PRICE], True, 0, rub, usd, offer)
                    continue
        if before is None and raw is not None:
            before = _stored(raw)
        if before is not None:
            before_of[key] = before
        changed.append(offer)
    return before_of, changed


@dataclass(slots=True)
class _Writes:
    """What one poll writes: new and changed `offers` rows, price history points, and the state after it."""

    after: dict[str, Stored]
    inserts: list[dict[str, Any]] = field(default_factory=list)
    updates: list[dict[str, Any]] = field(default_factory=list)
    points: list[dict[str, Any]] = field(default_factory=list)
    seen: list[dict[str, Any]] = field(default_factory=list)  # listed again unchanged: only last_seen moves


def _rows(new_states: dict[str, OfferState], previous: dict[str, OfferState], before_of: dict[str, Stored],
          current: dict[str, Offer], pricing: _Pricing, by_key: dict[str, Stored], now: datetime,
          keep_seen: bool = False) -> _Writes:
    """The rows the detected states need: a configuration whose state and normalised prices did not move is not
    written; a price point is added where the price, the availability or being listed changed. `keep_seen` (a
    price-only source): a configuration listed again unchanged still has its last_seen moved, since nothing else
    tells its current price list from the rows it dropped (all are out of stock: see `listed_prices`). The same for
    a card the catalog cannot name, whatever the source (`unknown_gpu_offers`)."""
    writes = _Writes(dict(by_key))
    for key, state in new_states.items():
        offer = state.offer
        listed = key in current
        available_now = listed and is_available(offer)
        rub, usd = pricing.prices(offer)
        before = before_of.get(key)
        if before is None:
            point = True
        else:
            old = previous[key]
            seen = old.offer
            point = (old.listed != available_now or seen.price != offer.price or seen.currency != offer.currency
                     or seen.period is not offer.period or seen.available != offer.available)
            if state == old and before.rub == rub and before.usd == usd:
                writes.after[key] = before  # nothing moved: no write (but the last_seen of a price list's row)
                if (keep_seen or offer.gpu is None) and listed:
                    writes.seen.append({"k": key, "at": now})
                continue
        values = {**_row_values(offer), "price_per_gpu_hour_rub": rub, "price_per_gpu_hour_usd": usd,
                  "in_stock": state.in_stock, "missing": state.missing, "ref_price": state.price, "updated_at": now}
        if listed:
            values["last_seen"] = now
        if before is None:
            writes.inserts.append({**values, "key": key, "first_seen": now, "last_seen": now})
        else:
            writes.updates.append({**values, "k": key})
        writes.after[key] = Stored(state.price, state.in_stock, state.missing, rub, usd, offer)
        if point:
            writes.points.append({
                "offer_key": key, "provider": offer.provider, "gpu": offer.gpu, "gpu_count": offer.gpu_count,
                "at": now, "price": offer.price, "currency": offer.currency, "period": offer.period.value,
                "price_per_gpu_hour_rub": rub, "price_per_gpu_hour_usd": usd, "in_stock": available_now,
                "available": offer.available if listed else 0})
    return writes


def _never_in_stock(provider: str, offers: list[Offer]) -> list[Offer]:
    """A price-only source's offers as the poller leaves them (`scrapers.poller.listed_only`): none in stock, with no
    count. Enforced here too, since a poll may reach storage by another road (embedding code, a test), and a listed
    price must never be alerted or listed as in stock."""
    if not _price_only(provider):
        return offers
    return [o if not o.in_stock and o.available is None else o.model_copy(update={"in_stock": False, "available": None})
            for o in offers]


def _price_only(provider: str) -> bool:
    """A price-only source (`ProviderInfo.stock_known` False): its offers are never in stock, so which of them its
    latest poll listed is known only from their last_seen. False where no catalog is installed (storage alone)."""
    from core.providers import catalog

    try:
        info = catalog().get(provider)
    except RuntimeError:
        return False
    return info is not None and not info.stock_known


async def _write_rows(conn: AsyncConnection, writes: _Writes) -> None:
    """Core executemany statements: no ORM bookkeeping for plain rows."""
    table = cast(Table, CurrentOffer.__table__)
    if writes.inserts:
        await conn.execute(insert(table), writes.inserts)
    # Rows that were listed this time also move last_seen; the others keep it. Two statements, each one shape.
    for with_seen in (True, False):
        batch = [u for u in writes.updates if ("last_seen" in u) is with_seen]
        if batch:
            cols: dict[str, Any] = {c: bindparam(c) for c in batch[0] if c != "k"}
            await conn.execute(update(table).where(table.c.key == bindparam("k")).values(**cols), batch)
    if writes.seen:
        await conn.execute(update(table).where(table.c.key == bindparam("k")).values(last_seen=bindparam("at")),
                           writes.seen)
    if writes.points:
        await conn.execute(insert(cast(Table, PricePoint.__table__)), writes.points)


async def _write_events(conn: AsyncConnection, run: ScrapeRun, events: list[OfferEvent],
                        now: datetime) -> list[OfferEvent]:
    """The events as rows of the run, returned with their stored ids."""
    events_table = cast(Table, OfferEventRow.__table__)
    # A plain executemany, then the ids read back by the run's unique (offer key, kind): RETURNING with the
    # parameters' order kept is one statement per row on SQLite (no insertmanyvalues sentinel there).
    await conn.execute(insert(events_table), [
        {"run_id": run.id, "offer_key": e.key, "kind": e.kind.value, "provider": e.offer.provider,
         "gpu": e.offer.gpu, "gpu_count": e.offer.gpu_count, "at": now, "old_price": e.old_price,
         "new_price": e.new_price, "currency": e.currency, "old_price_rub": e.old_price_rub,
         "new_price_rub": e.new_price_rub, "old_price_usd": e.old_price_usd, "new_price_usd": e.new_price_usd,
         "offer": e.offer.model_dump(mode="json")} for e in events])
    ids = {(k, kind): i for i, k, kind in (await conn.execute(
        select(events_table.c.id, events_table.c.offer_key, events_table.c.kind)
        .where(events_table.c.run_id == run.id))).all()}
    return [e.model_copy(update={"id": ids[e.key, e.kind.value]}) for e in events]


async def _apply(session: AsyncSession, run: ScrapeRun, offers: list[Offer], *, rates: Rates | None,
                 now: datetime, baseline: bool, hysteresis: int, price_threshold: float,
                 stored: ProviderState, written: set[str]) -> tuple[list[OfferEvent], ProviderState]:
    pricing = _Pricing(rates, stored.factors)
    current = dedupe(offers)
    before_of, changed = _what_changed(current, stored, pricing)
    previous = {key: s.state(key) for key, s in before_of.items()}
    new_states, events = detect_changes(previous, changed, hysteresis=hysteresis, price_threshold=price_threshold,
                                        baseline=baseline, rates=rates, now=now)
    writes = _rows(new_states, previous, before_of, current, pricing, stored.by_key, now,
                   keep_seen=_price_only(run.provider))
    # Every configuration was either written with this poll's factors or found to agree with them.
    state_after = ProviderState(writes.after, stored.raw, pricing.factors, stored.availability)
    written.update(i["key"] for i in writes.inserts)
    written.update(u["k"] for u in writes.updates)
    conn = await session.connection()
    await _write_rows(conn, writes)
    if not events:
        return [], state_after
    return await _write_events(conn, run, events, now), state_after


async def _update_health(session: AsyncSession, provider: str, *, trusted: bool, reason: str, now: datetime) -> None:
    health = await session.get(ProviderHealth, provider)
    if health is None:
        health = ProviderHealth(provider=provider, status="", since=now, consecutive_failures=0)
        session.add(health)
    status = "ok" if trusted else "degraded"
    if health.status != status:
        health.status, health.since = status, now
    health.last_poll = now
    if trusted:
        health.reason, health.last_success, health.consecutive_failures = None, now, 0
    else:
        health.reason, health.last_error, health.last_error_at = reason, reason, now
        health.consecutive_failures = (health.consecutive_failures or 0) + 1
