"""RunPod GPU types: `POST /graphql`, `gpuTypes { ... lowestPrice(input) { stockStatus ... } }`.

One request asks twice under GraphQL aliases — `secure` (Secure Cloud) and `community` (Community Cloud) — because
stock and price differ per cloud type. Prices are USD per GPU per hour; one offer = one GPU of a type in one cloud
(`location` is the cloud type). A bare `gpuTypes` answer (a single, un-aliased query — what the shared sample
holds) is read as Secure Cloud.

Stock: `maxUnreservedGpuCount` when the answer has it; anonymous callers in public code ask only for `stockStatus`
(dstackai/gpuhunt `src/gpuhunt/providers/runpod.py` skips `stockStatus is None`), and the live count may be null
or absent — then stock follows `stockStatus` alone: High / Medium / Low = in stock, null / None = not.
An API key goes in the `Authorization: Bearer` header (runpod/runpod-python `runpod/api/graphql.py` sends it as
a header), never in the query string, where it would end up in request logs.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

from core.gpus import find_gpu
from core.offers import Billing, Period
from core.providers import ProviderInfo
from core.redaction import redact
from scrapers.errors import PayloadValidationError
from scrapers.http import PoliteClient
from scrapers.provider import Provider
from scrapers.providers._common import Collector, Lenient, Offers, gpu_id, join_url, validate
from scrapers.settings import ProviderSettings

NAME = "runpod"
GRAPHQL_PATH = "/graphql"
ORDER_URL = "https://console.runpod.io/deploy"


def deploy_url(gpu_type_id: str, count: int = 1) -> str:
    """The console's pod deploy page with this GPU type preselected. The console reads `gpu` (the GPU type id or
    its display name) and `count` from the query: public deep links into it read
    `https://console.runpod.io/deploy?gpu=NVIDIA%20A100-SXM4-80GB&count=4` and `…/deploy?gpu=RTX+4090&count=1`
    (third-party READMEs and reports found through the code search, 2025)."""
    return f"{ORDER_URL}?{urlencode({'gpu': gpu_type_id, 'count': count}, quote_via=quote)}"
CLOUDS = ("secure", "community")

_FIELDS = """
    id displayName manufacturer memoryInGb secureCloud communityCloud
    securePrice communityPrice secureSpotPrice communitySpotPrice
    lowestPrice(input: $%s) {
      minimumBidPrice uninterruptablePrice minVcpu minMemory stockStatus maxUnreservedGpuCount availableGpuCounts
    }"""
QUERY = (
    "query GpuTypes($secure: GpuLowestPriceInput, $community: GpuLowestPriceInput) {\n"
    f"  secure: gpuTypes {{{_FIELDS % 'secure'}\n  }}\n"
    f"  community: gpuTypes {{{_FIELDS % 'community'}\n  }}\n"
    "}"
)
VARIABLES = {"secure": {"gpuCount": 1, "secureCloud": True}, "community": {"gpuCount": 1, "secureCloud": False}}
IN_STOCK = {"high", "medium", "low"}


class _LowestPrice(Lenient):
    stockStatus: str | None = None
    maxUnreservedGpuCount: int | None = None
    uninterruptablePrice: float | None = None
    minimumBidPrice: float | None = None
    minVcpu: int | None = None
    minMemory: float | None = None


class _GpuType(Lenient):
    id: str
    displayName: str | None = None
    memoryInGb: float | None = None
    secureCloud: bool | None = None
    communityCloud: bool | None = None
    securePrice: float | None = None
    communityPrice: float | None = None
    lowestPrice: _LowestPrice | None = None


class _Data(Lenient):
    secure: list[Any] | None = None
    community: list[Any] | None = None
    gpuTypes: list[Any] | None = None


class _Answer(Lenient):
    data: _Data | None = None
    errors: list[dict[str, Any]] | None = None


async def fetch(client: PoliteClient, settings: ProviderSettings) -> Any:
    headers = {"Authorization": f"Bearer {settings.api_key.get_secret_value()}"} if settings.api_key else None
    return await client.post_json(NAME, join_url(settings.base_url, GRAPHQL_PATH),
                                  {"query": QUERY, "variables": VARIABLES}, headers=headers, timeout=settings.timeout)


def stock(lp: _LowestPrice) -> tuple[bool, int | None]:
    """(in stock, GPUs free when known)."""
    status = (lp.stockStatus or "").strip().lower()
    if lp.maxUnreservedGpuCount is not None:
        free = max(0, lp.maxUnreservedGpuCount)
        return bool(status) and status != "none" and free > 0, free
    return status in IN_STOCK, None


def _gpu(gt: _GpuType) -> str | None:
    # The long id ("NVIDIA H100 80GB HBM3") is the more precise spelling; the display name is the fallback.
    found = find_gpu(gt.id, gt.memoryInGb)
    return found.id if found else gpu_id(gt.displayName or gt.id, gt.memoryInGb, NAME)


def parse(payload: Any, settings: ProviderSettings | None = None) -> Offers:
    answer = validate(_Answer, payload, NAME)
    if answer.errors or answer.data is None:
        # An error may quote the request, key included: redacted before it is cut short (a cut key is not found).
        key = settings.api_key.get_secret_value() if settings is not None and settings.api_key else None
        messages = redact("; ".join(str(e.get("message", e)) for e in answer.errors or []), key)[:200]
        raise PayloadValidationError(f"{NAME}: GraphQL answered errors ({messages or 'no data'})")
    data = answer.data
    by_cloud = {"secure": data.secure if data.secure is not None else data.gpuTypes, "community": data.community}
    out = Collector(NAME)
    for cloud in CLOUDS:
        for gt in out.each(_GpuType, by_cloud[cloud] or []):
            offered = gt.secureCloud if cloud == "secure" else gt.communityCloud
            price = gt.securePrice if cloud == "secure" else gt.communityPrice
            if offered is False or price is None or price <= 0:
                continue  # this type is not sold in this cloud at all
            lp = gt.lowestPrice or _LowestPrice()
            in_stock, free = stock(lp)
            spelling = gt.displayName or gt.id
            out.add(
                sku=gt.id, gpu=_gpu(gt),
                gpu_name=spelling, gpu_count=1, gpu_memory_gb=gt.memoryInGb, vcpu=lp.minVcpu, ram_gb=lp.minMemory,
                location=cloud, billing=Billing.HOURLY, price=price, currency="USD", period=Period.HOUR,
                in_stock=in_stock, available=free, url=deploy_url(gt.id),
            )
    return out.result()


PROVIDER: Provider[ProviderSettings] = Provider(
    info=ProviderInfo(name=NAME, title="RunPod", aliases=("ранпод",), home="https://runpod.io",
                      sells="GPU cloud (Secure / Community), per hour, USD"),
    settings=ProviderSettings(base_url="https://api.runpod.io", interval=120),
    paths=(GRAPHQL_PATH,), currency="USD", period=Period.HOUR, order_url=ORDER_URL,
    fetch=fetch, parse=parse, rate_limit_per_minute=30, conditional=False,
)
