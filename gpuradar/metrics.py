"""Prometheus metrics: what the scrapers, the sender and the database say about a running replica.

Other modules call the small functions at the bottom (`observe_scrape(...)`, `alert_sent()`, `telegram_429()` …);
they record into the process-wide `METRICS`. Values that live in the database (offers in stock, the outbox) are
refreshed by callbacks just before each `/metrics` scrape, so every replica reports the same shared state whichever
replica happens to run the scrapers or send a given alert.

Metrics live in their own `CollectorRegistry`, not the library's global one: tests build a fresh `Metrics()` each,
and nothing imported by accident (a library's own metrics) leaks into our exposition.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

log = logging.getLogger(__name__)

Refresher = Callable[[], Awaitable[None]]

# Poll durations range from a cached 304 (tens of ms) to a slow provider behind retries (a minute).
SCRAPE_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
SCRAPE_STATUSES = ("ok", "suspect", "failed")


class Metrics:
    """All of GPU Radar's metrics on one registry."""

    def __init__(self, registry: CollectorRegistry | None = None, *, process: bool = True) -> None:
        self.registry = registry or CollectorRegistry()
        if process:  # memory, CPU and open files of this replica (Linux /proc; absent elsewhere, harmlessly)
            ProcessCollector(registry=self.registry)
        r = self.registry
        self.scrape_duration = Histogram(
            "gpuradar_scrape_duration_seconds", "Wall time of one provider poll", ["provider"],
            buckets=SCRAPE_BUCKETS, registry=r,
        )  # fmt: skip
        self.scrapes = Counter("gpuradar_scrapes", "Provider polls by verdict", ["provider", "status"], registry=r)
        self.scrape_offers = Gauge(
            "gpuradar_scrape_offers", "Offers returned by the provider's last trusted poll", ["provider"], registry=r
        )
        self.last_success = Gauge(
            "gpuradar_scrape_last_success_timestamp_seconds", "When the provider last gave a trusted poll",
            ["provider"], registry=r,
        )  # fmt: skip
        self.offers_in_stock = Gauge(
            "gpuradar_offers_in_stock", "Offers in stock in the store, per provider (from the database)",
            ["provider"], registry=r,
        )  # fmt: skip
        self.scrape_unknown_gpu = Gauge(
            "gpuradar_scrape_unknown_gpu_offers",
            "Offers of the provider's last trusted poll whose GPU the catalog does not know (shown to nobody)",
            ["provider"], registry=r,
        )  # fmt: skip
        self.offers_unknown_gpu = Gauge(
            "gpuradar_offers_unknown_gpu",
            "Offers in the provider's latest trusted poll whose GPU the catalog does not know (shown to nobody)",
            ["provider"], registry=r,
        )  # fmt: skip
        self.records_skipped = Counter("gpuradar_scrape_records_skipped",
                                       "Provider records skipped as invalid or out of bounds", ["provider"],
                                       registry=r)
        self.alerts_sent = Counter("gpuradar_alerts_sent", "Alert messages delivered to Telegram", registry=r)
        self.alerts_failed = Counter(
            "gpuradar_alerts_failed", "Alert messages given up on", ["reason"], registry=r
        )
        self.alerts_pending = Gauge(
            "gpuradar_alerts_pending", "Outbox rows waiting to be sent (from the database)", registry=r
        )
        self.outbox_age = Gauge(
            "gpuradar_outbox_oldest_pending_age_seconds",
            "Age of the oldest unsent outbox row; 0 when the outbox is empty (from the database)", registry=r,
        )  # fmt: skip
        self.telegram_429 = Counter(
            "gpuradar_telegram_429", "Telegram answers 429 Too Many Requests", ["method"], registry=r
        )
        # The alert sender runs in a child process (gpuradar/sender_process.py): the process collector above does
        # not see its CPU; these come over its socket.
        self.sender_cpu = Gauge("gpuradar_sender_cpu_seconds", "CPU the alert sender's process has used",
                                registry=r)
        self.sender_restarts = Gauge("gpuradar_sender_restarts",
                                     "Times the alert sender's process died and was started again", registry=r)
        self.sender_share_parts = Gauge(
            "gpuradar_sender_share_parts",
            "Alert senders alive that split the users between them; this replica's matches one part", registry=r)
        self.sender_indexed = Gauge("gpuradar_sender_subscriptions_indexed",
                                    "Subscriptions in this replica's alert sender's index (its part's active ones)",
                                    registry=r)
        self.leader = Gauge("gpuradar_leader", "1 while this replica holds the named lease", ["lease"], registry=r)
        self.refresh_errors = Counter(
            "gpuradar_metrics_refresh_errors", "Database refreshes of gauges that failed", registry=r
        )
        self._refreshers: list[Refresher] = []

    # -- recording --------------------------------------------------------------------------------------------

    def observe_scrape(self, provider: str, seconds: float, status: str, offers: int | None = None,
                       skipped: int = 0, unknown_gpu: int | None = None) -> None:
        """One poll of one provider. Only a trusted ("ok") poll updates the offer count: a suspect poll (captcha,
        truncated JSON) says nothing about what the provider lists, just as it says nothing about stock. `skipped`:
        records the parser skipped as invalid (a few are normal; a rising rate means the API changed)."""
        status = status.lower()
        if status not in SCRAPE_STATUSES:
            raise ValueError(f"scrape status must be one of {SCRAPE_STATUSES}, got {status!r}")
        self.scrape_duration.labels(provider).observe(max(seconds, 0.0))
        self.scrapes.labels(provider, status).inc()
        if skipped:
            self.records_skipped.labels(provider).inc(skipped)
        if status == "ok":
            self.last_success.labels(provider).set_to_current_time()
            if offers is not None:
                self.scrape_offers.labels(provider).set(offers)
            if unknown_gpu is not None:  # a renamed SKU shows here the poll it appears
                self.scrape_unknown_gpu.labels(provider).set(unknown_gpu)

    def alert_sent(self, count: int = 1) -> None:
        self.alerts_sent.inc(count)

    def alert_failed(self, reason: str = "error", count: int = 1) -> None:
        """`reason`: a small fixed vocabulary (blocked, bad_request, retries_exhausted …), never free text:
        every distinct label value is a new time series."""
        self.alerts_failed.labels(reason).inc(count)

    def telegram_rate_limited(self, method: str = "sendMessage") -> None:
        self.telegram_429.labels(method).inc()

    def set_outbox(self, pending: int, oldest_age_seconds: float | None) -> None:
        self.alerts_pending.set(pending)
        self.outbox_age.set(max(oldest_age_seconds or 0.0, 0.0))

    def set_offers_in_stock(self, counts: dict[str, int]) -> None:
        """Replace the whole per-provider view, so a provider that vanished from the store stops being reported."""
        self.offers_in_stock.clear()
        for provider, count in counts.items():
            self.offers_in_stock.labels(provider).set(count)

    def set_offers_unknown_gpu(self, counts: dict[str, int]) -> None:
        """Per provider, offers with a GPU name the catalog does not know (the names: `gpuradar providers`; a label
        per free-text name would be a time series per typo)."""
        self.offers_unknown_gpu.clear()
        for provider, count in counts.items():
            self.offers_unknown_gpu.labels(provider).set(count)

    def set_leader(self, lease: str, leading: bool) -> None:
        self.leader.labels(lease).set(1 if leading else 0)

    # -- exposition ---------------------------------------------------------------------------------------------

    def add_refresher(self, refresher: Refresher) -> None:
        """Register an async callback that updates gauges from the database before each exposition."""
        self._refreshers.append(refresher)

    def remove_refresher(self, refresher: Refresher) -> None:
        """Forget a refresher (an application stopping in a process that outlives it, e.g. tests)."""
        if refresher in self._refreshers:
            self._refreshers.remove(refresher)

    async def refresh(self, timeout: float = 5.0) -> None:
        """Run every refresher; one that fails or hangs is logged and counted, and the others still count."""
        for refresher in self._refreshers:
            try:
                await asyncio.wait_for(refresher(), timeout)
            except Exception:
                self.refresh_errors.inc()
                log.warning("metrics refresher %r failed", getattr(refresher, "__name__", refresher), exc_info=True)

    def render(self) -> bytes:
        """The Prometheus text exposition format."""
        return generate_latest(self.registry)

    content_type = CONTENT_TYPE_LATEST


