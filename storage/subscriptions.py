"""Repository of users and subscriptions: the only place the bot reads or writes those tables.

Every function takes an `AsyncSession` and leaves committing to the caller (one conversation step = one
transaction); ownership is checked here so a forged callback cannot touch someone else's subscription.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

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
    """What a subscription will watch, validated before it touches the database."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["workload", "gpu"]
    query_text: str = Field(min_length=1, max_length=500)
    gpu_ids: list[str] | None = None
    workload_json: dict[str, Any] | None = None
    min_gib_by_count: dict[str, float] | None = None
    max_price: float | None = Field(default=None, gt=0)
    price_currency: Literal["RUB", "USD"] = "USD"
    providers: list[str] | None = None
    gpu_count: int | None = Field(default=None, ge=1, le=64)
    billing: Literal["hourly", "monthly", "spot"] | None = None
    region: str | None = Field(default=None, max_length=100)


def normalise_lang(language_code: str | None) -> str:
    """Telegram's language_code ('ru', 'ru-RU', 'uk', None...) -> 'ru' | 'en'. Russian for ru/uk/be/kk speakers."""
    code = (language_code or "").lower().split("-")[0]
    return "ru" if code in {"ru", "uk", "be", "kk"} else "en"


async def get_user(session: AsyncSession, user_id: int) -> User | None:
    return await session.get(User, user_id)


async def get_or_create_user(session: AsyncSession, user_id: int, chat_id: int,
                             language_code: str | None) -> tuple[User, bool]:
    """The stored user (created with defaults from the language on first contact) and whether it is new.
    A user who wrote again after blocking the bot is active again."""
    user = await session.get(User, user_id)
    if user is None:
        lang = normalise_lang(language_code)
        user = User(id=user_id, chat_id=chat_id, lang=lang, lang_chosen=False, currency=DEFAULT_CURRENCY[lang],
                    tz_offset_minutes=DEFAULT_TZ_OFFSET[lang], grouping=True, active=True)
        session.add(user)
        await session.flush()
        return user, True
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


async def add_subscription(session: AsyncSession, user: User, draft: SubscriptionDraft,
                           limit: int = MAX_SUBSCRIPTIONS_PER_USER) -> Subscription:
    """Store a subscription for `user`; an identical active one is returned instead of a duplicate.
    Raises SubscriptionLimitError at the per-user limit."""
    for existing in await list_subscriptions(session, user.id):
        if _same(existing, draft):
            if existing.paused:
                existing.paused = False
            return existing
    if await count_subscriptions(session, user.id) >= limit:
        raise SubscriptionLimitError(limit)
    sub = Subscription(user_id=user.id, chat_id=user.chat_id, paused=False, **draft.model_dump())
    session.add(sub)
    await session.flush()
    return sub


def _same(sub: Subscription, draft: SubscriptionDraft) -> bool:
    return all(getattr(sub, name) == value for name, value in draft.model_dump().items()
               if name not in ("workload_json", "min_gib_by_count"))


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
