"""Subscriptions from the Mini App: exactly what /subscribe makes (`bot.subscribing.subscribe_text`: the same
parser, caps, per-user limit and stored row), confirmed in the user's chat by the bot with the same text; the list
/subs shows, with pause and delete (`storage.subscriptions`, which checks ownership)."""

from __future__ import annotations

import logging
from typing import Any

from aiogram import Bot
from aiogram.exceptions import TelegramAPIError
from sqlalchemy.ext.asyncio import AsyncSession

from bot.estimates import Estimator
from bot.offer_cache import OfferCache
from bot.subscribing import subscribe_text
from bot.views import subscription_filters, subscription_what
from gpuradar.webapp.auth import WebUser
from gpuradar.webapp.rows import plain
from storage.subscriptions import (
    MAX_SUBSCRIPTIONS_PER_USER,
    delete_subscription,
    get_or_create_user,
    list_subscriptions,
    set_paused,
)
from storage.user_tables import Subscription, User

log = logging.getLogger(__name__)


def sub_json(n: int, sub: Subscription, lang: str) -> dict[str, Any]:
    return {"id": sub.id, "n": n, "kind": sub.kind, "query": sub.query_text,
            "what": plain(subscription_what(sub, lang)), "filters": plain(subscription_filters(sub, lang)).strip(),
            "paused": sub.paused, "in_group": sub.chat_id != sub.user_id}


async def listing(session: AsyncSession, user: User) -> dict[str, Any]:
    subs = await list_subscriptions(session, user.id)
    return {"subscriptions": [sub_json(n, s, user.lang) for n, s in enumerate(subs, start=1)],
            "limit": MAX_SUBSCRIPTIONS_PER_USER, "lang": user.lang}


async def user_of(session: AsyncSession, who: WebUser) -> User:
    """The stored user (created as the bot's first contact would create it)."""
    user, _ = await get_or_create_user(session, who.id, who.language_code)
    return user


async def subscribe(session: AsyncSession, who: WebUser, text: str, *, estimator: Estimator, offers: OfferCache,
                    bot: Bot | None) -> tuple[int, dict[str, Any]]:
    """(HTTP status, body): 201 with the new subscription, 200 when it already existed, 422 when refused (the bot's
    own explanation: not a workload, a filter out of range, the per-user limit)."""
    user = await user_of(session, who)
    reply = await subscribe_text(session, user, text, lang=user.lang, estimator=estimator, cache=offers)
    await session.commit()
    body = await listing(session, user)
    body["text"] = plain(reply.text)
    sub = reply.subscription
    if sub is None:
        return 422, {**body, "error": "refused"}
    body["subscription"] = next(s for s in body["subscriptions"] if s["id"] == sub.id)
    body["confirmed_in_chat"] = False
    if bot is not None:
        try:  # the same answer /subscribe gives, in the chat: the user sees it where alerts will come
            await bot.send_message(user.chat_id, reply.text, reply_markup=reply.markup,
                                   disable_web_page_preview=True)
            body["confirmed_in_chat"] = True
        except TelegramAPIError:  # never started the bot, or blocked it: stored all the same
            log.info("subscription confirmation not delivered to %d", user.chat_id)
    return (201 if reply.created else 200), body


async def pause(session: AsyncSession, who: WebUser, sub_id: int, paused: bool) -> tuple[int, dict[str, Any]]:
    user = await user_of(session, who)
    done = await set_paused(session, user.id, sub_id, paused) is not None
    await session.commit()
    return (200 if done else 404), await listing(session, user)


async def delete(session: AsyncSession, who: WebUser, sub_id: int) -> tuple[int, dict[str, Any]]:
    user = await user_of(session, who)
    done = await delete_subscription(session, user.id, sub_id)
    await session.commit()
    return (200 if done else 404), await listing(session, user)
