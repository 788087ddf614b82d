"""Hub lookups for the front ends: two caches, one request per name at a time, and a global concurrency cap.

    resolver = HubResolver(HubSettings.from_env(), cache)    # cache: a HubCache shared by the replicas (optional)
    arch = await resolver.resolve("someorg/some-model")       # raises core.hub.HubError(code), never anything else
    resolver.cached("someorg/some-model")                     # sync, in-process only: Arch | HubError | None

Answers are remembered in-process (what the bot's keystrokes hit) and in the cache shared by the replicas (the
database table of `storage.hub_cache`, wired in by `gpuradar/`): found architectures for a week, "not found" /
"gated" / "unreadable" for an hour; the Hub being unreachable is never remembered. Only an architecture that passed
`core.hub.check_shape` is stored, and a stored one is checked again when read back.

Whatever goes wrong inside a lookup (a bug, a cancelled task, an exception nobody foresaw), every caller waiting on
the same name gets a HubError: nobody is left waiting for an answer that will not come.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from datetime import timedelta
from typing import Any, Protocol

import httpx

from core.hub import HubError, arch_from_record, arch_to_record, check_shape
from core.models import Arch
from modelhub.client import fetch_arch
from modelhub.settings import HubSettings

log = logging.getLogger(__name__)


class HubCache(Protocol):
    """Where lookups are remembered across processes (`storage.hub_cache.HubCacheStore`)."""

    async def load(self, repo: str) -> tuple[str, dict[str, Any] | None] | None: ...

    async def save(self, repo: str, status: str, record: dict[str, Any] | None, ttl: timedelta) -> None: ...


class HubResolver:
    """Hub lookups with two caches: in-process (sync, for keystrokes) and a shared one (across replicas)."""

    def __init__(self, settings: HubSettings | None = None, cache: HubCache | None = None,
                 client: httpx.AsyncClient | None = None) -> None:
        self.settings = settings or HubSettings.from_env()
        self._cache = cache
        self._client = client
        self._memo: OrderedDict[str, tuple[float, Arch | HubError]] = OrderedDict()
        self._inflight: dict[str, asyncio.Future[Arch]] = {}
        self._slots = asyncio.Semaphore(self.settings.max_concurrent)
        self.fetches = 0  # lookups that went to the Hub (tests and metrics)

    @property
    def in_flight(self) -> int:
        return len(self._inflight)

    def _remember(self, repo: str, value: Arch | HubError, ttl: timedelta) -> None:
        self._memo[repo.lower()] = (time.monotonic() + ttl.total_seconds(), value)
        self._memo.move_to_end(repo.lower())
        while len(self._memo) > self.settings.memo_size:
            self._memo.popitem(last=False)

    def cached(self, repo: str) -> Arch | HubError | None:
        """What this process already knows about `repo` (never blocks, never fetches)."""
        hit = self._memo.get(repo.lower())
        if hit is None:
            return None
        if hit[0] < time.monotonic():
            del self._memo[repo.lower()]
            return None
        return hit[1]

    async def resolve(self, repo: str) -> Arch:
        """The architecture of `repo` (cached answers first). Raises HubError, whatever happened."""
        hit = self.cached(repo)
        if isinstance(hit, Arch):
            return hit
        if isinstance(hit, HubError):
            raise hit
        key = repo.lower()
        pending = self._inflight.get(key)
        if pending is not None:  # the same name asked twice at once: one request
            return await asyncio.shield(pending)
        future: asyncio.Future[Arch] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            arch = await self._resolve(repo)
        except HubError as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: no "never retrieved" warning when nobody else waited
            raise
        except Exception as exc:  # a bug must cost an apology, not a user waiting forever
            log.exception("hub lookup of %r failed unexpectedly", repo)
            error = HubError("offline", repo, type(exc).__name__)
            future.set_exception(error)
            future.exception()
            raise error from exc
        except BaseException:  # cancelled: the others still get an answer (try again), then the cancel goes on
            future.set_exception(HubError("offline", repo, "cancelled"))
            future.exception()
            raise
        else:
            future.set_result(arch)
            return arch
        finally:
            del self._inflight[key]

    async def _resolve(self, repo: str) -> Arch:
        stored = await self._cache_op(self._cache.load(repo)) if self._cache is not None else None
        if stored is not None:
            status, record = stored
            arch = self._readable(record, repo) if status == "ok" else None
            if arch is not None:
                self._remember(repo, arch, self.settings.ttl_found)
                return arch
            if status != "ok":
                error = HubError(status, repo, "remembered")
                self._remember(repo, error, self.settings.ttl_missing)
                raise error
        self.fetches += 1
        try:
            async with asyncio.timeout(self.settings.timeout):
                async with self._slots:  # the global cap: a flood of distinct names waits, it does not fan out
                    arch = await fetch_arch(repo, self.settings, self._client)
        except TimeoutError as exc:
            raise HubError("offline", repo, "no slot in time") from exc
        except HubError as exc:
            if exc.code != "offline":  # an outage is not an answer: ask again next time
                self._remember(repo, exc, self.settings.ttl_missing)
                if self._cache is not None:
                    await self._cache_op(self._cache.save(repo, exc.code, None, self.settings.ttl_missing))
            raise
        self._remember(repo, arch, self.settings.ttl_found)
        if self._cache is not None:
            await self._cache_op(self._cache.save(repo, "ok", arch_to_record(arch), self.settings.ttl_found))
        return arch

    @staticmethod
    def _readable(record: dict[str, Any] | None, repo: str) -> Arch | None:
        """A stored architecture that still reads and passes the shape check (a row written before the check
        existed, or by hand, is looked up again rather than answered)."""
        if not record:
            return None
        try:
            return check_shape(arch_from_record(record), repo)
        except Exception:
            return None

    @staticmethod
    async def _cache_op(op: Any) -> Any:
        """A cache read or write; a cache that is down or not migrated costs the cache, never the lookup."""
        try:
            return await op
        except Exception as exc:
            log.info("hub cache unavailable: %s", type(exc).__name__)
            return None
