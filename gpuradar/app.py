"""The running application, wired in this one place: migrations, the offer cache, the Telegram bot (long polling,
or a webhook on the replica's web server), wizard state in the shared database, the scraper scheduler feeding
storage's ingest (only on the replica holding the scrapers' leader lease), the alert sender (on every replica),
the admin watch, and `/healthz` + `/metrics`. SIGTERM / SIGINT stop it cleanly.

    app = App(settings, alerts=alert_hook(), serve_web=True)   # what `gpuradar run` builds
    await app.run()                                            # until stop() or a signal

Several replicas need no other code, only settings (docs/operations.md): the lease picks one scraper, the
outbox claims keep each alert to one sender, and webhook mode lets the load balancer spread the updates.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Protocol

from aiogram import Bot
from aiogram.client.default import DefaultBotProperties
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.enums import ParseMode
from aiogram.fsm.storage.base import BaseStorage
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.admin_watch import DegradedWatch
from bot.commands import register_menu
from bot.dispatcher import build_dispatcher
from bot.estimates import Estimator
from bot.estimates import warm_up as warm_up_estimates
from bot.fsm_storage import SqlStorage
from bot.offer_cache import CachedOffer, OfferCache, OfferChanges
from bot.pacing import Pacer
from core.alerts import AlertPolicy
from core.polls import PollResult
from core.slices import collector_paused
from gpuradar.heap import AFTER_RELOAD_GAP, SETTLE_EVERY, SETTLE_LOADED, SETTLE_SOON, HeapSettler
from gpuradar.ingest_process import Fence, IngestProcess, read_in_stock, trim_heap
from gpuradar.leadership import SCRAPERS_LEASE, LeadershipLost, ScrapeLeadership
from gpuradar.metrics import METRICS, Metrics, Refresher, offers_refresher
from gpuradar.migrate_lock import migration_lock
from gpuradar.pacing import install_pacing
from gpuradar.settings import Settings
from gpuradar.startup import check_database_url, check_token_format, database_unreachable, port_in_use, reach_telegram
from gpuradar.warm import SCRAPING_IMPORTS, SENDER_IMPORTS, WEB_IMPORTS, warm_up_off_loop
from modelhub import HubResolver, HubSettings
from scrapers.heap import freeze_what_is_built
from storage.db import make_engine, make_sessionmaker
from storage.hub_cache import HubCacheStore
from storage.migrate import upgrade_async
from storage.rate_share import RateShare

if TYPE_CHECKING:
    from storage.outbox import OutboxWriter

log = logging.getLogger(__name__)
OFFER_SLICE = 500  # offers built per step of the bot's loop when the cache is refreshed from the ingest process


class Sender(Protocol):
    """What the alert pipeline's sender offers (gpuradar.sender_process: `SenderProcess` in a child, the default;
    `SenderService` on this loop): drain the outbox until stopped, look now when woken, keep a part of the limit."""

    async def run(self) -> None: ...

    async def stop(self) -> None: ...

    def wake(self) -> None: ...

    def share(self, replicas: int) -> None: ...


@dataclass
class AlertHook:
    """The alert pipeline's two ends: `on_events` writes outbox rows in the ingest transaction (in the ingest
    child, which runs the writer's policy; None: no alerts), `sender_options` are `bot.sender.AlertSender`'s for the
    sender that drains them (picklable: the sender runs in a child process; None: no sender). `wake` tells every
    sender registered in `wakers` (each with its loop) that alerts were committed."""

    on_events: OutboxWriter | None = None
    sender_options: dict[str, Any] | None = None
    wakers: list[tuple[Callable[[], None], asyncio.AbstractEventLoop]] = field(default_factory=list)

    def wake(self) -> None:
        # Called after the ingest child's commit: handed to each sender's loop (thread-safe).
        for wake, loop in list(self.wakers):
            with contextlib.suppress(RuntimeError):  # that loop has closed
                loop.call_soon_threadsafe(wake)


def alert_hook(policy: AlertPolicy | None = None, **sender_options: Any) -> AlertHook:
    """The alert pipeline's ends for `gpuradar run` (issue 5): `on_events` matches events against subscriptions
    and writes outbox rows in the ingest transaction; the App runs `bot.sender.AlertSender` with `sender_options`
    (gpuradar.sender_process), which the writer wakes right after the commit so an alert does not wait for the
    sender's next poll."""
    from storage.outbox import OutboxWriter

    hook = AlertHook(sender_options=sender_options)
    hook.on_events = OutboxWriter(policy, wakeup=hook.wake)
    return hook


