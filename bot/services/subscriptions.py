"""Changes to a user's existing subscriptions, each committed before the user is told. Ownership is checked by the
repository (`storage.subscriptions`): a forged button finds nothing and changes nothing."""

from __future__ import annotations

from enum import StrEnum

from sqlalchemy.ext.asyncio import AsyncSession

from storage.subscriptions import (
    delete_all_subscriptions,
    delete_subscription,
    get_subscription,
    set_paused,
    set_subscription_chat,
)
from storage.user_tables import Subscription


class Stop(StrEnum):
    """What "stop these alerts" under an alert did."""

    GONE = "gone"  # no such subscription of this user (deleted since, or not theirs)
    ALREADY = "already"  # it was paused already
    STOPPED = "stopped"  # paused now


async def stop_alerts(session: AsyncSession, user_id: int, sub_id: int) -> tuple[Stop, Subscription | None]:
    """Pause the subscription an alert's button names (resumable from /subs)."""
    sub = await get_subscription(session, user_id, sub_id)
    if sub is None:
        return Stop.GONE, None
    if sub.paused:
        return Stop.ALREADY, sub
    sub.paused = True
    await session.commit()
    return Stop.STOPPED, sub


async def pause(session: AsyncSession, user_id: int, sub_id: int, paused: bool) -> bool:
    """Pause or resume; False when the user has no such subscription."""
    done = await set_paused(session, user_id, sub_id, paused) is not None
    await session.commit()
    return done


async def delete(session: AsyncSession, user_id: int, sub_id: int) -> bool:
    """Delete one; False when the user has no such subscription."""
    done = await delete_subscription(session, user_id, sub_id)
    await session.commit()
    return done


async def delete_all(session: AsyncSession, user_id: int) -> int:
    """Delete every subscription of the user; how many there were."""
    n = await delete_all_subscriptions(session, user_id)
    await session.commit()
    return n


async def alerts_to_chat(session: AsyncSession, user_id: int, sub_id: int, chat_id: int) -> Subscription | None:
    """Send this subscription's alerts to `chat_id` (the owner's choice); None when not theirs or deleted."""
    sub = await set_subscription_chat(session, user_id, sub_id, chat_id)
    if sub is not None:
        await session.commit()
    return sub
