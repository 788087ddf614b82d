"""Shared set-up for the alert tests (users, subscriptions, offers, events on a real migrated database).

No tests here; the module name only keeps it among the alert engineer's files."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from core.changes import EventKind, OfferEvent
from core.offers import Billing, Offer, Period, Rates
from storage.alert_tables import AlertDelivery, AlertEventRow
from storage.outbox import FanOut, OutboxWriter
from storage.user_tables import Subscription, User

RATES = Rates(rub_per={"USD": 80.0, "EUR": 90.0})
T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
NEEDS_13B_LORA = {"1": 38.0, "2": 24.0, "4": 18.0, "8": 15.0}


async def add_user(sm: async_sessionmaker[AsyncSession], uid: int, *, lang: str = "en", currency: str = "USD",
                   grouping: bool = True, quiet: tuple[int, int] | None = None, tz: int = 0,
                   chat_id: int | None = None) -> None:
    async with sm() as s, s.begin():
        s.add(User(id=uid, chat_id=uid if chat_id is None else chat_id, lang=lang, lang_chosen=True,
                   currency=currency, quiet_start=quiet[0] if quiet else None, quiet_end=quiet[1] if quiet else None,
                   tz_offset_minutes=tz, grouping=grouping, active=True, created_at=T0))


async def add_sub(sm: async_sessionmaker[AsyncSession], uid: int, query: str = "H100", *, kind: str = "gpu",
                  gpu_ids: list[str] | None = None, min_gib: dict[str, float] | None = None,
                  max_price: float | None = None, currency: str = "USD", providers: list[str] | None = None,
                  gpu_count: int | None = None, billing: str | None = None, region: str | None = None,
                  paused: bool = False, created_at: datetime = T0, price_basis: str = "total") -> int:
    if kind == "gpu" and gpu_ids is None:
        gpu_ids = ["h100-sxm"]
    async with sm() as s, s.begin():
        user = await s.get(User, uid)
        assert user is not None
        sub = Subscription(user_id=uid, chat_id=user.chat_id, kind=kind, query_text=query, gpu_ids=gpu_ids,
                           workload_json=None, min_gib_by_count=min_gib, max_price=max_price,
                           price_currency=currency, price_basis=price_basis, providers=providers,
                           gpu_count=gpu_count, billing=billing, region=region, paused=paused, created_at=created_at)
        s.add(sub)
        await s.flush()
        return sub.id


def offer(provider: str = "runpod", sku: str = "h100", gpu: str | None = "h100-sxm", count: int = 1,
          price: float = 2.49, currency: str = "USD", *, period: Period = Period.HOUR, location: str = "us",
          in_stock: bool = True, name: str = "H100 80GB HBM3") -> Offer:
    return Offer(provider=provider, sku=sku, gpu=gpu, gpu_name=name, gpu_count=count, location=location,
                 billing=Billing.MONTHLY if period is Period.MONTH else Billing.HOURLY, price=price,
                 currency=currency, period=period, in_stock=in_stock, url=f"https://{provider}.example/{sku}")


_ids = iter(range(1, 10**9))


def event(o: Offer, kind: EventKind = EventKind.APPEARED, *, old: float | None = None,
          at: datetime = T0, id: int | None = None) -> OfferEvent:
    new = o.price_per_gpu_hour
    usd = RATES.convert(new, o.currency, "USD")
    rub = RATES.convert(new, o.currency, "RUB")
    return OfferEvent(kind=kind, key=o.key, offer=o, old_price=old, new_price=new, currency=o.currency,
                      new_price_usd=round(usd, 4), new_price_rub=round(rub, 4),
                      old_price_usd=None if old is None else round(RATES.convert(old, o.currency, "USD"), 4),
                      old_price_rub=None if old is None else round(RATES.convert(old, o.currency, "RUB"), 4),
                      at=at, id=next(_ids) if id is None else id)


async def enqueue(sm: async_sessionmaker[AsyncSession], writer: OutboxWriter, events: list[OfferEvent],
                  now: datetime = T0) -> int:
    async with sm() as s, s.begin():
        return await writer.enqueue(s, events, now=now)


async def queued(sm: async_sessionmaker[AsyncSession]) -> list[AlertEventRow]:
    async with sm() as s:
        return list((await s.scalars(select(AlertEventRow).order_by(AlertEventRow.id))).all())


async def unheard(sm: async_sessionmaker[AsyncSession], now: datetime | None = None) -> list[Any]:
    """What each user would be told next, as a fresh sender sees it (reads only): one entry per (user, offer, matched
    subscription): (user id, subscription id, offer key, event kind), sorted. Active users only."""
    fanout = FanOut()
    async with sm() as s:
        await fanout.refresh(s, now or datetime.now(UTC))
        plans = await fanout.plans(s, list(fanout.pending))
    return sorted((p.user_id, r.subscription_id, item.event.offer.key, item.event.kind.value)
                  for p in plans if p.active for items in p.by_chat.values() for item in items for r in item.reasons)


async def take(sm: async_sessionmaker[AsyncSession], fanout: FanOut, now: datetime) -> list[Any]:
    """What a sender does with `fanout`, minus Telegram: plan every user with unheard events and move their cursors
    (committed). Returns the (user, subscription, offer key, kind) entries planned."""
    from storage.outbox import advance_cursors

    async with sm() as s, s.begin():
        await fanout.refresh(s, now)
        plans = await fanout.plans(s, list(fanout.pending))
        await advance_cursors(s, [(p.user_id, p.cursor, p.upto) for p in plans])
        await fanout.record_owed(s, plans, now)
    for p in plans:
        fanout.planned(p)
    return sorted((p.user_id, r.subscription_id, item.event.offer.key, item.event.kind.value)
                  for p in plans if p.active for items in p.by_chat.values() for item in items for r in item.reasons)


async def all_heard(sm: async_sessionmaker[AsyncSession], now: datetime | None = None) -> bool:
    """Every queued event planned for everyone it reaches, and every message written is finished."""
    if await unheard(sm, now):
        return False
    return all(d.state in ("sent", "failed") for d in await deliveries(sm))


async def deliveries(sm: async_sessionmaker[AsyncSession]) -> list[AlertDelivery]:
    async with sm() as s:
        return list((await s.scalars(select(AlertDelivery).order_by(AlertDelivery.id))).all())


async def user(sm: async_sessionmaker[AsyncSession], uid: int) -> User:
    async with sm() as s:
        u = await s.get(User, uid)
        assert u is not None
        return u


def pairs(rows: list[Any]) -> list[tuple[int, str, str]]:
    """(subscription, offer key, event kind) of `unheard(...)` entries."""
    return sorted((sub, key, kind) for _, sub, key, kind in rows)