def sender_refresher(sender: Any, metrics: Metrics) -> Refresher:
    """A refresher asking the alert sender (gpuradar.sender_process) for its CPU, restarts and share of the users."""

    async def refresh_sender() -> None:
        metrics.sender_restarts.set(sender.restarts)
        ready = getattr(sender, "ready", None)
        if ready is not None and not ready.is_set():
            return  # being started again: the last figure stands
        report = await sender.report()
        metrics.sender_cpu.set(report.cpu_seconds)
        metrics.sender_share_parts.set(report.share_parts)
        metrics.sender_indexed.set(report.indexed)

    return refresh_sender


def offers_refresher(sessionmaker: async_sessionmaker[AsyncSession], metrics: Metrics) -> Refresher:
    """A refresher counting in-stock offers, and offers with an unknown GPU, per provider in the offer store."""
    from storage.offer_tables import CurrentOffer  # lazily: metrics must import without the offer tables' module
    from storage.queries import unknown_gpu_offers

    async def refresh_offers() -> None:
        async with sessionmaker() as session:
            rows = await session.execute(
                select(CurrentOffer.provider, func.count())
                .where(CurrentOffer.in_stock.is_(True))
                .group_by(CurrentOffer.provider)
            )
            counts = {provider: int(count) for provider, count in rows}
            unknown = await unknown_gpu_offers(session)
        metrics.set_offers_in_stock(counts)
        metrics.set_offers_unknown_gpu({provider: sum(names.values()) for provider, names in unknown.items()})

    return refresh_offers


# -- the process-wide registry and the calls other modules make ---------------------------------------------------

METRICS = Metrics()


def observe_scrape(provider: str, seconds: float, status: str, offers: int | None = None, skipped: int = 0,
                   unknown_gpu: int | None = None) -> None:
    METRICS.observe_scrape(provider, seconds, status, offers, skipped, unknown_gpu)


def alert_sent(count: int = 1) -> None:
    METRICS.alert_sent(count)


def alert_failed(reason: str = "error", count: int = 1) -> None:
    METRICS.alert_failed(reason, count)


def telegram_429(method: str = "sendMessage") -> None:
    METRICS.telegram_rate_limited(method)


def set_outbox(pending: int, oldest_age_seconds: float | None) -> None:
    METRICS.set_outbox(pending, oldest_age_seconds)


def set_leader(lease: str, leading: bool) -> None:
    METRICS.set_leader(lease, leading)
