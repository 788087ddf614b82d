"""A card's price history for the Mini App's chart: spot and on-demand apart, with when it was in stock.

The same retained history /history draws (`price_history` rows: one per change of an offer's price or stock), read
over the range through the `(gpu, at)` index plus each offer's last row before it (its state at the start). Each
offer's billing kind comes from its current row. A series is the cheapest in-stock price per GPU-hour across
providers after each change, cut into a bounded number of buckets (the cheapest of each, and the share of it that
something was in stock), so the answer's size does not grow with the history. The availability figures of the
"availability intelligence" statistics (`storage.availability.card_stats`) come beside it.

The rows come through the database driver; cutting them into buckets (every change against every offer of the card
in the range: thousands of steps for a busy card over 30 days) runs in a thread, so the loop keeps answering.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from storage.availability import card_stats
from storage.offer_tables import CurrentOffer, PricePoint

RANGES = {"24h": timedelta(hours=24), "7d": timedelta(days=7), "30d": timedelta(days=30)}
BUCKETS = 96
KINDS = ("on_demand", "spot")


@dataclass
class _Bucket:
    low: float | None = None
    stocked: float = 0.0  # seconds of the bucket with something in stock


def _kind(billing: str | None) -> str:
    return "spot" if billing == "spot" else "on_demand"


async def card_history(session: AsyncSession, gpu: str, *, span: timedelta, currency: str,
                       provider: str | None = None, now: datetime | None = None,
                       buckets: int = BUCKETS) -> dict[str, Any]:
    """The card's history across providers, or at one `provider` (a cell of the matrix)."""
    now = now or datetime.now(UTC)
    since = now - span
    column = PricePoint.price_per_gpu_hour_usd if currency == "USD" else PricePoint.price_per_gpu_hour_rub
    cols = (PricePoint.offer_key, PricePoint.at, PricePoint.in_stock, column, PricePoint.provider)
    where = [PricePoint.gpu == gpu] + ([PricePoint.provider == provider] if provider else [])
    last_before = (select(func.max(PricePoint.id)).where(*where, PricePoint.at < since)
                   .group_by(PricePoint.offer_key))
    rows = list((await session.execute(select(*cols).where(PricePoint.id.in_(last_before))
                                       .order_by(PricePoint.at, PricePoint.id))).all())
    rows += (await session.execute(select(*cols).where(*where, PricePoint.at >= since)
                                   .order_by(PricePoint.at, PricePoint.id))).all()
    keys = sorted({r[0] for r in rows})
    billing: dict[str, str] = {}
    for i in range(0, len(keys), 500):
        q = select(CurrentOffer.key, CurrentOffer.billing).where(CurrentOffer.key.in_(keys[i:i + 500]))
        billing.update({k: b for k, b in (await session.execute(q)).all()})

    series, providers = await asyncio.to_thread(_series, rows, billing, since, now, span, buckets)
    stats = await card_stats(session, [gpu], None, currency=currency, days=max(1, round(span / timedelta(days=1))),
                             now=now)
    w = stats.window
    return {"gpu": gpu, "provider": provider, "currency": currency, "since": since.isoformat(),
            "until": now.isoformat(),
            "series": series, "providers": sorted(providers),
            "stats": {"share": w.share, "median_stay": w.median_stay, "appeared": w.appeared,
                      "price_min": w.price_min, "price_median": w.price_median, "enough": w.enough}}


def _series(rows: Sequence[Any], billing: dict[str, str], since: datetime, now: datetime, span: timedelta,
            buckets: int) -> tuple[dict[str, list[dict[str, Any]]], set[str]]:
    """The rows (offer key, at, in stock, price, provider; by time) cut into `buckets` per billing kind: the cheapest
    price in stock in each and the share of it something was in stock; and the providers that had one in stock."""
    width = span / buckets
    slots = {kind: [_Bucket() for _ in range(buckets)] for kind in KINDS}
    state: dict[str, dict[str, float | None]] = {kind: {} for kind in KINDS}  # kind -> offer -> price if in stock
    providers: set[str] = set()

    def lowest(kind: str) -> float | None:
        live = [p for p in state[kind].values() if p is not None]
        return min(live) if live else None

    def fill(kind: str, start: datetime, end: datetime) -> None:
        """The state of `kind` held from `start` to `end`: into the buckets it overlaps."""
        price, stocked = lowest(kind), any(True for p in state[kind].values() if p is not None)
        start = max(start, since)
        if end <= start:
            return
        first = int((start - since) / width)
        last = min(buckets - 1, int((end - since) / width))
        for b in range(first, last + 1):
            lo, hi = since + width * b, since + width * (b + 1)
            overlap = (min(hi, end) - max(lo, start)).total_seconds()
            if overlap <= 0:
                continue
            slot = slots[kind][b]
            if stocked:
                slot.stocked += overlap
                if price is not None and (slot.low is None or price < slot.low):
                    slot.low = price

    previous = {kind: since for kind in KINDS}
    started = {kind: False for kind in KINDS}
    for key, at, in_stock, price, provider in rows:
        kind = _kind(billing.get(key))
        at = at if at.tzinfo else at.replace(tzinfo=UTC)
        if started[kind]:
            fill(kind, previous[kind], at)
        started[kind] = True
        previous[kind] = max(at, since)
        state[kind][key] = price if in_stock else None
        if in_stock:
            providers.add(provider)
    for kind in KINDS:
        if started[kind]:
            fill(kind, previous[kind], now)

    seconds = width.total_seconds()
    series = {}
    for kind in KINDS:
        if not started[kind]:
            continue
        series[kind] = [{"at": (since + width * b).isoformat(), "price": s.low,
                         "in_stock": round(s.stocked / seconds, 3)} for b, s in enumerate(slots[kind])]
    return series, providers
