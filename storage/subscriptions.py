"""Repository of users and subscriptions: the only place the bot reads or writes those tables.

Every function takes an `AsyncSession` and leaves committing to the caller (one conversation step = one
transaction); ownership is checked here so a forged callback cannot touch someone else's subscription.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from core.limits import MAX_GPUS, MAX_INPUT_CHARS, MAX_PRICE, MAX_REGION_CHARS, MIN_GPUS
from storage.upsert import upsert_insert
from storage.user_tables import Subscription, User

MAX_SUBSCRIPTIONS_PER_USER = 20
DEFAULT_TZ_OFFSET = {"ru": 180, "en": 0}  # Moscow time for Russian speakers, UTC otherwise
DEFAULT_CURRENCY = {"ru": "RUB", "en": "USD"}


class SubscriptionLimitError(Exception):
    """The user already has the maximum number of subscriptions."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"subscription limit {limit} reached")
        self.limit = limit


class SubscriptionDraft(BaseModel):
    """What a subscription will watch, validated before it touches the database. The bounds are core.limits, the
    same the input readers check with a clear message first, so a draft built from accepted input always validates."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["workload", "gpu"]
    query_text: str = Field(min_length=1, max_length=MAX_INPUT_CHARS)
    gpu_ids: list[str] | None = None
    workload_json: dict[str, Any] | None = None
    min_gib_by_count: dict[str, float] | None = None
    # a serving target said: each card watched from the fewest GPUs of it that keep up (core.answer.keeping_counts)
    min_count_by_gpu: dict[str, int] | None = None
    answer_gib: float | None = Field(default=None, ge=0, allow_inf_nan=False)  # the estimate's "VRAM per GPU"
    rec_gib_by_count: dict[str, float] | None = None  # comfortable per-GPU memory by count (tight below it)
    max_price: float | None = Field(default=None, gt=0, le=MAX_PRICE, allow_inf_nan=False)
    price_currency: Literal["RUB", "USD"] = "USD"
    # What max_price bounds (core.matching.PRICE_BASES): the whole configuration per hour, or per GPU-hour.
    price_basis: Literal["total", "gpu"] = "total"
    # The unit the cap was said in and is said back in; max_price is per hour either way (730 hours a month).
    price_period: Literal["hour", "month"] = "hour"
    providers: list[str] | None = None
    gpu_count: int | None = Field(default=None, ge=MIN_GPUS, le=MAX_GPUS)
    billing: Literal["hourly", "monthly", "spot"] | None = None
    region: str | None = Field(default=None, max_length=MAX_REGION_CHARS)


def normalise_lang(language_code: str | None) -> str:
    """Telegram's language_code ('ru', 'ru-RU', 'uk', None...) -> 'ru' | 'en'. Russian for ru/uk/be/kk speakers."""
    code = (language_code or "").lower().split("-")[0]
    return "ru" if code in {"ru", "uk", "be", "kk"} else "en"


async def get_user(session: AsyncSession, user_id: int) -> User | None:
    return await session.get(User, user_id)


async def get_or_create_user(session: AsyncSession, user_id: int, language_code: str | None) -> tuple[User, bool]:
    """The stored user (created with defaults from the language on first contact) and whether it is new.
    A user who wrote again after blocking the bot is active again.

    The user's chat is their private chat (its id is the user id), wherever the first message came from: a group
    is never where their own things go unless they choose it per subscription. Creation is an upsert, so two
    first updates of a new user arriving together both get the one row instead of one failing on the key."""
    user = await session.get(User, user_id)
    if user is None:
        lang = normalise_lang(language_code)
        stmt = upsert_insert(session, User).values(
            id=user_id, chat_id=user_id, lang=lang, lang_chosen=False, currency=DEFAULT_CURRENCY[lang],
            tz_offset_minutes=DEFAULT_TZ_OFFSET[lang], grouping=True, active=True, created_at=datetime.now(UTC))
        inserted = stmt.on_conflict_do_nothing(index_elements=["id"]).returning(User.id)
        created = (await session.execute(inserted)).scalar_one_or_none() is not None
        user = await session.get(User, user_id, populate_existing=True)
        if user is None:  # pragma: no cover - the row was inserted or already there
            raise LookupError(f"user {user_id} vanished while being created")
        return user, created
    if not user.active:
        user.active = True
    if not user.lang_chosen and language_code:
        user.lang = normalise_lang(language_code)  # follow the client's language until /lang pins one
    return user, False


async def set_language(session: AsyncSession, user: User, lang: str) -> None:
    if lang not in ("ru", "en"):
        raise ValueError(f"unsupported language {lang!r}")
    user.lang = lang
    user.lang_chosen = True


async def set_currency(session: AsyncSession, user: User, currency: str) -> None:
    if currency not in ("RUB", "USD"):
        raise ValueError(f"unsupported currency {currency!r}")
    user.currency = currency


