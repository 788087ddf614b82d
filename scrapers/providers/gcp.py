"""Google Cloud GPUs, price only: the Cloud Billing Catalog API's Compute Engine SKUs,
`GET /v1/services/6F81-5844-456A/skus` with an API key in the `X-Goog-Api-Key` header (`PROVIDERS__GCP__API_KEY`;
Google's "Using API keys" docs accept the header, so the key never rides in a URL).

The answer: `{skus: [{skuId, description, category: {resourceFamily ("Compute"), resourceGroup ("GPU"), usageType
("OnDemand" | "Preemptible" | "Commit1Yr"…)}, serviceRegions: [...], pricingInfo: [{pricingExpression: {usageUnit
("h"), tieredRates: [{startUsageAmount, unitPrice: {currencyCode, units (a string), nanos}}]}}]}], nextPageToken}`.
A GPU SKU prices one GPU per hour ("Nvidia Tesla T4 GPU running in Americas", "Spot Preemptible Nvidia H100 80GB GPU
running in …"); the VM's vCPUs and memory are billed on top (their own SKUs), so an offer's price is one GPU's share
and its sku says "GPU only". One offer per (GPU SKU, region), spot for Preemptible. Evidence: Google Cloud Billing
Catalog API reference (cloud.google.com/billing/docs/reference/rest/v1/services.skus/list: path, `pageToken`,
the Sku fields); dstackai/gpuhunt `src/gpuhunt/providers/gcp.py` (HEAD 35841515: the Compute Engine service
`services/6F81-5844-456A`, usage types OnDemand / Preemptible, skipping "Sole Tenancy" / "Reserved" / "Premium" /
"Custom" / "suspended", the description pattern `(spot preemptible )?(.+) gpu`, price = units + nanos / 1e9,
"nvidia-tesla-a100" being the 40 GB A100 beside "nvidia-a100-80gb").

No stock signal: "listed price, availability unknown" (`info.stock_known` False), never alerted as in stock.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field

from core.offers import Billing, Period
from core.providers import ProviderInfo
from scrapers.http import PoliteClient
from scrapers.provider import Provider
from scrapers.providers._common import Collector, Lenient, Offers, gpu_id, join_url, token_paged_list, validate
from scrapers.settings import ProviderSettings

NAME = "gcp"
SKUS_PATH = "/v1/services/6F81-5844-456A/skus"
ORDER_URL = "https://cloud.google.com/compute/gpus-pricing"
MAX_PAGES = 20
SKIP_WORDS = ("Sole Tenancy", "Reserved", "Premium", "Custom", "suspended", "DWS", "Calendar", "slice")
_GPU = re.compile(r"^(?:spot preemptible\s+)?(nvidia\s+.+?)\s+gpu\b", re.IGNORECASE)
# Google's names that the catalog would read otherwise: "Tesla A100" is the 40 GB card (gpuhunt maps
# "nvidia-tesla-a100" apart from "nvidia-a100-80gb"), "Tesla V100" the 16 GB one.
SPELLINGS = {"nvidia tesla a100": "A100 40GB", "nvidia tesla v100": "V100 16GB"}


class _Money(Lenient):
    currencyCode: str = "USD"
    units: int | str = 0
    nanos: int = 0

    @property
    def value(self) -> float:
        return int(self.units or 0) + self.nanos / 1e9


class _Rate(Lenient):
    startUsageAmount: float = 0
    unitPrice: _Money


class _Expression(Lenient):
    usageUnit: str = "h"
    tieredRates: list[_Rate] = Field(default_factory=list)


class _PricingInfo(Lenient):
    pricingExpression: _Expression


class _Category(Lenient):
    resourceFamily: str = ""
    resourceGroup: str = ""
    usageType: str = ""


class _Sku(Lenient):
    skuId: str
    description: str = ""
    category: _Category = Field(default_factory=_Category)
    serviceRegions: list[str] = Field(default_factory=list)
    pricingInfo: list[_PricingInfo] = Field(default_factory=list)


class _Answer(Lenient):
    skus: list[Any]


async def fetch(client: PoliteClient, settings: ProviderSettings) -> dict[str, Any]:
    headers = {"X-Goog-Api-Key": settings.api_key.get_secret_value() if settings.api_key else ""}
    return await token_paged_list(client, NAME, join_url(settings.base_url, SKUS_PATH), "skus",
                                  params={"pageSize": 5000}, headers=headers, timeout=settings.timeout,
                                  max_pages=MAX_PAGES)


def card(description: str) -> str | None:
    """The card a GPU SKU's description names ("Nvidia Tesla T4 GPU running in Americas" -> "Nvidia Tesla T4")."""
    m = _GPU.match(description.strip())
    if m is None:
        return None
    name = " ".join(m.group(1).split())
    return SPELLINGS.get(name.lower(), name)


def parse(payload: Any, settings: ProviderSettings | None = None) -> Offers:
    out = Collector(NAME)
    for sku in out.each(_Sku, validate(_Answer, payload, NAME).skus):
        usage = sku.category.usageType
        if (sku.category.resourceFamily != "Compute" or sku.category.resourceGroup != "GPU"
                or usage not in ("OnDemand", "Preemptible") or any(w in sku.description for w in SKIP_WORDS)):
            continue
        name = card(sku.description)
        if name is None:
            continue  # not a whole-GPU SKU
        rates = sku.pricingInfo[0].pricingExpression.tieredRates if sku.pricingInfo else []
        if not rates or sku.pricingInfo[0].pricingExpression.usageUnit != "h":
            out.skip(f"{sku.skuId}: no hourly rate")
            continue
        price = rates[-1].unitPrice  # the rate once past any free tier
        gpu = gpu_id(name, None, NAME)
        for region in sku.serviceRegions:
            out.add(sku=f"{sku.skuId} {name} (GPU only)", gpu=gpu, gpu_name=name, gpu_count=1, location=region,
                    billing=Billing.SPOT if usage == "Preemptible" else Billing.HOURLY, price=round(price.value, 6),
                    currency=price.currencyCode.upper(), period=Period.HOUR, in_stock=False, url=ORDER_URL)
    return out.result()


PROVIDER: Provider[ProviderSettings] = Provider(
    info=ProviderInfo(name=NAME, title="Google Cloud", aliases=("google cloud", "gcp", "google cloud platform"),
                      home="https://cloud.google.com", key_settings=("API_KEY",), stock_known=False,
                      sells="hyperscaler GPUs (per-GPU share), per hour and spot, USD: listed price, availability "
                            "unknown"),
    settings=ProviderSettings(base_url="https://cloudbilling.googleapis.com", interval=6 * 3600),
    paths=(SKUS_PATH,), currency="USD", period=Period.HOUR, order_url=ORDER_URL,
    fetch=fetch, parse=parse, rate_limit_per_minute=30,
)
