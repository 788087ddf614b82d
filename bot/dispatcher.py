"""Building the dispatcher: routers, the user middleware, and the shared services injected by name.

Handlers declare what they need as parameters (`offers`, `estimator`, `tokens`, `prefs`, `bot_username`,
`provider_names`, `sessionmaker`); aiogram passes the dispatcher's workflow data by those names.
"""

from __future__ import annotations

from collections.abc import Iterable

from aiogram import Dispatcher
from aiogram.fsm.storage.memory import MemoryStorage
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.estimates import Estimator
from bot.handlers import routers
from bot.middlewares import UserMiddleware
from bot.offer_cache import OfferCache
from bot.prefs import PrefsCache
from bot.tokens import QueryTokens


def build_dispatcher(*, sessionmaker: async_sessionmaker[AsyncSession], offers: OfferCache, bot_username: str,
                     admin_ids: Iterable[int] = (), provider_names: Iterable[str] = (),
                     estimator: Estimator | None = None) -> Dispatcher:
    dp = Dispatcher(storage=MemoryStorage())  # wizard state is short-lived: losing it on restart costs one tap
    prefs = PrefsCache()
    dp["sessionmaker"] = sessionmaker
    dp["offers"] = offers
    dp["estimator"] = estimator or Estimator()
    dp["tokens"] = QueryTokens()
    dp["prefs"] = prefs
    dp["bot_username"] = bot_username
    dp["provider_names"] = sorted(provider_names)
    middleware = UserMiddleware(sessionmaker, prefs)
    dp.message.outer_middleware(middleware)
    dp.callback_query.outer_middleware(middleware)
    dp.include_routers(*routers(frozenset(admin_ids)))
    return dp