async def set_quiet_hours(session: AsyncSession, user: User, start: int | None, end: int | None) -> None:
    if (start is None) != (end is None):
        raise ValueError("quiet hours need both ends or none")
    for hour in (start, end):
        if hour is not None and not 0 <= hour <= 23:
            raise ValueError(f"hour out of range: {hour}")
    user.quiet_start, user.quiet_end = start, end


async def set_tz_offset(session: AsyncSession, user: User, minutes: int) -> None:
    """The user's time zone as minutes east of UTC: quiet hours are read in it."""
    if not -14 * 60 <= minutes <= 14 * 60:
        raise ValueError(f"UTC offset out of range: {minutes}")
    user.tz_offset_minutes = minutes


async def set_grouping(session: AsyncSession, user: User, grouping: bool) -> None:
    user.grouping = grouping


async def count_subscriptions(session: AsyncSession, user_id: int) -> int:
    stmt = select(func.count()).select_from(Subscription).where(Subscription.user_id == user_id)
    return int((await session.execute(stmt)).scalar_one())


@dataclass(frozen=True)
class Added:
    subscription: Subscription
    created: bool  # False: an identical one existed (and was resumed if paused)
    total: int  # the user's subscriptions now


async def lock_user(session: AsyncSession, user_id: int) -> None:
    """Serialise one user's subscription changes until the transaction ends: a no-op UPDATE of the user's row
    takes its row lock on PostgreSQL and the write lock on SQLite, before anything is counted. Without it, 60
    simultaneous /subscribe all counted 19 and all inserted."""
    await session.execute(update(User).where(User.id == user_id).values(active=User.active)
                          .execution_options(synchronize_session=False))


async def add_subscription(session: AsyncSession, user: User, draft: SubscriptionDraft, *,
                           chat_id: int | None = None, limit: int = MAX_SUBSCRIPTIONS_PER_USER) -> Added:
    """Store a subscription for `user`; an identical one is returned (resumed) instead of a duplicate.
    `chat_id`: where its alerts go, the user's private chat by default (a group only by the user's choice).
    Raises SubscriptionLimitError at the per-user limit, which holds under concurrent calls (see lock_user)."""
    await lock_user(session, user.id)
    existing = await list_subscriptions(session, user.id)
    for sub in existing:
        if _same(sub, draft):
            if sub.paused:
                sub.paused = False
            return Added(sub, False, len(existing))
    if len(existing) >= limit:
        raise SubscriptionLimitError(limit)
    sub = Subscription(user_id=user.id, chat_id=user.id if chat_id is None else chat_id, paused=False,
                       **draft.model_dump())
    session.add(sub)
    await session.flush()
    return Added(sub, True, len(existing) + 1)


async def set_subscription_chat(session: AsyncSession, user_id: int, sub_id: int,
                                chat_id: int) -> Subscription | None:
    """Send this subscription's alerts to `chat_id` (the owner's explicit choice); None when not theirs."""
    sub = await get_subscription(session, user_id, sub_id)
    if sub is not None:
        sub.chat_id = chat_id
    return sub


def _same(sub: Subscription, draft: SubscriptionDraft) -> bool:
    return all(getattr(sub, name) == value for name, value in draft.model_dump().items()
               if name not in ("workload_json", "min_gib_by_count", "answer_gib", "rec_gib_by_count",
                               "min_count_by_gpu", "price_period"))  # the same cap said per month is the same watch


async def list_subscriptions(session: AsyncSession, user_id: int) -> list[Subscription]:
    stmt = select(Subscription).where(Subscription.user_id == user_id).order_by(Subscription.id)
    return list((await session.execute(stmt)).scalars())


async def get_subscription(session: AsyncSession, user_id: int, sub_id: int) -> Subscription | None:
    """The subscription when it exists and belongs to `user_id`."""
    sub = await session.get(Subscription, sub_id)
    return sub if sub is not None and sub.user_id == user_id else None


async def set_paused(session: AsyncSession, user_id: int, sub_id: int, paused: bool) -> Subscription | None:
    sub = await get_subscription(session, user_id, sub_id)
    if sub is not None:
        sub.paused = paused
    return sub


async def delete_subscription(session: AsyncSession, user_id: int, sub_id: int) -> bool:
    sub = await get_subscription(session, user_id, sub_id)
    if sub is None:
        return False
    await session.delete(sub)
    return True


async def delete_all_subscriptions(session: AsyncSession, user_id: int) -> int:
    subs = await list_subscriptions(session, user_id)
    for sub in subs:
        await session.delete(sub)
    return len(subs)


class BotStats(BaseModel):
    users: int
    active_users: int
    subscriptions: int
    active_subscriptions: int


async def bot_stats(session: AsyncSession) -> BotStats:
    async def count(stmt: Any) -> int:
        return int((await session.execute(stmt)).scalar_one())

    return BotStats(
        users=await count(select(func.count()).select_from(User)),
        active_users=await count(select(func.count()).select_from(User).where(User.active.is_(True))),
        subscriptions=await count(select(func.count()).select_from(Subscription)),
        active_subscriptions=await count(select(func.count()).select_from(Subscription)
                                         .where(Subscription.paused.is_(False))),
    )