class _Shares:
    """storage.rate_share's `Paced` for this replica's limiters together: the replies' pacer and the sender's part
    (in its child) follow the same replica count."""

    def __init__(self, pacer: Pacer) -> None:
        self.pacers: list[Any] = [pacer]

    @property
    def replicas(self) -> int:
        return int(self.pacers[0].replicas)

    @replicas.setter
    def replicas(self, replicas: int) -> None:
        self.share(replicas)

    def share(self, replicas: int) -> None:
        for pacer in self.pacers:
            pacer.share(replicas)


class WebhookSettingsError(ValueError):
    """Webhook mode asked for without what it needs; the message says what to set, in the operator's language."""


def check_webhook_settings(settings: Settings) -> None:
    """Raise WebhookSettingsError (in the operator's language) unless webhook mode has a URL and a valid secret.

    The secret is required, not generated: every replica must share it, and one generated per process would make
    each replica's setWebhook lock the others out."""
    from gpuradar.web import valid_secret

    hook = settings.webhook
    problem = None
    if not hook.url:
        problem = "no_url"
    elif not hook.url.startswith("https://") and not _loopback(hook.url):
        problem = "not_https"
    elif hook.secret is None or not valid_secret(hook.secret.get_secret_value()):
        problem = "no_secret"
    if problem:
        from texts.i18n import locale_lang, t

        raise WebhookSettingsError(t(locale_lang(), f"webhook_{problem}"))


def _loopback(url: str) -> bool:
    """A plain-HTTP loopback URL is accepted for a local Bot API server (and the tests' stand-in)."""
    from urllib.parse import urlsplit

    return urlsplit(url).hostname in ("127.0.0.1", "localhost", "::1")


def make_pacer(settings: Settings, rate: float | None = None) -> Pacer:
    """A Telegram rate limiter at `rate` messages a second (default: the bot's whole `SENDER__GLOBAL_RATE`); the
    replica's replies and its sender child split each window as gpuradar/sender_process.py says."""
    s = settings.sender
    rate = s.global_rate if rate is None else rate
    return Pacer(rate, s.chat_interval, window=s.window, per_window=max(1, int(rate * s.window)))


def make_bot(settings: Settings, pacer: Pacer | None = None) -> Bot:
    if settings.bot_token is None:
        raise ValueError("BOT_TOKEN is not set")
    session = AiohttpSession(api=TelegramAPIServer.from_base(settings.telegram_api_url)) \
        if settings.telegram_api_url else AiohttpSession()
    bot = Bot(settings.bot_token.get_secret_value(), session=session,
              default=DefaultBotProperties(parse_mode=ParseMode.HTML))
    if pacer is not None:
        install_pacing(bot, pacer)
    return bot


