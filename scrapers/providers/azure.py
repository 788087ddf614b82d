"""Microsoft Azure GPU VMs, price only: the public Azure Retail Prices API `GET /api/retail/prices` (no key).

A hyperscaler's price list says what a card costs there, not whether one is free: these are "listed price,
availability unknown" offers (`info.stock_known` False), never in stock, never alerted as available — shown so a
buyer sees what the big clouds charge for the same card beside the marketplaces.

The answer: `{BillingCurrency, Items: [{currencyCode, retailPrice, unitPrice, armRegionName, location, meterName,
productName, skuName, serviceName, armSkuName, type, unitOfMeasure}], NextPageLink, Count}`, pages of up to 1000
items; the next page is the same query with `$skip` (what `NextPageLink` carries). Prices are USD per hour for the
whole VM. The query asks for Linux consumption prices of the N-series (GPU) VMs; a `meterName` with "Spot" is the
spot price, "Low Priority" (retired) is left out, as are Windows and Dedicated Host rows. Evidence: Microsoft Learn
"Azure Retail Prices REST API" (learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices:
endpoint, `$filter`, fields, paging), dstackai/gpuhunt `src/gpuhunt/providers/azure.py` (HEAD 35841515: the same
endpoint and filters, `armSkuName`, `retailPrice`, "Spot" in `meterName`).

GPU and count per VM size: the price list names only the size (`Standard_NC24ads_A100_v4`), so the card and the
GPUs per size come from Microsoft's size tables (learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated:
NC A100 v4, NC H100 v5, NCasT4_v3, NCv3, ND A100 v4, NDm A100 v4, ND H100 v5, ND H200 v5, ND MI300X v5, NDv2,
NVadsA10 v5).
A size not in the table is not a GPU VM we can name and is left out.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field

from core.offers import Billing, Period
from core.providers import ProviderInfo
from scrapers.http import PoliteClient
from scrapers.provider import Provider
from scrapers.providers._common import Collector, Lenient, Offers, gpu_id, join_url, validate
from scrapers.settings import ProviderSettings

NAME = "azure"
PRICES_PATH = "/api/retail/prices"
ORDER_URL = "https://azure.microsoft.com/pricing/details/virtual-machines/linux/"
API_VERSION = "2023-01-01-preview"
PAGE = 1000
MAX_PAGES = 30  # GPU sizes x regions x on-demand/spot is a few thousand rows
FILTER = " and ".join((
    "serviceName eq 'Virtual Machines'", "priceType eq 'Consumption'", "startswith(armSkuName, 'Standard_N')",
    "contains(productName, 'Windows') eq false", "contains(productName, 'Dedicated') eq false",
    "contains(meterName, 'Low Priority') eq false"))

# Size series -> (card as the catalog spells it, GB per GPU, {vCPUs in the size name: GPUs}); Microsoft's tables.
SERIES: tuple[tuple[re.Pattern[str], str, float, dict[int, int]], ...] = (
    (re.compile(r"^Standard_NC(\d+)ads_A100_v4$"), "A100 80GB PCIe", 80, {24: 1, 48: 2, 96: 4}),
    (re.compile(r"^Standard_NC(\d+)adi?s_H100_v5$"), "H100 NVL", 94, {40: 1, 80: 2}),
    (re.compile(r"^Standard_NC(\d+)as_T4_v3$"), "T4", 16, {4: 1, 8: 1, 16: 1, 64: 4}),
    (re.compile(r"^Standard_NC(\d+)r?s_v3$"), "V100 16GB", 16, {6: 1, 12: 2, 24: 4}),
    (re.compile(r"^Standard_ND(\d+)asr_v4$"), "A100 40GB", 40, {96: 8}),
    (re.compile(r"^Standard_ND(\d+)amsr_A100_v4$"), "A100 80GB", 80, {96: 8}),
    (re.compile(r"^Standard_ND(\d+)isr_H100_v5$"), "H100 SXM", 80, {96: 8}),
    (re.compile(r"^Standard_ND(\d+)isr_H200_v5$"), "H200", 141, {96: 8}),
    (re.compile(r"^Standard_ND(\d+)isr_MI300X_v5$"), "MI300X", 192, {96: 8}),
    (re.compile(r"^Standard_ND(\d+)rs_v2$"), "V100 32GB", 32, {40: 8}),
    # NVadsA10 v5: NV36ads is one whole A10, NV72ads two; the smaller sizes are slices (1/6 .. 1/2), left out.
    (re.compile(r"^Standard_NV(\d+)adm?s_A10_v5$"), "A10", 24, {36: 1, 72: 2}),
)


class _Item(Lenient):
    armSkuName: str = ""
    armRegionName: str = ""
    retailPrice: float = Field(le=1e8)
    currencyCode: str = "USD"
    meterName: str = ""
    productName: str = ""
    unitOfMeasure: str = "1 Hour"


class _Answer(Lenient):
    Items: list[Any]


def size_gpus(sku: str) -> tuple[str, float, int] | None:
    """(card, GB per GPU, GPUs) for an N-series size, None for a size the tables do not name."""
    for pattern, card, memory, counts in SERIES:
        if (m := pattern.match(sku)) and int(m.group(1)) in counts:
            return card, memory, counts[int(m.group(1))]
    return None


async def fetch(client: PoliteClient, settings: ProviderSettings) -> Any:
    url = join_url(settings.base_url, PRICES_PATH)
    items: list[Any] = []
    for page in range(MAX_PAGES):
        answer = await client.get_json(NAME, url, timeout=settings.timeout, params={
            "api-version": API_VERSION, "$filter": FILTER, "$skip": page * PAGE})
        if not isinstance(answer, dict) or not isinstance(answer.get("Items"), list):
            return answer  # parse's validation names what is wrong
        items.extend(answer["Items"])
        if not answer.get("NextPageLink") or not answer["Items"]:
            break
    return {"Items": items}


def parse(payload: Any, settings: ProviderSettings | None = None) -> Offers:
    out = Collector(NAME)
    for item in out.each(_Item, validate(_Answer, payload, NAME).Items):
        if "Low Priority" in item.meterName or "Windows" in item.productName or item.unitOfMeasure != "1 Hour":
            continue
        gpus = size_gpus(item.armSkuName)
        if gpus is None:
            continue
        card, memory, count = gpus
        out.add(sku=item.armSkuName, gpu=gpu_id(card, memory, NAME), gpu_name=card, gpu_count=count,
                gpu_memory_gb=memory, location=item.armRegionName,
                billing=Billing.SPOT if "Spot" in item.meterName else Billing.HOURLY, price=item.retailPrice,
                currency=item.currencyCode.upper(), period=Period.HOUR, in_stock=False, url=ORDER_URL)
    return out.result()


PROVIDER: Provider[ProviderSettings] = Provider(
    info=ProviderInfo(name=NAME, title="Microsoft Azure", aliases=("azure", "ms azure"), stock_known=False,
                      home="https://azure.microsoft.com",
                      sells="hyperscaler GPU VMs, per hour and spot, USD: listed price, availability unknown"),
    settings=ProviderSettings(base_url="https://prices.azure.com", interval=6 * 3600),
    paths=(PRICES_PATH,), currency="USD", period=Period.HOUR, order_url=ORDER_URL,
    fetch=fetch, parse=parse, rate_limit_per_minute=30,
)
