"""A stand-in for the GPU providers' public APIs on 127.0.0.1, serving payloads at the LIVE paths.

Scrapers append the live API's own paths to `settings.base_url`, so pointing every provider's base URL at this
server exercises the real fetch code, the real httpx client and the real politeness layer — nothing is mocked.

    async with ProviderServer() as server:
        server.load_samples()                       # every provider's sample payload at its live path
        server.inject(VAST_PATH, Fault.SERVER_ERROR, times=2)
        settings = server.providers_settings()      # ProvidersSettings, all base URLs -> this server
        ...
        server.serve(VAST_PATH, new_payload)        # payloads are replaceable between polls
        assert len(server.requests_to(VAST_PATH)) == 3

As a pytest fixture: `provider_server` (registered in tests/conftest.py), already started and with samples loaded.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import pytest_asyncio
from aiohttp import web

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "providers"

# The live API paths (what each scraper appends to its base URL).
SELECTEL_SERVERS_PATH = "/servers/v2/pub/service/server"
SELECTEL_LOCATIONS_PATH = "/servers/v2/pub/location"
HOSTKEY_PATH = "/presets.php"
VAST_PATH = "/api/v0/bundles/"
RUNPOD_PATH = "/graphql"
CLOUDRIFT_PATH = "/api/v1/instance-types/list"
VULTR_PLANS_PATH = "/v2/plans"
VULTR_METAL_PATH = "/v2/plans-metal"
LAMBDA_PATH = "/api/v1/instance-types"
VERDA_TYPES_PATH = "/v1/instance-types"
VERDA_AVAILABILITY_PATH = "/v1/instance-availability"
VERDA_TOKEN_PATH = "/v1/oauth2/token"
HYPERSTACK_STOCKS_PATH = "/v1/core/stocks"
HYPERSTACK_PRICEBOOK_PATH = "/v1/pricebook"
SHADEFORM_PATH = "/v1/instances/types"
LIUM_PATH = "/api/public/v1/nodes"
# Credentials the keyed providers get in `providers_settings(keys=True)`.
TEST_KEYS: dict[str, dict[str, str]] = {
    "lambda": {"api_key": "test-lambda-key"}, "hyperstack": {"api_key": "test-hyperstack-key"},
    "shadeform": {"api_key": "test-shadeform-key"},
    "verda": {"client_id": "test-client", "client_secret": "test-secret"},
}


def test_keys(name: str) -> dict[str, str]:
    """Test credentials for a keyed provider: the fixed ones above, else `test-<name>-<setting>` for each of its
    key settings (so a new keyed provider needs nothing here)."""
    if name in TEST_KEYS:
        return TEST_KEYS[name]
    from scrapers.registry import PROVIDERS

    provider = PROVIDERS.get(name)
    keys = provider.info.key_settings if provider is not None else ()
    return {key.lower(): f"test-{name}-{key.lower().replace('_', '-')}" for key in keys}


def vultr_availability_path(region: str) -> str:
    return f"/v2/regions/{region}/availability"


CAPTCHA_HTML = (
    "<!DOCTYPE html><html><head><title>Just a moment...</title></head>"
    "<body><h1>Checking your browser before accessing the site.</h1>"
    "<form id='challenge-form'><div class='captcha'></div></form></body></html>"
)

# A valid answer with nothing in it, per path (what Fault.EMPTY serves).
EMPTY_PAYLOADS: dict[str, Any] = {
    SELECTEL_SERVERS_PATH: {"item_count": 0, "result": [], "status": "done"},
    HOSTKEY_PATH: {"result": "OK", "presets": []},
    VAST_PATH: {"offers": []},
    RUNPOD_PATH: {"data": {"gpuTypes": []}},
    CLOUDRIFT_PATH: {"version": "2025-01-29", "data": {"instance_types": []}},
    VULTR_PLANS_PATH: {"plans": [], "meta": {"total": 0, "links": {"next": "", "prev": ""}}},
    VULTR_METAL_PATH: {"plans_metal": [], "meta": {"total": 0, "links": {"next": "", "prev": ""}}},
    LAMBDA_PATH: {"data": {}},
    VERDA_TYPES_PATH: [],
    HYPERSTACK_STOCKS_PATH: {"stocks": []},
    SHADEFORM_PATH: {"instance_types": []},
    LIUM_PATH: {"generated_at": "2026-11-30T12:00:00Z", "count": 0, "nodes": []},
}


class Fault(StrEnum):
    SERVER_ERROR = "500"  # 500 with a JSON error body
    UNAVAILABLE = "503"  # 503 maintenance page with Retry-After
    RATE_LIMITED = "429"  # 429 with Retry-After
    TIMEOUT = "timeout"  # answers only after `delay` seconds (longer than the client's timeout)
    CAPTCHA = "captcha"  # 200 text/html challenge page where JSON is expected
    TRUNCATED = "truncated"  # 200 application/json cut in the middle
    EMPTY = "empty"  # 200 with a valid payload that lists nothing
    RESET = "reset"  # the connection is closed without an answer


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    answered: int | str  # status code, or the fault that answered it

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class _Route:
    payload: Any = None
    body: bytes | None = None  # raw body overrides payload
    status: int = 200
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    etag: bool = False
    last_modified: str | None = None
    delay: float = 0.0
    answer: Callable[[RecordedRequest], Any] | None = None  # computes the payload from the request

    def render(self, request: RecordedRequest | None = None) -> bytes:
        if self.answer is not None and request is not None:
            return json.dumps(self.answer(request), ensure_ascii=False).encode()
        if self.body is not None:
            return self.body
        return json.dumps(self.payload, ensure_ascii=False).encode()


@dataclass
class _FaultSpec:
    fault: Fault
    remaining: int | None  # None: until cleared
    retry_after: float | str | None
    delay: float
    method: str | None


class ProviderServer:
    """aiohttp server on 127.0.0.1 (random port); payloads and faults per path; a log of every request."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self._host = host
        self._routes: dict[tuple[str | None, str, tuple[tuple[str, str], ...]], _Route] = {}
        self._faults: dict[str, list[_FaultSpec]] = {}
        self.requests: list[RecordedRequest] = []
        self._runner: web.AppRunner | None = None
        self.port: int = 0

    # -- lifecycle -------------------------------------------------------------------------------------------------
    async def start(self) -> ProviderServer:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        # A short shutdown timeout: a request parked in a TIMEOUT fault must not hold the test's teardown.
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self._host, 0)
        await site.start()
        self.port = int(self._runner.addresses[0][1])  # the random port the site was bound to
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> ProviderServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self.port}"

    # -- configuration ---------------------------------------------------------------------------------------------
    def serve(self, path: str, payload: Any = None, *, method: str | None = None,
              query: Mapping[str, str] | None = None, status: int = 200, body: bytes | str | None = None,
              content_type: str = "application/json", headers: Mapping[str, str] | None = None,
              etag: bool = False, last_modified: str | None = None, delay: float = 0.0,
              answer: Callable[[RecordedRequest], Any] | None = None) -> None:
        """Answer requests to `path` (optionally only `method`, only when the query contains `query`) with
        `payload` as JSON (or a raw `body`). `etag` / `last_modified` make the route answer conditional requests
        with 304 while the content is unchanged. Replacing a route's payload changes its ETag. `answer`: a function
        of the recorded request (its JSON body, its query) that returns the payload, for APIs that page."""
        raw = body.encode() if isinstance(body, str) else body
        key = (method.upper() if method else None, path, tuple(sorted((query or {}).items())))
        self._routes[key] = _Route(payload=copy.deepcopy(payload), body=raw, status=status,
                                   content_type=content_type, headers=dict(headers or {}), etag=etag,
                                   last_modified=last_modified, delay=delay, answer=answer)

    def inject(self, path: str, fault: Fault, *, times: int | None = 1, retry_after: float | str | None = 1,
               delay: float = 5.0, method: str | None = None) -> None:
        """Make the next `times` requests to `path` fail with `fault` (None: every request until cleared).
        Faults queue in the order injected."""
        self._faults.setdefault(path, []).append(
            _FaultSpec(fault, times, retry_after, delay, method.upper() if method else None))

    def clear_faults(self, path: str | None = None) -> None:
        if path is None:
            self._faults.clear()
        else:
            self._faults.pop(path, None)

    def requests_to(self, path: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == path]

    def load_samples(self) -> None:
        """Serve every provider's sample payload (tests/fixtures/providers) at its live path."""
        for path, payload in sample_routes().items():
            if isinstance(path, tuple):
                real_path, query = path
                self.serve(real_path, payload, query=dict(query))
            elif isinstance(payload, HtmlSample):
                self.serve(path, body=str(payload), content_type="text/html")
            else:
                self.serve(path, payload)

    def providers_settings(self, *, keys: bool = False, **overrides: Any) -> Any:
        """`ProvidersSettings` with every provider's base URL pointing here (immers stays disabled; providers that
        need credentials stay off unless `keys=True` gives them test ones). `overrides`: provider name -> dict of
        fields to change, e.g. `vastai={"enabled": False}`; secrets may be given as plain strings."""
        from pydantic import SecretStr

        from scrapers.registry import ProvidersSettings

        data: dict[str, Any] = {}
        for name, cfg in ProvidersSettings():
            fields = {"base_url": self.base_url, "timeout": 2.0, **(test_keys(name) if keys else {}),
                      **overrides.get(name, {})}
            model_fields = type(cfg).model_fields
            for key, value in list(fields.items()):  # a secret setting given as a plain string
                if isinstance(value, str) and key in model_fields and "SecretStr" in str(model_fields[key].annotation):
                    fields[key] = SecretStr(value)
            data[name] = cfg.model_copy(update=fields)
        return ProvidersSettings(**data)

    # -- request handling ------------------------------------------------------------------------------------------
    def _route_for(self, request: web.Request) -> _Route | None:
        best: tuple[int, _Route] | None = None
        for (method, path, query), route in self._routes.items():
            if path != request.path or (method and method != request.method):
                continue
            if any(request.query.get(k) != v for k, v in query):
                continue
            score = len(query) * 2 + (1 if method else 0)  # the most specific route wins
            if best is None or score > best[0]:
                best = (score, route)
        return best[1] if best else None

    def _take_fault(self, request: web.Request) -> _FaultSpec | None:
        for spec in self._faults.get(request.path, []):
            if spec.method and spec.method != request.method:
                continue
            if spec.remaining is None:
                return spec
            if spec.remaining > 0:
                spec.remaining -= 1
                return spec
        return None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        record = RecordedRequest(request.method, request.path, dict(request.query), dict(request.headers), body, 0)
        self.requests.append(record)
        spec = self._take_fault(request)
        route = self._route_for(request)
        if spec is not None:
            record.answered = spec.fault.value
            return await self._fault_response(request, spec, route)
        if route is None:
            record.answered = 404
            return web.json_response({"error": "not_found", "path": request.path}, status=404)
        if route.delay:
            await asyncio.sleep(route.delay)
        content = route.render(record)
        headers = dict(route.headers)
        if route.etag:
            tag = '"' + hashlib.sha1(content).hexdigest()[:16] + '"'
            headers["ETag"] = tag
            if request.headers.get("If-None-Match") == tag:
                record.answered = 304
                return web.Response(status=304, headers=headers)
        if route.last_modified:
            headers["Last-Modified"] = route.last_modified
            if request.headers.get("If-Modified-Since") == route.last_modified and not route.etag:
                record.answered = 304
                return web.Response(status=304, headers=headers)
        record.answered = route.status
        return web.Response(status=route.status, body=content, headers=headers, content_type=route.content_type)

    async def _fault_response(self, request: web.Request, spec: _FaultSpec, route: _Route | None) -> web.StreamResponse:
        retry = {"Retry-After": str(spec.retry_after)} if spec.retry_after is not None else {}
        match spec.fault:
            case Fault.SERVER_ERROR:
                return web.json_response({"error": "internal"}, status=500)
            case Fault.UNAVAILABLE:
                return web.Response(status=503, text="<html><body>Maintenance</body></html>",
                                    content_type="text/html", headers=retry)
            case Fault.RATE_LIMITED:
                return web.json_response({"error": "rate_limited", "msg": "Too many requests"}, status=429,
                                         headers=retry)
            case Fault.TIMEOUT:
                await asyncio.sleep(spec.delay)
                content = route.render() if route else b"{}"
                return web.Response(body=content, content_type="application/json")
            case Fault.CAPTCHA:
                return web.Response(text=CAPTCHA_HTML, content_type="text/html")
            case Fault.TRUNCATED:
                content = route.render() if route else b'{"offers": [{"id": 1}]}'
                return web.Response(body=content[: max(1, len(content) // 2)], content_type="application/json")
            case Fault.EMPTY:
                return web.json_response(EMPTY_PAYLOADS.get(request.path, []))
            case Fault.RESET:
                assert request.transport is not None
                request.transport.close()
                raise ConnectionResetError("fault: connection reset")
        raise AssertionError(spec.fault)  # pragma: no cover


def load_fixture(name: str) -> Any:
    """A provider payload from tests/fixtures/providers, e.g. `load_fixture("vastai.sample.json")`."""
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def hostkey_for_location(payload: Mapping[str, Any], location: str) -> dict[str, Any]:
    """What `presets.php?filter=yes&location=XX` answers: the presets priced in that location."""
    presets = [p for p in payload.get("presets", []) if location in (p.get("price") or {})]
    return {**payload, "presets": presets}


def sample_routes() -> dict[Any, Any]:
    """Live path (or (path, query) for per-location answers) -> sample payload."""
    hostkey = load_fixture("hostkey.sample.json")
    routes: dict[Any, Any] = {
        SELECTEL_SERVERS_PATH: load_fixture("selectel.sample.json"),
        SELECTEL_LOCATIONS_PATH: load_fixture("selectel.location.sample.json"),
        HOSTKEY_PATH: hostkey,  # unfiltered `action=list`: every preset (a location query matches below)
        (HOSTKEY_PATH, (("filter", "yes"),)): {"result": "OK", "presets": []},  # a location the samples lack
        VAST_PATH: load_fixture("vastai.sample.json"),
        RUNPOD_PATH: load_fixture("runpod.sample.json"),
        CLOUDRIFT_PATH: load_fixture("cloudrift.sample.json"),
        VULTR_PLANS_PATH: load_fixture("vultr.sample.json"),
        VULTR_METAL_PATH: load_fixture("vultr.plans-metal.sample.json"),
    }
    locations = sorted({loc for p in hostkey["presets"] for loc in (p.get("price") or {})})
    for loc in locations:
        routes[(HOSTKEY_PATH, (("filter", "yes"), ("location", loc)))] = hostkey_for_location(hostkey, loc)
    routes.update({
        LAMBDA_PATH: load_fixture("lambda.sample.json"),
        VERDA_TOKEN_PATH: load_fixture("verda.token.sample.json"),
        VERDA_TYPES_PATH: load_fixture("verda.instance-types.sample.json"),
        # Verda reads one spelling of its spot filter (here the Python SDK's `isSpot`); the other is ignored.
        VERDA_AVAILABILITY_PATH: load_fixture("verda.availability.sample.json"),
        (VERDA_AVAILABILITY_PATH, (("isSpot", "true"),)): load_fixture("verda.availability-spot.sample.json"),
        HYPERSTACK_STOCKS_PATH: load_fixture("hyperstack.stocks.sample.json"),
        HYPERSTACK_PRICEBOOK_PATH: load_fixture("hyperstack.pricebook.sample.json"),
        SHADEFORM_PATH: load_fixture("shadeform.sample.json"),
        LIUM_PATH: load_fixture("lium.sample.json"),
    })
    availability = load_fixture("vultr.region-availability.sample.json")
    regions = {r for name in ("vultr.sample.json", "vultr.plans-metal.sample.json")
               for plan in next(iter(v for k, v in load_fixture(name).items() if k != "meta"))
               for r in plan.get("locations", [])}
    for region in sorted(regions):
        # The sample is ewr's answer; other regions answer with nothing deployable.
        routes[vultr_availability_path(region)] = availability if region == "ewr" else {"available_plans": []}
    routes.update(conventional_routes(routes))
    return routes


class HtmlSample(str):
    """A sample page served as text/html rather than JSON."""


def conventional_routes(taken: Mapping[Any, Any]) -> dict[str, Any]:
    """Every provider's samples by convention, at paths nothing above serves: `<name>.sample.json` (or an HTML
    page, `<name>.sample.html`) at its first API path (`PROVIDER.paths[0]`), `<name>.<stem>.sample.json` at each
    further path whose last segment is `<stem>` (`…/products.json` -> `oci.products.sample.json`). A provider added
    is its module and its samples; the stand-in needs no line for it. A path with `{setting}` placeholders (Hot
    Aisle's team) is served as the test credentials fill it."""
    from scrapers.registry import PROVIDERS

    busy = {key[0] if isinstance(key, tuple) else key for key in taken}
    out: dict[str, Any] = {}
    for name, provider in PROVIDERS.items():
        for index, template in enumerate(provider.paths):
            stem = template.rstrip("/").rsplit("/", 1)[-1].split(".")[0]
            sample = FIXTURES / (f"{name}.sample.json" if index == 0 else f"{name}.{stem}.sample.json")
            try:
                path = template.format(**test_keys(name))
            except KeyError:
                continue  # a placeholder no setting fills (Vultr's region): routed above
            page = sample.with_suffix(".html")  # an HTML provider's page: `<name>.sample.html`
            if path in busy:
                continue
            if sample.exists():
                out[path] = json.loads(sample.read_text(encoding="utf-8"))
            elif page.exists():
                out[path] = HtmlSample(page.read_text(encoding="utf-8"))
    return out


@pytest_asyncio.fixture
async def provider_server() -> AsyncIterator[ProviderServer]:
    """A started ProviderServer with every provider's sample payload loaded."""
    async with ProviderServer() as server:
        server.load_samples()
        yield server
