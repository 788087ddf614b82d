"""Lambda (Lambda Labs / Lambda Cloud) instance types: `GET /api/v1/instance-types` with the API key as a Bearer
token (the key is required: the provider stays off until `PROVIDERS__LAMBDA__API_KEY` is set).

The answer maps each type name to `{instance_type: {name, description, gpu_description, price_cents_per_hour,
specs: {vcpus, memory_gib, storage_gib, gpus}}, regions_with_capacity_available: [{name, description}]}`.
Prices are US cents per hour for the whole instance. Stock: a region listed in `regions_with_capacity_available`
can launch the type now; one offer per (type, region with capacity). Lambda publishes no list of regions without
capacity, so a type that loses its last region simply stops being listed and change detection's hysteresis turns
it sold out. The GPU is read from `gpu_description` ("H100 (80 GB SXM5)"), else the description's "8x H100 (80 GB
SXM5)" form (dstackai/gpuhunt `src/gpuhunt/providers/lambdalabs.py` parses the same description).

Host: the API reference (docs.lambda.ai/api/cloud, "Lambda Cloud API") documents `https://cloud.lambda.ai/api/v1/`;
the old `cloud.lambdalabs.com` may only redirect there, so the default base URL is the documented host itself.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field

from core.offers import MAX_GPUS, Billing, Period
from core.providers import ProviderInfo
from scrapers.http import PoliteClient
from scrapers.provider import Provider
from scrapers.providers._common import Collector, Lenient, Offers, gpu_id, join_url, validate
from scrapers.settings import ProviderSettings

NAME = "lambda"
TYPES_PATH = "/api/v1/instance-types"
ORDER_URL = "https://cloud.lambda.ai/instances"

# "8x H100 (80 GB SXM5)", "1x A10 (24 GB PCIe)", "8x Tesla V100 (16 GB)"
_DESCRIPTION = re.compile(r"^\s*(\d+)\s*x\s+(?:Tesla\s+)?(.+?)\s*\((\d+(?:\.\d+)?)\s*GB\s*([^)]*)\)", re.IGNORECASE)
_GPU_ONLY = re.compile(r"^\s*(?:Tesla\s+)?(.+?)\s*\((\d+(?:\.\d+)?)\s*GB\s*([^)]*)\)", re.IGNORECASE)


class _Specs(Lenient):
    vcpus: int | None = None
    memory_gib: float | None = None
    storage_gib: float | None = None
    gpus: int | None = Field(default=None, ge=0, le=MAX_GPUS)


class _Type(Lenient):
    name: str
    description: str = ""
    gpu_description: str | None = None
    price_cents_per_hour: float = Field(gt=0, le=1e9)
    specs: _Specs = Field(default_factory=_Specs)


class _Region(Lenient):
    name: str
    description: str | None = None


class _Entry(Lenient):
    instance_type: _Type
    regions_with_capacity_available: list[_Region] = Field(default_factory=list)


class _Answer(Lenient):
    data: dict[str, Any]


async def fetch(client: PoliteClient, settings: ProviderSettings) -> Any:
    key = settings.api_key.get_secret_value() if settings.api_key else ""
    return await client.get_json(NAME, join_url(settings.base_url, TYPES_PATH),
                                 headers={"Authorization": f"Bearer {key}"}, timeout=settings.timeout)


def gpu_of(itype: _Type) -> tuple[str, int, float | None] | None:
    """(spelling, count, GB per GPU) or None for a CPU-only type."""
    count = itype.specs.gpus
    if m := _DESCRIPTION.match(itype.description):
        spelling = f"{m.group(2)} {m.group(4)}".strip()
        return spelling, count or int(m.group(1)), float(m.group(3))
    if itype.gpu_description and (m := _GPU_ONLY.match(itype.gpu_description)) and count:
        return f"{m.group(1)} {m.group(3)}".strip(), count, float(m.group(2))
    if count and itype.gpu_description:
        return itype.gpu_description, count, None
    return None


def parse(payload: Any, settings: ProviderSettings | None = None) -> Offers:
    answer = validate(_Answer, payload, NAME)
    out = Collector(NAME)
    for entry in out.each(_Entry, answer.data.values()):
        itype = entry.instance_type
        gpu = gpu_of(itype)
        if gpu is None:
            continue  # a CPU-only type
        spelling, count, memory = gpu
        for region in entry.regions_with_capacity_available:
            out.add(sku=itype.name, gpu=gpu_id(spelling, memory, NAME), gpu_name=spelling, gpu_count=count,
                    gpu_memory_gb=memory, vcpu=itype.specs.vcpus, ram_gb=itype.specs.memory_gib,
                    disk_gb=itype.specs.storage_gib, location=region.name, billing=Billing.HOURLY,
                    price=round(itype.price_cents_per_hour / 100, 4), currency="USD", period=Period.HOUR,
                    in_stock=True, url=ORDER_URL)
    return out.result()


PROVIDER: Provider[ProviderSettings] = Provider(
    info=ProviderInfo(name=NAME, title="Lambda", aliases=("lambda labs", "lambdalabs", "lambda cloud"),
                      home="https://lambda.ai", key_settings=("API_KEY",), sells="GPU cloud, per hour, USD"),
    settings=ProviderSettings(base_url="https://cloud.lambda.ai", interval=300),
    paths=(TYPES_PATH,), currency="USD", period=Period.HOUR, order_url=ORDER_URL,
    fetch=fetch, parse=parse, rate_limit_per_minute=30, conditional=False,
)
