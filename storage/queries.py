"""Read side of the offer store: in-stock offers cheapest first, provider health, price history per GPU.

Filtering that is domain logic (does a configuration fit a workload?) stays in core: callers pass a predicate
(`workload_fits(workload)` builds one from `core.fit`), the query only narrows by plain columns first.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from datetime import datetime
from typing import Any

from pydantic import BaseModel
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from core.fit import requirement
from core.gpus import get_gpu
from core.matching import region_matches
from core.offers import Offer, key_place
from core.workload import Workload
from storage.offer_tables import CurrentOffer, PricePoint, ProviderHealth, ScrapeRun

OfferFilter = Callable[[Offer], bool]


class StoredOffer(BaseModel):
    offer: Offer
    price_per_gpu_hour_rub: float | None
    price_per_gpu_hour_usd: float | None
    first_seen: datetime
    last_seen: datetime


class HealthView(BaseModel):
    provider: str
    status: str  # ok | degraded
    reason: str | None
    since: datetime
    last_poll: datetime
    last_success: datetime | None
    last_error: str | None
    last_error_at: datetime | None
    consecutive_failures: int
    last_offer_count: int | None = None  # offers in the latest poll (any status)


class HistoryPoint(BaseModel):
    at: datetime
    price: float | None  # cheapest in-stock price per GPU-hour then; None when nothing was in stock


class HistorySeries(BaseModel):
    provider: str
    points: list[HistoryPoint]
    spot: bool = False  # spot / interruptible configurations: a series of their own, never mixed with on-demand


def workload_fits(workload: Workload) -> OfferFilter:
    """Keep offers whose GPU (a catalog id) and count can run the workload, per core's estimator."""
    need = requirement(workload)

    def fits(offer: Offer) -> bool:
        if offer.gpu is None:
            return False  # an unknown card is never guessed to fit
        try:
            gpu = get_gpu(offer.gpu)
        except KeyError:
            return False
        return bool(need.fits(gpu, offer.gpu_count))

    return fits


async def in_stock_offers(
    session: AsyncSession,
    *,
    gpu: str | list[str] | None = None,
    provider: str | list[str] | None = None,
    min_count: int | None = None,
    where: OfferFilter | None = None,
    limit: int | None = None,
) -> list[StoredOffer]:
    """Offers listed in stock by the latest trusted poll of their provider, cheapest per GPU-hour first."""
    q = select(CurrentOffer).where(CurrentOffer.in_stock.is_(True), CurrentOffer.missing == 0)
    if gpu is not None:
        q = q.where(CurrentOffer.gpu.in_([gpu] if isinstance(gpu, str) else gpu))
    if provider is not None:
        q = q.where(CurrentOffer.provider.in_([provider] if isinstance(provider, str) else provider))
    if min_count is not None:
        q = q.where(CurrentOffer.gpu_count >= min_count)
    # NULLs (no exchange rate) last, portable across SQLite and PostgreSQL
    q = q.order_by(CurrentOffer.price_per_gpu_hour_rub.is_(None), CurrentOffer.price_per_gpu_hour_rub,
                   CurrentOffer.price_per_gpu_hour_usd, CurrentOffer.key)
    out: list[StoredOffer] = []
    for row in (await session.scalars(q)).all():
        offer = row.to_offer()
        if where is not None and not where(offer):
            continue
        out.append(StoredOffer(offer=offer, price_per_gpu_hour_rub=row.price_per_gpu_hour_rub,
                               price_per_gpu_hour_usd=row.price_per_gpu_hour_usd,
                               first_seen=row.first_seen, last_seen=row.last_seen))
        if limit is not None and len(out) >= limit:
            break
    return out


