"""Selectel dedicated GPU servers: `GET /servers/v2/pub/service/server` (+ `/pub/location` to name locations).

Stock is `available[].count` per location uuid; `quantity` is the minimum order (always 1), NOT stock. Only the
locations the storefront sells count: visible everywhere, ordering enabled, and a Russian data centre (name prefix
from settings) — Tashkent / Almaty also appear in `available[]`. Prices are per server per month, per location
when `location_price_collection` overrides the base price.

`/pub/location` is sometimes slow (a public scraper saw no answer within 40 s): it gets a shorter timeout, and
when it does not answer the last good list is used (locations change a few times a year), so a slow lookup never
voids a catalogue that did arrive. GPU servers are recognised by `gpu: {name, count}` (null or `{}` on CPU
servers), the field public clients of the live API read (see docs/reference/providers/selectel.md: fixtures of real
responses, a TypeScript interface of the service item, selectel/terraform-provider-selectel's `gpu.count` filter).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from pydantic import Field

from core.offers import Billing, Period
from core.providers import RU_VAT_RATE, ProviderInfo, Vat
from scrapers.errors import ScrapeError
from scrapers.http import PoliteClient
from scrapers.provider import Provider
from scrapers.providers._common import Collector, Lenient, Offers, gpu_id, join_url, validate
from scrapers.settings import ProviderSettings

log = logging.getLogger(__name__)

NAME = "selectel"
SERVERS_PATH, LOCATIONS_PATH = "/servers/v2/pub/service/server", "/servers/v2/pub/location"
ORDER_URL = "https://selectel.ru/services/dedicated/"
# Unconfirmed: no statement on selectel.ru's own pages (offer, tariff or FAQ text) could be cited here; the terms are
# what its storefront prices imply for a Russian buyer. `gpuradar providers` shows them "unconfirmed".
VAT = Vat(RU_VAT_RATE, True, source="inferred from the selectel.ru storefront (RUB prices for Russian buyers); no "
                                    "statement on Selectel's own pages cited yet")


class SelectelSettings(ProviderSettings):
    # The storefront counts stock only in its Russian data centres (location names start with these);
    # Tashkent / Almaty / Nairobi also appear in `available[]` but are not sold on selectel.ru.
    storefront_prefixes: list[str] = Field(default_factory=lambda: ["MSK", "SPB", "NSK"])
    currency: str = "RUB"



class _Price(Lenient):
    month: float | None = None
    hour: float | None = None
    day: float | None = None
    year: float | None = None


class _Gpu(Lenient):
    name: str | None = None
    count: int | None = None


class _Cpu(Lenient):
    count: int | None = None
    cores_per_cpu: int | None = None


class _Part(Lenient):
    size: float | None = None
    count: int | None = None


class _Available(Lenient):
    location: str
    count: int = 0


class _Service(Lenient):
    uuid: str
    name: str
    gpu: _Gpu | None = None
    cpu: _Cpu | None = None
    ram: list[_Part] | None = None
    disk: list[_Part] | None = None
    available: list[_Available] | None = None
    price_collection: dict[str, _Price | None] | None = None
    location_price_collection: dict[str, dict[str, _Price | None] | None] | None = None
    is_order: bool = True
    is_preorder: bool = False


class _Services(Lenient):
    result: list[Any]


class _Location(Lenient):
    uuid: str
    name: str
    visibility: str | None = None
    primary_resource_ordering: str | None = None


class _Locations(Lenient):
    result: list[_Location] = Field(default_factory=list)


LOCATIONS_TIMEOUT = 10.0
# The last location list that validated, per API origin (one entry per configured base URL: bounded).
_last_locations: dict[str, Any] = {}


async def _locations(client: PoliteClient, settings: ProviderSettings) -> Any:
    try:
        answer = await client.get_json(NAME, join_url(settings.base_url, LOCATIONS_PATH),
                                       timeout=min(settings.timeout, LOCATIONS_TIMEOUT))
        validate(_Locations, answer, NAME)
    except ScrapeError as exc:
        if settings.base_url in _last_locations:
            log.warning("%s: location list unavailable (%s); using the last good one", NAME, exc)
            return _last_locations[settings.base_url]
        raise
    _last_locations[settings.base_url] = answer
    return answer


async def fetch(client: PoliteClient, settings: ProviderSettings) -> dict[str, Any]:
    services, locations = await asyncio.gather(
        client.get_json(NAME, join_url(settings.base_url, SERVERS_PATH), timeout=settings.timeout),
        _locations(client, settings))
    return {"services": services, "locations": locations}


def _total(parts: list[_Part] | None) -> float | None:
    if not parts:
        return None
    return sum((p.size or 0) * (p.count or 1) for p in parts) or None


def _month_price(service: _Service, location: str, currency: str) -> float | None:
    override = (service.location_price_collection or {}).get(location) or {}
    for collection in (override, service.price_collection or {}):
        price = collection.get(currency)
        if price is not None and price.month:
            return price.month
    return None


def parse(payload: Any, settings: ProviderSettings | None = None) -> Offers:
    cfg = settings if isinstance(settings, SelectelSettings) else SelectelSettings(base_url=ORDER_URL)
    if not isinstance(payload, dict) or "services" not in payload:
        payload = {"services": payload, "locations": {"result": []}}
    services = validate(_Services, payload["services"], NAME)
    locations = validate(_Locations, payload.get("locations") or {"result": []}, NAME)
    prefixes = tuple(p.upper() for p in cfg.storefront_prefixes)
    sold = {
        loc.uuid: loc.name for loc in locations.result
        if loc.visibility == "everywhere" and loc.primary_resource_ordering == "enabled"
        and loc.name.upper().startswith(prefixes)
    }
    currency = cfg.currency.upper()
    out = Collector(NAME)
    for svc in out.each(_Service, services.result):
        if svc.gpu is None or not svc.gpu.name or not svc.gpu.count:
            continue  # not a GPU server (`gpu` is null or {})
        gpu = gpu_id(svc.gpu.name, None, NAME)
        vcpu = (svc.cpu.count or 1) * svc.cpu.cores_per_cpu if svc.cpu and svc.cpu.cores_per_cpu else None
        for avail in svc.available or []:
            if avail.location not in sold:
                continue
            price = _month_price(svc, avail.location, currency)
            if price is None:
                continue  # not priced in this currency: nothing we could compare
            count = max(0, avail.count) if svc.is_order else 0  # not orderable: none rentable now
            out.add(
                sku=svc.name, gpu=gpu, gpu_name=svc.gpu.name, gpu_count=svc.gpu.count,
                vcpu=vcpu, ram_gb=_total(svc.ram), disk_gb=_total(svc.disk), location=sold[avail.location],
                billing=Billing.MONTHLY, price=price, currency=currency, period=Period.MONTH,
                in_stock=count > 0, available=count, url=ORDER_URL,
            )
    return out.result()


PROVIDER: Provider[SelectelSettings] = Provider(
    info=ProviderInfo(
        name=NAME, title="Selectel", aliases=("селектел",), home="https://selectel.ru", vat=VAT,
        sells="dedicated GPU servers, monthly, RUB, Moscow / St Petersburg / Novosibirsk"),
    settings=SelectelSettings(base_url="https://api.selectel.ru", interval=600, timeout=40),
    paths=(SERVERS_PATH, LOCATIONS_PATH), currency="RUB", period=Period.MONTH, order_url=ORDER_URL,
    fetch=fetch, parse=parse,
)
