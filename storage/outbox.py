"""The alert outbox: writing it inside the ingest transaction, and the state moves the sender makes.

`OutboxWriter` is the `on_events` hook of `storage.ingest.record_poll`: it keeps the alerting events (appeared,
back in stock, price drop), finds the active subscriptions they reach through `core.matching.WatchIndex`, applies
the cooldown, and inserts one outbox row per (subscription, offer key, event) — in the transaction that records
the events, so an event and its alerts are committed together or not at all.

Delivery (see `bot.sender`) moves rows pending -> claimed -> sent through `alert_deliveries`, one row per Telegram
message, written with its final text before the message is sent.

Several senders (one per replica) share the outbox: `due_rows(lock=True)` skips rows another sender is claiming
(PostgreSQL's FOR UPDATE SKIP LOCKED), `create_deliveries` verifies every row it claims was still pending (the
guard on SQLite, where the read is not locked) and each delivery carries its sender's claim (`claimed_by`,
`claim_expires_at` by the database's clock), renewed by `renew_claims` and taken over by `take_over_deliveries`
once it lapses.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from sqlalchemy import Table, bindparam, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from core.changes import EventKind, OfferEvent
from core.matching import Target, Watch, WatchIndex, alerting_events, fit_reason_data, watch_from_row
from storage.alert_tables import AlertCooldown, AlertDelivery, AlertOutbox, DeliveryState, OutboxState
from storage.lease import db_now
from storage.upsert import upsert_insert
from storage.user_tables import Subscription, User

log = logging.getLogger(__name__)

DEFAULT_COOLDOWN = timedelta(hours=3)
REARM_DROP = 0.05  # within the cooldown, a price at least 5 % under the last alerted one still alerts
INDEX_TTL = 300.0  # seconds: rebuild the subscription index at least this often even if nothing seems changed
_CHUNK = 500  # rows per multi-row INSERT / IN list


@dataclass(frozen=True)
class AlertPolicy:
    cooldown: timedelta = DEFAULT_COOLDOWN
    min_drop: float = 0.0  # price drops smaller than this (0.05 = 5 %) do not alert; detection has its own threshold
    rearm_drop: float = REARM_DROP


@dataclass(frozen=True, slots=True)
class SubMeta:
    """What an outbox row needs about a matched subscription besides its watch."""

    user_id: int
    kind: str
    query_text: str


@dataclass
class _Cached:
    index: WatchIndex
    meta: dict[int, SubMeta]
    fingerprint: tuple[Any, ...]
    built_at: float




def dedup_key(subscription_id: int, event: OfferEvent) -> str:
    # The stored event id makes it unique per poll; an event that was never stored falls back to its time.
    ident = str(event.id) if event.id is not None else (event.at.isoformat() if event.at else "")
    return f"{subscription_id}|{event.key}|{event.kind.value}|{ident}"


def alert_payload(event: OfferEvent, watch: Watch, meta: SubMeta, target: Target) -> dict[str, Any]:
    """Everything the message will say, frozen now: the offer, both normalised prices, why it fits."""
    return {
        "kind": event.kind.value,
        "offer": event.offer.model_dump(mode="json"),
        "currency": event.currency,
        "old_price": event.old_price,
        "new_price": event.new_price,
        "price_rub": target.price_rub,
        "price_usd": target.price_usd,
        "old_price_rub": event.old_price_rub,
        "old_price_usd": event.old_price_usd,
        "sub_kind": meta.kind,
        "query_text": meta.query_text,
        "max_price": watch.max_price,
        "max_price_currency": watch.currency,
        **fit_reason_data(watch, target),
    }


class OutboxWriter:
    """The `on_events` hook: events -> matched active subscriptions -> outbox rows (same transaction)."""

    def __init__(self, policy: AlertPolicy | None = None, *, wakeup: Callable[[], None] | None = None,
                 index_ttl: float = INDEX_TTL) -> None:
        self.policy = policy or AlertPolicy()
        self.wakeup = wakeup  # told after the transaction commits, so the sender looks at once
        self.index_ttl = index_ttl
        self._cached: _Cached | None = None
        self.stats: dict[str, int] = {"queued": 0, "cooled_down": 0}

    async def __call__(self, session: AsyncSession, events: list[OfferEvent]) -> None:
        await self.enqueue(session, events)

    # ---------------------------------------------------------------- the subscription index
    async def _fingerprint(self, session: AsyncSession) -> tuple[Any, ...]:
        """Cheap summary of the active subscription set: any add, delete, pause, resume or block changes it."""
        row = (await session.execute(
            select(func.count(Subscription.id), func.max(Subscription.id), func.sum(Subscription.id))
            .join(User, User.id == Subscription.user_id)
            .where(Subscription.paused.is_(False), User.active.is_(True)))).one()
        return tuple(row)

    async def index(self, session: AsyncSession) -> tuple[WatchIndex, dict[int, SubMeta]]:
        fingerprint = await self._fingerprint(session)
        cached = self._cached
        if cached is not None and cached.fingerprint == fingerprint \
                and time.monotonic() - cached.built_at < self.index_ttl:
            return cached.index, cached.meta
        rows = (await session.execute(
            select(Subscription.id, Subscription.user_id, Subscription.kind, Subscription.query_text,
                   Subscription.gpu_ids, Subscription.min_gib_by_count, Subscription.max_price,
                   Subscription.price_currency, Subscription.providers, Subscription.gpu_count,
                   Subscription.billing, Subscription.region)
            .join(User, User.id == Subscription.user_id)
            .where(Subscription.paused.is_(False), User.active.is_(True)))).all()
        watches: list[Watch] = []
        meta: dict[int, SubMeta] = {}
        for r in rows:
            try:
                watches.append(watch_from_row(
                    id=r.id, gpu_ids=r.gpu_ids, min_gib_by_count=r.min_gib_by_count, max_price=r.max_price,
                    price_currency=r.price_currency, providers=r.providers, gpu_count=r.gpu_count,
                    billing=r.billing, region=r.region))
            except (ValueError, TypeError):  # one malformed row must not silence everyone else's alerts
                log.warning("subscription %s cannot be matched (bad stored filters); skipped", r.id)
                continue
            meta[r.id] = SubMeta(r.user_id, r.kind, r.query_text)
        index = WatchIndex.build(watches)
        self._cached = _Cached(index, meta, fingerprint, time.monotonic())
        return index, meta

    def forget_index(self) -> None:
        self._cached = None

    # ---------------------------------------------------------------- writing the outbox
    async def enqueue(self, session: AsyncSession, events: Sequence[OfferEvent], *,
                      now: datetime | None = None) -> int:
        """Queue the alerts these events deserve; returns how many outbox rows were written."""
        now = now or datetime.now(UTC)
        wanted = alerting_events(events, min_drop=self.policy.min_drop)
        if not wanted:
            return 0
        index, meta = await self.index(session)
        pairs: list[tuple[int, OfferEvent, Target]] = []
        for event in wanted:
            target = Target.from_event(event)
            pairs.extend((sub_id, event, target) for sub_id in index.find(target) if sub_id in meta)
        if not pairs:
            return 0
        cooldowns = await self._cooldowns(session, {e.key for _, e, _ in pairs}, {s for s, _, _ in pairs})
        outbox: list[dict[str, Any]] = []
        cooled: dict[tuple[int, str], dict[str, Any]] = {}
        for sub_id, event, target in pairs:
            ck = (sub_id, event.key)
            if ck in cooled or self._cooling(cooldowns.get(ck), event, now):
                self.stats["cooled_down"] += ck not in cooled
                continue
            m, w = meta[sub_id], index.watch(sub_id)
            outbox.append({"dedup_key": dedup_key(sub_id, event), "subscription_id": sub_id, "user_id": m.user_id,
                           "offer_key": event.key, "event_kind": event.kind.value, "event_id": event.id,
                           "payload": alert_payload(event, w, m, target), "state": OutboxState.PENDING,
                           "not_before": now, "created_at": now})
            cooled[ck] = {"subscription_id": sub_id, "offer_key": event.key, "last_alert_at": now,
                          "last_price": event.new_price, "last_kind": event.kind.value}
        for chunk in _chunks(outbox):
            await session.execute(upsert_insert(session, AlertOutbox).values(chunk)
                                  .on_conflict_do_nothing(index_elements=["dedup_key"]))
        for chunk in _chunks(list(cooled.values())):
            stmt = upsert_insert(session, AlertCooldown).values(chunk)
            await session.execute(stmt.on_conflict_do_update(
                index_elements=["subscription_id", "offer_key"],
                set_={"last_alert_at": stmt.excluded.last_alert_at, "last_price": stmt.excluded.last_price,
                      "last_kind": stmt.excluded.last_kind}))
        self.stats["queued"] += len(outbox)
        if outbox and self.wakeup is not None:
            self._wake_after_commit(session)
        return len(outbox)

    def _cooling(self, last: AlertCooldown | None, event: OfferEvent, now: datetime) -> bool:
        """True when this alert would repeat one sent about the same offer to the same subscription too recently.
        A price well below the last alerted one is news even then (the cooldown is against flapping stock)."""
        if last is None or now - last.last_alert_at >= self.policy.cooldown:
            return False
        if event.kind is EventKind.PRICE_DROP and last.last_price and event.new_price is not None:
            return event.new_price > last.last_price * (1 - self.policy.rearm_drop)
        return True

    async def _cooldowns(self, session: AsyncSession, keys: set[str],
                         subs: set[int]) -> dict[tuple[int, str], AlertCooldown]:
        out: dict[tuple[int, str], AlertCooldown] = {}
        for chunk in _chunks(sorted(keys)):
            for row in (await session.scalars(select(AlertCooldown).where(AlertCooldown.offer_key.in_(chunk)))):
                if row.subscription_id in subs:
                    out[(row.subscription_id, row.offer_key)] = row
        return out

    def _wake_after_commit(self, session: AsyncSession) -> None:
        from sqlalchemy import event as sa_event

        wakeup = self.wakeup
        assert wakeup is not None

        def _after_commit(_session: Any) -> None:
            wakeup()

        sync = session.sync_session
        if not sa_event.contains(sync, "after_commit", _after_commit):
            sa_event.listen(sync, "after_commit", _after_commit, once=True)


def _chunks(items: Sequence[Any], size: int = _CHUNK) -> Iterable[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


# -------------------------------------------------------------------- the sender's moves
@dataclass
class DueRow:
    """A pending outbox row with what the sender needs about its user."""

    id: int
    user_id: int
    subscription_id: int
    payload: dict[str, Any]
    created_at: datetime
    chat_id: int
    lang: str
    currency: str
    grouping: bool
    active: bool
    quiet_start: int | None
    quiet_end: int | None
    tz_offset_minutes: int


async def due_rows(session: AsyncSession, now: datetime, limit: int = 1000, *, lock: bool = False) -> list[DueRow]:
    """Pending rows whose time has come. `lock` (a claim): on PostgreSQL the rows are locked until the caller's
    transaction ends and rows another sender is claiming are skipped, so concurrent senders split the outbox."""
    # The chat is the subscription's (its owner's private chat unless they chose a group), never the user's.
    stmt = (select(AlertOutbox.id, AlertOutbox.user_id, AlertOutbox.subscription_id, AlertOutbox.payload,
                   AlertOutbox.created_at, Subscription.chat_id, User.lang, User.currency, User.grouping,
                   User.active, User.quiet_start, User.quiet_end, User.tz_offset_minutes)
            .join(User, User.id == AlertOutbox.user_id)
            .join(Subscription, Subscription.id == AlertOutbox.subscription_id)
            .where(AlertOutbox.state == OutboxState.PENDING, AlertOutbox.not_before <= now)
            .order_by(AlertOutbox.id).limit(limit))
    if lock and session.get_bind().dialect.name == "postgresql":
        stmt = stmt.with_for_update(skip_locked=True, of=AlertOutbox)  # the user rows stay unlocked
    return [DueRow(*r) for r in (await session.execute(stmt)).all()]


async def hold_rows(session: AsyncSession, ids: Sequence[int], until: datetime) -> None:
    """Quiet hours: the rows wait (still pending) until `until`."""
    for chunk in _chunks(list(ids)):
        await session.execute(update(AlertOutbox).where(AlertOutbox.id.in_(chunk)).values(not_before=until))


async def finish_rows(session: AsyncSession, ids: Sequence[int], state: str, reason: str | None,
                      now: datetime) -> None:
    for chunk in _chunks(list(ids)):
        await session.execute(update(AlertOutbox).where(AlertOutbox.id.in_(chunk))
                              .values(state=state, reason=reason, done_at=now))


@dataclass(frozen=True)
class PlannedDelivery:
    """One Telegram message to be: who gets it, its final text and buttons, and the outbox rows it carries."""

    user_id: int
    chat_id: int
    text: str
    reply_markup: dict[str, Any] | None
    row_ids: tuple[int, ...]


class ClaimConflict(RuntimeError):
    """Another sender claimed some of these rows first: roll the transaction back and look again."""


async def create_deliveries(session: AsyncSession, planned: Sequence[PlannedDelivery], now: datetime, *,
                            owner: str | None = None, claim_ttl: float = 30.0) -> list[int]:
    """Write the deliveries with their final text and claim their outbox rows, in the caller's transaction
    (a few statements for the whole batch). Returns the new delivery ids, in the order given. `owner` claims the
    deliveries for that sender for `claim_ttl` seconds. Raises ClaimConflict when a row was no longer pending."""
    if not planned:
        return []
    ids = list((await session.scalars(
        insert(AlertDelivery).returning(AlertDelivery.id, sort_by_parameter_order=True),
        [{"user_id": p.user_id, "chat_id": p.chat_id, "text": p.text, "reply_markup": p.reply_markup,
          "state": DeliveryState.QUEUED, "attempts": 0, "not_before": now, "created_at": now} for p in planned],
    )).all())
    table = cast(Table, AlertOutbox.__table__)
    claims = [{"rid": rid, "did": did} for p, did in zip(planned, ids, strict=True) for rid in p.row_ids]
    await session.execute(
        update(table).where(table.c.id == bindparam("rid"), table.c.state == OutboxState.PENDING)
        .values(state=OutboxState.CLAIMED, delivery_id=bindparam("did")), claims)
    # Did every row get claimed? (executemany row counts are not reliable on every driver, so count.) A row another
    # sender claimed since we read it would otherwise go out twice, once in its delivery and once in ours.
    claimed = 0
    for chunk in _chunks(ids):
        claimed += int((await session.execute(
            select(func.count()).select_from(AlertOutbox).where(AlertOutbox.delivery_id.in_(chunk)))).scalar_one())
    if claimed != len(claims):
        raise ClaimConflict(f"{len(claims) - claimed} of {len(claims)} outbox rows were claimed by another sender")
    if owner is not None:
        expires = db_now(session.get_bind().dialect.name) + claim_ttl
        for chunk in _chunks(ids):
            await session.execute(update(AlertDelivery).where(AlertDelivery.id.in_(chunk))
                                  .values(claimed_by=owner, claim_expires_at=expires))
    return ids


UNFINISHED = (DeliveryState.QUEUED, DeliveryState.SENDING)


async def renew_claims(session: AsyncSession, owner: str, claim_ttl: float) -> set[int]:
    """Extend `owner`'s claims on its unfinished deliveries; returns the ids still claimed by it (one taken over by
    another sender meanwhile is missing: its holder must not send it)."""
    expires = db_now(session.get_bind().dialect.name) + claim_ttl
    result = await session.execute(
        update(AlertDelivery).where(AlertDelivery.claimed_by == owner, AlertDelivery.state.in_(UNFINISHED))
        .values(claim_expires_at=expires).returning(AlertDelivery.id))
    return set(result.scalars().all())


async def claim_owners(session: AsyncSession, exclude: str) -> list[str]:
    """The other senders holding unfinished deliveries (to recognise the dead among them)."""
    return list(o for o in (await session.scalars(
        select(AlertDelivery.claimed_by).distinct()
        .where(AlertDelivery.state.in_(UNFINISHED), AlertDelivery.claimed_by.is_not(None),
               AlertDelivery.claimed_by != exclude))).all() if o is not None)


async def take_over_deliveries(session: AsyncSession, owner: str, claim_ttl: float,
                               dead_owners: Sequence[str] = ()) -> list[int]:
    """Claim for `owner` the unfinished deliveries nobody holds: unclaimed, claim expired, or held by a sender known
    to be dead. One UPDATE: on PostgreSQL a concurrent taker waits for the row and then sees it is taken."""
    dialect = session.get_bind().dialect.name
    now = db_now(dialect)
    free = or_(AlertDelivery.claimed_by.is_(None), AlertDelivery.claim_expires_at < now)
    if dead_owners:
        free = or_(free, AlertDelivery.claimed_by.in_(list(dead_owners)))
    result = await session.execute(
        update(AlertDelivery).where(AlertDelivery.state.in_(UNFINISHED), free)
        .values(claimed_by=owner, claim_expires_at=now + claim_ttl).returning(AlertDelivery.id))
    return sorted(result.scalars().all())


async def release_claims(session: AsyncSession, owner: str) -> None:
    """A sender stopping cleanly: its unsent deliveries may be taken by another sender at once."""
    await session.execute(
        update(AlertDelivery).where(AlertDelivery.claimed_by == owner, AlertDelivery.state.in_(UNFINISHED))
        .values(claim_expires_at=0.0))


async def unfinished_deliveries(session: AsyncSession, limit: int = 10_000, *, retried_only: bool = False,
                                owner: str | None = None) -> list[AlertDelivery]:
    """Queued or sending deliveries (after a restart: the ones a killed process had claimed), oldest first.
    `retried_only`: just those already attempted (put back after a network error). `owner`: only those claimed by
    that sender (with several senders, another's unfinished deliveries may be in flight right now)."""
    stmt = select(AlertDelivery).where(AlertDelivery.state.in_(UNFINISHED))
    if retried_only:
        stmt = stmt.where(AlertDelivery.attempts > 0)
    if owner is not None:
        stmt = stmt.where(AlertDelivery.claimed_by == owner)
    return list((await session.scalars(stmt.order_by(AlertDelivery.id).limit(limit))).all())


async def mark_sending(session: AsyncSession, delivery_id: int, now: datetime) -> None:
    await session.execute(update(AlertDelivery).where(AlertDelivery.id == delivery_id).values(
        state=DeliveryState.SENDING, sending_at=now, attempts=AlertDelivery.attempts + 1))


async def mark_sent(session: AsyncSession, sent: Sequence[tuple[int, int]], now: datetime) -> None:
    """(delivery id, Telegram message id) pairs: the deliveries and their outbox rows are done."""
    table = cast(Table, AlertDelivery.__table__)
    await session.execute(
        update(table).where(table.c.id == bindparam("did")).values(
            state=DeliveryState.SENT, telegram_message_id=bindparam("mid"), sent_at=now, error=None),
        [{"did": d, "mid": m} for d, m in sent])
    for chunk in _chunks([d for d, _ in sent]):
        await session.execute(update(AlertOutbox).where(AlertOutbox.delivery_id.in_(chunk)).values(
            state=OutboxState.SENT, done_at=now))


async def mark_failed(session: AsyncSession, delivery_id: int, error: str, now: datetime, *,
                      row_state: str = OutboxState.FAILED) -> None:
    await session.execute(update(AlertDelivery).where(AlertDelivery.id == delivery_id).values(
        state=DeliveryState.FAILED, error=error[:255]))
    await session.execute(update(AlertOutbox).where(AlertOutbox.delivery_id == delivery_id).values(
        state=row_state, reason=error[:255], done_at=now))


async def requeue_delivery(session: AsyncSession, delivery_id: int, not_before: datetime, error: str,
                           attempts: int) -> None:
    """Back off after a network error: the same message, later (kept across restarts)."""
    await session.execute(update(AlertDelivery).where(AlertDelivery.id == delivery_id).values(
        state=DeliveryState.QUEUED, not_before=not_before, error=error[:255], attempts=max(1, attempts)))


async def deactivate_user(session: AsyncSession, user_id: int, reason: str, now: datetime) -> None:
    """The chat blocked the bot: no more alerts to it; what was waiting is dropped, not kept for ever."""
    await session.execute(update(User).where(User.id == user_id).values(active=False))
    await session.execute(update(AlertDelivery).where(
        AlertDelivery.user_id == user_id,
        AlertDelivery.state.in_((DeliveryState.QUEUED, DeliveryState.SENDING))).values(
        state=DeliveryState.FAILED, error=reason[:255]))
    await session.execute(update(AlertOutbox).where(
        AlertOutbox.user_id == user_id,
        AlertOutbox.state.in_((OutboxState.PENDING, OutboxState.CLAIMED))).values(
        state=OutboxState.DROPPED, reason=reason[:255], done_at=now))


async def migrate_chat(session: AsyncSession, user_id: int, old_chat_id: int, new_chat_id: int) -> None:
    """A group became a supergroup: alerts follow it to its new id, from now on and for what is queued."""
    await session.execute(update(User).where(User.id == user_id, User.chat_id == old_chat_id)
                          .values(chat_id=new_chat_id))
    await session.execute(update(Subscription).where(Subscription.chat_id == old_chat_id)
                          .values(chat_id=new_chat_id))
    await session.execute(update(AlertDelivery).where(
        AlertDelivery.chat_id == old_chat_id,
        AlertDelivery.state.in_((DeliveryState.QUEUED, DeliveryState.SENDING))).values(chat_id=new_chat_id))


async def group_chat_gone(session: AsyncSession, user_id: int, chat_id: int) -> None:
    """The group a user chose for some subscriptions' alerts no longer takes the bot's messages (it was removed, or
    the group deleted): those subscriptions, and their queued deliveries, go back to the user's private chat. Other
    users' subscriptions to the same group follow when their own deliveries meet the same refusal."""
    await session.execute(update(Subscription).where(Subscription.user_id == user_id, Subscription.chat_id == chat_id)
                          .values(chat_id=user_id))
    await session.execute(update(AlertDelivery).where(
        AlertDelivery.user_id == user_id, AlertDelivery.chat_id == chat_id,
        AlertDelivery.state.in_((DeliveryState.QUEUED, DeliveryState.SENDING))).values(chat_id=user_id))


async def outbox_counts(session: AsyncSession) -> dict[str, int]:
    rows = (await session.execute(select(AlertOutbox.state, func.count()).group_by(AlertOutbox.state))).all()
    return {state: n for state, n in rows}
