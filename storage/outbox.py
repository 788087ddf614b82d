"""The alert queue: events written inside the ingest transaction, and the moves the sender makes.

Work per poll is proportional to its alerting events, never to the subscribers they reach:
- `OutboxWriter` is the `on_events` hook of `storage.ingest.record_poll`. It keeps the alerting events (appeared,
  back in stock, price drop), applies the per-offer cooldown (`core.alerts`), and writes one `alert_events` row per
  event plus the offer's cooldown state — in the transaction that records the events, so an event and its alert
  are committed together or not at all. An offer alerted on lately that sold out or got dearer gets a withdrawal
  row instead (`event_kind` sold_out / price_rise): the senders forget its alerts not yet heard.
- `FanOut` (used by `bot.sender`) matches the queued events against the active subscriptions in memory
  (`core.matching.WatchIndex`), keeps for every user the events they have not heard, and hands the sender one
  user's unheard events at a time, each offer once with every subscription it matches. The sender writes that
  user's messages (`alert_deliveries`, final text) and advances the user's `alert_cursor` past those events in one
  transaction (`commit_plans`): every event reaches each user exactly once, and a user who is busy, in quiet hours
  or behind a backlog gets one digest instead of a message per poll.

Delivery moves deliveries queued -> sending -> sent. Several senders (one per replica) share the queue: the cursor
is advanced with a compare-and-set (`ClaimConflict` when another sender planned that user first) and each
delivery carries its sender's claim (`claimed_by`, `claim_expires_at` by the database's clock), renewed by
`renew_claims` and taken over by `take_over_deliveries` once it lapses.
"""

from __future__ import annotations

import asyncio
import logging
import time
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import Table, and_, bindparam, case, delete, func, insert, or_, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from core.alerts import (
    AlertEvent,
    AlertPolicy,
    CoolingAlert,
    LastAlert,
    Reason,
    assess,
    next_last_alert,
    suppressed,
)
from core.changes import EventKind, OfferEvent
from core.matching import (
    WITHDRAWING_KINDS,
    Target,
    TargetColumns,
    Watch,
    WatchIndex,
    alerting_events,
    fit_reason_data,
    tight_at,
    watch_from_row,
)
from core.redaction import redact
from storage.alert_tables import (
    ALERT_ROW_KINDS,
    WITHDRAWAL_ROW_KINDS,
    AlertDelivery,
    AlertEventRow,
    AlertOwed,
    DeliveryState,
    OfferAlertState,
)
from storage.lease import db_now
from storage.sender_shares import UserShare
from storage.upsert import upsert_insert
from storage.user_tables import Subscription, SubscriptionChange, User

if TYPE_CHECKING:
    import numpy as np

__all__ = ["AlertPolicy", "FanOut", "OutboxWriter"]

log = logging.getLogger(__name__)

# Seconds between looks at the subscription change log while no new event is queued (one indexed read of the
# rows past the last one applied). Before new events are matched it is always looked at, so matching never uses a
# stale set; a message is written from the subscriptions as stored when it is planned.
INDEX_CHECK = 1.0
CHANGES_SETTLE = 60.0  # seconds: change-log rows younger than this are read again (late PostgreSQL commits)
REBUILD_OVER = 5_000  # users changed since the last look above which one rebuild is cheaper than reloading each
_GOLDEN = 0.6180339887498949  # the starting point's step per look, as a share of the users reached
_BUILD_SLICE = 5_000  # subscriptions read per slice while the index is built
MAX_EVENT_AGE = timedelta(hours=26)  # events older than this are never planned (quiet hours last < 24 h)
_CHUNK = 500  # rows per IN list
# Typecode of the arrays of unheard event ids (`FanOut.pending`): 4 bytes an id, alert_events.id being an `Integer`
# column (PostgreSQL's int4, below 2**31). The pending (user, event) pairs are the sender's one structure that grows
# with the backlog: at 50,000 users and 100,000 subscriptions bench/soak.py had a million after 7 minutes (a 10 s
# poll reaches ~20,000 users; Telegram's 30 messages a second serve each of them every ~11 minutes), 8 bytes each in
# lists of shared ints, 4 in these arrays.
_ID = "I"
# Unheard ids of forgotten events are dropped from the users' arrays once this many pairs (and as many as the last
# compaction kept) were filed since it: a few polls' worth at 50,000 users, so its ~0.3 s a pass stays rare.
COMPACT_PAIRS = 4_000_000
_COMPACT_SLICE = 2_000  # users per slice of a compaction
# Unheard event ids listed per user at most. A user with more stops being listed: their next message is worked out
# from the events themselves (core.matching.TargetColumns: every event since their cursor that one of their
# subscriptions matches), and they keep one id, their place in line. Without the cap the lists grew with a free-rate
# backlog by ~2 million pairs a poll at 50,000 users (bench/soak.py: the sender child 217 -> 331 MB in 6 minutes),
# bounded only by the offers each user's subscriptions reach. 64 is more than a poll gives most users (47 each when
# one poll reached 47,000 of them), so a paid broadcast drains before anyone is worked out that way.
PENDING_CAP = 64
# Users remembered, over all offers, as owed a withdrawn alert they were planned past (`FanOut._owed`): a user's
# entry is ~70 bytes, so ~7 MB at the cap. Past it the offers first owed longest ago go first (an offer that comes
# back inside its cooldown mostly does so soon after it went); their users are then taken to have heard the alert.
# The same users are stored (`alert_owed`, written with the plans' cursor moves): a restarted sender, or one whose
# share of the users changed, reads them back (the newest OWED_CAP).
OWED_CAP = 100_000
PARSED_EVENTS = 1_024  # held events kept parsed: two polls' alerting events at 50,000 users (~13.7 KB each)
_ID_NUMPY = "uint32"  # the same ids as NumPy writes them (matching hands the pairs over as arrays)
assert array(_ID).itemsize == 4
_RISE = EventKind.PRICE_RISE.value
_EVENTS_LOCK = 0x6770_7261  # PostgreSQL advisory lock: queued event ids become visible in id order




def _distinct(values: np.ndarray) -> list[int]:
    import numpy as np

    return list(np.unique(values).tolist())


def dedup_key(event: OfferEvent) -> str:
    # The stored event id makes it unique per poll; an event that was never stored falls back to its time.
    ident = str(event.id) if event.id is not None else (event.at.isoformat() if event.at else "")
    return f"{event.key}|{event.kind.value}|{ident}"


# The cooldown's memory of an offer (core.alerts.LastAlert), as `alert_offer_state` columns besides the key.
_STATE_COLUMNS = ("last_alert_at", "last_price", "last_price_rub", "last_price_usd", "cooling_alerts")


def _queued_row(event: OfferEvent, now: datetime, cooling: LastAlert | None = None) -> dict[str, Any]:
    """An `alert_events` row: an alert, or (a sold-out or price-rise event) a withdrawal."""
    return {"dedup_key": dedup_key(event), "offer_key": event.key, "event_kind": event.kind.value,
            "event_id": event.id, "created_at": now,
            "payload": AlertEvent.from_event(event, cooling).model_dump(mode="json")}


def _withdrawable(last: LastAlert | None, now: datetime) -> bool:
    """Whether a sender may still hold an alert about the offer: it was alerted on within MAX_EVENT_AGE."""
    return last is not None and now - last.at <= MAX_EVENT_AGE


