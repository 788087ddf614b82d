"""Building the dispatcher: routers, the user middleware, and the shared services injected by name.

Handlers declare what they need as parameters (`offers`, `estimator`, `availability`, `tokens`, `prefs`, `bot_username`,
`provider_names`, `provider_setup`, `sessionmaker`, `webapp_url`); aiogram passes the dispatcher's workflow data by
those names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from aiogram import Dispatcher
from aiogram.fsm.storage.base import BaseStorage
from aiogram.fsm.storage.memory import MemoryStorage
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.availability_marks import StayMarks
from bot.chart_cache import ChartCache
from bot.estimates import Estimator
from bot.fsm_middleware import install as install_fsm
from bot.handlers import routers
from bot.handlers.subscribe import WizardCancel
from bot.listed_prices import ListedPrices
from bot.middlewares import UserMiddleware, apologise_on_error
from bot.offer_cache import OfferCache
from bot.prefs import PrefsCache
from bot.ratelimit import RateLimiter, RateLimitMiddleware
from bot.tokens import QueryTokens
from storage.availability_cache import ChangeCache


def build_dispatcher(*, sessionmaker: async_sessionmaker[AsyncSession], offers: OfferCache, bot_username: str,
                     admin_ids: Iterable[int] = (), provider_names: Iterable[str] = (),
                     provider_setup: Mapping[str, str] | None = None,
                     estimator: Estimator | None = None, storage: BaseStorage | None = None,
                     webapp_url: str | None = None) -> Dispatcher:
    # `storage`: where wizard state lives. The application passes the database-backed one (bot.fsm_storage) so a
    # conversation survives a switch between replicas; memory is enough for a dispatcher used alone (tests).
    dp = Dispatcher(storage=storage or MemoryStorage(), disable_fsm=True)
    install_fsm(dp)  # aiogram's FSM middleware, without a state read per inline query (bot/fsm_middleware.py)
    prefs = PrefsCache()
    dp["sessionmaker"] = sessionmaker
    dp["offers"] = offers
    dp["listed_prices"] = ListedPrices(sessionmaker)  # price lists beside the in-stock offers (bot/listed_prices.py)
    dp["stay_marks"] = StayMarks(sessionmaker)  # the ⚡ of short-lived offers (bot/availability_marks.py)
    dp["charts"] = ChartCache()  # the /history charts drawn lately (bot/chart_cache.py)
    dp["availability"] = ChangeCache()  # the changes /when and /history read, held (storage/availability_cache.py)
    dp["estimator"] = estimator or Estimator()
    dp["tokens"] = QueryTokens(sessionmaker)  # link tokens shared by the replicas through the database
    dp["prefs"] = prefs
    dp["bot_username"] = bot_username
    dp["webapp_url"] = webapp_url  # WEB__PUBLIC_URL: "Open the market" under /offers and /estimate (bot.market_button)
    dp["provider_names"] = sorted(provider_names)
    # name -> "enabled" | "needs:<SETTING>,<SETTING>" | "disabled", for /providers (default: the polled ones)
    dp["provider_setup"] = dict(provider_setup) if provider_setup is not None else dict.fromkeys(provider_names,
                                                                                                 "enabled")
    middleware = UserMiddleware(sessionmaker, prefs)
    dp.message.outer_middleware(middleware)
    dp.callback_query.outer_middleware(middleware)
    dp.message.outer_middleware(WizardCancel())  # after the user middleware: it needs the user's language
    dp.errors.register(apologise_on_error(prefs))
    limits = RateLimitMiddleware(RateLimiter())  # handlers opt in with flags={"rate": kind}
    dp.message.middleware(limits)
    dp.callback_query.middleware(limits)
    dp.inline_query.middleware(limits)
    dp.include_routers(*routers(frozenset(admin_ids)))
    return dp
