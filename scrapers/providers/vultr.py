"""Vultr GPU plans: `GET /v2/plans?type=all`, `GET /v2/plans-metal`, and per region
`GET /v2/regions/{region}/availability` (the plans deployable there now: a boolean, no counts).

Cloud GPU plans carry `gpu_type` + `gpu_vram_gb` (the plan's total VRAM); Dedicated-Metal and bare-metal plans
carry the GPU only in their id (`vcg-h100-216c-1914gb-640vram`, `vbm-112c-2048gb-8-h100-gpu`). Fractional plans
(a slice of one card) are not GPU configurations for LLM work and are skipped. Prices: USD per instance per hour,
with per-region overrides in `location_cost`. `deploy_ondemand == false`: not rentable on demand.
"""

from __future__ import annotations

import math
import re
from typing import Any

from pydantic import Field, ValidationError

from core.gpus import find_gpu
from core.offers import Billing, Offer, Period
from scrapers.http import PoliteClient
from scrapers.providers._common import Lenient, gpu_id, join_url, validate
from scrapers.registry import get_spec
from scrapers.settings import ProviderSettings, VultrSettings

NAME = "vultr"
SPEC = get_spec(NAME)
PLANS_PATH, METAL_PATH, AVAILABILITY_PATH = SPEC.paths
MAX_PAGES = 20  # a runaway cursor must not loop forever

_VCG_ID = re.compile(r"^vcg-([a-z0-9]+)-\d+c-\d+g(?:b)?-(\d+)vram$")
_VBM_ID = re.compile(r"^vbm-\d+c-\d+gb-(?:(\d+)-)?([a-z0-9]+)-gpu$")


class _Cost(Lenient):
    hourly_cost: float | None = None
    monthly_cost: float | None = None


class _Plan(Lenient):
    id: str
    type: str | None = None
    vcpu_count: int | None = None
    cpu_threads: int | None = None
    ram: float | None = None  # MB
    disk: float | None = None
    disk_count: int | None = None
    hourly_cost: float | None = None
    monthly_cost: float | None = None
    locations: list[str] = Field(default_factory=list)
    location_cost: dict[str, _Cost] | list[Any] | None = None
    deploy_ondemand: bool | None = True
    gpu_type: str | None = None
    gpu_vram_gb: float | None = None


class _Payload(Lenient):
    plans: list[_Plan]
    plans_metal: list[_Plan] = Field(default_factory=list)
    availability: dict[str, list[str]] = Field(default_factory=dict)


class _Page(Lenient):
    meta: dict[str, Any] | None = None


async def _paged(client: PoliteClient, url: str, key: str, params: dict[str, Any], timeout: float) -> list[Any]:
    items: list[Any] = []
    for _ in range(MAX_PAGES):
        page = await client.get_json(NAME, url, params=params, timeout=timeout)
        if not isinstance(page, dict) or not isinstance(page.get(key), list):
            return page  # let parse's validation name what is wrong
        items.extend(page[key])
        cursor = ((validate(_Page, page, NAME).meta or {}).get("links") or {}).get("next")
        if not cursor:
            break
        params = {**params, "cursor": cursor}
    return items


async def fetch(client: PoliteClient, settings: ProviderSettings) -> dict[str, Any]:
    base, timeout = settings.base_url, settings.timeout
    plans = await _paged(client, join_url(base, PLANS_PATH), "plans", {"type": "all", "per_page": 500}, timeout)
    metal = await _paged(client, join_url(base, METAL_PATH), "plans_metal", {"per_page": 500}, timeout)
    regions = settings.regions if isinstance(settings, VultrSettings) and settings.regions else None
    if regions is None:  # every region where a GPU plan is offered
        regions = sorted({r for p in [*_list(plans), *_list(metal)] if _safe_gpu_of(p) for r in _regions(p)})
    availability: dict[str, Any] = {}
    for region in regions:
        answer = await client.get_json(NAME, join_url(base, AVAILABILITY_PATH.format(region=region)), timeout=timeout)
        availability[region] = answer.get("available_plans") if isinstance(answer, dict) else answer
    return {"plans": plans, "plans_metal": metal, "availability": availability}


def _list(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _regions(plan: dict[str, Any]) -> list[str]:
    locations = plan.get("locations")
    return [r for r in locations if isinstance(r, str)] if isinstance(locations, list) else []


def _safe_gpu_of(plan: dict[str, Any]) -> tuple[str, int, float | None] | None:
    try:
        return _gpu_of(plan)
    except ValidationError:
        return None  # parse will report the malformed plan


def _count(total_gb: float, card_gb: float) -> int:
    # Plans come in 1/2/4/8/16 cards; the catalog's memory may differ from Vultr's label (B200: 180 vs 192 GB),
    # so pick the nearest plausible count instead of rounding 1536/180 = 8.5 up to 9.
    ratio = total_gb / card_gb
    return min((1, 2, 4, 8, 16), key=lambda n: abs(math.log(ratio / n)))


def _gpu_of(plan: dict[str, Any] | _Plan) -> tuple[str, int, float | None] | None:
    """(spelling, count, memory per GPU) or None for a CPU plan or a fractional slice of one card."""
    p = plan if isinstance(plan, _Plan) else _Plan.model_validate(plan)
    if p.gpu_type:
        name = p.gpu_type
        card = find_gpu(name)
        if card is None:
            return (name, 1, p.gpu_vram_gb)
        vram = p.gpu_vram_gb or card.memory_gb
        if vram < 0.85 * card.memory_gb:
            return None  # a slice of one card
        count = _count(vram, card.memory_gb)
        return (name, count, round(vram / count, 1))
    if m := _VCG_ID.match(p.id):
        name, total = m.group(1), float(m.group(2))
        card = find_gpu(name)
        if card is None:
            return (name, 1, total)
        count = _count(total, card.memory_gb)
        return (name, count, round(total / count, 1))
    if m := _VBM_ID.match(p.id):
        name = m.group(2)
        card = find_gpu(name)
        return (name, int(m.group(1) or 1), card.memory_gb if card else None)
    return None


def parse(payload: Any, settings: ProviderSettings | None = None) -> list[Offer]:
    data = validate(_Payload, payload, NAME)
    offers: list[Offer] = []
    for plan in [*data.plans, *data.plans_metal]:
        gpu = _gpu_of(plan)
        if gpu is None:
            continue
        spelling, count, memory = gpu
        catalog = gpu_id(spelling, memory, NAME)
        overrides = plan.location_cost if isinstance(plan.location_cost, dict) else {}
        for region in plan.locations:
            if region not in data.availability:
                continue  # availability not checked there: no claim either way
            cost = overrides.get(region)
            hourly = cost.hourly_cost if cost and cost.hourly_cost else plan.hourly_cost
            if not hourly:
                continue
            deployable = plan.id in data.availability[region] and plan.deploy_ondemand is not False
            offers.append(Offer(
                provider=NAME, sku=plan.id, gpu=catalog, gpu_name=spelling, gpu_count=count, gpu_memory_gb=memory,
                vcpu=plan.vcpu_count or plan.cpu_threads, ram_gb=round(plan.ram / 1024, 1) if plan.ram else None,
                disk_gb=(plan.disk or 0) * (plan.disk_count or 1) or None, location=region, billing=Billing.HOURLY,
                price=hourly, currency="USD", period=Period.HOUR, in_stock=deployable, url=SPEC.order_url,
            ))
    return offers
