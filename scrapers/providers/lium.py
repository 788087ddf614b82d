"""Lium (Bittensor subnet 51) GPU marketplace: the public nodes list `GET /api/public/v1/nodes`, no key.

Nodes (executors) are machines with `machine_name` ("8x NVIDIA H100 80GB HBM3"), `specs.gpu.count` and
`specs.gpu.details[].name` / `.capacity` (MiB), `price_per_hour` (USD, the whole machine), `location.country`,
and a rental state. Like Vast.ai, short-lived machines are folded into configurations (GPU, count, country) with
the best price and how many free machines offer it now. The answer may be a bare list or wrapped in `data` /
`nodes` / `executors`. A node that says it is rented (`status: "rented"`, `rented: true` or `available: false`)
counts toward the configuration, not its stock. Evidence: the endpoint from public-apis PR #7434 ("no API key");
fields from unconst/lium `lium/sdk.py` `list_executors` (the keyed executor listing of the same marketplace) —
the public feed's exact schema is inferred, so every field is optional and unknown ones are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from core.offers import MAX_GPUS, Billing, Period
from core.providers import ProviderInfo
from scrapers.errors import PayloadValidationError
from scrapers.http import PoliteClient
from scrapers.provider import Provider
from scrapers.providers._common import Collector, Lenient, Offers, gpu_id, join_url
from scrapers.settings import ProviderSettings

NAME = "lium"
NODES_PATH = "/api/public/v1/nodes"
ORDER_URL = "https://lium.io/"
_MACHINE = re.compile(r"^\s*(\d+)\s*x\s*(.+?)\s*$", re.IGNORECASE)
_RENTED = {"rented", "busy", "occupied", "unavailable", "offline"}


class _GpuDetail(Lenient):
    name: str | None = None
    capacity: float | None = None  # MiB


class _Gpu(Lenient):
    count: int | None = Field(default=None, ge=0, le=MAX_GPUS)
    details: list[_GpuDetail] = Field(default_factory=list)


class _Specs(Lenient):
    gpu: _Gpu = Field(default_factory=_Gpu)


class _Location(Lenient):
    country: str | None = None
    country_code: str | None = None


class _Node(Lenient):
    id: str | int
    machine_name: str | None = None
    gpu_type: str | None = None
    gpu_count: int | None = Field(default=None, ge=0, le=MAX_GPUS)
    price_per_hour: float = Field(ge=0, le=1e8)
    specs: _Specs = Field(default_factory=_Specs)
    location: _Location | str | None = None
    status: str | None = None
    rented: bool | None = None
    available: bool | None = None


async def fetch(client: PoliteClient, settings: ProviderSettings) -> Any:
    return await client.get_json(NAME, join_url(settings.base_url, NODES_PATH), timeout=settings.timeout)


def _nodes(payload: Any) -> list[Any]:
    if isinstance(payload, list):
        return payload
    if isinstance(payload, dict):
        for key in ("data", "nodes", "executors", "items"):
            if isinstance(payload.get(key), list):
                return payload[key]
    raise PayloadValidationError(f"{NAME}: expected a list of nodes, got {type(payload).__name__}")


def _gpu(node: _Node) -> tuple[str, int, float | None] | None:
    detail = node.specs.gpu.details[0] if node.specs.gpu.details else _GpuDetail()
    count = node.specs.gpu.count or node.gpu_count
    memory = round(detail.capacity / 1024, 1) if detail.capacity else None
    name = detail.name or node.gpu_type
    if node.machine_name and (m := _MACHINE.match(node.machine_name)):
        count = count or int(m.group(1))
        name = name or m.group(2)
    if not name or not count:
        return None
    return name.strip(), count, memory


def _country(location: _Location | str | None) -> str:
    if isinstance(location, str):
        return location.rsplit(",", 1)[-1].strip().upper()
    if location is None:
        return ""
    return (location.country_code or location.country or "").strip().upper()


@dataclass(slots=True)
class _Config:
    best: float | None = None
    best_any: float | None = None
    free: set[str] = field(default_factory=set)
    memory: float | None = None


def parse(payload: Any, settings: ProviderSettings | None = None) -> Offers:
    out = Collector(NAME)
    configs: dict[tuple[str, int, str], _Config] = {}
    for node in out.each(_Node, _nodes(payload)):
        gpu = _gpu(node)
        if gpu is None:
            continue
        name, count, memory = gpu
        cfg = configs.setdefault((name, count, _country(node.location)), _Config(memory=memory))
        price = node.price_per_hour
        cfg.best_any = price if cfg.best_any is None else min(cfg.best_any, price)
        rented = (node.rented is True or node.available is False
                  or (node.status or "").strip().lower() in _RENTED)
        if not rented:
            cfg.best = price if cfg.best is None else min(cfg.best, price)
            cfg.free.add(str(node.id))
    for (name, count, country), cfg in configs.items():
        shown = cfg.best if cfg.best is not None else cfg.best_any
        assert shown is not None
        out.add(sku=name, gpu=gpu_id(name, cfg.memory, NAME), gpu_name=name, gpu_count=count,
                gpu_memory_gb=cfg.memory, location=country, billing=Billing.HOURLY, price=round(shown, 4),
                currency="USD", period=Period.HOUR, in_stock=bool(cfg.free), available=len(cfg.free),
                url=ORDER_URL)
    return out.result()


PROVIDER: Provider[ProviderSettings] = Provider(
    info=ProviderInfo(name=NAME, title="Lium", aliases=("lium.io", "celium"), home="https://lium.io",
                      sells="Bittensor GPU marketplace (subnet 51), per hour, USD"),
    settings=ProviderSettings(base_url="https://lium.io", interval=300),
    paths=(NODES_PATH,), currency="USD", period=Period.HOUR, order_url=ORDER_URL,
    fetch=fetch, parse=parse, rate_limit_per_minute=30,
)
