"""The running application, wired in this one place: migrations, the offer cache, the Telegram bot (long polling,
against TELEGRAM_API_URL when set), the scraper scheduler feeding storage's ingest, the admin watch, and the alert
hook where the alert pipeline (issue 5) plugs in. SIGTERM / SIGINT stop it cleanly.

    app = App(settings)              # or App(settings, alerts=AlertHook(on_events=..., make_sender=...))
    await app.run()                  # until stop() or a signal
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol

from aiogram import Bot
from aiogram.client.default import DefaultBotProperties
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.enums import ParseMode
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.admin_watch import DegradedWatch
from bot.commands import register_menu
from bot.dispatcher import build_dispatcher
from bot.offer_cache import CachedOffer, OfferCache
from core.polls import PollResult
from gpuradar.settings import Settings
from storage.db import make_engine, make_sessionmaker
from storage.ingest import OnEvents, record_poll
from storage.migrate import upgrade_async
from storage.queries import in_stock_offers

log = logging.getLogger(__name__)


class Sender(Protocol):
    """What the alert pipeline's sender offers: drain the outbox until stopped."""

    async def run(self) -> None: ...

    async def stop(self) -> None: ...


@dataclass
class AlertHook:
    """The alert pipeline's two ends: `on_events` writes outbox rows in the ingest transaction, `make_sender`
    builds the sender that drains them (given the bot and the sessionmaker)."""

    on_events: OnEvents | None = None
    make_sender: Callable[[Bot, async_sessionmaker[AsyncSession]], Sender] | None = None


def alert_hook(**sender_options: Any) -> AlertHook:
    """The alert pipeline's ends for `gpuradar run` (issue 5): `on_events` matches events against subscriptions
    and writes outbox rows in the ingest transaction; `make_sender` builds `bot.sender.AlertSender`, which the
    writer wakes right after the commit so an alert does not wait for the sender's next poll."""
    from bot.sender import AlertSender
    from storage.outbox import OutboxWriter

    senders: list[AlertSender] = []

    def wake() -> None:
        for sender in senders:
            sender.wake()

    def make_sender(bot: Bot, sessionmaker: async_sessionmaker[AsyncSession]) -> AlertSender:
        sender = AlertSender(bot, sessionmaker, **sender_options)
        senders.append(sender)
        return sender

    return AlertHook(on_events=OutboxWriter(wakeup=wake), make_sender=make_sender)


def make_bot(settings: Settings) -> Bot:
    if settings.bot_token is None:
        raise ValueError("BOT_TOKEN is not set")
    session = AiohttpSession(api=TelegramAPIServer.from_base(settings.telegram_api_url)) \
        if settings.telegram_api_url else AiohttpSession()
    return Bot(settings.bot_token.get_secret_value(), session=session,
               default=DefaultBotProperties(parse_mode=ParseMode.HTML))


class App:
    def __init__(self, settings: Settings, *, alerts: AlertHook | None = None, scrape: bool = True,
                 migrate: bool = True, polling_timeout: int = 10,
                 degraded_after: timedelta = timedelta(minutes=30)) -> None:
        self.settings = settings
        self.alerts = alerts or AlertHook()
        self.scrape = scrape
        self.migrate = migrate
        self.polling_timeout = polling_timeout
        self.degraded_after = degraded_after
        self.engine: AsyncEngine | None = None
        self.sessionmaker: async_sessionmaker[AsyncSession] | None = None
        self.offers: OfferCache | None = None
        self.bot: Bot | None = None
        self.dispatcher: Any = None
        self.started = asyncio.Event()
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task[Any]] = []
        self._scheduler: Any = None
        self._client: Any = None
        self._sender: Sender | None = None

    # ------------------------------------------------------------------ pieces
    async def _load_offers(self) -> list[CachedOffer]:
        assert self.sessionmaker is not None
        async with self.sessionmaker() as session:
            return [CachedOffer.from_stored(s) for s in await in_stock_offers(session)]

    async def ingest(self, result: PollResult, rates: Any = None) -> None:
        """The scheduler's sink: record the poll (and the alert outbox, same transaction), then refresh the cache
        inline mode answers from."""
        assert self.sessionmaker is not None and self.offers is not None
        await record_poll(self.sessionmaker, result, rates=rates, on_events=self.alerts.on_events)
        await self.offers.refresh()

    def _start_scraping(self) -> None:
        from scrapers.fx import RatesProvider
        from scrapers.http import make_client
        from scrapers.scheduler import ScrapeScheduler

        self._client = make_client(self.settings)
        rates = RatesProvider.from_settings(self.settings)

        async def sink(result: PollResult) -> None:
            await self.ingest(result, await rates.get(self._client))

        self._scheduler = ScrapeScheduler(self.settings, self._client, sink)
        self._scheduler.start()

    async def _watch_degraded(self, watch: DegradedWatch, every: float = 60.0) -> None:
        while not self._stop.is_set():
            try:
                await watch.check()
            except Exception:  # the watch must outlive a database hiccup
                log.warning("degraded-provider check failed", exc_info=True)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), every)

    # ------------------------------------------------------------------ lifecycle
    async def start(self, bot: Bot | None = None) -> None:
        s = self.settings
        if self.migrate:
            await upgrade_async(s.database_url)
        self.engine = make_engine(s.database_url)
        self.sessionmaker = make_sessionmaker(self.engine)
        self.offers = OfferCache(self._load_offers)
        await self.offers.refresh()
        self.bot = bot or make_bot(s)
        me = await self.bot.get_me()
        self.dispatcher = build_dispatcher(sessionmaker=self.sessionmaker, offers=self.offers,
                                           bot_username=me.username or "", admin_ids=s.admin_ids,
                                           provider_names=list(s.providers.enabled()))
        await register_menu(self.bot)
        self._tasks.append(asyncio.create_task(self.dispatcher.start_polling(
            self.bot, handle_signals=False, close_bot_session=False, polling_timeout=self.polling_timeout),
            name="polling"))
        if self.scrape:
            self._start_scraping()
        if self.alerts.make_sender is not None:
            self._sender = self.alerts.make_sender(self.bot, self.sessionmaker)
            self._tasks.append(asyncio.create_task(self._sender.run(), name="sender"))
        if s.admin_ids:
            watch = DegradedWatch(self.bot, self.sessionmaker, s.admin_ids, after=self.degraded_after)
            self._tasks.append(asyncio.create_task(self._watch_degraded(watch), name="degraded-watch"))
        log.info("GPU Radar running as @%s", me.username)  # the token itself is never logged
        self.started.set()

    def request_stop(self) -> None:
        self._stop.set()

    async def stop(self) -> None:
        self._stop.set()
        if self._scheduler is not None:
            self._scheduler.shutdown()
        if self.dispatcher is not None:
            with contextlib.suppress(RuntimeError):  # polling had already ended
                await self.dispatcher.stop_polling()
        if self._sender is not None:
            await self._sender.stop()  # finishes the message in flight
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(task, 15)
        if self._client is not None:
            await self._client.aclose()
        if self.bot is not None:
            await self.bot.session.close()
        if self.engine is not None:
            await self.engine.dispose()

    async def run(self, bot: Bot | None = None) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):  # not in the main thread / on Windows
                loop.add_signal_handler(sig, self.request_stop)
        try:
            await self.start(bot)
            await self._stop.wait()
        finally:
            await self.stop()
