"""Hot Aisle (AMD Instinct GPU cloud): `GET /api/teams/{team}/virtual_machines/available/` with
`Authorization: Token <key>`; the API needs a key and the team handle (`PROVIDERS__HOTAISLE__API_KEY`,
`__TEAM_HANDLE`).

The answer is a list of VM shapes that can be created now: `[{OnDemandPrice (US cents per hour, the whole VM),
Specs: {cpu_cores, ram_capacity (bytes), disk_capacity (bytes), cpus: {model}, gpus: [{count, model}]}}]`.
Evidence: dstackai/gpuhunt `src/gpuhunt/providers/hotaisle.py` (HEAD 35841515: host `admin.hotaisle.app/api`, path,
`Token` header, fields; "HotAisle only has one location": `us-michigan-1`); Hot Aisle API docs
(admin.hotaisle.app/api/docs). Every listed shape is available now (the endpoint lists only those); how many of
each is not said.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from core.offers import MAX_GPUS, Billing, Period
from core.providers import ProviderInfo
from scrapers.http import PoliteClient
from scrapers.provider import Provider
from scrapers.providers._common import Collector, Lenient, Offers, gpu_id, join_url
from scrapers.settings import ProviderSettings

NAME = "hotaisle"
AVAILABLE_PATH = "/api/teams/{team_handle}/virtual_machines/available/"  # {setting}: filled from the settings
ORDER_URL = "https://admin.hotaisle.app/"
LOCATION = "us-michigan-1"  # its one data centre (gpuhunt hotaisle.py)
GIB = 1024**3


class HotAisleSettings(ProviderSettings):
    team_handle: str | None = None  # the team whose available VMs are listed


class _Gpu(Lenient):
    count: int = Field(ge=0, le=MAX_GPUS)
    model: str = Field(min_length=1)


class _Cpus(Lenient):
    model: str | None = None


class _Specs(Lenient):
    cpu_cores: int | None = Field(default=None, ge=0, le=100_000)
    ram_capacity: float | None = Field(default=None, ge=0)
    disk_capacity: float | None = Field(default=None, ge=0)
    cpus: _Cpus = Field(default_factory=_Cpus)
    gpus: list[_Gpu] = Field(default_factory=list)


class _Vm(Lenient):
    OnDemandPrice: float = Field(gt=0, le=1e10)  # US cents per hour
    Specs: _Specs


async def fetch(client: PoliteClient, settings: ProviderSettings) -> Any:
    team = settings.team_handle if isinstance(settings, HotAisleSettings) else ""
    key = settings.api_key.get_secret_value() if settings.api_key else ""
    url = join_url(settings.base_url, AVAILABLE_PATH.format(team_handle=team or ""))
    return await client.get_json(NAME, url, timeout=settings.timeout,
                                 headers={"Authorization": f"Token {key}", "Accept": "application/json"})


def parse(payload: Any, settings: ProviderSettings | None = None) -> Offers:
    out = Collector(NAME)
    rows = payload if isinstance(payload, list) else []
    if not isinstance(payload, list):
        out.records += 1
        out.skip(f"expected a list of VMs, got {type(payload).__name__}")
    for vm in out.each(_Vm, rows):
        gpus = [g for g in vm.Specs.gpus if g.count > 0]
        if not gpus:
            continue  # a CPU VM
        card = gpus[0]
        specs = vm.Specs
        sku = f"{card.count}x {card.model} {specs.cpu_cores or '?'}x {specs.cpus.model or 'CPU'}"
        out.add(sku=sku, gpu=gpu_id(card.model, None, NAME), gpu_name=card.model, gpu_count=card.count,
                vcpu=specs.cpu_cores, ram_gb=round(specs.ram_capacity / GIB, 1) if specs.ram_capacity else None,
                disk_gb=round(specs.disk_capacity / GIB, 1) if specs.disk_capacity else None, location=LOCATION,
                billing=Billing.HOURLY, price=round(vm.OnDemandPrice / 100, 4), currency="USD",
                period=Period.HOUR, in_stock=True, url=ORDER_URL)
    return out.result()


PROVIDER: Provider[HotAisleSettings] = Provider(
    info=ProviderInfo(name=NAME, title="Hot Aisle", aliases=("hotaisle", "hot aisle cloud"),
                      home="https://hotaisle.xyz", key_settings=("API_KEY", "TEAM_HANDLE"),
                      sells="AMD Instinct (MI300X) VMs, per hour, USD, Michigan"),
    settings=HotAisleSettings(base_url="https://admin.hotaisle.app", interval=600),
    paths=(AVAILABLE_PATH,), currency="USD", period=Period.HOUR, order_url=ORDER_URL,
    fetch=fetch, parse=parse, rate_limit_per_minute=30, conditional=False,
)