async def listed_prices(session: AsyncSession, providers: list[str], *,
                        gpu: str | list[str] | None = None) -> list[StoredOffer]:
    """The current price lists of price-only sources (`providers`: those whose `ProviderInfo.stock_known` is False):
    the rows their latest trusted poll listed (`last_seen` is that poll's time on each, kept moving by ingest for such
    a source), of a card the catalog knows, cheapest per GPU-hour first. Never in stock: shown apart, as listed
    prices with availability unknown, and never alerted."""
    if not providers:
        return []
    latest = (select(CurrentOffer.provider.label("provider"), func.max(CurrentOffer.last_seen).label("at"))
              .where(CurrentOffer.provider.in_(providers)).group_by(CurrentOffer.provider).subquery())
    q = (select(CurrentOffer)
         .join(latest, (latest.c.provider == CurrentOffer.provider) & (latest.c.at == CurrentOffer.last_seen))
         .where(CurrentOffer.gpu.is_not(None)))
    if gpu is not None:
        q = q.where(CurrentOffer.gpu.in_([gpu] if isinstance(gpu, str) else gpu))
    q = q.order_by(CurrentOffer.price_per_gpu_hour_rub.is_(None), CurrentOffer.price_per_gpu_hour_rub,
                   CurrentOffer.price_per_gpu_hour_usd, CurrentOffer.key)
    return [StoredOffer(offer=row.to_offer(), price_per_gpu_hour_rub=row.price_per_gpu_hour_rub,
                        price_per_gpu_hour_usd=row.price_per_gpu_hour_usd, first_seen=row.first_seen,
                        last_seen=row.last_seen)
            for row in (await session.scalars(q)).all()]


async def provider_health(session: AsyncSession) -> list[HealthView]:
    rows = (await session.scalars(select(ProviderHealth).order_by(ProviderHealth.provider))).all()
    counts: dict[str, int] = {}
    for row in rows:  # a handful of providers: one indexed look-up each
        last = await session.scalar(select(ScrapeRun.offer_count).where(ScrapeRun.provider == row.provider)
                                    .order_by(ScrapeRun.id.desc()).limit(1))
        if last is not None:
            counts[row.provider] = last
    return [HealthView(provider=r.provider, status=r.status, reason=r.reason, since=r.since, last_poll=r.last_poll,
                       last_success=r.last_success, last_error=r.last_error, last_error_at=r.last_error_at,
                       consecutive_failures=r.consecutive_failures, last_offer_count=counts.get(r.provider))
            for r in rows]


async def unknown_gpu_offers(session: AsyncSession) -> dict[str, dict[str, int]]:
    """provider -> {its GPU spelling the catalog does not know: offers in its latest trusted poll}, for operators
    (`gpuradar providers`, the admins' /providers, the metrics): such offers are shown to nobody until mapped."""
    # Listed by the provider's latest trusted poll: ingest moves the last_seen of every unknown-GPU row that poll
    # listed (changed or not) to the poll's time, which is also the provider's last_success.
    rows = await session.execute(
        select(CurrentOffer.provider, CurrentOffer.gpu_name, func.count())
        .join(ProviderHealth, (ProviderHealth.provider == CurrentOffer.provider)
              & (ProviderHealth.last_success == CurrentOffer.last_seen))
        .where(CurrentOffer.gpu.is_(None))
        .group_by(CurrentOffer.provider, CurrentOffer.gpu_name))
    out: dict[str, dict[str, int]] = {}
    for provider, name, count in rows:
        out.setdefault(provider, {})[name] = int(count)
    return out


