"""Vast.ai marketplace: `POST /api/v0/bundles/`, aggregated from listings into configurations.

Thousands of short-lived listings are folded into (GPU, GPU count, country, billing) configurations with the best
price and how many machines offer it now, so alerts follow configurations, not individual listings. On-demand
uses `dph_total` (USD/hour, whole offer, storage included); interruptible ("spot") uses `min_bid`. A listing the
server returns with `rentable: false` counts toward the configuration existing, not toward its stock — but the
search asks for rentable listings only (as the official CLI does), so "sold out" is never inferred from them: a
configuration that stops being listed simply disappears (change detection's hysteresis decides when that means
sold out).

The search is cheapest-first with a row limit, so on a busy marketplace the expensive bundles (8x H100, H200,
B200) would fall off the end and read as sold out. When an answer is truncated (its `truncated` flag, or as many
rows as the limit) the next page asks for `dph_total >= ` the last price seen (keyset paging; listings are
de-duplicated by id) until an answer is complete; still truncated after `MAX_PAGES` pages, the poll is suspect
rather than a partial picture. Evidence: the search body and operators (`gte`, `in`, `order`, `limit`) as in
dstackai/gpuhunt `src/gpuhunt/providers/vastai.py` (HEAD 35841515); the 10 requests/minute per IP limit from
vast-ai/docs `search_offers.yaml` (see docs/reference/providers/vastai.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from core.gpus import find_gpu, get_gpu
from core.offers import MAX_GPUS, MAX_PRICE, Billing, Period
from core.providers import ProviderInfo
from scrapers.errors import PayloadValidationError
from scrapers.http import PoliteClient
from scrapers.provider import Provider
from scrapers.providers._common import Collector, Lenient, Offers, gpu_id, join_url, validate
from scrapers.settings import ProviderSettings

NAME = "vastai"
BUNDLES_PATH = "/api/v0/bundles/"
ORDER_URL = "https://cloud.vast.ai/create/"


def offer_url(offer_id: int | None) -> str:
    """The console's create-instance page for one listing (the `id` of /bundles' offers, the id `vastai create
    instance <id>` rents): `https://cloud.vast.ai/create/?id=<offer id>`, the checkout link public GPU brokers build
    for a Vast.ai listing (found through the code search, 2025); the bare create page when there is none."""
    return f"{ORDER_URL}?id={offer_id}" if offer_id is not None and offer_id > 0 else ORDER_URL
MAX_PAGES = 10  # x the row limit: far more listings than the marketplace has; 10 requests = its per-minute limit


class VastSettings(ProviderSettings):
    limit: int = Field(default=3000, ge=1, le=10000)  # listings per query: a small limit would miss stock
    verified_only: bool = True



class _Listing(Lenient):
    id: int
    machine_id: int | None = None
    num_gpus: int = Field(ge=0, le=MAX_GPUS)
    gpu_name: str
    gpu_ram: float | None = Field(default=None, ge=0, le=4 * 1024 * 1024)  # MB per GPU
    dph_total: float | None = Field(default=None, gt=0, le=MAX_PRICE)  # USD/hour, whole offer; <= 0: a bad record
    min_bid: float | None = Field(default=None, le=MAX_PRICE)
    rentable: bool | None = True
    geolocation: str | None = None
    cpu_cores_effective: float | None = None
    disk_space: float | None = None


class _Bundles(Lenient):
    offers: list[Any]


def _vast(settings: ProviderSettings) -> VastSettings:
    return settings if isinstance(settings, VastSettings) else VastSettings(base_url=settings.base_url)


def query(settings: ProviderSettings, floor: float | None = None) -> dict[str, Any]:
    """The search body: listings not rented now, cheapest first; `floor`: only from this price up (next page)."""
    cfg = _vast(settings)
    # The filters the official CLI sends by default (vast-ai/vast-cli `vast.py` `search offers`: `rentable`,
    # `rented`, `external` and `verified`, `type` "on-demand" of its choices on-demand / reserved / bid); gpuhunt
    # sends `rentable` and `rented` the same way. `external: false`: offers of the Vast marketplace itself.
    body: dict[str, Any] = {"rentable": {"eq": True}, "rented": {"eq": False}, "external": {"eq": False},
                            "type": "on-demand", "allocated_storage": 10, "order": [["dph_total", "asc"]],
                            "limit": cfg.limit}
    if cfg.verified_only:
        body["verified"] = {"eq": True}
    if floor is not None:
        body["dph_total"] = {"gte": floor}
    return body


def truncated(answer: dict[str, Any], rows: list[Any], limit: int) -> bool:
    flag = answer.get("truncated")
    return flag is True or (flag is None and len(rows) >= limit)


async def fetch(client: PoliteClient, settings: ProviderSettings) -> Any:
    cfg = _vast(settings)
    headers = {"Authorization": f"Bearer {settings.api_key.get_secret_value()}"} if settings.api_key else None
    url = join_url(settings.base_url, BUNDLES_PATH)
    listings: dict[Any, Any] = {}
    floor: float | None = None
    for page in range(1, MAX_PAGES + 1):
        answer = await client.post_json(NAME, url, query(cfg, floor), headers=headers, timeout=settings.timeout)
        if not isinstance(answer, dict) or not isinstance(answer.get("offers"), list):
            return answer  # parse's validation names what is wrong
        rows = answer["offers"]
        new = 0
        for row in rows:
            key = row.get("id") if isinstance(row, dict) else None
            if key is None or key not in listings:
                listings[key if key is not None else ("row", len(listings))] = row
                new += 1
        if not truncated(answer, rows, cfg.limit):
            return {"offers": list(listings.values()), "pages": page}
        prices = [r["dph_total"] for r in rows if isinstance(r, dict) and isinstance(r.get("dph_total"), int | float)]
        if not prices or new == 0:
            break  # no way forward: more listings at one price than one page holds
        floor = max(prices)
    raise PayloadValidationError(f"{NAME}: the search is still truncated after {MAX_PAGES} pages of {cfg.limit} "
                                 "rows; a partial list would read the rest as sold out")


def sku(name: str, card: str | None) -> str:
    """The configuration's name: Vast's `gpu_name`, with the memory where the name alone means another card (the
    40 GB "A100 PCIE", the 12 GB "RTX 3080"), so the variants' offers keep apart across polls."""
    if card is None:
        return name
    named = find_gpu(name)
    if named is not None and named.id == card:
        return name
    return f"{name} {get_gpu(card).memory_gb:g}GB"


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
    best_id: int | None = None  # the cheapest rentable listing: the one the order link opens

    def add(self, listing: _Listing, price: float) -> None:
        self.listings += 1
        self.best_any = price if self.best_any is None else min(self.best_any, price)
        if listing.rentable is not False:
            if self.best is None or price < self.best:
                self.best = price
                self.best_id = listing.id
                self.vcpu = int(listing.cpu_cores_effective) if listing.cpu_cores_effective else None
                self.disk_gb = listing.disk_space
            self.machines.add(listing.machine_id if listing.machine_id is not None else -listing.id)


