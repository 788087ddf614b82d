"""A stand-in for the Hugging Face Hub on 127.0.0.1: the two endpoints a model lookup uses, at their live paths.

    GET /api/models/{org}/{name}                   model info (safetensors parameter count, gating)
    GET /{org}/{name}/resolve/main/config.json     the config

Behaviour copied from the Hub: an unknown repository answers 401 with `X-Error-Code: RepoNotFound` to anonymous
callers (404 to authenticated ones), a gated repository's info is public while its files answer 401
`X-Error-Code: GatedRepo` without a token (403 with a token that was not granted access).

    async with HubServer() as hub:
        hub.add("acme/tiny-7b", config={...}, params=7.2e9)
        hub.add("acme/locked", config={...}, gated_token="hf_ok")
        settings = hub.settings()           # modelhub.HubSettings pointing here
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest_asyncio
from aiohttp import web

from modelhub import HubSettings


@dataclass
class _Repo:
    config: Any  # dict, or raw text for an unreadable config.json
    params: float | None = None
    dtypes: dict[str, float] | None = None
    gated_token: str | None = None  # the token that opens it (None: public)
    delay: float = 0.0
    has_config: bool = True


@dataclass
class HubServer:
    host: str = "127.0.0.1"
    repos: dict[str, _Repo] = field(default_factory=dict)
    requests: list[tuple[str, str | None]] = field(default_factory=list)  # (path, Authorization)
    failing: int = 0  # answer 503 to this many requests
    redirects: dict[str, str] = field(default_factory=dict)  # path -> Location (answered 307, as the Hub does)
    active: int = 0  # requests being answered now
    max_active: int = 0  # the most at once
    port: int = 0
    _runner: web.AppRunner | None = None

    def add(self, repo: str, config: Any, params: float | None = None, *, dtypes: dict[str, float] | None = None,
            gated_token: str | None = None, delay: float = 0.0, has_config: bool = True) -> None:
        self.repos[repo.lower()] = _Repo(config, params, dtypes, gated_token, delay, has_config)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def settings(self, token: str | None = None, timeout: float = 5.0) -> HubSettings:
        return HubSettings(endpoint=self.url, token=token, timeout=timeout)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            return await self._answer(request)
        finally:
            self.active -= 1

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        auth = request.headers.get("Authorization")
        self.requests.append((request.path, auth))
        if request.path in self.redirects:
            return web.Response(status=307, headers={"Location": self.redirects[request.path]})
        if self.failing > 0:
            self.failing -= 1
            return web.json_response({"error": "unavailable"}, status=503)
        path = request.path
        info = path.startswith("/api/models/")
        if info:
            name = path.removeprefix("/api/models/")
        elif path.endswith("/resolve/main/config.json"):
            name = path.removesuffix("/resolve/main/config.json").lstrip("/")
        else:
            return web.json_response({"error": "Not Found"}, status=404)
        repo = self.repos.get(name.lower())
        token = (auth or "").removeprefix("Bearer ") or None
        if repo is None:
            status = 404 if token else 401
            return web.json_response({"error": "Repository not found"}, status=status,
                                     headers={"X-Error-Code": "RepoNotFound"})
        if repo.delay:
            await asyncio.sleep(repo.delay)
        if info:
            body: dict[str, Any] = {"id": name, "gated": "manual" if repo.gated_token else False}
            if repo.params is not None:
                body["safetensors"] = {"parameters": repo.dtypes or {"BF16": repo.params}, "total": repo.params}
            return web.json_response(body)
        if repo.gated_token and token != repo.gated_token:
            return web.json_response({"error": "Access to this model is restricted"}, status=403 if token else 401,
                                     headers={"X-Error-Code": "GatedRepo"})
        if not repo.has_config:
            return web.json_response({"error": "Entry not found"}, status=404,
                                     headers={"X-Error-Code": "EntryNotFound"})
        if isinstance(repo.config, str):
            return web.Response(text=repo.config, content_type="application/json")
        return web.Response(text=json.dumps(repo.config), content_type="application/json")

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, 0)
        await site.start()
        self.port = int(self._runner.addresses[0][1])  # the random port the site was bound to

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def __aenter__(self) -> HubServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


@pytest_asyncio.fixture
async def hub_server() -> AsyncIterator[HubServer]:
    async with HubServer() as hub:
        yield hub
