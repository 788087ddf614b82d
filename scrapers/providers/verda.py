"""Verda (formerly DataCrunch) GPU instances: OAuth 2 client credentials, then `GET /v1/instance-types?currency=usd`
(specs and prices) and `GET /v1/instance-availability?is_spot=…&isSpot=…` (`[{location_code, availabilities:
[instance_type, ...]}]`: what can be deployed where, now).

Token: `POST /v1/oauth2/token {grant_type: client_credentials, client_id, client_secret}` -> `{access_token,
expires_in}`; kept until shortly before it expires (one per API origin and client id) and asked again after a 401.
Prices are USD per hour for the whole instance and come as strings (`price_per_hour`, `spot_price`); the GPU is
`gpu.description` ("8x H100 SXM5 80GB") with `gpu.number_of_gpus` and `gpu_memory.size_in_gigabytes` (the total).
Every location an availability answer names gets an offer per GPU type: in stock where the type is listed there.
Evidence: dstackai/gpuhunt `src/gpuhunt/providers/verda.py` (HEAD 35841515) and the Verda OpenAPI reference
(api.verda.com/v1/docs: `/v1/oauth2/token`, `/v1/instance-types`, `/v1/instance-availability`).

Spot: the official clients spell the availability filter differently (the Go SDK `is_spot`, the Python SDK
`verda` / `datacrunch` `instances.get_availabilities(is_spot=...)` sends `isSpot`); without it the API answers
on-demand stock only. Both spellings are sent, so whichever the API reads, it reads. An answer to the spot
question identical to the on-demand one (non-empty) means the filter was not read: spot stock is then unknown,
no spot offer is claimed this poll (counted as a skipped record with the reason), never on-demand stock shown as
spot.
"""

from __future__ import annotations

import re
import time
from typing import Any

from pydantic import Field, SecretStr

from core.offers import MAX_GPUS, Billing, Period
from core.providers import ProviderInfo
from scrapers.errors import HttpStatusError, PayloadValidationError
from scrapers.http import PoliteClient
from scrapers.provider import Provider
from scrapers.providers._common import Collector, Lenient, Offers, gather_limited, gpu_id, join_url, validate
from scrapers.settings import ProviderSettings

NAME = "verda"
TYPES_PATH, AVAILABILITY_PATH, TOKEN_PATH = "/v1/instance-types", "/v1/instance-availability", "/v1/oauth2/token"
ORDER_URL = "https://console.verda.com/"
_COUNT = re.compile(r"^\s*\d+\s*x\s*", re.IGNORECASE)
# (API origin, client id) -> (token, monotonic expiry): one entry per configured account, bounded.
_tokens: dict[tuple[str, str], tuple[str, float]] = {}


class VerdaSettings(ProviderSettings):
    """Verda (DataCrunch): OAuth 2 client credentials (`PROVIDERS__VERDA__CLIENT_ID`, `__CLIENT_SECRET`)."""

    client_id: str | None = None
    client_secret: SecretStr | None = None
    spot: bool = True  # also watch spot (interruptible) prices and availability



class _Part(Lenient):
    description: str | None = None
    number_of_gpus: int | None = Field(default=None, ge=0, le=MAX_GPUS)
    number_of_cores: int | None = None
    size_in_gigabytes: float | None = None


class _Type(Lenient):
    instance_type: str
    price_per_hour: float = Field(gt=0, le=1e8)
    spot_price: float | None = Field(default=None, ge=0, le=1e8)
    gpu: _Part = Field(default_factory=_Part)
    gpu_memory: _Part = Field(default_factory=_Part)
    cpu: _Part = Field(default_factory=_Part)
    memory: _Part = Field(default_factory=_Part)


class _Location(Lenient):
    location_code: str
    availabilities: list[str] = Field(default_factory=list)


class _Payload(Lenient):
    types: list[Any]
    ondemand: list[_Location]
    spot: list[_Location] = Field(default_factory=list)


class _Token(Lenient):
    access_token: str
    expires_in: float = 3600