def _utc(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


class OutboxWriter:
    """The `on_events` hook: alerting events -> one `alert_events` row each (same transaction as the events)."""

    def __init__(self, policy: AlertPolicy | None = None, *, wakeup: Callable[[], None] | None = None) -> None:
        self.policy = policy or AlertPolicy()
        self.wakeup = wakeup  # told after the transaction commits, so the senders look at once
        self.stats: dict[str, int] = {"queued": 0, "cooling": 0, "withdrawals": 0}

    async def __call__(self, session: AsyncSession, events: list[OfferEvent]) -> None:
        await self.enqueue(session, events)

    async def enqueue(self, session: AsyncSession, events: Sequence[OfferEvent], *,
                      now: datetime | None = None) -> int:
        """Queue the alerting events among `events`, and a withdrawal for each offer among them that sold out or rose
        in price since an alert about it that a sender may still hold; returns how many alerts were queued."""
        now = now or datetime.now(UTC)
        wanted = alerting_events(events, min_drop=self.policy.min_drop)
        withdrawing = [e for e in events if e.kind in WITHDRAWING_KINDS]
        if not wanted and not withdrawing:
            return 0
        keys = {e.key for e in wanted} | {e.key for e in withdrawing}
        last: dict[str, LastAlert] | None = None
        if not wanted:
            # Most polls' sell-outs and price rises are of offers nobody was alerted on lately, and they queue
            # nothing: find that out before taking the queue's lock, so they do not wait on (or hold up) the writers
            # that do queue.
            last = await self._last_alerts(session, keys)
            if not any(_withdrawable(last.get(e.key), now) for e in withdrawing):
                return 0
        if session.get_bind().dialect.name == "postgresql":
            # One queuing transaction at a time, so ids commit in order and a user's cursor never skips an event
            # committed late with a smaller id. (SQLite writers are serialised anyway.)
            await session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _EVENTS_LOCK})
            last = None  # read again under the lock: what was read before it may be stale
        if last is None:
            last = await self._last_alerts(session, keys)
        rows: list[dict[str, Any]] = []
        for event in withdrawing:
            # A withdrawal: only for an offer alerted on recently enough that a sender may still hold the alert
            # (MAX_EVENT_AGE), so the queue does not grow with every sell-out of the market. Written before this
            # poll's alerts: an offer is never both withdrawn and announced by one poll, and ids keep that order.
            if not _withdrawable(last.get(event.key), now):
                continue
            rows.append(_queued_row(event, now))
        withdrawals = len(rows)
        changed: dict[str, LastAlert] = {}
        for event in wanted:
            before = last.get(event.key)
            verdict = assess(event, before, now, self.policy)
            cooling = before if verdict.value == "cooling" else None
            self.stats["cooling"] += cooling is not None
            rows.append(_queued_row(event, now, cooling))
            after = next_last_alert(event, before, verdict, now)
            if after is not None and after is not before:
                last[event.key] = changed[event.key] = after
        if not rows:
            return 0
        queue = upsert_insert(session, AlertEventRow).on_conflict_do_nothing(index_elements=["dedup_key"])
        await session.execute(queue, rows)
        if changed:
            stmt = upsert_insert(session, OfferAlertState)
            await session.execute(stmt.on_conflict_do_update(
                index_elements=["offer_key"],
                set_={c: stmt.excluded[c] for c in _STATE_COLUMNS}),
                [{"offer_key": k, "last_alert_at": v.at, "last_price": v.price, "last_price_rub": v.price_rub,
                  "last_price_usd": v.price_usd,
                  "cooling_alerts": [c.model_dump(mode="json") for c in v.cooling] if v.cooling else None}
                 for k, v in changed.items()])
        self.stats["queued"] += len(rows) - withdrawals
        self.stats["withdrawals"] += withdrawals
        if self.wakeup is not None:
            self._wake_after_commit(session)
        return len(rows) - withdrawals

    async def _last_alerts(self, session: AsyncSession, keys: set[str]) -> dict[str, LastAlert]:
        out: dict[str, LastAlert] = {}
        t = OfferAlertState
        for chunk in _chunks(sorted(keys)):
            for r in (await session.execute(
                    select(t.offer_key, *(getattr(t, c) for c in _STATE_COLUMNS)).where(t.offer_key.in_(chunk)))).all():
                out[r.offer_key] = LastAlert(
                    at=_utc(r.last_alert_at), price=r.last_price, price_rub=r.last_price_rub,
                    price_usd=r.last_price_usd,
                    cooling=tuple(CoolingAlert.model_validate(c) for c in r.cooling_alerts or ()))
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


# -------------------------------------------------------------------- the sender's fan-out
@dataclass(frozen=True, slots=True)
class SubMeta:
    """What a message needs about a matched subscription besides its watch."""

    id: int
    user_id: int
    chat_id: int
    kind: str
    query_text: str
    created_at: datetime
    rec_gib_by_count: dict[str, float] | None = None  # per-GPU memory for a comfortable fit: below it, "tight"


class AlertItem:
    """One offer in a user's next message: the event and every subscription of theirs it matches (`subscriptions`:
    their ids and texts). Why each matches (`reasons`: the need at the offer's count, what the card gives, whether
    it is tight) is worked out when first asked for: a digest is one message, and most of a long digest's offers
    are only counted on it (at 1,000 messages a second the reasons of every offer were a tenth of the sender's CPU).
    """

    __slots__ = ("_matched", "_reasons", "event", "event_id", "subscriptions", "target")

    def __init__(self, event_id: int, event: AlertEvent, matched: Sequence[tuple[SubMeta, Watch]],
                 target: Target) -> None:
        self.event_id = event_id
        self.event = event
        self.target = target
        self._matched = matched
        self.subscriptions: tuple[tuple[int, str], ...] = tuple([(m.id, m.query_text) for m, _ in matched])
        self._reasons: tuple[Reason, ...] | None = None

    @property
    def reasons(self) -> tuple[Reason, ...]:
        if self._reasons is None:
            t = self.target
            out = []
            for m, w in self._matched:
                fit = fit_reason_data(w, t)
                out.append(Reason(m.id, m.kind, m.query_text, w.max_price, w.currency, fit["need_gib"],
                                  fit["usable_gib"], fit["gpu_name"], w.price_basis,
                                  tight_at(m.rec_gib_by_count, t.gpu_count, fit["usable_gib"]),
                                  w.min_count_by_gpu is not None))  # matched, so it keeps up with the target
            self._reasons = tuple(out)
        return self._reasons


@dataclass(frozen=True, slots=True)
class _Queued:
    """A held event as the sender keeps it: what matching reads, when it was queued and whether it is a cooling one.
    The event itself stays in its row: a plan reads the ones it needs (`FanOut._load`, the last PARSED_EVENTS kept
    parsed). At Telegram's free rate a backlog holds every poll's events for the ~26 minutes it takes to drain, ~480
    a poll at 50,000 users: parsed, an event was ~13.7 KB (its offer and prices as pydantic models), 6.6 MB a poll;
    as its JSON ~0.6 KB more than this; as this, with the target's names shared (`Target.interned`), ~0.5 KB."""

    id: int
    target: Target
    created_at: datetime
    cooling: bool
    # A cooling event after its offer's earlier alerts were withdrawn (`FanOut._withdraw`): the oldest of those. A
    # user whose cursor is below it had not been planned past it, so did not hear that alert, and hears this one.
    owed_from: int = 0
    # A price rise restating withdrawn alerts at the new price: heard only by those they were owed to (`owed_from`).
    restates: bool = False


@dataclass
class UserPlan:
    """A user's unheard events, ready to be turned into messages (per chat their subscriptions were made in)."""

    user_id: int
    lang: str
    currency: str
    grouping: bool
    active: bool
    quiet_start: int | None
    quiet_end: int | None
    tz_offset_minutes: int
    cursor: int  # as read: the compare-and-set's expected value
    upto: int  # the cursor once these events are planned
    by_chat: dict[int, list[AlertItem]] = field(default_factory=dict)
    # Offers whose withdrawn alert this plan moves the cursor past without telling it, though one of the user's
    # subscriptions matches it: recorded as owed once the plan is committed (`FanOut.planned`).
    owed: tuple[str, ...] = ()


@dataclass(slots=True)
class OwedDeletes:
    """The deletes from `alert_owed` one plan's transaction carries (`FanOut.record_owed`): given back to the fan-out
    (`FanOut.owed_not_written`) when that transaction rolls back, so the next plan's write carries them instead."""

    void: dict[str, int]  # offer key -> the fresh alert that voided its rows older than it
    gone: list[tuple[str, set[int]]]  # (offer key, users) let go by age or the cap


