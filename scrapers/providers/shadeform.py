"""Shadeform, an aggregator of a dozen GPU clouds: `GET /v1/instances/types?available=true` with the key in the
`X-API-KEY` header.

Each instance type names the cloud that really runs it (`cloud`: "lambdalabs", "datacrunch", "hyperstack"...), its
`shade_instance_type` / `cloud_instance_type`, a `configuration` (`num_gpus`, `gpu_type` such as "A100_80G",
`vram_per_gpu_in_gb`, `interconnect` such as "pcie" / "sxm4" / "sxm5", `nvlink`, `vcpus`, `memory_in_gb`,
`storage_in_gb`), `hourly_price` in US cents for the whole instance,
and `availability: [{region, available, display_name}]`. The underlying cloud stays visible: it is part of the
offer's sku (`lambdalabs/gpu_8x_h100_sxm5`) and location (`lambdalabs/us-east-1`), so two clouds selling the same
type through Shadeform are two offers and a user sees whose machine it is. With `available=true` the API lists
what can be launched; a region marked `available: false` is an offer out of stock. Evidence: skypilot-org/skypilot
`sky/catalog/data_fetchers/fetch_shadeform.py` (endpoint, header, `hourly_price / 100`, fields); Shadeform's API
reference (docs.shadeform.ai, "Instance Types": `configuration.interconnect`).

`gpu_type` alone ("H100") does not say the form factor; `interconnect` does: it is part of the spelling looked up
("H100" + "pcie" is the H100 PCIe, + "sxm5" the H100 SXM), so a PCIe card is never stored as an SXM one.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from core.offers import MAX_GPUS, Billing, Period
from core.providers import ProviderInfo
from scrapers.http import PoliteClient
from scrapers.provider import Provider
from scrapers.providers._common import Collector, Lenient, Offers, gpu_id, join_url, validate
from scrapers.settings import ProviderSettings

NAME = "shadeform"
TYPES_PATH = "/v1/instances/types"
ORDER_URL = "https://platform.shadeform.ai/"


class _Config(Lenient):
    num_gpus: int = Field(ge=0, le=MAX_GPUS)
    gpu_type: str | None = None
    interconnect: str | None = None
    vram_per_gpu_in_gb: float | None = None
    vcpus: int | None = None
    memory_in_gb: float | None = None
    storage_in_gb: float | None = None


class _Availability(Lenient):
    region: str
    available: bool = False


class _Type(Lenient):
    cloud: str
    shade_instance_type: str
    cloud_instance_type: str | None = None
    configuration: _Config
    hourly_price: float = Field(gt=0, le=1e10)
    availability: list[_Availability] = Field(default_factory=list)


class _Answer(Lenient):
    instance_types: list[Any]


async def fetch(client: PoliteClient, settings: ProviderSettings) -> Any:
    key = settings.api_key.get_secret_value() if settings.api_key else ""
    return await client.get_json(NAME, join_url(settings.base_url, TYPES_PATH), params={"available": "true"},
                                 headers={"X-API-KEY": key}, timeout=settings.timeout)


_FORM_FACTORS = ("pcie", "sxm", "sxm2", "sxm3", "sxm4", "sxm5", "sxm6", "nvl")


def _spelling(gpu_type: str, interconnect: str | None) -> str:
    """The card as the catalog reads it: `gpu_type` plus the form factor `interconnect` names ("H100 PCIe")."""
    name = gpu_type.replace("_", " ").strip()
    form = (interconnect or "").strip().lower()
    if form in _FORM_FACTORS and form not in name.lower():
        name = f"{name} {'PCIe' if form == 'pcie' else form.upper()}"
    return name


def parse(payload: Any, settings: ProviderSettings | None = None) -> Offers:
    answer = validate(_Answer, payload, NAME)
    out = Collector(NAME)
    for itype in out.each(_Type, answer.instance_types):
        config = itype.configuration
        if config.num_gpus < 1 or not config.gpu_type:
            continue
        spelling = _spelling(config.gpu_type, config.interconnect)
        memory = config.vram_per_gpu_in_gb or None
        cloud = itype.cloud.strip().lower()
        sku = f"{cloud}/{itype.cloud_instance_type or itype.shade_instance_type}"
        gpu = gpu_id(spelling, memory, NAME)
        for where in itype.availability:
            out.add(sku=sku, gpu=gpu, gpu_name=spelling, gpu_count=config.num_gpus, gpu_memory_gb=memory,
                    vcpu=config.vcpus, ram_gb=config.memory_in_gb, disk_gb=config.storage_in_gb,
                    location=f"{cloud}/{where.region}", billing=Billing.HOURLY,
                    price=round(itype.hourly_price / 100, 4), currency="USD", period=Period.HOUR,
                    in_stock=where.available, url=ORDER_URL)
    return out.result()


PROVIDER: Provider[ProviderSettings] = Provider(
    info=ProviderInfo(name=NAME, title="Shadeform", home="https://shadeform.ai", key_settings=("API_KEY",),
                      sells="aggregator of a dozen GPU clouds, per hour, USD"),
    settings=ProviderSettings(base_url="https://api.shadeform.ai", interval=300),
    paths=(TYPES_PATH,), currency="USD", period=Period.HOUR, order_url=ORDER_URL,
    fetch=fetch, parse=parse, rate_limit_per_minute=30, conditional=False,
)
