"""Look a model up on the Hugging Face Hub: its config.json and model info -> an `Arch` (via `core.hub`).

    resolver = HubResolver(HubSettings.from_env(), sessionmaker)   # sessionmaker: the shared cache (optional)
    arch = await resolver.resolve("someorg/some-model")            # raises core.hub.HubError(code)
    resolver.cached("someorg/some-model")                          # sync, in-process only: Arch | HubError | None

Base URL from `HF_ENDPOINT` (default https://huggingface.co, the variable `huggingface_hub` itself honours), a
token from `HF_TOKEN` for gated repositories. A lookup has a short timeout: the user is waiting. Two requests,
made concurrently: `GET /api/models/{repo}` (model info: safetensors parameter count, gating) and
`GET /{repo}/resolve/main/config.json`. Plain httpx rather than `huggingface_hub`: two GETs, one timeout for the
pair, and status codes mapped to our own error codes; the library would add a dependency for no more than that.

Answers are remembered in-process (what the bot's keystrokes hit) and in the database shared by the replicas
(`storage.hub_cache`): found architectures for a week, "not found" / "gated" / "unreadable" for an hour; the Hub
being unreachable is never remembered.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections import OrderedDict
from datetime import timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import httpx
from pydantic import BaseModel, Field

from core.hub import HubError, arch_from_hub, arch_from_record, arch_to_record, is_repo_name
from core.models import Arch

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

    from core.msg import Msg
    from core.workload import WorkloadSpec

log = logging.getLogger(__name__)

DEFAULT_ENDPOINT = "https://huggingface.co"


class HubSettings(BaseModel):
    endpoint: str = DEFAULT_ENDPOINT
    token: str | None = None
    timeout: float = Field(default=6.0, gt=0)  # seconds for the whole lookup
    ttl_found: timedelta = timedelta(days=7)
    ttl_missing: timedelta = timedelta(hours=1)
    memo_size: int = Field(default=2048, ge=1)

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> HubSettings:
        e = os.environ if env is None else env
        endpoint = (e.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
        token = e.get("HF_TOKEN") or e.get("HUGGING_FACE_HUB_TOKEN") or None
        timeout = float(e.get("HF_HUB_LOOKUP_TIMEOUT") or 6.0)
        return cls(endpoint=endpoint, token=token, timeout=timeout)


def _error_code(response: httpx.Response, token: bool) -> str:
    """Our code for a refusal: the Hub says which in `X-Error-Code` (RepoNotFound, GatedRepo, EntryNotFound)."""
    hub = response.headers.get("x-error-code", "")
    if hub in ("RepoNotFound", "EntryNotFound", "RevisionNotFound") or response.status_code == 404:
        return "not_found"
    if hub == "GatedRepo" or response.status_code in (401, 403):
        return "forbidden" if token else "gated"
    return "offline"  # 5xx, 429...: the Hub is not answering properly right now


def _json(response: httpx.Response, repo: str) -> Any:
    try:
        return response.json()
    except (json.JSONDecodeError, UnicodeDecodeError, ValueError) as exc:
        raise HubError("unreadable", repo, "not JSON") from exc


async def fetch_arch(repo: str, settings: HubSettings, client: httpx.AsyncClient | None = None) -> Arch:
    """One lookup on the Hub, no cache. Raises HubError."""
    if not is_repo_name(repo):
        raise HubError("not_found", repo, "not an org/name")
    headers = {"User-Agent": "gpuradar (model lookup)"}
    if settings.token:
        headers["Authorization"] = f"Bearer {settings.token}"
    own = client is None
    http = client or httpx.AsyncClient(follow_redirects=True, timeout=settings.timeout)
    try:
        async with asyncio.timeout(settings.timeout):
            info_r, config_r = await asyncio.gather(
                http.get(f"{settings.endpoint}/api/models/{repo}", headers=headers),
                http.get(f"{settings.endpoint}/{repo}/resolve/main/config.json", headers=headers))
    except (TimeoutError, httpx.TimeoutException, httpx.TransportError) as exc:
        raise HubError("offline", repo, type(exc).__name__) from exc
    finally:
        if own:
            await http.aclose()
    if info_r.status_code != 200 and info_r.status_code not in (401, 403, 404):
        raise HubError("offline", repo, f"HTTP {info_r.status_code}")
    if info_r.status_code == 404 or info_r.headers.get("x-error-code") == "RepoNotFound":
        raise HubError("not_found", repo)
    if config_r.status_code != 200:
        raise HubError(_error_code(config_r, bool(settings.token)), repo, f"config.json HTTP {config_r.status_code}")
    config = _json(config_r, repo)
    if not isinstance(config, dict):
        raise HubError("unreadable", repo, "config.json is not an object")
    info = _json(info_r, repo) if info_r.status_code == 200 else None
    return arch_from_hub(repo, config, info if isinstance(info, dict) else None)


class HubResolver:
    """Hub lookups with two caches: in-process (sync, for keystrokes) and the database (shared by replicas)."""

    def __init__(self, settings: HubSettings | None = None,
                 sessionmaker: async_sessionmaker[AsyncSession] | None = None,
                 client: httpx.AsyncClient | None = None) -> None:
        self.settings = settings or HubSettings.from_env()
        self._sm = sessionmaker
        self._client = client
        self._memo: OrderedDict[str, tuple[float, Arch | HubError]] = OrderedDict()
        self._inflight: dict[str, asyncio.Future[Arch]] = {}
        self.fetches = 0  # lookups that went to the Hub (tests and metrics)

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
        """The architecture of `repo` (cached answers first). Raises HubError."""
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
            future.set_result(arch)
            return arch
        except HubError as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: no "never retrieved" warning when nobody else waited
            raise
        finally:
            del self._inflight[key]

    async def _resolve(self, repo: str) -> Arch:
        from storage import hub_cache

        stored = await self._cache_op(hub_cache.load(self._sm, repo)) if self._sm is not None else None
        if stored is not None:
            status, record = stored
            if status == "ok" and record:
                arch = arch_from_record(record)
                self._remember(repo, arch, self.settings.ttl_found)
                return arch
            error = HubError(status, repo, "remembered")
            self._remember(repo, error, self.settings.ttl_missing)
            raise error
        self.fetches += 1
        try:
            arch = await fetch_arch(repo, self.settings, self._client)
        except HubError as exc:
            if exc.code != "offline":  # an outage is not an answer: ask again next time
                self._remember(repo, exc, self.settings.ttl_missing)
                if self._sm is not None:
                    await self._cache_op(hub_cache.save(self._sm, repo, exc.code, None, self.settings.ttl_missing))
            raise
        self._remember(repo, arch, self.settings.ttl_found)
        if self._sm is not None:
            await self._cache_op(hub_cache.save(self._sm, repo, "ok", arch_to_record(arch), self.settings.ttl_found))
        return arch

    @staticmethod
    async def _cache_op(op: Any) -> Any:
        """A cache read or write; a database that is down or not migrated costs the cache, never the lookup."""
        from sqlalchemy.exc import SQLAlchemyError

        try:
            return await op
        except (SQLAlchemyError, OSError) as exc:
            log.info("hub cache unavailable: %s", exc)
            return None


@lru_cache(maxsize=4096)
@lru_cache(maxsize=1024)
def _hub_only(name: str) -> bool:
    """An org/name the catalog does not know (asked per keystroke: remembered; the catalog does not change)."""
    from core.models import find_model

    return is_repo_name(name) and find_model(name) is None


def hub_name_to_resolve(spec: WorkloadSpec) -> str | None:
    """The `org/name` a parsed workload names that only the Hub can tell about (None when nothing to look up)."""
    if spec.arch is not None or not spec.model or "/" not in spec.model:
        return None
    return spec.model if _hub_only(spec.model) else None


def with_hub_arch(spec: WorkloadSpec, repo: str, arch: Arch) -> WorkloadSpec:
    return spec.model_copy(update={"arch": arch, "model": repo, "model_source": "hub"})


def hub_error_msg(error: HubError) -> Msg:
    """The text-catalog message for a failed lookup (`hub_error_<code>`)."""
    from core.msg import msg

    return msg(f"hub_error_{error.code}", repo=error.repo)
