"""Selectel's cloud (VPC) GPUs, price only: the public price list `GET /prices/vpc?currency=rub` on api.selectel.ru
(no key; research notes `selectel.md`).

The answer is a list of `{resource, group, currency, value, unit}`; a GPU is the resource `compute_pci_gpu_<model>`
(`compute_pci_gpu_a100`, `compute_pci_gpu_t4`), its `_preemptible` variant the interruptible price, `group` the
region / pool (`ru-7`), `unit` "item" (one GPU). Evidence: third-party code reading the live list (field names and
the GPU resource names verified there, research notes `selectel.md`). What a value is per — hour or month — is
NOT verified: the figures look monthly (an A100 at ~199 000 ₽), so the period is a setting (`PROVIDERS__SELECTEL_
CLOUD__PERIOD`, default "month") and the provider ships disabled until an operator confirms it with `gpuradar
providers check selectel_cloud` against the cloud price page. A GPU's price is its share of a VM only (vCPUs and
RAM are their own resources): the sku says "GPU only". No stock: "listed price, availability unknown"
(`info.stock_known` False), never alerted as in stock. VAT: Selectel's terms, unconfirmed (see `selectel.py`).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field

from core.offers import Billing, Period
from core.providers import ProviderInfo
from scrapers.errors import PayloadValidationError
from scrapers.http import PoliteClient
from scrapers.provider import Provider
from scrapers.providers._common import Collector, Lenient, Offers, gpu_id, join_url
from scrapers.providers.selectel import VAT
from scrapers.settings import ProviderSettings

NAME = "selectel_cloud"
PRICES_PATH = "/prices/vpc"
ORDER_URL = "https://selectel.ru/services/cloud/servers/gpu/"
_GPU = re.compile(r"^compute_pci_gpu_([a-z0-9]+?)(_preemptible)?$", re.IGNORECASE)


class SelectelCloudSettings(ProviderSettings):
    enabled: bool = False  # until an operator confirms what a value is per
    currency: str = "rub"
    period: Period = Period.MONTH  # inferred from the figures, not verified


class _Row(Lenient):
    resource: str
    group: str = ""
    currency: str = "rub"
    value: float = Field(le=1e8)
    unit: str = "item"


async def fetch(client: PoliteClient, settings: ProviderSettings) -> Any:
    currency = settings.currency if isinstance(settings, SelectelCloudSettings) else "rub"
    return await client.get_json(NAME, join_url(settings.base_url, PRICES_PATH), params={"currency": currency},
                                 timeout=settings.timeout)


def spelling(model: str) -> str:
    """`rtx4090` -> "RTX 4090", `a100` -> "A100": the resource's model token as the catalog reads it."""
    return re.sub(r"^(rtx|gtx)(\d)", r"\1 \2", model.lower()).upper()


def parse(payload: Any, settings: ProviderSettings | None = None) -> Offers:
    period = settings.period if isinstance(settings, SelectelCloudSettings) else PROVIDER.settings.period
    if not isinstance(payload, list):
        raise PayloadValidationError(f"{NAME}: expected a list of prices, got {type(payload).__name__}")
    out = Collector(NAME)
    for row in out.each(_Row, payload):
        m = _GPU.match(row.resource)
        if m is None:
            continue  # vCPU, RAM, disks, addresses
        if row.unit != "item":
            out.skip(f"{row.resource}: priced per {row.unit!r}, not per GPU")
            continue
        name = spelling(m.group(1))
        out.add(sku=f"{row.resource} (GPU only)", gpu=gpu_id(name, None, NAME), gpu_name=name, gpu_count=1,
                location=row.group, billing=Billing.SPOT if m.group(2) else (
                    Billing.MONTHLY if period is Period.MONTH else Billing.HOURLY),
                price=row.value, currency=row.currency.upper(), period=period, in_stock=False, url=ORDER_URL)
    return out.result()


PROVIDER: Provider[SelectelCloudSettings] = Provider(
    info=ProviderInfo(name=NAME, title="Selectel Cloud", aliases=("selectel vpc", "селектел облако"), vat=VAT,
                      home="https://selectel.ru", stock_known=False,
                      sells="cloud GPU VMs (per-GPU share), RUB: listed price, availability unknown (operator enables "
                            "it)"),
    settings=SelectelCloudSettings(base_url="https://api.selectel.ru", interval=6 * 3600),
    paths=(PRICES_PATH,), currency="RUB", period=Period.MONTH, order_url=ORDER_URL,
    fetch=fetch, parse=parse, rate_limit_per_minute=30,
)
