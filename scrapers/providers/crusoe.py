"""Crusoe Cloud GPU VMs: instance types `GET /v1alpha5/projects/{project}/compute/vms/types` and hardware capacity
`GET /v1alpha5/capacities`, each request signed with the access key pair (`PROVIDERS__CRUSOE__ACCESS_KEY`,
`__SECRET_KEY`, `__PROJECT_ID`).

Types: `{items: [{product_name ("h100-80gb-sxm-ib.8x"), gpu_type ("H100-SXM-80GB"), num_gpu, cpu_cores, memory_gb,
disk_gb}]}`; capacities: `{items: [{type (a product name), location, quantity}]}` — how many VMs of a type can be
created in a location now (hardware, not the project's quota). One offer per (GPU type, location) a capacity row
names: in stock when its quantity is above zero, `available` that quantity. The API carries no prices: they are
Crusoe's published per-GPU-hour rates (crusoe.ai/cloud/pricing, as gpuhunt records them), a setting an operator
updates when the page changes (`PROVIDERS__CRUSOE__PRICES`, `__SPOT_PRICES`); a type without one is skipped.

Signature (Crusoe API docs "Authentication"; gpuhunt `crusoe.py`): the string
`"{path}\\n{query}\\n{method}\\n{time}\\n"` (`path` with the API version, `time` the UTC second in ISO form, sent
as `X-Crusoe-Timestamp`) is HMAC-SHA256'd with the URL-safe base64-decoded secret key; the header is
`Authorization: Bearer 1.0:{access key}:{signature, URL-safe base64 without padding}`. Evidence: dstackai/gpuhunt
`src/gpuhunt/providers/crusoe.py` (HEAD 35841515: host, API version, paths, fields, signature, the price table).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from pydantic import Field, SecretStr

from core.offers import MAX_GPUS, Billing, Period
from core.providers import ProviderInfo
from scrapers.http import PoliteClient
from scrapers.provider import Provider
from scrapers.providers._common import Collector, Lenient, Offers, gather_limited, gpu_id, join_url, validate
from scrapers.settings import ProviderSettings

NAME = "crusoe"
API_VERSION = "/v1alpha5"
TYPES_PATH = API_VERSION + "/projects/{project_id}/compute/vms/types"
CAPACITIES_PATH = API_VERSION + "/capacities"
ORDER_URL = "https://console.crusoecloud.com/"
SIGNATURE_VERSION = "1.0"

# USD per GPU-hour from crusoe.ai/cloud/pricing (as gpuhunt `crusoe.py` GPU_PRICING records them, HEAD 35841515).
PRICES = {"A100-PCIe-40GB": 1.45, "A100-PCIe-80GB": 1.65, "A100-SXM-80GB": 1.95, "H100-SXM-80GB": 3.90,
          "H200-SXM-141GB": 4.29, "L40S-48GB": 1.00, "A40-PCIe-48GB": 0.90, "MI300X-192GB": 3.45}
SPOT_PRICES = {"A100-PCIe-40GB": 1.00, "A100-PCIe-80GB": 1.20, "A100-SXM-80GB": 1.30, "H100-SXM-80GB": 1.60,
               "L40S-48GB": 0.50, "A40-PCIe-48GB": 0.40, "MI300X-192GB": 0.95}


class CrusoeSettings(ProviderSettings):
    access_key: str | None = None
    secret_key: SecretStr | None = None
    project_id: str | None = None
    prices: dict[str, float] = Field(default_factory=lambda: dict(PRICES))  # GPU type -> USD per GPU-hour
    spot_prices: dict[str, float] = Field(default_factory=lambda: dict(SPOT_PRICES))


class _Type(Lenient):
    product_name: str
    gpu_type: str | None = None
    num_gpu: int = Field(default=0, ge=0, le=MAX_GPUS)
    cpu_cores: int | None = Field(default=None, ge=0, le=100_000)
    memory_gb: float | None = Field(default=None, ge=0)
    disk_gb: float | None = Field(default=None, ge=0)


class _Capacity(Lenient):
    type: str
    location: str
    quantity: int = Field(ge=0, le=1_000_000)


class _Items(Lenient):
    items: list[Any]


class _Payload(Lenient):
    types: _Items
    capacities: _Items


def signature(secret: str, path: str, query: str, method: str, timestamp: str) -> str:
    """Crusoe's request signature (see the module doc)."""
    key = base64.urlsafe_b64decode(secret + "=" * (-len(secret) % 4))
    message = f"{path}\n{query}\n{method}\n{timestamp}\n".encode("ascii")
    return base64.urlsafe_b64encode(hmac.new(key, message, hashlib.sha256).digest()).decode("ascii").rstrip("=")