async def token(client: PoliteClient, cfg: VerdaSettings, *, fresh: bool = False) -> str:
    key = (cfg.base_url, cfg.client_id or "")
    cached = _tokens.get(key)
    if cached and not fresh and time.monotonic() < cached[1]:
        return cached[0]
    answer = await client.post_json(NAME, join_url(cfg.base_url, TOKEN_PATH), {
        "grant_type": "client_credentials", "client_id": cfg.client_id,
        "client_secret": cfg.client_secret.get_secret_value() if cfg.client_secret else "",
    }, timeout=cfg.timeout)
    got = validate(_Token, answer, NAME)
    _tokens[key] = (got.access_token, time.monotonic() + max(0.0, got.expires_in - 60))
    return got.access_token


def _spot_query(spot: bool) -> dict[str, str]:
    value = "true" if spot else "false"
    return {"is_spot": value, "isSpot": value}  # the Go SDK's and the Python SDK's spelling (module doc)


async def fetch(client: PoliteClient, settings: ProviderSettings) -> dict[str, Any]:
    if not isinstance(settings, VerdaSettings):
        raise PayloadValidationError(f"{NAME}: needs VerdaSettings (client id and secret)")
    for attempt in range(2):
        headers = {"Authorization": f"Bearer {await token(client, settings, fresh=attempt > 0)}"}
        try:
            get = client.get_json
            base, timeout = settings.base_url, settings.timeout
            calls = [get(NAME, join_url(base, TYPES_PATH), params={"currency": "usd"}, headers=headers,
                         timeout=timeout),
                     get(NAME, join_url(base, AVAILABILITY_PATH), params=_spot_query(False), headers=headers,
                         timeout=timeout)]
            if settings.spot:
                calls.append(get(NAME, join_url(base, AVAILABILITY_PATH), params=_spot_query(True),
                                 headers=headers, timeout=timeout))
            types, ondemand, *rest = await gather_limited(calls)
            spot = rest[0] if rest else []
        except HttpStatusError as exc:
            if exc.status_code == 401 and attempt == 0:
                continue  # the token expired early or was revoked: ask for a new one once
            raise
        return {"types": types, "ondemand": ondemand, "spot": spot}
    raise AssertionError("unreachable")  # pragma: no cover


def _same(a: list[_Location], b: list[_Location]) -> bool:
    def key(locations: list[_Location]) -> dict[str, frozenset[str]]:
        return {loc.location_code: frozenset(loc.availabilities) for loc in locations}
    return key(a) == key(b)


def parse(payload: Any, settings: ProviderSettings | None = None) -> Offers:
    data = validate(_Payload, payload, NAME)
    out = Collector(NAME)
    spot_locations = data.spot
    if spot_locations and _same(spot_locations, data.ondemand):
        out.records += 1
        out.skip("spot availability identical to on-demand: the spot filter was not read, spot stock unknown")
        spot_locations = []
    for itype in out.each(_Type, data.types):
        count = itype.gpu.number_of_gpus or 0
        if count < 1 or not itype.gpu.description:
            continue  # a CPU instance
        spelling = _COUNT.sub("", itype.gpu.description).strip()
        total = itype.gpu_memory.size_in_gigabytes
        memory = round(total / count, 1) if total else None
        gpu = gpu_id(spelling, memory, NAME)
        for billing, locations, price in ((Billing.HOURLY, data.ondemand, itype.price_per_hour),
                                          (Billing.SPOT, spot_locations, itype.spot_price)):
            if price is None or price <= 0:
                continue
            for loc in locations:
                out.add(sku=itype.instance_type, gpu=gpu, gpu_name=spelling, gpu_count=count, gpu_memory_gb=memory,
                        vcpu=itype.cpu.number_of_cores, ram_gb=itype.memory.size_in_gigabytes,
                        location=loc.location_code, billing=billing, price=price, currency="USD",
                        period=Period.HOUR, in_stock=itype.instance_type in loc.availabilities, url=ORDER_URL)
    return out.result()


PROVIDER: Provider[VerdaSettings] = Provider(
    info=ProviderInfo(name=NAME, title="Verda", aliases=("datacrunch", "verda cloud"), home="https://verda.com",
                      key_settings=("CLIENT_ID", "CLIENT_SECRET"),
                      sells="GPU cloud (formerly DataCrunch), per hour and spot, USD, Finland / Iceland"),
    settings=VerdaSettings(base_url="https://api.verda.com", interval=300),
    paths=(TYPES_PATH, AVAILABILITY_PATH, TOKEN_PATH), currency="USD", period=Period.HOUR, order_url=ORDER_URL,
    fetch=fetch, parse=parse, rate_limit_per_minute=30, conditional=False,
)
