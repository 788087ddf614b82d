"""Ingest off the bot's event loop in a thread: polls are recorded in a thread of their own, with its own event loop
and its own database engine (connections), so the loop that answers users never waits on an ingest (it still shares
the GIL with it: `gpuradar run` records polls in a child process instead, `gpuradar.ingest_process`; this thread is
what `App` uses when its alert hook cannot cross to a process). One poll at a time, in the order handed in (as the
scheduler's sink would), with the worker's state cache (`storage.ingest.StateCache`): a poll loads and writes only
what changed.

    worker = IngestWorker(database_url)
    worker.start()
    events = await worker.record(result, rates=rates, on_events=hook)   # from the bot's loop
    await worker.stop()

The `on_events` hook runs in the worker's loop, inside the poll's transaction (as with `record_poll`); anything it
calls back into the bot's loop must be thread-safe (`gpuradar.app.alert_hook` wakes the senders with
`call_soon_threadsafe`).
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from core.changes import OfferEvent
from core.polls import PollResult
from storage.db import make_engine, make_sessionmaker
from storage.ingest import StateCache, record_poll

T = TypeVar("T")
SWITCH_INTERVAL = 0.0005  # seconds


class IngestWorker:
    def __init__(self, database_url: str) -> None:
        self.database_url = database_url
        self.cache = StateCache()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._lock: asyncio.Lock | None = None  # one poll at a time (created in the worker's loop)

    def start(self) -> None:
        if self._thread is not None:
            return
        # The bot's loop waits for the GIL each time it comes back from I/O while this thread computes: a shorter
        # switch interval (5 ms by default) keeps those waits from adding up to tens of milliseconds per answer.
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL))
        self._thread = threading.Thread(target=self._run, name="ingest", daemon=True)
        self._thread.start()
        self._ready.wait()

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        self.engine = make_engine(self.database_url)
        self.sessionmaker = make_sessionmaker(self.engine)
        self._lock = asyncio.Lock()
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(self.engine.dispose())
            loop.close()

    async def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._loop is None:
            coro.close()
            raise RuntimeError("the ingest worker is not running")
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self._loop))

    async def record(self, result: PollResult, **options: Any) -> list[OfferEvent]:
        """`storage.ingest.record_poll` in the worker (same options), with the worker's state cache."""

        async def job() -> list[OfferEvent]:
            assert self._lock is not None
            async with self._lock:
                return await record_poll(self.sessionmaker, result, cache=self.cache, **options)

        return await self._call(job())

    async def run(self, fn: Callable[[async_sessionmaker[AsyncSession]], Coroutine[Any, Any, T]]) -> T:
        """Other leader-side upkeep (retention) in the worker: off the bot's loop, never alongside an ingest."""

        async def job() -> T:
            assert self._lock is not None
            async with self._lock:
                return await fn(self.sessionmaker)

        return await self._call(job())

    async def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        self._loop = self._thread = None
        loop.call_soon_threadsafe(loop.stop)
        await asyncio.get_running_loop().run_in_executor(None, thread.join)