def parse(payload: Any, settings: ProviderSettings | None = None) -> Offers:
    bundles = validate(_Bundles, payload, NAME)
    out = Collector(NAME)
    # One name can be several cards told apart by memory ("A100 PCIE" 40/80 GB, "RTX 3080" 10/12 GB, "RTX 4060 Ti"
    # 8/16 GB): each listing's card is looked up by name and memory, and a configuration is one card, never the
    # cheapest of both priced as the bigger one.
    configs: dict[tuple[str, str | None, int, str, Billing], _Config] = {}
    cards: dict[tuple[str, float | None], str | None] = {}
    for listing in out.each(_Listing, bundles.offers):
        if listing.num_gpus < 1 or not listing.gpu_name:
            continue
        region = country(listing.geolocation)
        memory = round(listing.gpu_ram / 1024, 1) if listing.gpu_ram else None  # MB (MiB) -> GiB
        lookup = (listing.gpu_name, memory)
        card = cards[lookup] if lookup in cards else cards.setdefault(lookup, gpu_id(*lookup, NAME))
        for billing, price in ((Billing.HOURLY, listing.dph_total), (Billing.SPOT, listing.min_bid)):
            if price is None or price <= 0:
                continue  # no bid price: no spot offer from this listing (an on-demand price <= 0 failed above)
            key = (listing.gpu_name, card, listing.num_gpus, region, billing)
            cfg = configs.get(key)
            if cfg is None:
                cfg = configs[key] = _Config(listing.gpu_name, listing.num_gpus, region, billing, memory)
            cfg.add(listing, price)
    skus: dict[tuple[str, str | None], str] = {}
    for (name, card, *_), cfg in configs.items():
        if (name, card) not in skus:
            skus[name, card] = sku(name, card)
        price = cfg.best if cfg.best is not None else cfg.best_any
        assert price is not None
        out.add(
            sku=skus[name, card], gpu=card, gpu_name=cfg.gpu_name, gpu_count=cfg.gpu_count,
            gpu_memory_gb=cfg.memory_gb, vcpu=cfg.vcpu, disk_gb=cfg.disk_gb, location=cfg.region,
            billing=cfg.billing, price=round(price, 4), currency="USD", period=Period.HOUR,
            in_stock=bool(cfg.machines), available=len(cfg.machines), url=offer_url(cfg.best_id),
        )
    return out.result()


PROVIDER: Provider[VastSettings] = Provider(
    info=ProviderInfo(name=NAME, title="Vast.ai", aliases=("vast", "vast.ai", "васт"), home="https://vast.ai",
                      sells="GPU marketplace, per hour, USD"),
    settings=VastSettings(base_url="https://console.vast.ai", interval=120),
    paths=(BUNDLES_PATH,), currency="USD", period=Period.HOUR, order_url=ORDER_URL,
    # Vast.ai's search spec: 10 requests a minute per IP address.
    fetch=fetch, parse=parse, rate_limit_per_minute=10, conditional=False,
)
