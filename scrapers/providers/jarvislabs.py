"""JarvisLabs GPU instances: `GET /misc/server_meta` with the API key as a Bearer token.

The answer: `{server_meta: [{gpu_type, region, num_free_devices, effective_num_free_devices, spot_num_free_devices,
price_per_hour, spot_price, vram, cpus_per_gpu, ram_per_gpu, workload_type, num_gpus}], cpu_meta: {...}}` — one
row per (card, region, workload type), prices USD per GPU-hour, `vram` GB per GPU (a string), `num_gpus` the most
GPUs one instance takes, `effective_num_free_devices` (else `num_free_devices`) the GPUs free now and
`spot_num_free_devices` the free spot ones. Evidence: dstackai/gpuhunt `src/gpuhunt/providers/jarvislabs.py` (HEAD
35841515: endpoint, host, Bearer header, fields, GPU counts 1..min(free, num_gpus)) and the answer it records in
`src/tests/providers/test_jarvislabs.py`.

One offer per (card, region, GPU count, billing) for the counts 1, 2, 4, 8 up to `num_gpus`: in stock when that
many GPUs are free. JarvisLabs spells some cards its own way (`A100-80GB`, `RTX-PRO6000`, as gpuhunt's override
table records): read as the catalog spells them. CPU-only combinations are not GPU offers.
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

NAME = "jarvislabs"
META_PATH = "/misc/server_meta"
ORDER_URL = "https://jarvislabs.ai/"
COUNTS = (1, 2, 4, 8)
# JarvisLabs' tokens -> the catalog's spelling (gpuhunt `JARVISLABS_GPU_NAME_OVERRIDES`).
SPELLINGS = {"RTX-PRO6000": "RTX PRO 6000", "A100-80GB": "A100 80GB"}
_NUMBER = re.compile(r"^\s*\d+(\.\d+)?\s*$")


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    return float(value) if isinstance(value, str) and _NUMBER.match(value) else None


class _Row(Lenient):
    gpu_type: str = Field(min_length=1)
    region: str = Field(min_length=1)
    price_per_hour: float = Field(gt=0, le=1e6)
    spot_price: float | None = Field(default=None, le=1e6)
    num_free_devices: int | None = Field(default=None, ge=0, le=100_000)
    effective_num_free_devices: int | None = Field(default=None, ge=0, le=100_000)
    spot_num_free_devices: int | None = Field(default=None, ge=0, le=100_000)
    vram: float | str | None = None
    cpus_per_gpu: int | None = Field(default=None, ge=0, le=1024)
    ram_per_gpu: float | None = Field(default=None, ge=0, le=1e5)
    num_gpus: int | str | None = None


class _Answer(Lenient):
    server_meta: list[Any]


async def fetch(client: PoliteClient, settings: ProviderSettings) -> Any:
    key = settings.api_key.get_secret_value() if settings.api_key else ""
    return await client.get_json(NAME, join_url(settings.base_url, META_PATH), timeout=settings.timeout,
                                 headers={"Authorization": f"Bearer {key}"})


def parse(payload: Any, settings: ProviderSettings | None = None) -> Offers:
    out = Collector(NAME)
    for row in out.each(_Row, validate(_Answer, payload, NAME).server_meta):
        spelling = SPELLINGS.get(row.gpu_type, row.gpu_type.replace("-", " "))
        memory = _number(row.vram)
        most = int(_number(row.num_gpus) or 1)
        gpu = gpu_id(spelling, memory, NAME)
        free = row.effective_num_free_devices if row.effective_num_free_devices is not None else row.num_free_devices
        for billing, per_gpu, available in ((Billing.HOURLY, row.price_per_hour, free or 0),
                                            (Billing.SPOT, row.spot_price, row.spot_num_free_devices or 0)):
            if per_gpu is None:
                continue  # no spot price for this card
            for count in (c for c in COUNTS if c <= min(most, MAX_GPUS)):
                out.add(sku=row.gpu_type, gpu=gpu, gpu_name=row.gpu_type, gpu_count=count, gpu_memory_gb=memory,
                        vcpu=row.cpus_per_gpu * count if row.cpus_per_gpu else None,
                        ram_gb=row.ram_per_gpu * count if row.ram_per_gpu else None, location=row.region,
                        billing=billing, price=round(per_gpu * count, 4), currency="USD", period=Period.HOUR,
                        in_stock=available >= count, available=available // count, url=ORDER_URL)
    return out.result()


PROVIDER: Provider[ProviderSettings] = Provider(
    info=ProviderInfo(name=NAME, title="JarvisLabs", aliases=("jarvis labs", "jarvislabs.ai", "jarvis"),
                      home="https://jarvislabs.ai", key_settings=("API_KEY",),
                      sells="GPU cloud, per hour and spot, USD, India / Europe"),
    settings=ProviderSettings(base_url="https://backendn.jarvislabs.net", interval=300),
    paths=(META_PATH,), currency="USD", period=Period.HOUR, order_url=ORDER_URL,
    fetch=fetch, parse=parse, rate_limit_per_minute=30, conditional=False,
)
