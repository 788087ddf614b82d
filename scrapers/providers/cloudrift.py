"""CloudRift instance types: `POST /api/v1/instance-types/list` (the whole catalogue in one call).

Each type has variants (1, 2, 8 GPUs ...); each variant lists nodes per data centre and the free ones
(`available_nodes_per_dc`, the stock signal). Prices are US cents per hour for the whole variant. One offer per
(variant, data centre) where the variant exists at all (`nodes_per_dc`), so a sold-out one stays visible.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from core.offers import Billing, Period
from core.providers import ProviderInfo
from scrapers.http import PoliteClient
from scrapers.provider import Provider
from scrapers.providers._common import Collector, Lenient, Offers, gpu_id, join_url, validate
from scrapers.settings import ProviderSettings

NAME = "cloudrift"
LIST_PATH = "/api/v1/instance-types/list"
ORDER_URL = "https://console.cloudrift.ai/"
API_VERSION = "2025-03-21"  # any recent date works for this call; the public listing ignores the pin
GIB = 1024**3


class _Variant(Lenient):
    name: str
    gpu_count: int | None = None
    vram: int | None = None  # bytes per GPU
    logical_cpu_count: int | None = None
    dram: int | None = None  # bytes
    disk: int | None = None  # bytes
    cost_per_hour: float | None = None  # US cents, whole variant
    available_nodes_per_dc: dict[str, int | None] | None = None
    nodes_per_dc: dict[str, int | None] | None = None


class _InstanceType(Lenient):
    name: str
    brand_short: str | None = None
    cost_per_hour: float | None = None
    variants: list[_Variant] = Field(default_factory=list)


class _Data(Lenient):
    instance_types: list[Any]


class _Answer(Lenient):
    data: _Data


async def fetch(client: PoliteClient, settings: ProviderSettings) -> Any:
    body = {"version": API_VERSION, "data": {"selector": {"ByServiceAndLocation": {"services": ["vm"]}}}}
    headers = {"X-API-Key": settings.api_key.get_secret_value()} if settings.api_key else None
    return await client.post_json(NAME, join_url(settings.base_url, LIST_PATH), body, headers=headers,
                                  timeout=settings.timeout)


def _gib(value: int | None) -> float | None:
    return round(value / GIB, 1) if value else None


def parse(payload: Any, settings: ProviderSettings | None = None) -> Offers:
    answer = validate(_Answer, payload, NAME)
    out = Collector(NAME)
    for itype in out.each(_InstanceType, answer.data.instance_types):
        if not itype.brand_short:
            continue  # a CPU-only type
        for variant in itype.variants:
            count = variant.gpu_count or 0
            cents = variant.cost_per_hour if variant.cost_per_hour is not None else itype.cost_per_hour
            if count < 1 or cents is None:
                continue
            memory = _gib(variant.vram)
            gpu = gpu_id(itype.brand_short, memory, NAME)
            free = variant.available_nodes_per_dc or {}
            for dc in sorted(set(variant.nodes_per_dc or {}) | set(free)):
                nodes = max(0, free.get(dc) or 0)
                out.add(
                    sku=variant.name, gpu=gpu, gpu_name=itype.brand_short, gpu_count=count,
                    gpu_memory_gb=memory, vcpu=variant.logical_cpu_count, ram_gb=_gib(variant.dram),
                    disk_gb=_gib(variant.disk), location=dc, billing=Billing.HOURLY, price=round(cents / 100, 4),
                    currency="USD", period=Period.HOUR, in_stock=nodes > 0, available=nodes, url=ORDER_URL,
                )
    return out.result()


PROVIDER: Provider[ProviderSettings] = Provider(
    info=ProviderInfo(name=NAME, title="CloudRift", home="https://cloudrift.ai", sells="GPU cloud, per hour, USD"),
    settings=ProviderSettings(base_url="https://api.cloudrift.ai", interval=120),
    paths=(LIST_PATH,), currency="USD", period=Period.HOUR, order_url=ORDER_URL,
    fetch=fetch, parse=parse, rate_limit_per_minute=30, conditional=False,
)