def signed_headers(cfg: CrusoeSettings, path: str, *, now: Callable[[], datetime] = lambda: datetime.now(UTC)
                   ) -> dict[str, str]:
    timestamp = now().replace(microsecond=0).isoformat()
    secret = cfg.secret_key.get_secret_value() if cfg.secret_key else ""
    sig = signature(secret, path, "", "GET", timestamp)
    return {"X-Crusoe-Timestamp": timestamp, "Authorization": f"Bearer {SIGNATURE_VERSION}:{cfg.access_key}:{sig}"}


async def fetch(client: PoliteClient, settings: ProviderSettings) -> dict[str, Any]:
    cfg = settings if isinstance(settings, CrusoeSettings) else CrusoeSettings(base_url=settings.base_url)
    paths = (TYPES_PATH.format(project_id=cfg.project_id or ""), CAPACITIES_PATH)
    types, capacities = await gather_limited([
        client.get_json(NAME, join_url(cfg.base_url, path), headers=signed_headers(cfg, path), timeout=cfg.timeout)
        for path in paths])
    return {"types": types, "capacities": capacities}


def parse(payload: Any, settings: ProviderSettings | None = None) -> Offers:
    cfg = settings if isinstance(settings, CrusoeSettings) else PROVIDER.settings
    data = validate(_Payload, payload, NAME)
    out = Collector(NAME)
    types = {t.product_name: t for t in out.each(_Type, data.types.items)}
    best: dict[tuple[str, str], int] = {}
    for cap in out.each(_Capacity, data.capacities.items):
        best[(cap.type, cap.location)] = max(best.get((cap.type, cap.location), 0), cap.quantity)
    for (product, location), quantity in sorted(best.items()):
        itype = types.get(product)
        if itype is None or not itype.gpu_type or itype.num_gpu < 1:
            continue  # a CPU type, or capacity for a type the list does not name
        gpu = gpu_id(itype.gpu_type, None, NAME)
        for billing, table in ((Billing.HOURLY, cfg.prices), (Billing.SPOT, cfg.spot_prices)):
            per_gpu = table.get(itype.gpu_type)
            if per_gpu is None:
                continue  # no published rate for it
            out.add(sku=product, gpu=gpu, gpu_name=itype.gpu_type, gpu_count=itype.num_gpu, vcpu=itype.cpu_cores,
                    ram_gb=itype.memory_gb, disk_gb=itype.disk_gb or None, location=location, billing=billing,
                    price=round(per_gpu * itype.num_gpu, 4), currency="USD", period=Period.HOUR,
                    in_stock=quantity > 0, available=quantity, url=ORDER_URL)
    return out.result()


PROVIDER: Provider[CrusoeSettings] = Provider(
    info=ProviderInfo(name=NAME, title="Crusoe Cloud", aliases=("crusoe", "crusoe ai"), home="https://crusoe.ai",
                      key_settings=("ACCESS_KEY", "SECRET_KEY", "PROJECT_ID"),
                      sells="GPU cloud (NVIDIA and AMD), per hour and spot, USD, US / Europe"),
    settings=CrusoeSettings(base_url="https://api.crusoecloud.com", interval=600),
    paths=(TYPES_PATH, CAPACITIES_PATH), currency="USD", period=Period.HOUR, order_url=ORDER_URL,
    fetch=fetch, parse=parse, rate_limit_per_minute=30, conditional=False,
)
