"""Lium (Bittensor subnet 51) GPU marketplace: the public node feed `GET /api/public/v1/nodes`, no key.

The feed: `{generated_at, count, nodes: [{id, gpu_model, gpu_count, available_gpu_count, min_rentable_gpu_count,
price_per_gpu_hour, price_per_node_hour, gpu_memory_gb, tier, country, country_code, region, city, rent_url, ...}]}`
(evidence: Lium's "Public nodes feed" docs, docs.lium.io/developers/public-nodes-feed, which promise that /public/v1
only ever adds fields; dstackai/gpuhunt `src/gpuhunt/providers/lium.py` (commit 168f678a) and the feed recorded in
its `src/tests/providers/test_lium.py`; SkyPilot `sky/catalog/data_fetchers/fetch_lium.py`; the `lium-io` SDK).
Only `id` and `rent_url` are guaranteed non-null. Prices are USD per GPU-hour (`price_per_node_hour` is the whole
node's, used when the per-GPU one is missing). `gpu_model` is spelled without the vendor ("H100 80GB HBM3",
"A100-SXM4-80GB", "B300 SXM6 AC", "Tesla V100 Tensor Core GPU"): the marketing words ("AC", "Tensor Core") are
dropped before the catalog lookup. Location: the ISO country code and its subdivision (`region`, e.g. "CA"):
"US-CA", as gpuhunt builds it.

A node is a machine; part of it may be rented. What it offers now is its `available_gpu_count` GPUs (not its
`gpu_count`), rented as one configuration, and never fewer than `min_rentable_gpu_count`: a node whose free GPUs
are fewer than that minimum offers nothing now (its full configuration is listed out of stock). `tier: "spot"`
is interruptible (spot billing). Short-lived nodes are folded into configurations (GPU, count, country, billing)
with the best price, the count of nodes that offer it and the best node's `rent_url` as the order link.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field, model_validator

from core.offers import MAX_GPUS, Billing, Period
from core.providers import ProviderInfo
from scrapers.http import PoliteClient
from scrapers.provider import Provider
from scrapers.providers._common import Collector, Lenient, Offers, gpu_id, join_url, validate
from scrapers.settings import ProviderSettings

NAME = "lium"
NODES_PATH = "/api/public/v1/nodes"
ORDER_URL = "https://lium.io/"
SPOT_TIERS = {"spot", "interruptible"}
_MARKETING = re.compile(r"\s*\b(?:AC|Tensor\s+Core(?:\s+GPU)?)\b", re.IGNORECASE)  # not part of the card's name


def catalog_spelling(model: str) -> str:
    """Lium's `gpu_model` as the catalog reads it: "B300 SXM6 AC" -> "B300 SXM6"."""
    return _MARKETING.sub("", model).strip()


def location(node: _Node) -> str:
    """"US-CA" from the country code and its subdivision; the country alone without one."""
    country = (node.country_code or node.country or "").strip().upper()
    region = (node.region or "").strip().upper().replace(" ", "")
    return f"{country}-{region}" if country and region and node.country_code else country


class _Node(Lenient):
    id: str | int
    gpu_model: str = Field(min_length=1)
    gpu_count: int = Field(ge=1, le=MAX_GPUS)
    available_gpu_count: int | None = Field(default=None, ge=0, le=MAX_GPUS)
    min_rentable_gpu_count: int | None = Field(default=None, ge=0, le=MAX_GPUS)
    price_per_gpu_hour: float | None = Field(default=None, gt=0, le=1e6)  # <= 0: a bad record, skipped
    price_per_node_hour: float | None = Field(default=None, gt=0, le=1e8)
    gpu_memory_gb: float | None = Field(default=None, gt=0, le=4096)
    tier: str | None = None
    country_code: str | None = None
    country: str | None = None
    region: str | None = None
    rent_url: str | None = None

    @model_validator(mode="after")
    def _priced(self) -> _Node:
        if self.price_per_gpu_hour is None and self.price_per_node_hour is None:
            raise ValueError("neither price_per_gpu_hour nor price_per_node_hour")
        return self

    @property
    def per_gpu(self) -> float:
        if self.price_per_gpu_hour is not None:
            return self.price_per_gpu_hour
        assert self.price_per_node_hour is not None
        return self.price_per_node_hour / self.gpu_count


class _Feed(Lenient):
    nodes: list[Any]


async def fetch(client: PoliteClient, settings: ProviderSettings) -> Any:
    return await client.get_json(NAME, join_url(settings.base_url, NODES_PATH), timeout=settings.timeout)


@dataclass(slots=True)
class _Config:
    memory: float | None
    best: float | None = None  # per GPU-hour, among the nodes that offer it now
    best_any: float | None = None  # per GPU-hour, among every node of it
    url: str = ""
    free: set[str] = field(default_factory=set)


def _rentable(node: _Node) -> int:
    """How many GPUs the node rents now: its free ones, when at least its minimum rentable count; else 0."""
    free = node.gpu_count if node.available_gpu_count is None else min(node.available_gpu_count, node.gpu_count)
    return free if free >= max(1, node.min_rentable_gpu_count or 1) else 0


def parse(payload: Any, settings: ProviderSettings | None = None) -> Offers:
    feed = validate(_Feed, payload, NAME)
    out = Collector(NAME)
    configs: dict[tuple[str, int, str, Billing], _Config] = {}
    for node in out.each(_Node, feed.nodes):
        billing = Billing.SPOT if (node.tier or "").strip().lower() in SPOT_TIERS else Billing.HOURLY
        place = location(node)
        rentable = _rentable(node)
        count = rentable or node.gpu_count
        cfg = configs.setdefault((node.gpu_model.strip(), count, place, billing), _Config(memory=node.gpu_memory_gb))
        price = node.per_gpu
        cfg.best_any = price if cfg.best_any is None else min(cfg.best_any, price)
        if rentable:
            if cfg.best is None or price < cfg.best:
                cfg.best, cfg.url = price, node.rent_url or ""
            cfg.free.add(str(node.id))
    for (name, count, place, billing), cfg in configs.items():
        per_gpu = cfg.best if cfg.best is not None else cfg.best_any
        assert per_gpu is not None
        out.add(sku=name, gpu=gpu_id(catalog_spelling(name), cfg.memory, NAME), gpu_name=name, gpu_count=count,
                gpu_memory_gb=cfg.memory, location=place, billing=billing, price=round(per_gpu * count, 4),
                currency="USD", period=Period.HOUR, in_stock=bool(cfg.free), available=len(cfg.free),
                url=cfg.url or ORDER_URL)
    return out.result()


PROVIDER: Provider[ProviderSettings] = Provider(
    info=ProviderInfo(name=NAME, title="Lium", aliases=("lium.io", "celium"), home="https://lium.io",
                      sells="Bittensor GPU marketplace (subnet 51), per hour, USD, on-demand and spot"),
    settings=ProviderSettings(base_url="https://lium.io", interval=300),
    paths=(NODES_PATH,), currency="USD", period=Period.HOUR, order_url=ORDER_URL,
    fetch=fetch, parse=parse, rate_limit_per_minute=30,
)