class App:
    def __init__(self, settings: Settings, *, alerts: AlertHook | None = None, scrape: bool = True,
                 migrate: bool = True, polling_timeout: int = 10,
                 degraded_after: timedelta = timedelta(minutes=30), serve_web: bool = False,
                 webhook: bool | None = None, metrics: Metrics = METRICS,
                 fsm_storage: BaseStorage | None = None) -> None:
        """`serve_web`: bind WEB__HOST:WEB__PORT for /healthz and /metrics (`gpuradar run` does; embedding code
        and tests usually do not, so they never contend for the port). `webhook`: receive updates by webhook
        (None: when WEBHOOK__URL is set); it implies the web server. `fsm_storage`: wizard state (default: the
        shared database, so a conversation survives a switch between replicas). Polls are recorded in a child
        process (gpuradar.ingest_process), the one ingest path; `storage.ingest.record_poll` is what it runs."""
        self.settings = settings
        self.alerts = alerts or AlertHook()
        # The ingest child builds its own outbox writer from the hook's policy: a hook of another kind would never
        # run there, so it is refused here rather than ignored.
        from storage.outbox import OutboxWriter

        hook = self.alerts.on_events
        if hook is not None and type(hook) is not OutboxWriter:
            raise TypeError(f"the ingest process writes alerts with storage.outbox.OutboxWriter, not {type(hook)!r}; "
                            "call storage.ingest.record_poll with that hook instead")
        self.scrape = scrape
        self.migrate = migrate
        self.polling_timeout = polling_timeout
        self.degraded_after = degraded_after
        self.webhook = bool(settings.webhook.url) if webhook is None else webhook
        if self.webhook:
            check_webhook_settings(settings)
        self.serve_web = serve_web or self.webhook
        self.metrics = metrics
        self.fsm_storage = fsm_storage
        self.leadership: ScrapeLeadership | None = None
        self.web: Any = None  # gpuradar.web.WebServer once started
        self._refreshers: list[Refresher] = []
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
        self._sender: Any = None  # a Sender: gpuradar.sender_process.SenderProcess, or SenderService in-process
        self._shares: _Shares | None = None
        self.heap = HeapSettler()  # frozen once started (`freeze_heap`), again after each reload (gpuradar/heap.py)
        self._settle_soon: asyncio.Event | None = None  # set when a question loaded many held changes
        self.ingest_process: IngestProcess | None = None
        self._offers_reading: tuple[int, int] | None = None  # the ingest process's reading the offer cache holds

    # ------------------------------------------------------------------ pieces
    async def _load_offers(self) -> list[CachedOffer] | OfferChanges:
        """The offers inline mode answers from. Read and built off this loop where ingest runs (thousands of rows
        validated into models is CPU this loop would otherwise spend while users wait): in the ingest process,
        which hands over plain tuples of what changed, turned into offers here a slice at a time so no answer waits
        long; the cache then re-sorts only the groups they are in."""
        if self.ingest_process is not None and self.ingest_process.pid is not None:
            # Only what changed since the reading this replica holds crosses over (all after a child restart).
            got = await self.ingest_process.offers(self._offers_reading)
            reading: tuple[int, int] | None = got.reading
            rows, gone, full = got.rows, got.gone, got.full
        else:
            # No child yet (a replica that does not lead, or at start): read here, the same rows, in partitions.
            assert self.sessionmaker is not None
            reading, rows, gone, full = None, await read_in_stock(self.sessionmaker), [], True
        changed: list[CachedOffer] = []
        for i in range(0, len(rows), OFFER_SLICE):
            if i:
                await asyncio.sleep(0)
            changed.extend(CachedOffer(*row) for row in rows[i:i + OFFER_SLICE])
        if reading is not None:
            self._offers_reading = reading
        return OfferChanges(changed, gone, full=full)

    async def ingest(self, result: PollResult, rates: Any = None, *, term: int | None = None) -> None:
        """The scheduler's sink: record the poll (and the alert queue, same transaction) off this loop, in the
        ingest process, then refresh the cache inline mode answers from. `term`: the leader's
        term; the alert queue is then written only while this replica still holds the lease with it
        (LeadershipLost otherwise, and nothing of the poll is recorded)."""
        assert self.ingest_process is not None and self.offers is not None
        fence = None
        if term is not None:
            assert self.leadership is not None
            lease = self.leadership.lease
            fence = Fence(lease.name, lease.holder, term)
        writer = self.alerts.on_events
        done = await self.ingest_process.record(result, rates=rates, fence=fence,
                                                alerts=writer.policy if writer is not None else None)
        if writer is not None:
            writer.stats["queued"] += done.queued
            writer.stats["cooling"] += done.cooling
            if (done.queued or done.retried) and writer.wakeup is not None:
                writer.wakeup()  # committed: the senders look at once
        await self.offers.refresh()
        if self.heap.frozen:
            # The refreshed offers frozen: out of every later full collection's walk.
            self.heap.settle(gap=AFTER_RELOAD_GAP)
        # The poll's transients (its payload parsed, its offers) are gone: their pages go back too. In a thread: the
        # loop's own small objects come from Python's pools meanwhile, rarely waiting on glibc's lock.
        await asyncio.to_thread(trim_heap)

    def _observe(self, result: PollResult) -> None:
        seconds = (result.finished_at - result.started_at).total_seconds()
        self.metrics.observe_scrape(result.provider, seconds, result.status.value,
                                    len(result.offers) if result.trusted else None, skipped=result.skipped,
                                    unknown_gpu=sum(o.gpu is None for o in result.offers) if result.trusted else None)

    async def _start_scraping(self, term: int) -> Callable[[], Any]:
        """Start the scheduler for leadership `term`; returns the coroutine function that stops it."""
        from scrapers.fx import RatesProvider
        from scrapers.http import make_client
        from scrapers.scheduler import ScrapeScheduler

        assert self.leadership is not None
        client = await asyncio.to_thread(make_client, self.settings)  # its TLS context: the CA bundle parsed, ~50 ms
        rates = RatesProvider.from_settings(self.settings)
        if self.ingest_process is not None:
            await self.ingest_process.start()  # the leader's ingest process, before its first poll is due

        async def sink(result: PollResult) -> None:
            self._observe(result)
            try:
                await self.ingest(result, await rates.get(client), term=term)
            except LeadershipLost:
                # Another replica leads now and polls the same providers: this poll's changes are its to record.
                log.warning("poll of %s discarded: leadership (term %d) was lost meanwhile", result.provider, term)

        scheduler = ScrapeScheduler(self.settings, client, sink)
        scheduler.start()
        self._scheduler, self._client = scheduler, client
        upkeep = asyncio.create_task(self._retention_loop(), name="retention")

        async def close() -> None:
            upkeep.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await upkeep
            await scheduler.stop()  # a poll in flight finishes (or is cut short quietly) before its client closes
            await client.aclose()
            if self._scheduler is scheduler:
                self._scheduler = self._client = None

        return close

    async def _retention_loop(self, first_after: float = 60.0) -> None:
        """The leader keeps storage bounded (storage/retention.py), in the ingest process, every RETENTION__EVERY s."""
        settings = self.settings.retention
        delay = first_after
        while True:
            await asyncio.sleep(delay)
            delay = settings.every
            try:
                assert self.ingest_process is not None
                await self.ingest_process.retention(settings)
            except Exception:  # upkeep must never take the leader down; the next run tries again
                log.warning("retention run failed", exc_info=True)

    def _leader_changed(self, leading: bool) -> None:
        self.metrics.set_leader(SCRAPERS_LEASE, leading)

    def _status(self) -> dict[str, object]:
        """Informational fields of /healthz: which replica leads is the first question when scraping stalls."""
        lease = self.leadership.lease if self.leadership else None
        return {"scraper_leader": bool(self.leadership and self.leadership.leading),
                "holder": lease.holder if lease else None,
                "updates": "webhook" if self.webhook else "polling"}

    async def _start_web(self) -> None:
        from gpuradar import webhook
        from gpuradar.db_metrics import outbox_refresher
        from gpuradar.web import create_app, start_server

        assert self.engine is not None and self.sessionmaker is not None
        s = self.settings
        app = create_app(engine=self.engine, metrics=self.metrics, status=self._status,
                         health_timeout=s.web.health_timeout)
        self._refreshers = [offers_refresher(self.sessionmaker, self.metrics),
                            outbox_refresher(self.sessionmaker, self.metrics)]
        for refresher in self._refreshers:
            self.metrics.add_refresher(refresher)
        if self.webhook:
            assert s.webhook.secret is not None and self.bot is not None
            webhook.mount(app, self.dispatcher, self.bot, s.webhook.path, s.webhook.secret.get_secret_value(),
                          body_timeout=s.web.body_timeout)
        self._mount_webapp(app)
        try:
            self.web = await start_server(app, s.web.host, s.web.port, header_timeout=s.web.header_timeout)
        except OSError as exc:
            problem = port_in_use(exc, s.web.host, s.web.port)
            if problem is not None:
                raise problem from None
            raise

    def _mount_webapp(self, app: Any) -> None:
        """The market page and its API (gpuradar/webapp) on this server, reading the bot's own offer cache and
        estimator; initData is checked with the bot's token."""
        from gpuradar.webapp.api import WebAppServices, mount

        assert self.offers is not None and self.bot is not None
        mount(app, WebAppServices(offers=self.offers, estimator=self.dispatcher["estimator"],
                                  sessionmaker=self.sessionmaker, token=self.bot.token, bot=self.bot,
                                  providers=list(self.settings.providers.enabled()),
                                  forwarded_for=self.settings.web.forwarded_for))

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
        if bot is None and s.bot_token is not None:
            check_token_format(s.bot_token.get_secret_value())  # before the database: nothing runs for a typo
        check_database_url(s.database_url)
        try:
            if self.migrate:
                async with migration_lock(s.database_url):  # replicas starting together migrate one after another
                    await upgrade_async(s.database_url)
        except Exception as exc:
            if (problem := database_unreachable(s.database_url, exc)) is not None:
                raise problem from None
            raise
        self.engine = make_engine(s.database_url)
        self.sessionmaker = make_sessionmaker(self.engine)
        # Polls are recorded off this loop (the scheduler's, and any the embedding code hands to `ingest`): in a
        # child process, started when first needed (the leader starts it with its scheduler), so a replica that
        # never leads runs none.
        self.ingest_process = IngestProcess(s.database_url, in_thread=s.ingest.in_process)
        self.offers = OfferCache(self._load_offers)
        # Read with the collector paused, and a large table's offers frozen as soon as they are built: a collection
        # meanwhile, or the first young one after, would walk every one of them (automatic full collections of
        # 0.6-0.8 s at 100,000 offers, the loop waiting); frozen, none does (gpuradar/heap.py).
        with collector_paused():
            await self.offers.refresh()
            if len(self.offers) >= SETTLE_LOADED:
                self.heap.freeze_built()
                freeze_what_is_built(True)
        # Replies first, alerts take the rest: the replies' pacer has the replica's whole share and the sender child
        # leaves it room (gpuradar/sender_process.py).
        self.pacer = make_pacer(s)
        # Telegram's overall limit is the bot's, not this process's: every replica keeps its part of it.
        self._shares = _Shares(self.pacer)
        share = RateShare(self.sessionmaker, self._shares, ttl=s.sender.share_ttl)
        await share.renew()  # before the first message: a newcomer never starts at the whole rate
        self._tasks.append(asyncio.create_task(share.run(self._stop), name="rate-share"))
        self.bot = bot or make_bot(s)
        install_pacing(self.bot, self.pacer, self.metrics)
        me = await reach_telegram(self.bot, attempts=s.telegram_connect_attempts, backoff=s.telegram_connect_backoff,
                                  api=s.telegram_api_url or "")
        # The first users' phrases cost what later ones do (parser, catalogs, texts), and the Telegram types and
        # modules used later are built: once, in a thread, before polling starts (gpuradar/warm.py).
        imports = ((WEB_IMPORTS if self.serve_web else ()) + (SCRAPING_IMPORTS if self.scrape else ())
                   + (SENDER_IMPORTS if self.alerts.sender_options is not None else ()))
        await warm_up_off_loop(warm_up_estimates, imports, webhook=self.webhook, menu_button=bool(s.web.public_url))
        self.dispatcher = build_dispatcher(sessionmaker=self.sessionmaker, offers=self.offers,
                                           estimator=Estimator(hub=HubResolver(HubSettings.from_env(),
                                                                               HubCacheStore(self.sessionmaker))),
                                           bot_username=me.username or "", admin_ids=s.admin_ids,
                                           provider_names=list(s.providers.enabled()),
                                           provider_setup=s.providers.setup(),
                                           storage=self.fsm_storage or SqlStorage(self.sessionmaker),
                                           webapp_url=s.web.public_url)
        await register_menu(self.bot)
        if s.web.public_url:
            from bot.market_button import set_menu_button

            await set_menu_button(self.bot, s.web.public_url)  # the menu button opens the market page
        if self.serve_web:
            await self._start_web()  # before setWebhook: Telegram may post the first update at once
        if self.webhook:
            from gpuradar import webhook

            assert s.webhook.url is not None and s.webhook.secret is not None
            await webhook.register(self.bot, self.dispatcher, s.webhook.url, s.webhook.secret.get_secret_value(),
                                   drop_pending_updates=s.webhook.drop_pending_updates)
        else:
            # Only polling removes a webhook: getUpdates is refused while one is set. A webhook replica must never
            # call this, or it would switch every other replica's updates off.
            await self.bot.delete_webhook()
            self._tasks.append(asyncio.create_task(self.dispatcher.start_polling(
                self.bot, handle_signals=False, close_bot_session=False, polling_timeout=self.polling_timeout),
                name="polling"))
        if self.scrape:
            self.leadership = ScrapeLeadership(self.sessionmaker, self._start_scraping, ttl=s.lease.ttl,
                                               on_change=self._leader_changed)
            self._tasks.append(asyncio.create_task(self.leadership.run(self._stop), name="scrapers-leadership"))
        if self.alerts.sender_options is not None:
            self._start_sender()
        if s.admin_ids:
            watch = DegradedWatch(self.bot, self.sessionmaker, s.admin_ids, after=self.degraded_after)
            self._tasks.append(asyncio.create_task(self._watch_degraded(watch), name="degraded-watch"))
        log.info("GPU Radar running as @%s", me.username)  # the token itself is never logged
        self.started.set()

    def _start_sender(self) -> None:
        """The alert sender (issue 26): in a child process of its own (the default), so the bot's loop only answers
        users; `SENDER__IN_PROCESS=true` runs the same `SenderService` on this loop instead (tests, one process)."""
        from gpuradar.child_process import LogConfig
        from gpuradar.sender_process import SenderProcess, SenderService, SenderSpec

        s = self.settings
        assert self.bot is not None and self.alerts.sender_options is not None
        spec = SenderSpec.like(self.bot, s.database_url, rate=s.sender.global_rate,
                               chat_interval=s.sender.chat_interval, window=s.sender.window,
                               reply_share=1 - s.sender.alert_share, max_reply_share=1 - s.sender.min_alert_share,
                               options=dict(self.alerts.sender_options), log=LogConfig.of_parent())
        sender: SenderService | SenderProcess = (
            SenderService(spec, self.metrics, pacer=self.pacer) if s.sender.in_process
            else SenderProcess(spec, self.metrics, replies=self.pacer))
        assert self._shares is not None
        sender.share(self._shares.replicas)
        self._shares.pacers.append(sender)
        self.alerts.wakers.append((sender.wake, asyncio.get_running_loop()))
        self._sender = sender
        self._tasks.append(asyncio.create_task(sender.run(), name="sender"))
        if self.serve_web:
            from gpuradar.metrics import sender_refresher

            refresher = sender_refresher(sender, self.metrics)
            self._refreshers.append(refresher)
            self.metrics.add_refresher(refresher)

    def request_stop(self) -> None:
        self._stop.set()

    async def stop(self) -> None:
        self._stop.set()  # also ends the leadership campaign: the scheduler stops and the lease is released
        if self.dispatcher is not None and not self.webhook:
            with contextlib.suppress(RuntimeError):  # polling had already ended
                await self.dispatcher.stop_polling()
        if self._sender is not None:
            await self._sender.stop()  # finishes the message in flight
            self.alerts.wakers[:] = [w for w in self.alerts.wakers if w[0] != self._sender.wake]
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(task, 15)
        if self._scheduler is not None:  # the leadership task did not get to close it (timed out)
            self._scheduler.shutdown()
        if self._client is not None:
            await self._client.aclose()
        if self.ingest_process is not None:
            await self.ingest_process.stop()  # the poll in flight finishes; the child exits
        if self.web is not None:
            await self.web.close()  # after the tasks: an update being handled still had its answer to send
        for refresher in self._refreshers:
            self.metrics.remove_refresher(refresher)
        if self.dispatcher is not None:
            await self.dispatcher.storage.close()
            tokens = self.dispatcher.workflow_data.get("tokens")
            if tokens is not None:
                await tokens.close()  # link tokens not yet written to the shared database
            marks = self.dispatcher.workflow_data.get("stay_marks")
            if marks is not None:
                await marks.close()  # a read of the ⚡ marks an answer stopped waiting for
        if self.bot is not None:
            await self.bot.session.close()
        if self.engine is not None:
            await self.engine.dispose()
        if self.heap.frozen:
            freeze_what_is_built(False)
        self.heap.release()

    def freeze_heap(self) -> None:
        """Once started, as `run` does: what is imported and built by now lives as long as the process, so after one
        last collection it is moved out of the cyclic collector's reach and a full collection no longer walks it
        (measured under load: pauses of the bot's loop of 220-360 ms, each one an inline answer that late).
        Reference counting frees objects as before; `stop` hands them back to the collector. What is loaded later
        is frozen in turn: after each offer refresh, and every `SETTLE_EVERY` seconds (gpuradar/heap.py)."""
        first = self._settle_soon is None
        self.heap.settle()
        freeze_what_is_built(True)  # a poll's parse is frozen once built too (scrapers.heap.built_frozen)
        if first:
            self._settle_soon = asyncio.Event()
            if self.dispatcher is not None:
                self.dispatcher["availability"].on_load = self._loaded_changes
            self._tasks.append(asyncio.create_task(self._settle_heap(), name="heap-settle"))

    def _loaded_changes(self, rows: int) -> None:
        """The availability cache loaded `rows` changes for a question: many of them are frozen soon (a replica's
        first /when of a card reads 30 days of its providers), not left for the collector to walk until the next
        periodic settle."""
        if rows >= SETTLE_LOADED and self._settle_soon is not None:
            self._settle_soon.set()

    async def _settle_heap(self) -> None:
        """What questions loaded meanwhile (the availability cache's changes, the web app's prebuilt answers) is
        frozen within `SETTLE_EVERY` seconds; a large load of held changes `SETTLE_SOON` seconds after it (the
        answer sent first; loads meanwhile are frozen by the same settle)."""
        soon = self._settle_soon
        assert soon is not None
        while not self._stop.is_set():
            stopping = asyncio.ensure_future(self._stop.wait())
            asked = asyncio.ensure_future(soon.wait())
            try:
                await asyncio.wait({stopping, asked}, timeout=SETTLE_EVERY, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stopping.cancel()
                asked.cancel()
            if soon.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), SETTLE_SOON)
                soon.clear()
                if not self._stop.is_set() and self.heap.frozen:
                    self.heap.settle()
                continue
            if not self._stop.is_set() and self.heap.frozen:
                self.heap.settle()

    async def run(self, bot: Bot | None = None) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):  # not in the main thread / on Windows
                loop.add_signal_handler(sig, self.request_stop)
        try:
            await self.start(bot)
            self.freeze_heap()
            await self._stop.wait()
        finally:
            await self.stop()
