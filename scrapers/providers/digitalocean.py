"""DigitalOcean GPU Droplets (formerly Paperspace's GPU line): `GET /v2/sizes?per_page=500` with the API token as a
Bearer token (`PROVIDERS__DIGITALOCEAN__API_KEY`).

Each size: `{slug, memory (MB), vcpus, disk, price_hourly, price_monthly (USD, the whole Droplet), regions[],
available, gpu_info: {count, vram: {amount, unit}, model}, disk_info[]}`; `gpu_info` only on GPU sizes, `model`
like `nvidia_h100`, `nvidia_rtx6000_ada`, `amd_mi300x`, `vram.amount` the Droplet's total. `regions` lists where the
size can be created now ("If regions list is empty, instance type is not available"). Evidence: dstackai/gpuhunt
`src/gpuhunt/providers/digitalocean.py` (HEAD 35841515) and the answer recorded in
`src/tests/providers/test_digitalocean.py`; DigitalOcean API reference "List All Droplet Sizes"
(docs.digitalocean.com/reference/api). One offer per (GPU size, region), in stock there.
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

NAME = "digitalocean"
SIZES_PATH = "/v2/sizes"
ORDER_URL = "https://cloud.digitalocean.com/gpus"
VENDORS = ("nvidia", "amd", "intel")


class _Vram(Lenient):
    amount: float = Field(gt=0, le=1e5)
    unit: str = "gib"


class _GpuInfo(Lenient):
    count: int = Field(ge=0, le=MAX_GPUS)
    model: str = Field(min_length=1)
    vram: _Vram | None = None


class _Size(Lenient):
    slug: str
    memory: float | None = Field(default=None, ge=0)  # MB
    vcpus: int | None = Field(default=None, ge=0, le=100_000)
    price_hourly: float = Field(gt=0, le=1e8)
    regions: list[str] = Field(default_factory=list)
    available: bool = True
    gpu_info: _GpuInfo | None = None


class _Answer(Lenient):
    sizes: list[Any]


async def fetch(client: PoliteClient, settings: ProviderSettings) -> Any:
    key = settings.api_key.get_secret_value() if settings.api_key else ""
    return await client.get_json(NAME, join_url(settings.base_url, SIZES_PATH), params={"per_page": 500},
                                 headers={"Authorization": f"Bearer {key}"}, timeout=settings.timeout)


def spelling(model: str) -> str:
    """`nvidia_rtx6000_ada` -> "RTX6000 ADA", `amd_mi300x` -> "MI300X": the vendor prefix dropped."""
    parts = model.split("_")
    return " ".join(p.upper() for p in (parts[1:] if parts[0].lower() in VENDORS and len(parts) > 1 else parts))


def parse(payload: Any, settings: ProviderSettings | None = None) -> Offers:
    out = Collector(NAME)
    for size in out.each(_Size, validate(_Answer, payload, NAME).sizes):
        info = size.gpu_info
        if info is None or info.count < 1:
            continue  # a CPU Droplet
        name = spelling(info.model)
        memory = round(info.vram.amount / info.count, 1) if info.vram else None
        gpu = gpu_id(name, memory, NAME)
        for region in size.regions:
            out.add(sku=size.slug, gpu=gpu, gpu_name=name, gpu_count=info.count, gpu_memory_gb=memory,
                    vcpu=size.vcpus, ram_gb=round(size.memory / 1024, 1) if size.memory else None, location=region,
                    billing=Billing.HOURLY, price=size.price_hourly, currency="USD", period=Period.HOUR,
                    in_stock=size.available, url=ORDER_URL)
    return out.result()


PROVIDER: Provider[ProviderSettings] = Provider(
    info=ProviderInfo(name=NAME, title="DigitalOcean", aliases=("digital ocean", "paperspace"),
                      home="https://www.digitalocean.com", key_settings=("API_KEY",),
                      sells="GPU Droplets (NVIDIA and AMD), per hour, USD, New York / Toronto / Atlanta"),
    settings=ProviderSettings(base_url="https://api.digitalocean.com", interval=600),
    paths=(SIZES_PATH,), currency="USD", period=Period.HOUR, order_url=ORDER_URL,
    fetch=fetch, parse=parse, rate_limit_per_minute=60,
)
