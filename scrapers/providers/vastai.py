"""Vast.ai marketplace: `POST /api/v0/bundles/`, aggregated from listings into configurations.

Thousands of short-lived listings are folded into (GPU, GPU count, country, billing) configurations with the best
price and how many machines offer it now, so alerts follow configurations, not individual listings. On-demand
uses `dph_total` (USD/hour, whole offer, storage included); interruptible ("spot") uses `min_bid`. A listing with
`rentable: false` counts toward the configuration existing, not toward its stock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.offers import Billing, Offer, Period
from scrapers.http import PoliteClient
from scrapers.providers._common import Lenient, gpu_id, join_url, validate
from scrapers.registry import get_spec
from scrapers.settings import ProviderSettings, VastSettings

NAME = "vastai"
SPEC = get_spec(NAME)
BUNDLES_PATH = SPEC.paths[0]


class _Listing(Lenient):
    id: int
    machine_id: int | None = None
    num_gpus: int
    gpu_name: str
    gpu_ram: float | None = None  # MB per GPU
    dph_total: float | None = None  # USD/hour, whole offer
    min_bid: float | None = None
    rentable: bool | None = True
    geolocation: str | None = None
    cpu_cores_effective: float | None = None
    disk_space: float | None = None


class _Bundles(Lenient):
    offers: list[_Listing]


def query(settings: ProviderSettings) -> dict[str, Any]:
    """The search body: every listing (rentable or not, so sold-out configurations stay visible), cheapest first."""
    cfg = settings if isinstance(settings, VastSettings) else VastSettings(base_url=settings.base_url)
    body: dict[str, Any] = {"rented": {"eq": False}, "type": "ondemand", "allocated_storage": 10,
                            "order": [["dph_total", "asc"]], "limit": cfg.limit}
    if cfg.verified_only:
        body["verified"] = {"eq": True}
    return body


async def fetch(client: PoliteClient, settings: ProviderSettings) -> Any:
    headers = {"Authorization": f"Bearer {settings.api_key.get_secret_value()}"} if settings.api_key else None
    return await client.post_json(NAME, join_url(settings.base_url, BUNDLES_PATH), query(settings),
                                  headers=headers, timeout=settings.timeout)


def country(geolocation: str | None) -> str:
    """'Texas, US' -> 'US'; a bare 'US' stays; unknown -> ''."""
    if not geolocation:
        return ""
    return geolocation.rsplit(",", 1)[-1].strip().upper()


@dataclass(slots=True)
class _Config:
    gpu_name: str
    gpu_count: int
    region: str
    billing: Billing
    memory_gb: float | None = None
    best: float | None = None  # among rentable listings
    best_any: float | None = None  # among all listings (the price shown while sold out)
    machines: set[int] = field(default_factory=set)
    listings: int = 0
    vcpu: int | None = None
    disk_gb: float | None = None

    def add(self, listing: _Listing, price: float) -> None:
        self.listings += 1
        self.best_any = price if self.best_any is None else min(self.best_any, price)
        if listing.rentable is not False:
            if self.best is None or price < self.best:
                self.best = price
                self.vcpu = int(listing.cpu_cores_effective) if listing.cpu_cores_effective else None
                self.disk_gb = listing.disk_space
            self.machines.add(listing.machine_id if listing.machine_id is not None else -listing.id)


def parse(payload: Any, settings: ProviderSettings | None = None) -> list[Offer]:
    bundles = validate(_Bundles, payload, NAME)
    configs: dict[tuple[str, int, str, Billing], _Config] = {}
    for listing in bundles.offers:
        if listing.num_gpus < 1 or not listing.gpu_name:
            continue
        region = country(listing.geolocation)
        for billing, price in ((Billing.HOURLY, listing.dph_total), (Billing.SPOT, listing.min_bid)):
            if price is None or price < 0:
                continue
            key = (listing.gpu_name, listing.num_gpus, region, billing)
            cfg = configs.get(key)
            if cfg is None:
                memory = round(listing.gpu_ram / 1024, 1) if listing.gpu_ram else None  # MB (MiB) -> GiB
                cfg = configs[key] = _Config(listing.gpu_name, listing.num_gpus, region, billing, memory)
            cfg.add(listing, price)
    offers: list[Offer] = []
    known: dict[tuple[str, float | None], str | None] = {}
    for cfg in configs.values():
        lookup = (cfg.gpu_name, cfg.memory_gb)
        if lookup not in known:
            known[lookup] = gpu_id(cfg.gpu_name, cfg.memory_gb, NAME)
        price = cfg.best if cfg.best is not None else cfg.best_any
        assert price is not None
        offers.append(Offer(
            provider=NAME, sku=cfg.gpu_name, gpu=known[lookup], gpu_name=cfg.gpu_name, gpu_count=cfg.gpu_count,
            gpu_memory_gb=cfg.memory_gb, vcpu=cfg.vcpu, disk_gb=cfg.disk_gb, location=cfg.region,
            billing=cfg.billing, price=round(price, 4), currency="USD", period=Period.HOUR,
            in_stock=bool(cfg.machines), available=len(cfg.machines), url=SPEC.order_url,
        ))
    return offers
