"""Seeweb Cloud Server GPU (Italy): `GET /ecs/v2/plans` with the API token in the `X-APITOKEN` header
(`PROVIDERS__SEEWEB__API_KEY`).

The answer: `{status, plans: [{name ("ECS1GPU7"), cpu, ram (MB), disk (GB), gpu (a count, as a string),
gpu_label ("L40s 48GB", "A100 80GB", "MI300X"), hourly_price, available, available_regions: [{location}]}]}`.
`available` says the plan is active and `available_regions` where it can be ordered — neither is current
capacity ("these are regions where the plan is active/compatible, not a real-time capacity signal"), so Seeweb is
a listed-price source here: availability unknown (`info.stock_known` False), never alerted as in stock. Prices:
per hour for the whole server, in euro (Seeweb's price lists are in EUR). Evidence: dstackai/gpuhunt
`src/gpuhunt/providers/seeweb.py` (HEAD 35841515: host `api.seeweb.it/ecs/v2`, path, header, fields, the
capacity caveat) and the `/plans` answer it mirrors in `src/tests/providers/test_seeweb.py`.
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

NAME = "seeweb"
PLANS_PATH = "/ecs/v2/plans"
ORDER_URL = "https://www.seeweb.it/en/products/cloud-server-gpu"
_INT = re.compile(r"^\s*(\d+)\s*$")


class _Region(Lenient):
    location: str = Field(min_length=1)


class _Plan(Lenient):
    name: str = Field(min_length=1)
    gpu: int | str | None = None
    gpu_label: str | None = None
    cpu: int | str | None = None
    ram: float | str | None = None  # MB
    disk: float | str | None = None  # GB
    hourly_price: float = Field(gt=0, le=1e6)
    available: bool = True
    available_regions: list[_Region] = Field(default_factory=list)


class _Answer(Lenient):
    plans: list[Any]


def _int(value: int | float | str | None) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return int(value)
    return int(m.group(1)) if (m := _INT.match(value)) else None


async def fetch(client: PoliteClient, settings: ProviderSettings) -> Any:
    key = settings.api_key.get_secret_value() if settings.api_key else ""
    return await client.get_json(NAME, join_url(settings.base_url, PLANS_PATH), headers={"X-APITOKEN": key},
                                 timeout=settings.timeout)


def parse(payload: Any, settings: ProviderSettings | None = None) -> Offers:
    out = Collector(NAME)
    for plan in out.each(_Plan, validate(_Answer, payload, NAME).plans):
        count = _int(plan.gpu) or 0
        if count < 1 or not plan.gpu_label or not plan.available:
            continue  # a CPU plan, or one no longer sold
        if count > MAX_GPUS:
            out.skip(f"{plan.name}: {count} GPUs")
            continue
        label = " ".join(plan.gpu_label.split())
        gpu = gpu_id(label, None, NAME)
        ram = _int(plan.ram)
        for region in dict.fromkeys(r.location.strip() for r in plan.available_regions):
            out.add(sku=plan.name, gpu=gpu, gpu_name=label, gpu_count=count, vcpu=_int(plan.cpu),
                    ram_gb=round(ram / 1024, 1) if ram else None, disk_gb=_int(plan.disk), location=region,
                    billing=Billing.HOURLY, price=plan.hourly_price, currency="EUR", period=Period.HOUR,
                    in_stock=False, url=ORDER_URL)
    return out.result()


PROVIDER: Provider[ProviderSettings] = Provider(
    info=ProviderInfo(name=NAME, title="Seeweb", aliases=("seeweb cloud",), home="https://www.seeweb.it",
                      key_settings=("API_KEY",), stock_known=False,
                      sells="cloud GPU servers, per hour, EUR, Italy: listed price, availability unknown"),
    settings=ProviderSettings(base_url="https://api.seeweb.it", interval=3600),
    paths=(PLANS_PATH,), currency="EUR", period=Period.HOUR, order_url=ORDER_URL,
    fetch=fetch, parse=parse, rate_limit_per_minute=30,
)
