"""One lookup on the Hub, no cache: `config.json` and the model info -> an `Arch` (via `core.hub`), bounded.

Two requests, made concurrently: `GET /api/models/{repo}` (model info: safetensors parameter count, gating) and
`GET /{repo}/resolve/main/config.json`. Plain httpx rather than `huggingface_hub`: two GETs, one timeout for the
pair, and status codes mapped to our own error codes; the library would add a dependency for no more than that.

Bounds (a lookup is a stranger's file): each body is read in chunks up to a cap and abandoned beyond it; redirects
are followed by hand, only to the Hub's own hosts, the token only to the endpoint itself; the JSON is parsed and
the shape computed in a worker thread (a 1 MB config must not stall the bot's loop), and the shape must lie in the
range of published models (`core.hub.check_shape`).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from core.hub import HubError, arch_from_hub, is_repo_name
from core.models import Arch
from modelhub.settings import HubSettings

_REDIRECTS = (301, 302, 303, 307, 308)


class _TooLarge(Exception):
    pass


class _Answer:
    """A Hub response read within its cap: status, the Hub's error code header, the body (None when over the cap)."""

    def __init__(self, status: int, error_code: str, body: bytes | None) -> None:
        self.status = status
        self.error_code = error_code
        self.body = body


def error_code(status: int, hub_code: str, token: bool) -> str:
    """Our code for a refusal: the Hub says which in `X-Error-Code` (RepoNotFound, GatedRepo, EntryNotFound)."""
    if hub_code in ("RepoNotFound", "EntryNotFound", "RevisionNotFound") or status == 404:
        return "not_found"
    if hub_code == "GatedRepo" or status in (401, 403):
        return "forbidden" if token else "gated"
    return "offline"  # 5xx, 429...: the Hub is not answering properly right now


async def _get(http: httpx.AsyncClient, url: str, settings: HubSettings, cap: int, repo: str) -> _Answer:
    own_host = settings.host()
    for _hop in range(settings.max_redirects + 1):
        headers = {"User-Agent": "gpuradar (model lookup)"}
        if settings.token and (urlsplit(url).hostname or "").lower() == own_host:
            headers["Authorization"] = f"Bearer {settings.token}"  # never to any other host
        async with http.stream("GET", url, headers=headers) as r:
            if r.status_code in _REDIRECTS and "location" in r.headers:
                target = urljoin(url, r.headers["location"])
                if not settings.allows_redirect_to(target):
                    raise HubError("offline", repo, f"redirect off the Hub to {urlsplit(target).hostname}")
                url = target
                continue
            declared = r.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > cap:
                return _Answer(r.status_code, r.headers.get("x-error-code", ""), None)
            chunks: list[bytes] = []
            size = 0
            async for chunk in r.aiter_bytes():
                size += len(chunk)
                if size > cap:
                    return _Answer(r.status_code, r.headers.get("x-error-code", ""), None)
                chunks.append(chunk)
            return _Answer(r.status_code, r.headers.get("x-error-code", ""), b"".join(chunks))
    raise HubError("offline", repo, "too many redirects")


def _parse(repo: str, config_body: bytes, info_body: bytes | None) -> Arch:
    """JSON -> Arch, run in a worker thread. Raises HubError("unreadable") for anything that is not a model."""
    try:
        config = json.loads(config_body)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise HubError("unreadable", repo, "config.json is not JSON") from exc
    if not isinstance(config, dict):
        raise HubError("unreadable", repo, "config.json is not an object")
    info: Any = None
    if info_body is not None:
        try:
            info = json.loads(info_body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            info = None  # the info only refines the parameter count: without it the shape still answers
    return arch_from_hub(repo, config, info if isinstance(info, dict) else None)


async def fetch_arch(repo: str, settings: HubSettings, client: httpx.AsyncClient | None = None) -> Arch:
    """One lookup on the Hub, no cache. Raises HubError (and nothing else but cancellation)."""
    if not is_repo_name(repo):
        raise HubError("not_found", repo, "not an org/name")
    own = client is None
    http = client or httpx.AsyncClient(follow_redirects=False, timeout=settings.timeout)
    try:
        async with asyncio.timeout(settings.timeout):
            info_r, config_r = await asyncio.gather(
                _get(http, f"{settings.endpoint}/api/models/{repo}", settings, settings.max_info_bytes, repo),
                _get(http, f"{settings.endpoint}/{repo}/resolve/main/config.json", settings,
                     settings.max_config_bytes, repo))
    except (TimeoutError, httpx.TimeoutException, httpx.TransportError, httpx.InvalidURL) as exc:
        raise HubError("offline", repo, type(exc).__name__) from exc
    finally:
        if own:
            await http.aclose()
    if info_r.status not in (200, 401, 403, 404):
        raise HubError("offline", repo, f"HTTP {info_r.status}")
    if info_r.status == 404 or info_r.error_code == "RepoNotFound":
        raise HubError("not_found", repo)
    if config_r.status != 200:
        raise HubError(error_code(config_r.status, config_r.error_code, bool(settings.token)), repo,
                       f"config.json HTTP {config_r.status}")
    if config_r.body is None:
        raise HubError("unreadable", repo, f"config.json over {settings.max_config_bytes} bytes")
    info_body = info_r.body if info_r.status == 200 else None
    return await asyncio.to_thread(_parse, repo, config_r.body, info_body)