async def price_history(session: AsyncSession, gpu: str, *, since: datetime | None = None,
                        currency: str = "RUB", min_count: int | None = None,
                        buckets: int | None = None, gpu_count: int | None = None,
                        providers: Collection[str] | None = None, billing: str | None = None,
                        region: str | None = None) -> list[HistorySeries]:
    """For a chart: per provider, the cheapest in-stock price per GPU-hour of this GPU after each change.

    Each configuration's history is a step function (a point whenever its price or availability changed); the
    provider's series is the minimum over its configurations at each change. With `since`, only the range is read
    (the `(gpu, at)` index) plus each configuration's last point before it, which sets the starting state; the
    series starts with the state at `since`. `buckets` aggregates each series to at most that many points over the
    range (the cheapest price of each bucket), so a chart's cost does not grow with the number of changes.
    `gpu_count`, `providers`, `billing` and `region` (a filter as /subscribe reads it) keep the configurations
    they hold, as a watch with them would.
    """
    column = PricePoint.price_per_gpu_hour_usd if currency.upper() == "USD" else PricePoint.price_per_gpu_hour_rub
    cols = (PricePoint.provider, PricePoint.offer_key, PricePoint.at, PricePoint.in_stock, column)
    where = [PricePoint.gpu == gpu]
    if min_count is not None:
        where.append(PricePoint.gpu_count >= min_count)
    if gpu_count is not None:
        where.append(PricePoint.gpu_count == gpu_count)
    if providers is not None:
        where.append(PricePoint.provider.in_(sorted(providers)))
    rows: list[Any] = []
    if since is not None:
        last_before = (select(func.max(PricePoint.id)).where(*where, PricePoint.at < since)
                       .group_by(PricePoint.offer_key))
        rows += (await session.execute(select(*cols).where(PricePoint.id.in_(last_before))
                                       .order_by(PricePoint.at, PricePoint.id))).all()
        where.append(PricePoint.at >= since)
    rows += (await session.execute(select(*cols).where(*where).order_by(PricePoint.at, PricePoint.id))).all()
    if billing is not None or region is not None:
        rows = [r for r in rows if _placed(r.offer_key, billing, region)]

    current: dict[tuple[str, bool], dict[str, float | None]] = {}
    series: dict[tuple[str, bool], list[HistoryPoint]] = {}
    for prov, key, at, in_stock, price in rows:
        # The offer key ends with its billing (core.offers.Offer.key): a spot price is not the on-demand price.
        group = (prov, key.endswith("|spot"))
        per_key = current.setdefault(group, {})
        per_key[key] = price if in_stock else None
        prices = [p for p in per_key.values() if p is not None]
        point = HistoryPoint(at=max(at, since) if since else at, price=min(prices) if prices else None)
        points = series.setdefault(group, [])
        if points and points[-1].at == point.at:
            points[-1] = point  # several changes at the same poll: the state after all of them
        elif not points or points[-1].price != point.price:
            points.append(point)
    if buckets:
        series = {p: _bucketed(pts, buckets) for p, pts in series.items()}
    return [HistorySeries(provider=p, points=pts, spot=spot) for (p, spot), pts in sorted(series.items())]


def _placed(key: str, billing: str | None, region: str | None) -> bool:
    location, billed = key_place(key)
    return (billing is None or billed == billing) and (region is None or region_matches(region, location))


def _bucketed(points: list[HistoryPoint], buckets: int) -> list[HistoryPoint]:
    """At most `buckets` points: the cheapest in-stock price of each equal slice of the range (None when nothing was
    in stock in it), and the last state so the line reaches the end."""
    if len(points) <= buckets:
        return points
    start, end = points[0].at, points[-1].at
    width = (end - start) / buckets
    out: list[HistoryPoint] = []
    slot_start, best, seen = start, None, False
    for p in points:
        while p.at >= slot_start + width and slot_start + width <= end:
            if seen:
                out.append(HistoryPoint(at=slot_start, price=best))
            slot_start, best, seen = slot_start + width, None, False
        seen = True
        if p.price is not None and (best is None or p.price < best):
            best = p.price
    if seen:
        out.append(HistoryPoint(at=slot_start, price=best))
    if out[-1].at != end:
        out.append(points[-1])
    return out


class RunView(BaseModel):
    provider: str
    status: str  # as recorded, after the shrink verdict: ok | suspect | failed
    error: str | None
    offer_count: int
    event_count: int


async def recorded_run(session: AsyncSession, provider: str, started_at: datetime) -> RunView | None:
    """How a poll was recorded (its verdict may differ from the scraper's: an abnormal shrink is suspect)."""
    row = await session.scalar(select(ScrapeRun).where(ScrapeRun.provider == provider,
                                                       ScrapeRun.started_at == started_at))
    if row is None:
        return None
    return RunView(provider=row.provider, status=row.status, error=row.error, offer_count=row.offer_count,
                   event_count=row.event_count)
