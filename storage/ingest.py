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

import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from core.changes import (
    DEFAULT_HYSTERESIS,
    DEFAULT_PRICE_THRESHOLD,
    OfferEvent,
    OfferState,
    detect_changes,
    is_available,
)
from core.offers import Offer, Rates
from core.polls import PollResult, PollStatus
from core.verdict import shrink_verdict
from storage.offer_tables import CurrentOffer, OfferEventRow, PricePoint, ProviderHealth, ScrapeRun

log = logging.getLogger(__name__)

OnEvents = Callable[[AsyncSession, list[OfferEvent]], Awaitable[None] | None]
HISTORY_RUNS = 20  # previous runs read for the shrink verdict


async def record_poll(
    sessionmaker: async_sessionmaker[AsyncSession],
    result: PollResult,
    *,
    rates: Rates | None = None,
    now: datetime | None = None,
    on_events: OnEvents | None = None,
    hysteresis: int = DEFAULT_HYSTERESIS,
    price_threshold: float = DEFAULT_PRICE_THRESHOLD,
) -> list[OfferEvent]:
    """Store one poll and return the events it produced (with their stored ids). Idempotent per poll."""
    try:
        async with sessionmaker() as session, session.begin():
            return await _record(session, result, rates=rates, now=now or result.finished_at, on_events=on_events,
                                 hysteresis=hysteresis, price_threshold=price_threshold)
    except IntegrityError:
        async with sessionmaker() as session:
            seen = await session.scalar(select(ScrapeRun.id).where(
                ScrapeRun.provider == result.provider, ScrapeRun.started_at == result.started_at))
        if seen is None:
            raise
        log.info("poll of %s started at %s was already recorded (run %s)", result.provider, result.started_at, seen)
        return []


async def _record(session: AsyncSession, result: PollResult, *, rates: Rates | None, now: datetime,
                  on_events: OnEvents | None, hysteresis: int, price_threshold: float) -> list[OfferEvent]:
    provider = result.provider
    run = ScrapeRun(provider=provider, started_at=result.started_at, finished_at=result.finished_at,
                    reported_status=result.status.value, status=result.status.value, shrink=False,
                    offer_count=len(result.offers), event_count=0, error=result.error)
    session.add(run)
    await session.flush()  # the write lock, the run id, and the duplicate check

    previous = (await session.execute(
        select(ScrapeRun.status, ScrapeRun.shrink, ScrapeRun.offer_count)
        .where(ScrapeRun.provider == provider, ScrapeRun.id < run.id)
        .order_by(ScrapeRun.id.desc()).limit(HISTORY_RUNS))).all()

    status, error = result.status, result.error
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
        events = await _apply_snapshot(session, run, result.offers, rates=rates, now=now,
                                       baseline=had_trusted is None, hysteresis=hysteresis,
                                       price_threshold=price_threshold)
        run.event_count = len(events)

    await _update_health(session, provider, trusted=status is PollStatus.OK, reason=error or status.value, now=now)

    if events and on_events is not None:
        outcome = on_events(session, events)
        if inspect.isawaitable(outcome):
            await outcome
    return events


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


async def _apply_snapshot(session: AsyncSession, run: ScrapeRun, offers: list[Offer], *, rates: Rates | None,
                          now: datetime, baseline: bool, hysteresis: int, price_threshold: float) -> list[OfferEvent]:
    rows = {row.key: row for row in (await session.scalars(
        select(CurrentOffer).where(CurrentOffer.provider == run.provider))).all()}
    states = {key: OfferState(key, row.to_offer(), row.ref_price, row.in_stock, row.missing)
              for key, row in rows.items()}
    new_states, events = detect_changes(states, offers, hysteresis=hysteresis, price_threshold=price_threshold,
                                        baseline=baseline, rates=rates, now=now)
    listed = {o.key for o in offers}

    for key, state in new_states.items():
        offer = state.offer
        available_now = key in listed and is_available(offer)
        row = rows.get(key)
        rub, usd = normalised(offer, rates)
        if row is None:
            row = CurrentOffer(key=key, first_seen=now)
            session.add(row)
            point = True
        else:
            before = states[key]
            point = (before.listed != available_now or row.price != offer.price or row.currency != offer.currency
                     or row.period != offer.period.value or row.available != offer.available)
            if state == before and row.price_per_gpu_hour_rub == rub and row.price_per_gpu_hour_usd == usd:
                continue  # nothing moved: no write
        row.set_offer(offer)
        row.price_per_gpu_hour_rub, row.price_per_gpu_hour_usd = rub, usd
        row.in_stock, row.missing, row.ref_price = state.in_stock, state.missing, state.price
        row.updated_at = now
        if key in listed:
            row.last_seen = now
        if point:
            session.add(PricePoint(offer_key=key, provider=offer.provider, gpu=offer.gpu, gpu_count=offer.gpu_count,
                                   at=now, price=offer.price, currency=offer.currency, period=offer.period.value,
                                   price_per_gpu_hour_rub=rub, price_per_gpu_hour_usd=usd, in_stock=available_now,
                                   available=offer.available if key in listed else 0))

    if not events:
        return []
    event_rows = [OfferEventRow(
        run_id=run.id, offer_key=e.key, kind=e.kind.value, provider=e.offer.provider, gpu=e.offer.gpu,
        gpu_count=e.offer.gpu_count, at=now, old_price=e.old_price, new_price=e.new_price, currency=e.currency,
        old_price_rub=e.old_price_rub, new_price_rub=e.new_price_rub, old_price_usd=e.old_price_usd,
        new_price_usd=e.new_price_usd, offer=e.offer.model_dump(mode="json"),
    ) for e in events]
    session.add_all(event_rows)
    await session.flush()
    return [e.model_copy(update={"id": row.id}) for e, row in zip(events, event_rows, strict=True)]


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
