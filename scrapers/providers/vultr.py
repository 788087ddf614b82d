"""Vultr GPU plans: `GET /v2/plans?type=all`, `GET /v2/plans-metal`, and per region
`GET /v2/regions/{region}/availability` (the plans deployable there now: a boolean, no counts).

The GPU model and count come from the plan's own fields: `gpu_type` (`NVIDIA_L40S`), `gpu_count` when present
(an int, or a fraction string such as "1/2" — sc-crawler reads it, see docs/reference/providers/vultr.md) and
`gpu_vram_gb` (the plan's total VRAM: `vcg-a16-…-256vram` = 256 GB = 16x A16). Bare-metal plans carry no GPU
fields; they are read from a table of known plans (dstackai/gpuhunt `src/gpuhunt/providers/vultr.py`
`BARE_METAL_GPU_DETAILS`, HEAD 35841515: `vbm-64c-2048gb-8-l40-gpu` is 8x L40S, not L40). Only a plan in neither
falls back to its id, logged. A fractional vGPU plan (less VRAM than one card) is kept as a fraction of a card
(`gpu_fraction`), never as the whole card. Availability is asked the way the API reference documents it
(`GET /v2/regions/{region-id}/availability`, no `type` parameter: the docs list none named `all`; the answer's
`available_plans` names every deployable plan, bare metal included: docs.vultr.com/api "List available plans in
region"; gpuhunt `vultr.py` calls it the same way). Regions are asked separately: one region's error costs that
region only (its offers are left out of this poll, counted as a skipped record with the reason), and only when
every region fails does the poll fail.
Prices: USD per instance per hour, with per-region overrides in `location_cost`. `deploy_ondemand == false`: not
rentable on demand.
"""

from __future__ import annotations

import logging
import math
import re
from fractions import Fraction
from typing import Any

from pydantic import Field, ValidationError

from core.gpus import find_gpu
from core.offers import Billing, Period
from core.providers import ProviderInfo
from scrapers.errors import ScrapeError
from scrapers.http import PoliteClient
from scrapers.provider import Provider
from scrapers.providers._common import Collector, Lenient, Offers, gather_limited, gpu_id, join_url, validate
from scrapers.settings import ProviderSettings

NAME = "vultr"
PLANS_PATH, METAL_PATH, AVAILABILITY_PATH = "/v2/plans", "/v2/plans-metal", "/v2/regions/{region}/availability"
ORDER_URL = "https://www.vultr.com/products/cloud-gpu/"
MAX_PAGES = 20  # a runaway cursor must not loop forever
log = logging.getLogger(__name__)

# Bare-metal plans have no GPU fields: (count, spelling, GB per GPU). Source: gpuhunt BARE_METAL_GPU_DETAILS.
BARE_METAL: dict[str, tuple[int, str, float]] = {
    "vbm-48c-1024gb-4-a100-gpu": (4, "A100 80GB", 80),
    "vbm-112c-2048gb-8-h100-gpu": (8, "H100 SXM", 80),
    "vbm-112c-2048gb-8-a100-gpu": (8, "A100 80GB", 80),
    "vbm-64c-2048gb-8-l40-gpu": (8, "L40S", 48),
    "vbm-72c-480gb-gh200-gpu": (1, "GH200", 96),
    "vbm-256c-2048gb-8-mi300x-gpu": (8, "MI300X", 192),
}

_VCG_ID = re.compile(r"^vcg-([a-z0-9]+)-\d+c-\d+g(?:b)?-(\d+)vram$")
_VBM_ID = re.compile(r"^vbm-\d+c-\d+gb-(?:(\d+)-)?([a-z0-9]+)-gpu$")


class VultrSettings(ProviderSettings):
    regions: list[str] = Field(default_factory=list)  # availability checked here; empty: every region a GPU plan lists



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
    gpu_count: int | str | None = None


class _Payload(Lenient):
    plans: list[Any]
    plans_metal: list[Any] = Field(default_factory=list)
    availability: dict[str, list[str]] = Field(default_factory=dict)
    failed_regions: dict[str, str] = Field(default_factory=dict)  # region -> why its availability is unknown


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
    plans, metal = await gather_limited([
        _paged(client, join_url(base, PLANS_PATH), "plans", {"type": "all", "per_page": 500}, timeout),
        _paged(client, join_url(base, METAL_PATH), "plans_metal", {"per_page": 500}, timeout)])
    regions = settings.regions if isinstance(settings, VultrSettings) and settings.regions else None
    if regions is None:  # every region where a GPU plan is offered
        regions = sorted({r for p in [*_list(plans), *_list(metal)] if _safe_gpu_of(p) for r in _regions(p)})
    async def region_answer(region: str) -> Any:
        try:
            return await client.get_json(NAME, join_url(base, AVAILABILITY_PATH.format(region=region)),
                                         timeout=timeout)
        except ScrapeError as exc:
            log.warning("%s: availability in %s failed: %s", NAME, region, exc)
            return exc

    answers = await gather_limited(region_answer(region) for region in regions)
    failures = [a for a in answers if isinstance(a, ScrapeError)]
    if regions and len(failures) == len(regions):
        raise failures[0]  # nothing to say about any region: the poll itself failed
    availability = {region: answer.get("available_plans") if isinstance(answer, dict) else answer
                    for region, answer in zip(regions, answers, strict=True) if not isinstance(answer, ScrapeError)}
    failed = {region: str(answer) for region, answer in zip(regions, answers, strict=True)
              if isinstance(answer, ScrapeError)}
    return {"plans": plans, "plans_metal": metal, "availability": availability, "failed_regions": failed}


