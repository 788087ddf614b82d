"""Polling schedule: APScheduler 3.x `AsyncIOScheduler`, one job per enabled provider with its own interval and
jitter (`max_instances=1`: a slow poll is never overlapped by the next; `coalesce=True`: missed runs collapse into
one). Each job polls and hands the result to an injected `sink` (storage's ingest). Jobs are independent
coroutines on one event loop, so a provider that hangs or fails never delays another.

A provider that answers 429 with a long `Retry-After` (Vast.ai's daily row quota) is paused until then: its job's
next run moves past the pause and a run that still falls inside it does not poll, so the scheduler never keeps
polling into a quota.

`poll_once` is the same thing for `gpuradar scrape --once`: the chosen providers, concurrently, results returned.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from core.polls import PollResult, PollStatus
from core.slices import CHUNK, Steps, run_in_slices
from scrapers.http import PoliteClient
from scrapers.poller import poll, provider_settings, providers_of

log = logging.getLogger(__name__)

Sink = Callable[[PollResult], Awaitable[Any]]
JOB_PREFIX = "poll:"


def enabled_providers(settings: Any, only: Iterable[str] | None = None) -> list[str]:
    """Enabled providers, or exactly the ones asked for (an explicit request polls a disabled provider too)."""
    if only:
        names = list(dict.fromkeys(only))
        for name in names:
            provider_settings(name, settings)  # KeyError for a name that is not a provider
        return names
    return list(providers_of(settings).enabled())


class _SerialSink:
    """Calls the sink one result at a time: polls run concurrently, but storage writes in order."""

    def __init__(self, sink: Sink | None) -> None:
        self._sink = sink
        self._lock = asyncio.Lock()

    async def __call__(self, result: PollResult) -> None:
        if self._sink is None:
            return
        async with self._lock:
            try:
                await self._sink(result)
            except Exception:  # a storage error must not kill the job: the next poll tries again
                log.exception("%s: sink failed for a %s poll", result.provider, result.status.value)


async def poll_once(providers: Iterable[str] | None, settings: Any, client: PoliteClient | httpx.AsyncClient,
                    sink: Sink | None = None) -> list[PollResult]:
    """Poll the chosen providers (None: every enabled one) concurrently; each result goes to `sink` as soon as
    it is ready; results come back in the order the providers were named."""
    names = enabled_providers(settings, providers)
    deliver = _SerialSink(sink)

    async def one(name: str) -> PollResult:
        result = await poll(name, settings, client)
        await deliver(result)
        return result

    return list(await asyncio.gather(*(one(n) for n in names)))


async def release(result: PollResult) -> None:
    """Empty a poll's list of offers a slice at a time (core.slices), where nothing else holds that list: the last
    reference to 100,000 offers dropped at once frees every one of them in one go, ~65 ms in which the bot's loop
    waits; a slice of `CHUNK` is well under a millisecond. For the poll's owner, once every consumer is done (the
    scheduler's job after its sink)."""
    offers = result.offers
    if sys.getrefcount(offers) <= 3:  # the poll's own, this frame's and the argument's
        await run_in_slices(_emptying(offers))


def _emptying(items: list[Any]) -> Steps[None]:
    while items:
        del items[-CHUNK:]
        yield


class ScrapeScheduler:
    """Owns the AsyncIOScheduler and its provider jobs. `start()` inside a running event loop."""

    def __init__(self, settings: Any, client: PoliteClient | httpx.AsyncClient, sink: Sink, *,
                 providers: Iterable[str] | None = None, scheduler: AsyncIOScheduler | None = None,
                 run_now: bool = True) -> None:
        self.settings = settings
        self.client = client
        self.scheduler = scheduler or AsyncIOScheduler(timezone=UTC)
        self._sink = _SerialSink(sink)
        self.providers = enabled_providers(settings, providers)
        self.runs: dict[str, int] = dict.fromkeys(self.providers, 0)
        self.paused_until: dict[str, datetime] = {}
        self.stopping = False
        self._running: set[asyncio.Task[Any]] = set()  # the polls in flight (APScheduler's tasks)
        for name in self.providers:
            cfg = provider_settings(name, settings)
            # The first poll right away (not one interval after start-up), then every interval. (APScheduler reads
            # an explicit next_run_time=None as "paused", so the key is passed only when wanted.)
            first = {"next_run_time": datetime.now(UTC)} if run_now else {}
            self.scheduler.add_job(
                self._job, "interval", args=[name], id=JOB_PREFIX + name, name=f"poll {name}",
                seconds=cfg.interval, jitter=cfg.jitter or None, max_instances=1, coalesce=True,
                misfire_grace_time=max(1, cfg.interval // 2), **first,
            )

    async def _job(self, name: str) -> None:
        """What APScheduler runs each interval: `run_provider`, then the poll let go a slice at a time (`release`),
        since nothing reads a job's result."""
        result = await self.run_provider(name)
        if result is not None and sys.getrefcount(result) <= 2:  # this frame's and the argument's: no sink kept it
            await release(result)

    async def run_provider(self, name: str) -> PollResult | None:
        now = datetime.now(UTC)
        until = self.paused_until.get(name)
        if until is not None and now < until:
            log.info("%s: paused until %s (the provider asked us to wait); not polled", name, until.isoformat())
            return PollResult(provider=name, status=PollStatus.FAILED, error=f"paused until {until.isoformat()}",
                              started_at=now, finished_at=now)
        self.paused_until.pop(name, None)
        task = asyncio.current_task()
        if task is not None:
            self._running.add(task)
        try:
            result = await poll(name, self.settings, self.client)
            self.runs[name] = self.runs.get(name, 0) + 1
            if result.retry_after is not None and result.retry_after > provider_settings(name, self.settings).interval:
                self.pause(name, result.retry_after)
            await self._sink(result)
            return result
        except asyncio.CancelledError:
            if not self.stopping:
                raise
            # Shutting down (SIGTERM): a poll cut short is not an error (APScheduler would log its CancelledError
            # at error level). Nothing of it is recorded; the next leader polls again.
            log.info("%s: poll cancelled: shutting down", name)
            return None
        finally:
            if task is not None:
                self._running.discard(task)

    def pause(self, name: str, seconds: float) -> None:
        """No poll of `name` for `seconds`: its next run is moved past the pause."""
        until = datetime.now(UTC) + timedelta(seconds=seconds)
        self.paused_until[name] = until
        log.warning("%s: pausing polls for %.0f s (until %s) as the provider asked", name, seconds, until.isoformat())
        job = self.scheduler.get_job(JOB_PREFIX + name)
        if job is not None:
            job.modify(next_run_time=until)

    def start(self) -> None:
        self.scheduler.start()

    def shutdown(self, wait: bool = False) -> None:
        """No new polls; those in flight are cancelled (quietly: see run_provider)."""
        self.stopping = True
        if self.scheduler.running:
            self.scheduler.shutdown(wait=wait)
        for task in list(self._running):
            task.cancel()

    async def stop(self, grace: float = 10.0) -> None:
        """No new polls; those in flight get `grace` seconds to finish and be recorded, then are cancelled."""
        self.stopping = True
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)
        if self._running:
            await asyncio.wait(list(self._running), timeout=grace)
        running = list(self._running)
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)

    def jobs(self) -> dict[str, Any]:
        return {job.id.removeprefix(JOB_PREFIX): job for job in self.scheduler.get_jobs()}