class FanOut:
    """The sender's in-memory view of the queue: which users have events they have not heard, and what to say.

    Memory is one int per (user, event) pair still unheard, up to PENDING_CAP a user (past it, one: see `overflowed`),
    plus the events themselves, plus the subscription index
    (core.matching.WatchIndex: ids and caps in packed arrays). The index is built once, at the first look, and then
    follows the subscription change log (`subscription_changes`, written by triggers: migration 0014): each look
    reloads only the users named there since the last one, so a change costs that user's subscriptions, never a
    rebuild. Matching an event costs bisects plus the number of subscriptions it reaches; a user's message is then
    written from their subscriptions as stored now (read for the few users planned at a time). A restart rebuilds
    it from the events newer than the users' cursors (at most MAX_EVENT_AGE old).

    With several senders (one per replica) each holds and matches only its share of the users (`share`,
    storage.sender_shares), and starts over when the share changes (`reshare`)."""

    def __init__(self, *, max_event_age: timedelta = MAX_EVENT_AGE, index_check: float = INDEX_CHECK,
                 rebuild_over: int = REBUILD_OVER, sends_per_chat_interval: float = 30.0,
                 pending_cap: int = PENDING_CAP) -> None:
        self.index_check = index_check
        # Messages the sender starts overall while one chat may take one more (Telegram: 30 a second against one a
        # second per chat; bot.sender passes its own pacing): how much later a long digest ends than the others.
        self.sends_per_chat_interval = sends_per_chat_interval
        self.rebuild_over = rebuild_over
        self._checked_at = 0.0
        self.max_event_age = max_event_age
        self._index: WatchIndex | None = None
        self._changes_low = 0  # every change-log row up to this id is applied
        self._changes_seen: set[int] = set()  # rows past it applied already (re-read until they are a minute old)
        self._events: dict[int, _Queued] = {}
        self._parsed: OrderedDict[int, AlertEvent] = OrderedDict()  # the events last parsed (`_event`)
        self._loaded_upto: int | None = None
        self.pending: dict[int, array[int]] = {}  # user id -> unheard event ids, ascending; insertion = age order
        # Users with more than PENDING_CAP unheard events: their entry in `pending` holds only the first (their
        # place and the oldest event kept for them); what they have to hear is matched from the events at planning.
        self.overflowed: set[int] = set()
        self.pending_cap = pending_cap
        self._columns: TargetColumns | None = None  # the held events as columns, built when an overflowed user asks
        self._refreshing = asyncio.Lock()
        self.stats: dict[str, int] = {"builds": 0, "users_reloaded": 0, "superseded": 0, "compactions": 0,
                                      "overflowed": 0, "reshares": 0, "withdrawn": 0}
        self._latest: dict[str, list[int]] = {}  # offer key -> its events since the last one everyone hears
        # Offer key -> the oldest of its alerts withdrawn while someone still had to hear them (sold out or dearer
        # since), when (monotonic), the newest one's target, and the first withdrawal row since the offer's last
        # fresh event: what a cooling event of it is owed from (`_Queued.owed_from`). Kept for MAX_EVENT_AGE, longer
        # than any cooldown; dropped at the offer's next fresh event.
        self._withdrawn: dict[str, tuple[int, float, Target, int]] = {}
        self._withdrawn_columns: tuple[TargetColumns, dict[int, str]] | None = None  # built when a plan asks
        # Offer key -> users planned past its withdrawn alert after it went, who would have heard it: their cursor
        # says they heard it, and they did not. A cooling event of the offer is theirs too (at most OWED_CAP users).
        self._owed: dict[str, set[int]] = {}
        self._owed_size = 0
        self._owed_read = False  # `_owed` holds this sender's users' stored rows (read once the first look caught up)
        # What `_owed` let go since the last plan's write, for `record_owed` to delete from `alert_owed` too (else the
        # rows would pile up until retention: a 3-minute soak stored 24,000, as many as were owed in memory):
        # offer key -> the fresh alert that voided its rows older than it; and (offer key, users) let go by age or cap.
        self._owed_void: dict[str, int] = {}
        self._owed_gone: list[tuple[str, set[int]]] = []
        self._pairs_added = 0  # (user, event) pairs filed since the last compaction
        self._pairs_kept = 0  # pairs the last compaction left
        self.match_cpu = 0.0  # seconds of CPU spent matching queued events to users, in all (benches read it)
        self._rotation = 0.0  # where the users a look newly reaches start (see _file_newcomers)
        # The users this sender matches and plans (storage.sender_shares: the replicas' senders split them), and
        # the share to take at the next look when the senders alive changed.
        self.share = UserShare()
        self._next_share: UserShare | None = None
        self._generation = 0  # how many times it started over for a new share (a plan made across one is void)

    # ---------------------------------------------------------------- the subscription index
    def _active_subs(self) -> Any:
        """The active subscriptions of this sender's users."""
        query = (select(Subscription.id, Subscription.user_id, Subscription.gpu_ids, Subscription.min_gib_by_count,
                        Subscription.max_price, Subscription.price_currency, Subscription.price_basis,
                        Subscription.providers, Subscription.gpu_count, Subscription.billing, Subscription.region,
                        Subscription.min_count_by_gpu)
                 .join(User, User.id == Subscription.user_id)
                 .where(Subscription.paused.is_(False), User.active.is_(True)))
        mine = self.share.where(Subscription.user_id)
        return query if mine is None else query.where(mine)

    @staticmethod
    def _watch(r: Any) -> Watch | None:
        try:
            return watch_from_row(
                id=r.id, gpu_ids=r.gpu_ids, min_gib_by_count=r.min_gib_by_count, max_price=r.max_price,
                price_currency=r.price_currency, price_basis=r.price_basis, providers=r.providers,
                gpu_count=r.gpu_count, billing=r.billing, region=r.region, min_count_by_gpu=r.min_count_by_gpu)
        except (ValueError, TypeError):  # one malformed row must not silence everyone else's alerts
            log.warning("subscription %s cannot be matched (bad stored filters); skipped", r.id)
            return None

    async def _build_index(self, session: AsyncSession) -> None:
        """Every active subscription, read in slices (the loop is handed back between them)."""
        # The log's position first: a change committed while the subscriptions are read is applied after.
        low = int(await session.scalar(select(func.max(SubscriptionChange.id))) or 0)
        index = WatchIndex()
        result = await session.stream(self._active_subs().execution_options(yield_per=_BUILD_SLICE))
        async for part in result.partitions(_BUILD_SLICE):
            for r in part:
                w = self._watch(r)
                if w is not None:
                    index.add(w, r.user_id)
            await asyncio.sleep(0)
        index.freeze()
        self._index = index
        self._changes_low, self._changes_seen = low, set()
        self.stats["builds"] += 1

    async def _refresh_index(self, session: AsyncSession) -> bool:
        """Build the index at the first look; afterwards apply the change log. True when something changed."""
        self._checked_at = time.monotonic()
        if self._index is None:
            await self._build_index(session)
            return True
        log_rows = (await session.execute(
            select(SubscriptionChange.id, SubscriptionChange.user_id, SubscriptionChange.at,
                   db_now(session.get_bind().dialect.name).label("now"))
            .where(SubscriptionChange.id > self._changes_low).order_by(SubscriptionChange.id))).all()
        if log_rows and log_rows[0].id > self._changes_low + 1:
            # Rows were trimmed past our position (retention, after a long stop): changes may be missing.
            oldest = await session.scalar(select(func.min(SubscriptionChange.id)))
            if oldest is not None and oldest > self._changes_low + 1:
                log.warning("subscription change log trimmed past this sender's position: rebuilding its index")
                await self._build_index(session)
                return True
        fresh = [r for r in log_rows if r.id not in self._changes_seen]
        users = {r.user_id for r in fresh if self.share.has(r.user_id)}  # another sender's users are its own
        if log_rows:
            # Rows a minute old are final (a PostgreSQL transaction that took an id earlier has committed by then).
            settled = log_rows[0].now - CHANGES_SETTLE
            for r in log_rows:
                if r.at >= settled:
                    break
                self._changes_low = r.id
            self._changes_seen = {r.id for r in log_rows if r.id > self._changes_low}
        if not users:
            return False
        if len(users) > self.rebuild_over:
            await self._build_index(session)
            return True
        by_user: dict[int, list[Watch]] = {uid: [] for uid in users}
        ordered = sorted(users)
        for chunk in _chunks(ordered):
            for r in (await session.execute(self._active_subs().where(Subscription.user_id.in_(chunk)))).all():
                w = self._watch(r)
                if w is not None:
                    by_user[r.user_id].append(w)
        for uid in ordered:
            self._index.set_owner(uid, by_user[uid])
        self.stats["users_reloaded"] += len(users)
        return True

    def forget_index(self) -> None:
        self._index = None

    @property
    def indexed(self) -> int:
        """Subscriptions in the index (this sender's users' active ones; 0 before the first look)."""
        return 0 if self._index is None else len(self._index)

    def reshare(self, share: UserShare) -> bool:
        """The senders alive changed and this one's users are now `share`: from the next look it starts over for
        them, as a restarted sender does (index built for them, the events newer than their cursors read again).
        Returns whether that is a change."""
        if share == (self._next_share or self.share):
            return False
        self._next_share = None if share == self.share else share
        return True

    def _take_share(self) -> None:
        """Start over for the share `reshare` gave (at the start of a look, under its lock: nothing is mid-match)."""
        assert self._next_share is not None
        log.info("alert sender's share: %s (was %s)", self._next_share, self.share)
        self.share, self._next_share = self._next_share, None
        self._index = None
        self._loaded_upto = None
        self._events.clear()
        self._latest.clear()
        self._withdrawn.clear()
        self._withdrawn_changed()
        self._owed_read = False
        self.pending.clear()
        self.overflowed.clear()
        self._columns = None
        self._pairs_added = self._pairs_kept = 0
        self._generation += 1
        self.stats["reshares"] += 1

    # ---------------------------------------------------------------- events -> users
    async def refresh(self, session: AsyncSession, now: datetime) -> int:
        """Pick up the subscription set's changes and newly queued events; returns how many events were new.
        Callers may overlap (the claim loop, an idle check): one refresh at a time, or both would file the same
        events twice."""
        async with self._refreshing:
            return await self._refresh(session, now)

    async def _refresh(self, session: AsyncSession, now: datetime) -> int:
        if self._next_share is not None:
            self._take_share()
        if self._index is None or self._loaded_upto is None \
                or time.monotonic() - self._checked_at >= self.index_check:
            await self._refresh_index(session)
        else:
            newest = await session.scalar(select(func.max(AlertEventRow.id)))
            if newest is None or newest <= self._loaded_upto:
                return 0  # nothing new to match (an id lookup on the primary key)
            await self._refresh_index(session)  # new events are matched against the current subscriptions
        assert self._index is not None
        self._forget_withdrawals()
        since = datetime.min.replace(tzinfo=UTC)
        if self._loaded_upto is None:
            # First look (a start or restart): from the oldest cursor of anyone who may still hear alerts, but no
            # further back than MAX_EVENT_AGE before the newest event (the backlog a restart can owe anyone).
            mine = self.share.where(User.id)
            oldest = await session.scalar(select(func.min(User.alert_cursor)).where(
                User.active.is_(True), *(() if mine is None else (mine,))))
            newest = await session.scalar(select(func.max(AlertEventRow.created_at)))
            self._loaded_upto = int(oldest or 0)
            if newest is not None:
                since = min(_utc(newest), now) - self.max_event_age
        new = 0
        newcomers: dict[int, array[int]] = {}  # users this look reaches who had nothing unheard: filed fairly below
        while True:
            rows = (await session.execute(
                select(AlertEventRow.id, AlertEventRow.payload, AlertEventRow.created_at, AlertEventRow.event_kind,
                       AlertEventRow.offer_key)
                .where(AlertEventRow.id > self._loaded_upto, AlertEventRow.created_at >= since)
                .order_by(AlertEventRow.id).limit(2000))).all()
            if not rows:
                if not self._owed_read:
                    await self._read_owed(session, now)
                return new
            read: dict[int, _Queued] = {}
            read_keys: dict[str, list[int]] = {}  # offer key -> its rows in `read` (what a withdrawal reaches)
            for r in rows:
                self._loaded_upto = r.id
                restates = False
                if r.event_kind in WITHDRAWAL_ROW_KINDS:
                    unread = read_keys.pop(r.offer_key, ())
                    withdrew = self._withdraw(r.offer_key, r.id, read, unread)
                    new -= len(unread)
                    # A sell-out ends it. A price rise is restated, at the new price, to whoever the alerts it just
                    # withdrew were owed (nobody else hears it): the offer is still there, and may meet their cap.
                    restates = withdrew and r.event_kind == _RISE
                    if not restates:
                        continue
                created = _utc(r.created_at)
                try:
                    event = AlertEvent.model_validate(r.payload)
                except ValueError as e:  # a malformed row fails alone
                    log.warning("queued alert event %s cannot be read: %s", r.id, e)
                    continue
                target = Target.from_offer(event.offer, event.price_rub, event.price_usd).interned()
                if restates:
                    read[r.id] = _Queued(r.id, target, created, True, self._withdrawn[r.offer_key][0], True)
                else:
                    read[r.id] = _Queued(r.id, target, created, event.cooling_since is not None)
                    if event.cooling_since is None and (self._withdrawn.pop(r.offer_key, None) is not None
                                                        or r.offer_key in self._owed):
                        self._withdrawn_changed(r.offer_key, r.id)  # everyone matching hears it: nothing is owed
                read_keys.setdefault(r.offer_key, []).append(r.id)
                self._remember(r.id, event)  # the poll's events are the next plans' (parsed once for them)
                new += 1
            # Whose subscriptions each reaches (those made after it are left out when the message is written): the
            # (user, event) pairs of these rows at once, by user, each user's events ascending.
            cpu = time.thread_time()
            users, event_ids = self._index.owner_pairs((i, q.target) for i, q in read.items())
            for event_id in _distinct(event_ids):
                # Kept only when someone is to be told (it is matched once, here): else it would stay forever.
                self._events[event_id] = read[event_id]
                self._columns = None
            self._supersede(read)
            self._pairs_added += self._add_pending(users, event_ids, newcomers)
            self.match_cpu += time.thread_time() - cpu
            self._file_newcomers(newcomers)  # at once: a failure reading the next rows must not lose these
            newcomers = {}
            if self._pairs_added > max(COMPACT_PAIRS, self._pairs_kept):
                await self._compact()

    def _withdraw(self, key: str, withdrawal: int, read: dict[int, _Queued], unread: Sequence[int]) -> bool:
        """The offer sold out or got dearer: its alerts not yet heard (held, or `unread`: its rows among those being
        read, all older) say what is no longer true, and are forgotten, as superseded ones are. Returns whether any
        went. A later cooling event of the offer is then owed to who had not heard them (`owed_from`)."""
        gone = [(i, q) for i in self._latest.pop(key, ()) if (q := self._events.pop(i, None)) is not None]
        gone.extend((i, read.pop(i)) for i in unread)
        if not gone:
            return False
        self.stats["withdrawn"] += len(gone)
        self._columns = None
        oldest = min(i for i, _ in gone)
        newest = max(gone, key=lambda g: g[0])[1].target  # the last alerted price: what `suppressed` compares
        before = self._withdrawn.get(key)
        self._withdrawn[key] = (oldest, time.monotonic(), newest, withdrawal) if before is None else (
            min(before[0], oldest), before[1], newest, before[3])
        self._withdrawn_changed()
        return True

    def _withdrawn_changed(self, dropped: str | None = None, fresh: int | None = None) -> None:
        """`dropped`: the offer whose owed users are let go, by `fresh` (the alert everyone matching hears) or age."""
        self._withdrawn_columns = None
        if dropped is not None:
            gone = self._owed.pop(dropped, set())
            self._owed_size -= len(gone)
            if fresh is not None:
                self._owed_void[dropped] = max(fresh, self._owed_void.get(dropped, 0))
            elif gone:
                self._owed_gone.append((dropped, gone))
        elif not self._withdrawn:
            self._owed.clear()
            self._owed_size = 0

    def _owed_past(self, mine: Sequence[tuple[SubMeta, Watch]], cursor: int, upto: int) -> tuple[str, ...]:
        """The offers with an alert withdrawn in (cursor, upto] that one of these subscriptions matches: a plan up to
        `upto` moves the user's cursor past it, and they never heard it."""
        if self._withdrawn_columns is None:
            tagged = sorted((w[0], w[2], key) for key, w in self._withdrawn.items())
            self._withdrawn_columns = (TargetColumns((i, t) for i, t, _ in tagged), {i: k for i, _, k in tagged})
        columns, keys = self._withdrawn_columns
        found: set[int] = set()
        for _, w in mine:
            found.update(i for i in columns.matches(w, cursor).tolist() if i <= upto)
        return tuple(keys[i] for i in sorted(found))

    def _owe(self, key: str, uid: int) -> None:
        owed = self._owed.get(key)
        if owed is None:
            owed = self._owed[key] = set()
        if uid in owed:
            return
        owed.add(uid)
        self._owed_size += 1
        while self._owed_size > OWED_CAP:
            oldest = next(iter(self._owed))
            gone = self._owed.pop(oldest)
            self._owed_size -= len(gone)
            self._owed_gone.append((oldest, gone))

    async def _read_owed(self, session: AsyncSession, now: datetime) -> None:
        """This sender's users owed a withdrawn alert, as the plans committed them (`record_owed`), into `_owed`: read
        once the first look has caught up with the queue, so that the events it read again (a fresh alert older than
        a row's withdrawal among them) cannot void the rows they came before. A row is void when a fresh alert of its
        offer (one everyone matching hears) was queued after its withdrawal, as `_refresh` lets the owed go."""
        owed = cast(Table, AlertOwed.__table__)
        mine = self.share.where(owed.c.user_id)
        rows = (await session.execute(
            select(owed.c.user_id, owed.c.offer_key, owed.c.withdrawal_id)
            .where(owed.c.created_at >= now - self.max_event_age, *(() if mine is None else (mine,)))
            .order_by(owed.c.created_at.desc()).limit(OWED_CAP))).all()
        self._owed_read = True
        if not rows:
            return
        keys = sorted({r.offer_key for r in rows})
        oldest = min(r.withdrawal_id for r in rows)
        fresh: dict[str, int] = {}  # offer key -> its newest alert everyone matching heard
        events = cast(Table, AlertEventRow.__table__).c
        for chunk in _chunks(keys):
            for key, event_id, payload in (await session.execute(
                    select(events.offer_key, events.id, events.payload)
                    .where(events.offer_key.in_(chunk), events.id > oldest,
                           events.id <= (self._loaded_upto or 0), events.event_kind.in_(ALERT_ROW_KINDS)))).all():
                if payload.get("cooling_since") is None and event_id > fresh.get(key, 0):
                    fresh[key] = event_id
        for r in reversed(rows):  # oldest first: the cap lets the oldest go first
            if r.withdrawal_id > fresh.get(r.offer_key, 0):
                self._owe(r.offer_key, r.user_id)

    async def record_owed(self, session: AsyncSession, plans: Sequence[UserPlan], now: datetime) -> OwedDeletes:
        """In the transaction that moves these plans' cursors: store who becomes owed an offer's withdrawn alert
        (`UserPlan.owed`) and forget who hears an offer they were owed, as `planned` does in memory once it is
        committed, so a restarted sender owes the same users; and delete what `_owed` let go since the last write.
        Returns those deletes: should the transaction roll back (another sender planned one of these users, the
        database failed), `owed_not_written` hands them to the next plan's write. Lost, the rows let go by the cap
        stayed stored, and a restarted sender read them back: users owed again what they were no longer owed."""
        table = cast(Table, AlertOwed.__table__)
        taken = OwedDeletes(self._owed_void, self._owed_gone)
        void, self._owed_void, self._owed_gone = taken.void, {}, []
        # Offer key -> users whose rows go: let go by age or the cap, or told the offer now though owed it. Deleted
        # before the new rows are written (a user let go may be owed the same offer again by these plans).
        drop: dict[str, set[int]] = {}
        for key, users in taken.gone:
            drop.setdefault(key, set()).update(users)
        owe: dict[tuple[int, str], dict[str, Any]] = {}
        for plan in plans:
            uid = plan.user_id
            told = {item.target.key for items in plan.by_chat.values() for item in items}
            for key in plan.owed:
                withdrawn = self._withdrawn.get(key)
                # A plan that also tells the offer (its restated price, say) leaves nothing owed: `planned` owes,
                # then forgets at once.
                if withdrawn is not None and key not in told and uid not in self._owed.get(key, ()):
                    owe[uid, key] = {"user_id": uid, "offer_key": key, "withdrawal_id": withdrawn[3],
                                     "created_at": now}
            for key in told if self._owed else ():
                if uid in self._owed.get(key, ()):
                    drop.setdefault(key, set()).add(uid)
        try:
            await _write_owed(session, table, void, drop, list(owe.values()))
        except BaseException:
            self.owed_not_written(taken)  # the caller's transaction cannot commit now: its rollback is certain
            raise
        return taken

    def owed_not_written(self, taken: OwedDeletes) -> None:
        """`record_owed`'s transaction rolled back: its deletes go with the next plan's write. A user owed the same
        offer again since (a plan committed meanwhile stored them anew) keeps that row."""
        for key, fresh in taken.void.items():
            self._owed_void[key] = max(fresh, self._owed_void.get(key, 0))
        gone = [(key, left) for key, users in taken.gone if (left := users - self._owed.get(key, set()))]
        self._owed_gone[:0] = gone

    def _forget_withdrawals(self) -> None:
        """Withdrawals older than MAX_EVENT_AGE: past any cooldown, so no event of theirs is a cooling one."""
        horizon = time.monotonic() - self.max_event_age.total_seconds()
        withdrawn = self._withdrawn
        while withdrawn:
            key, (_, at, _, _) = next(iter(withdrawn.items()))
            if at >= horizon:
                break
            del withdrawn[key]
            self._withdrawn_changed(key)

    def _supersede(self, read: dict[int, _Queued]) -> None:
        """An offer's newer event that everyone matching it hears (fresh, or a real price drop) makes its older
        ones stale ("available at $2.49" after "cheaper: $1.99", or a price from before it sold out and came back):
        they are forgotten, so no one is told them, and the users still waiting for them keep only ids `_compact`
        drops. A cooling event (inside the offer's cooldown: only who did not hear the last alert) leaves the older
        ones be: it is not sent to those the older one is for. When the older ones were withdrawn instead, it
        carries the oldest withdrawn id, so those who were to hear them hear it (`_Queued.owed_from`)."""
        latest, events = self._latest, self._events
        for event_id, q in read.items():  # ascending
            key = q.target.key
            if q.cooling and (owed := self._withdrawn.get(key)) is not None:
                read[event_id] = q = replace(q, owed_from=owed[0])
                if event_id in events:
                    events[event_id] = q
            held = latest.get(key)
            if q.cooling and held is not None:
                held.append(event_id)
                continue
            for older in held or ():
                if older != event_id and events.pop(older, None) is not None:
                    self.stats["superseded"] += 1
                    self._columns = None
            latest[key] = [event_id]

    async def _compact(self) -> None:
        """Drop from the users' unheard ids those of forgotten events (superseded, or too old). Without it the
        pairs grew with every poll for as long as a backlog lasted: at Telegram's free 30 messages a second a poll
        every 10 s reaching 47,000 users added ~2 million pairs (8 MB) a poll to the sender's memory for the half
        hour the backlog took to drain (bench/soak.py); forgetting superseded events bounds them by the offers in
        the market, not the polls. In slices of users, the loop handed back between them."""
        import numpy as np

        events = self._events
        self._latest = {k: held for k, ids in self._latest.items() if (held := [i for i in ids if i in events])}
        kept = 0
        if events:
            live = np.fromiter(events.keys(), dtype=np.int64, count=len(events))
            low, high = int(live.min()), int(live.max())
            alive = np.zeros(high - low + 1, dtype=bool)
            alive[live - low] = True
            del live
            for n, uid in enumerate(list(self.pending)):
                if n and n % _COMPACT_SLICE == 0:
                    await asyncio.sleep(0)
                waiting = self.pending.get(uid)
                if waiting is None or uid in self.overflowed:  # their one id is their place, not an event to tell
                    continue
                ids = np.frombuffer(waiting, dtype=_ID_NUMPY).astype(np.int64)
                ids = ids[(ids >= low) & (ids <= high)]
                ids = ids[alive[ids - low]]
                if len(ids) == len(waiting):
                    kept += len(ids)
                    continue
                if len(ids):
                    fresh = array(_ID)
                    fresh.frombytes(ids.astype(_ID_NUMPY).tobytes())
                    self.pending[uid] = fresh
                    kept += len(ids)
                else:
                    del self.pending[uid]  # nothing left to tell them
        else:
            self.pending.clear()
            self.overflowed.clear()
        self.stats["compactions"] += 1
        self._pairs_added, self._pairs_kept = 0, kept

    def _add_pending(self, users: np.ndarray, event_ids: np.ndarray, newcomers: dict[int, array[int]]) -> int:
        """Each user's run of the pairs onto their unheard events (a step per user, not per pair); users who had
        nothing unheard go to `newcomers`. Returns how many ids were kept (a user over the cap keeps one)."""
        if not len(users):
            return 0
        import numpy as np  # the sender's (core.matching.WatchIndex.owner_pairs): not imported by the bot's processes

        starts = np.flatnonzero(users[1:] != users[:-1]) + 1
        bounds = [0, *starts.tolist(), len(users)]
        raw = memoryview(event_ids.astype(_ID_NUMPY, copy=False).tobytes())
        size = 4  # bytes an id (_ID)
        pending, overflowed, cap = self.pending, self.overflowed, self.pending_cap
        kept = 0
        for uid, lo, hi in zip(users[bounds[:-1]].tolist(), bounds[:-1], bounds[1:], strict=True):
            if uid in overflowed:
                continue  # matched from the events when planned
            waiting = pending.get(uid)
            if waiting is None:
                waiting = newcomers[uid] = array(_ID)
            before = len(waiting)
            waiting.frombytes(raw[lo * size:hi * size])
            if len(waiting) > cap:
                del waiting[1:]  # the oldest stays: the user's place in line, and what `_trim` keeps events from
                overflowed.add(uid)
                self.stats["overflowed"] += 1
            kept += len(waiting) - before
        return kept

    def _file_newcomers(self, newcomers: dict[int, array[int]]) -> None:
        """Who hears first when thousands match: everyone already waiting keeps their place (oldest unheard event
        first); the users a look newly reaches follow in user-id order rotated to a starting point that moves by
        a golden-ratio share of them at every look, so the ones last in one poll are early in the next, and over
        many polls every user's place is spread evenly (no one is always last).

        One exception keeps a burst from waiting on a single chat: a user whose digest is too long for their place
        starts before the rotation. Telegram takes one message per chat interval from a chat while the sender starts
        `sends_per_chat_interval` overall, so a digest of m messages ends (m - 1) chat intervals after it starts;
        filed where fewer than (m - 1) x that many messages come after it, it would still be going, alone, after
        everyone else's (bench/fanout_cycle.py: four users with 30-odd messages each planned last held the last
        6 s of a 73 s drain at a fifth of the rate). Unheard events stand for messages here (a digest packs several
        offers a message, which shrinks both sides alike; one event is one message and never waits). The users
        moved start longest first; they are few (near the end, and long), and a long digest costs the others only
        one slot per chat interval while it goes. A newcomer over PENDING_CAP counts as one (its ids are not listed):
        a one-message digest is what most users get, however many events it names."""
        if not newcomers:
            return
        order = sorted(newcomers)
        self._rotation = (self._rotation + _GOLDEN) % 1.0
        start = int(self._rotation * len(order))
        rotated = [*order[start:], *order[:start]]
        kept: list[int] = []
        early: list[int] = []
        after = 0  # unheard events of the users kept behind the one looked at
        for uid in reversed(rotated):
            n = len(newcomers[uid])
            if after >= self.sends_per_chat_interval * (n - 1):
                kept.append(uid)
                after += n
            else:
                early.append(uid)
        early = sorted(reversed(early), key=lambda uid: -len(newcomers[uid]))  # equal lengths: in rotation order
        for uid in (*early, *reversed(kept)):
            self.pending[uid] = newcomers[uid]

    @property
    def owed_users(self) -> int:
        """Users remembered as owed a withdrawn alert they were planned past (all offers; at most OWED_CAP)."""
        return self._owed_size

    @property
    def held_events(self) -> int:
        """Events kept in memory: only those some user has still to hear."""
        return len(self._events)

    def due_users(self, limit: int, held: dict[int, datetime], now: datetime) -> list[int]:
        """Users with unheard events, those waiting longest first, skipping those held (quiet hours) until later."""
        out: list[int] = []
        for uid in self.pending:
            until = held.get(uid)
            if until is not None and until > now:
                continue
            out.append(uid)
            if len(out) >= limit:
                break
        return out

    async def plans(self, session: AsyncSession, user_ids: Sequence[int]) -> list[UserPlan]:
        """Each user's unheard events (newer than their stored cursor), per chat, each offer once with every
        subscription it matches. Users whose events all turn out heard or unmatched get a plan with no items, so
        their cursor still moves past them."""
        if not user_ids:
            return []
        generation = self._generation
        users: dict[int, Any] = {}
        for chunk in _chunks(list(user_ids)):
            for r in (await session.execute(
                    select(User.id, User.lang, User.currency, User.grouping, User.active, User.quiet_start,
                           User.quiet_end, User.tz_offset_minutes, User.alert_cursor)
                    .where(User.id.in_(chunk)))).all():
                users[r.id] = r
        subs = await self._user_subscriptions(session, [uid for uid in user_ids if uid in users])
        due: list[tuple[int, Any, list[int]]] = []
        for uid in user_ids:
            ids = self.pending.get(uid, ())
            u = users.get(uid)
            if u is None:  # the user is gone (deleted with their subscriptions)
                self._forget_user(uid)
                continue
            if uid in self.overflowed:
                unheard = self._matched_since(subs.get(uid, []), int(u.alert_cursor))
            else:
                unheard = sorted({i for i in ids if i > u.alert_cursor and i in self._events})
            if not unheard:
                self._forget_user(uid)
                continue
            due.append((uid, u, unheard))
        events = await self._load(session, {i for _, u, unheard in due if u.active for i in unheard})
        out: list[UserPlan] = []
        for uid, u, unheard in due:
            plan = UserPlan(uid, u.lang, u.currency, u.grouping, u.active, u.quiet_start, u.quiet_end,
                            u.tz_offset_minutes, cursor=int(u.alert_cursor), upto=unheard[-1])
            if u.active:
                mine = subs.get(uid, [])
                # An offer once per message, as its latest event says it: a user behind a backlog who missed both
                # "available at $2.49" and "cheaper: $2.19" hears the second (unheard events go oldest first).
                latest: dict[int, dict[str, AlertItem]] = {}
                for event_id in unheard:
                    q, event = self._events.get(event_id), events.get(event_id)
                    if q is None or event is None:  # let go meanwhile, or its row is gone (retention)
                        continue
                    target, created = q.target, q.created_at
                    # Whether they heard the offer's last alert, as far as the withdrawals say: not if their cursor
                    # is below the withdrawn one, nor if a plan moved it past that one after it went.
                    heard = u.alert_cursor >= q.owed_from and uid not in self._owed.get(target.key, ())
                    if q.restates and heard:  # they heard the alert it restates
                        continue
                    per_chat: dict[int, list[tuple[SubMeta, Watch]]] = {}
                    for m, w in mine:
                        if m.created_at > created or not w.matches(target) or (
                                q.cooling and heard and suppressed(
                                event, m.created_at, w.max_price, w.currency, w.price_basis)):
                            continue
                        per_chat.setdefault(m.chat_id, []).append((m, w))
                    for chat_id, matched in per_chat.items():
                        latest.setdefault(chat_id, {})[target.key] = AlertItem(event_id, event, matched, target)
                plan.by_chat = {chat_id: list(items.values()) for chat_id, items in latest.items()}
                if self._withdrawn:
                    plan.owed = self._owed_past(mine, plan.cursor, plan.upto)
                await asyncio.sleep(0)  # a user's matching is CPU work: the sender's sends go on between users
            out.append(plan)
        if generation != self._generation:
            # It started over for a new share meanwhile (an overlapping look): the events it held are gone, and a
            # plan missing them would move its user's cursor past them. Nothing is planned; the next look plans
            # these users again if they are still this sender's.
            return []
        return out

    def _matched_since(self, mine: Sequence[tuple[SubMeta, Watch]], cursor: int) -> list[int]:
        """An overflowed user's unheard events: those held, newer than their cursor, that any of their subscriptions
        matches (the events as columns, built once per change of the held events, not per user)."""
        if not mine or not self._events:
            return []
        if self._columns is None:
            self._columns = TargetColumns((i, q.target) for i, q in self._events.items())
        found: set[int] = set()
        for _, w in mine:
            found.update(self._columns.matches(w, cursor).tolist())
        return sorted(found)

    async def _load(self, session: AsyncSession, ids: Iterable[int]) -> dict[int, AlertEvent]:
        """These held events parsed: from the last PARSED_EVENTS parsed (the users planned one after another hear
        mostly the same recent events), the others read from their rows. An event whose row is gone is left out."""
        found: dict[int, AlertEvent] = {}
        missing: list[int] = []
        for event_id in ids:
            hit = self._parsed.get(event_id)
            if hit is None:
                missing.append(event_id)
            else:
                found[event_id] = hit
                self._parsed.move_to_end(event_id)
        missing.sort()
        for chunk in _chunks(missing):
            rows = (await session.execute(select(AlertEventRow.id, AlertEventRow.payload)
                                          .where(AlertEventRow.id.in_(chunk)))).all()
            for r in rows:
                try:
                    event = AlertEvent.model_validate(r.payload)
                except ValueError:  # it was read when queued: a row changed since is not ours to guess at
                    log.warning("held alert event %s cannot be read again", r.id)
                    continue
                found[r.id] = event
                self._remember(r.id, event)
        return found

    def _remember(self, event_id: int, event: AlertEvent) -> None:
        self._parsed[event_id] = event
        if len(self._parsed) > PARSED_EVENTS:
            self._parsed.popitem(last=False)

    def _forget_user(self, uid: int) -> None:
        self.pending.pop(uid, None)
        self.overflowed.discard(uid)

    async def _user_subscriptions(self, session: AsyncSession,
                                  user_ids: Sequence[int]) -> dict[int, list[tuple[SubMeta, Watch]]]:
        """These users' active subscriptions as stored now, oldest first: what their messages are written from."""
        out: dict[int, list[tuple[SubMeta, Watch]]] = {}
        rows: list[Any] = []
        for chunk in _chunks(list(user_ids)):
            # Sorted here, not by ORDER BY: with it SQLite's planner walked ix_subscriptions_paused (every row of a
            # table where almost nothing is paused, 23 ms a plan at 100,000 subscriptions) instead of the
            # (user_id, paused) index, and the sender's planning fell behind Telegram's rate (bench/fanout_cycle.py).
            rows.extend((await session.execute(
                select(Subscription.id, Subscription.user_id, Subscription.chat_id, Subscription.kind,
                       Subscription.query_text, Subscription.gpu_ids, Subscription.min_gib_by_count,
                       Subscription.max_price, Subscription.price_currency, Subscription.price_basis,
                       Subscription.providers, Subscription.gpu_count, Subscription.billing,
                       Subscription.region, Subscription.created_at, Subscription.rec_gib_by_count,
                       Subscription.min_count_by_gpu)
                .where(Subscription.user_id.in_(chunk), Subscription.paused.is_(False)))).all())
        rows.sort(key=lambda r: r.id)
        for r in rows:
            w = self._watch(r)
            if w is None:
                continue
            out.setdefault(r.user_id, []).append(
                (SubMeta(r.id, r.user_id, r.chat_id, r.kind, r.query_text, _utc(r.created_at),
                         r.rec_gib_by_count), w))
        return out

    def planned(self, plan: UserPlan) -> None:
        """The plan was committed: those events are heard, and the withdrawn alerts it moved past are owed."""
        uid = plan.user_id
        for key in plan.owed:
            if key in self._withdrawn:  # else a fresh event of the offer came meanwhile, which everyone hears
                self._owe(key, uid)
        if self._owed:
            for items in plan.by_chat.values():
                for item in items:
                    if (owed := self._owed.get(item.target.key)) is not None and uid in owed:
                        owed.discard(uid)  # they heard the offer now
                        self._owed_size -= 1
        if uid in self.overflowed:
            # Events read since the plan was made were not listed for them: looked for again at their next plan
            # (one with nothing for them forgets them then), behind everyone waiting, as a user heard and reached
            # again is (a newcomer of the next look): never at once again, ahead of the others.
            if self._loaded_upto is not None and self._loaded_upto > plan.upto:
                self.pending.pop(uid, None)
                self.pending[uid] = array(_ID, (plan.upto + 1,))
            else:
                self._forget_user(uid)
        else:
            rest = array(_ID, (i for i in self.pending.get(uid, ()) if i > plan.upto))
            if rest:
                self.pending[uid] = rest
            else:
                self._forget_user(uid)
        self._trim()

    def _trim(self) -> None:
        """Forget events no user is still waiting for."""
        if not self.pending:
            if self._events:
                self._events.clear()
                self._columns = None
            return
        if len(self._events) > 4 * 2000:
            oldest = min(ids[0] for ids in self.pending.values())
            if next(iter(self._events)) < oldest:
                self._events = {i: q for i, q in self._events.items() if i >= oldest}
                self._columns = None