def _list(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _regions(plan: dict[str, Any]) -> list[str]:
    locations = plan.get("locations")
    return [r for r in locations if isinstance(r, str)] if isinstance(locations, list) else []


def _safe_gpu_of(plan: dict[str, Any]) -> tuple[str, int, float | None, float | None] | None:
    try:
        return _gpu_of(plan)
    except ValidationError:
        return None  # parse will report the malformed plan


def _count(total_gb: float, card_gb: float) -> int:
    # Plans come in 1/2/4/8/16 cards; the catalog's memory may differ from Vultr's label (B200: 180 vs 192 GB),
    # so pick the nearest plausible count instead of rounding 1536/180 = 8.5 up to 9.
    ratio = total_gb / card_gb
    return min((1, 2, 4, 8, 16), key=lambda n: abs(math.log(ratio / n)))


def _fraction(value: int | str | None) -> Fraction | None:
    """`gpu_count` as a number of cards: 2 -> 2, "1/2" -> 1/2; None when absent or unreadable."""
    if value is None or isinstance(value, bool):
        return None
    try:
        count = Fraction(str(value).strip())
    except (ValueError, ZeroDivisionError):
        return None
    return count if count > 0 else None


def _gpu_of(plan: dict[str, Any] | _Plan) -> tuple[str, int, float | None, float | None] | None:
    """(spelling, count, memory per GPU, fraction of one card or None) or None for a CPU plan."""
    p = plan if isinstance(plan, _Plan) else _Plan.model_validate(plan)
    if p.gpu_type:
        name = p.gpu_type
        card = find_gpu(name)
        count = _fraction(p.gpu_count)
        card_gb = card.memory_gb if card else None  # the catalog's figure (GH200, MI325X, MI355X, A16, MI300X...)
        if count is not None and count < 1:
            memory = p.gpu_vram_gb or (card_gb * float(count) if card_gb else None)
            return (name, 1, memory, float(count))
        if count is not None:
            n = int(count)
            return (name, n, round(p.gpu_vram_gb / n, 1) if p.gpu_vram_gb else card_gb, None)
        if not card_gb:
            return (name, 1, p.gpu_vram_gb, None)
        vram = p.gpu_vram_gb or card_gb
        if vram < 0.85 * card_gb:
            return (name, 1, vram, round(vram / card_gb, 3))  # a slice of one card
        n = _count(vram, card_gb)
        return (name, n, round(vram / n, 1), None)
    if p.id in BARE_METAL:
        n, name, memory = BARE_METAL[p.id]
        return (name, n, memory, None)
    if m := _VCG_ID.match(p.id):
        log.info("%s: plan %s has no GPU fields; read from its id", NAME, p.id)
        name, total = m.group(1), float(m.group(2))
        card = find_gpu(name)
        if card is None:
            return (name, 1, total, None)
        if total < 0.85 * card.memory_gb:
            return (name, 1, total, round(total / card.memory_gb, 3))
        n = _count(total, card.memory_gb)
        return (name, n, round(total / n, 1), None)
    if m := _VBM_ID.match(p.id):
        log.info("%s: bare-metal plan %s not in the known table; read from its id", NAME, p.id)
        name = m.group(2)
        card = find_gpu(name)
        return (name, int(m.group(1) or 1), card.memory_gb if card else None, None)
    return None


def parse(payload: Any, settings: ProviderSettings | None = None) -> Offers:
    data = validate(_Payload, payload, NAME)
    out = Collector(NAME)
    for region, why in sorted(data.failed_regions.items()):
        out.records += 1
        out.skip(f"availability in {region}: {why}")
    for plan in out.each(_Plan, [*data.plans, *data.plans_metal]):
        gpu = _gpu_of(plan)
        if gpu is None:
            continue
        spelling, count, memory, fraction = gpu
        # A slice is not the catalog card (its memory is a fraction): never matched as one.
        catalog = None if fraction else gpu_id(spelling, memory, NAME)
        overrides = plan.location_cost if isinstance(plan.location_cost, dict) else {}
        for region in plan.locations:
            if region not in data.availability:
                continue  # availability not checked there: no claim either way
            cost = overrides.get(region)
            hourly = cost.hourly_cost if cost and cost.hourly_cost else plan.hourly_cost
            if hourly is None:
                continue  # no price there (a price <= 0 reaches `add`, which skips and counts it)
            deployable = plan.id in data.availability[region] and plan.deploy_ondemand is not False
            out.add(
                sku=plan.id, gpu=catalog, gpu_name=spelling, gpu_count=count, gpu_memory_gb=memory,
                gpu_fraction=fraction,
                vcpu=plan.vcpu_count or plan.cpu_threads, ram_gb=round(plan.ram / 1024, 1) if plan.ram else None,
                disk_gb=(plan.disk or 0) * (plan.disk_count or 1) or None, location=region, billing=Billing.HOURLY,
                price=hourly, currency="USD", period=Period.HOUR, in_stock=deployable, url=ORDER_URL,
            )
    return out.result()


PROVIDER: Provider[VultrSettings] = Provider(
    info=ProviderInfo(name=NAME, title="Vultr", home="https://vultr.com",
                      sells="cloud and bare-metal GPUs, per hour, USD"),
    settings=VultrSettings(base_url="https://api.vultr.com", interval=900),
    paths=(PLANS_PATH, METAL_PATH, AVAILABILITY_PATH), currency="USD", period=Period.HOUR, order_url=ORDER_URL,
    fetch=fetch, parse=parse, rate_limit_per_minute=60,
)