@dataclass(frozen=True)
class PlannedDelivery:
    """One Telegram message to be: who gets it, where, its final text and buttons."""

    user_id: int
    chat_id: int
    text: str
    reply_markup: dict[str, Any] | None


class ClaimConflict(RuntimeError):
    """Another sender planned some of these users first: roll the transaction back and look again."""


def _shape_size(n: int) -> int:
    """The users a cursor statement is written for when `n` move: the next power of two, at least 8. SQLAlchemy keeps
    every compiled statement of a distinct shape (500 of them), ~6.5 KB per user it names, and compiling a new one is
    ~0.35 ms per user: with one shape per plan size the sender grew by steps as new sizes came (1 to PLAN_USERS: ~6 MB
    held, and up to 250 users a slice: 1.6 MB each). Padded, at most six shapes up to 250 users (~3.3 MB in all)."""
    return max(8, 1 << (n - 1).bit_length())


def _no_user_moves(count: int) -> list[tuple[int, int, int]]:
    """Padding rows that match no user (ids are positive), distinct so the CASE's keys stay distinct."""
    return [(-1 - k, -1, 0) for k in range(count)]


async def _write_owed(session: AsyncSession, table: Table, void: dict[str, int], drop: dict[str, set[int]],
                      owe: list[dict[str, Any]]) -> None:
    """`FanOut.record_owed`'s statements: the voided rows, the users' rows let go, then the new ones."""
    if void:
        await session.execute(
            delete(table).where(table.c.offer_key == bindparam("key"), table.c.withdrawal_id < bindparam("fresh")),
            [{"key": key, "fresh": fresh} for key, fresh in void.items()])
    for key, users in drop.items():  # an IN list binds as one parameter: one statement shape however many
        for chunk in _chunks(sorted(users)):
            await session.execute(delete(table).where(table.c.offer_key == key, table.c.user_id.in_(chunk)))
    if owe:
        stmt = upsert_insert(session, table)
        await session.execute(stmt.on_conflict_do_update(
            index_elements=[table.c.user_id, table.c.offer_key],
            set_={"withdrawal_id": stmt.excluded.withdrawal_id, "created_at": stmt.excluded.created_at}), owe)


async def advance_cursors(session: AsyncSession, moves: Sequence[tuple[int, int, int]]) -> None:
    """(user id, expected cursor, new cursor): compare-and-set in the caller's transaction. Raises ClaimConflict when
    a cursor had moved (another sender planned that user), so no event can be planned into two messages."""
    if not moves:
        return
    table = cast(Table, User.__table__)
    if len({uid for uid, _, _ in moves}) != len(moves):
        raise ValueError("a user's cursor moved twice in one plan")
    # One statement per slice of users, each row set only where its cursor is still the one read: a single
    # statement's row count is reliable on every driver (executemany's is not), so fewer rows than users means
    # another sender moved one of them (even to the same value) and this plan must not be written. A statement per
    # user was 40 round trips through the driver a plan, a sixth of the sender's database time at 1,000 a second.
    for start in range(0, len(moves), _CHUNK // 2):
        part = moves[start:start + _CHUNK // 2]
        shaped = [*part, *_no_user_moves(_shape_size(len(part)) - len(part))]
        stmt = (update(table)
                .where(or_(*(and_(table.c.id == uid, table.c.alert_cursor == old) for uid, old, _ in shaped)))
                .values(alert_cursor=case({uid: new for uid, _, new in shaped}, value=table.c.id)))
        moved = (await session.execute(stmt)).rowcount  # type: ignore[attr-defined]
        if moved != len(part):
            raise ClaimConflict(f"alerts of {len(part) - moved} of users {[u for u, _, _ in part]} were planned by "
                                "another sender")


async def create_deliveries(session: AsyncSession, planned: Sequence[PlannedDelivery], now: datetime, *,
                            owner: str | None = None, claim_ttl: float = 30.0) -> list[int]:
    """Write the deliveries with their final text, in the caller's transaction (one statement for the batch).
    Returns the new delivery ids, in the order given. `owner` claims them for that sender for `claim_ttl` s."""
    if not planned:
        return []
    dialect = session.get_bind().dialect.name
    table = cast(Table, AlertDelivery.__table__)
    # The claim's expiry by the database's clock, read once and written with the rows (not a second UPDATE).
    expires = await session.scalar(select(db_now(dialect) + claim_ttl)) if owner is not None else None
    rows = [{"user_id": p.user_id, "chat_id": p.chat_id, "text": p.text, "reply_markup": p.reply_markup,
             "state": DeliveryState.QUEUED, "attempts": 0, "not_before": now, "created_at": now,
             "claimed_by": owner, "claim_expires_at": expires} for p in planned]
    if dialect == "sqlite":
        # SQLAlchemy sends an INSERT .. RETURNING whose ids must come back in parameter order one row at a time on
        # SQLite (about 1 ms a row, with the write lock held). SQLite has one writer: inside this transaction no one
        # else inserts, and an executemany inserts its rows in parameter order, each with the largest rowid + 1
        # (https://sqlite.org/autoinc.html), so the ids are the last len(rows) ones.
        await session.execute(insert(table), rows)
        last = int(await session.scalar(select(func.max(table.c.id))) or 0)
        return list(range(last - len(rows) + 1, last + 1))
    # PostgreSQL: one INSERT .. SELECT per batch, sorted by a sentinel (SQLAlchemy's insertmanyvalues).
    return list((await session.execute(insert(table).returning(table.c.id, sort_by_parameter_order=True),
                                       rows)).scalars().all())


async def queued_events(session: AsyncSession) -> list[AlertEventRow]:
    """Every queued event (for tests and the admin)."""
    return list((await session.scalars(select(AlertEventRow).order_by(AlertEventRow.id))).all())


UNFINISHED = (DeliveryState.QUEUED, DeliveryState.SENDING)


async def renew_claims(session: AsyncSession, owner: str, claim_ttl: float) -> set[int]:
    """Extend `owner`'s claims on its unfinished deliveries; returns the ids still claimed by it (one taken over by
    another sender meanwhile is missing: its holder must not send it)."""
    expires = db_now(session.get_bind().dialect.name) + claim_ttl
    result = await session.execute(
        update(AlertDelivery).where(AlertDelivery.claimed_by == owner, AlertDelivery.state.in_(UNFINISHED))
        .values(claim_expires_at=expires).returning(AlertDelivery.id))
    return set(result.scalars().all())


async def still_claimed(session: AsyncSession, owner: str, ids: set[int]) -> set[int]:
    """Which of these deliveries `owner` still holds, whatever their state (one it just finished is still its)."""
    out: set[int] = set()
    for chunk in _chunks(sorted(ids)):
        out.update((await session.scalars(select(AlertDelivery.id).where(
            AlertDelivery.id.in_(chunk), AlertDelivery.claimed_by == owner))).all())
    return out


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


def _stored(error: str) -> str:
    """A delivery's error as stored: redacted first (a transport error may carry a URL with the bot token), then cut
    to the column (a cut secret would no longer be recognised)."""
    return redact(error)[:255]


async def mark_sending(session: AsyncSession, delivery_id: int, now: datetime) -> None:
    await session.execute(update(AlertDelivery).where(AlertDelivery.id == delivery_id).values(
        state=DeliveryState.SENDING, sending_at=now, attempts=AlertDelivery.attempts + 1))


async def mark_sent(session: AsyncSession, sent: Sequence[tuple[int, int]], now: datetime) -> None:
    """(delivery id, Telegram message id) pairs: those messages are delivered."""
    table = cast(Table, AlertDelivery.__table__)
    await session.execute(
        update(table).where(table.c.id == bindparam("did")).values(
            state=DeliveryState.SENT, telegram_message_id=bindparam("mid"), sent_at=now, error=None),
        [{"did": d, "mid": m} for d, m in sent])


async def mark_failed(session: AsyncSession, delivery_id: int, error: str, now: datetime) -> None:
    await session.execute(update(AlertDelivery).where(AlertDelivery.id == delivery_id).values(
        state=DeliveryState.FAILED, error=_stored(error)))


async def requeue_delivery(session: AsyncSession, delivery_id: int, not_before: datetime, error: str,
                           attempts: int) -> None:
    """Back off after a network error: the same message, later (kept across restarts)."""
    await session.execute(update(AlertDelivery).where(AlertDelivery.id == delivery_id).values(
        state=DeliveryState.QUEUED, not_before=not_before, error=_stored(error), attempts=max(1, attempts)))


async def deactivate_user(session: AsyncSession, user_id: int, reason: str, now: datetime) -> None:
    """The chat blocked the bot: no more alerts to it; what was waiting is dropped, not kept for ever."""
    await session.execute(update(User).where(User.id == user_id).values(active=False))
    await session.execute(update(AlertDelivery).where(
        AlertDelivery.user_id == user_id,
        AlertDelivery.state.in_((DeliveryState.QUEUED, DeliveryState.SENDING))).values(
        state=DeliveryState.FAILED, error=_stored(reason)))


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


async def delivery_counts(session: AsyncSession) -> dict[str, int]:
    rows = (await session.execute(select(AlertDelivery.state, func.count()).group_by(AlertDelivery.state))).all()
    return {state: n for state, n in rows}

