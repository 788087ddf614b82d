"""Hyperstack (NexGen Cloud) GPU stock: `GET /v1/core/stocks` and prices from `GET /v1/pricebook`, both with the
API key in the `api_key` header.

Stocks: `{stocks: [{region, stock_type, models: [{model, available, planned_7_days, ..., configurations: {"1x": n,
"2x": n, "4x": n, "8x": n, "10x": n}}]}]}` — how many VMs of each GPU count can be created now per region and GPU
model (`available` is a string count of GPUs). Pricebook: `[{name, value, original_value, ...}]`, `name` the GPU
model as in the stocks, `value` USD per GPU-hour (inferred: Hyperstack prices GPUs per hour per card). One offer per
(region, model, GPU count): price = count x per-GPU price; in stock when that configuration's count is above
zero. A model with no configurations block is offered as 1x with `available` as its stock. Models without a
price are skipped (nothing to compare). Evidence: szczad/hyperstack-api-python `docs/StockApi.md`,
`docs/NewModelResponse.md`, `docs/NewConfigurationsResponse.md` (`var_1x` is the JSON key "1x"),
`docs/PricebookApi.md`, `docs/PricebookModel.md`.

Spellings: the model names are Hyperstack's own (`H100-80G-PCIe-NVLink`, `A100-80G-PCIe-NVLink`,
`H100-80G-SXM5`, `RTX-A6000-ada`: the examples in its API docs, infrahub-doc.nexgencloud.com "Flavors" / "GPU
stock"). `-NVLink` names PCIe cards joined by NVLink bridges: the same card (the bridge is the server's, not a
different GPU); `RTX-A6000-ada` is the RTX 6000 Ada. `available` may be a floor such as "200+": read as 200 (at
least that many). Pricebook rows whose name ends in `-spot` are the spot price of the model named before it:
offered as spot configurations beside the on-demand ones, with the same stock.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, field_validator

from core.offers import MAX_GPUS, Billing, Period
from core.providers import ProviderInfo
from scrapers.http import PoliteClient
from scrapers.provider import Provider
from scrapers.providers._common import Collector, Lenient, Offers, gather_limited, gpu_id, join_url, validate
from scrapers.settings import ProviderSettings

NAME = "hyperstack"
STOCKS_PATH, PRICEBOOK_PATH = "/v1/core/stocks", "/v1/pricebook"
ORDER_URL = "https://console.hyperstack.cloud/"
_CONFIG = re.compile(r"^(\d+)x$")
_COUNT = re.compile(r"^\s*(\d+)\s*\+?\s*$")  # "16", "200+"
_SPOT = re.compile(r"[-_ ]spot$", re.IGNORECASE)
_BRIDGE = re.compile(r"[-_ ]NVLink$", re.IGNORECASE)
_ADA = re.compile(r"^RTX-A(\d{4})-ada$", re.IGNORECASE)  # "RTX-A6000-ada": the RTX 6000 Ada
_PRO = re.compile(r"PRO(\d{4})", re.IGNORECASE)  # "RTX-PRO6000-SE": the RTX PRO 6000 (Server Edition)


def catalog_spelling(model: str) -> str:
    """Hyperstack's model name as the GPU catalog spells the card (see the module doc)."""
    name = _BRIDGE.sub("", model.strip())
    if m := _ADA.match(name):
        return f"RTX {m.group(1)} Ada"
    return _PRO.sub(r"PRO \1", name)


class _Model(Lenient):
    model: str
    available: int | str | None = None
    configurations: dict[str, int | str | None] | None = None

    @field_validator("configurations")
    @classmethod
    def _counts(cls, value: dict[str, int | str | None] | None) -> dict[str, int | str | None] | None:
        for key, count in (value or {}).items():
            if isinstance(count, str) and not _COUNT.match(count):
                raise ValueError(f"configuration {key}: {count!r} is not a count")
        return value


class _Stock(Lenient):
    region: str
    stock_type: str | None = None
    models: list[Any] = Field(default_factory=list)


class _Price(Lenient):
    name: str
    value: float = Field(ge=0, le=1e6)


class _Payload(Lenient):
    stocks: list[Any]
    pricebook: list[Any]


async def fetch(client: PoliteClient, settings: ProviderSettings) -> dict[str, Any]:
    headers = {"api_key": settings.api_key.get_secret_value() if settings.api_key else ""}
    stocks, prices = await gather_limited([
        client.get_json(NAME, join_url(settings.base_url, path), headers=headers, timeout=settings.timeout)
        for path in (STOCKS_PATH, PRICEBOOK_PATH)])
    return {"stocks": stocks.get("stocks") if isinstance(stocks, dict) else stocks, "pricebook": prices}


def _count(value: int | str | None) -> int:
    """A stock count: a number, or a floor such as "200+" (at least 200)."""
    if value is None:
        return 0
    m = _COUNT.match(str(value))
    return int(m.group(1)) if m else 0


def parse(payload: Any, settings: ProviderSettings | None = None) -> Offers:
    data = validate(_Payload, payload, NAME)
    out = Collector(NAME)
    prices: dict[tuple[str, Billing], float] = {}
    for p in out.each(_Price, data.pricebook):
        spot = _SPOT.search(p.name)
        prices[(p.name[:spot.start()] if spot else p.name, Billing.SPOT if spot else Billing.HOURLY)] = p.value
    for stock in out.each(_Stock, data.stocks):
        models = list(out.each(_Model, stock.models))
        # A region may list a model's spot stock as its own `-spot` model: then spot offers follow that stock,
        # and the on-demand model's stock is on-demand only.
        spot_listed = {_SPOT.sub("", m.model) for m in models if _SPOT.search(m.model)}
        for model in models:
            spot_row = bool(_SPOT.search(model.model))
            base = _SPOT.sub("", model.model)
            configs: dict[int, int] = {}
            for key, value in (model.configurations or {}).items():
                if (m := _CONFIG.match(key)) and 1 <= int(m.group(1)) <= MAX_GPUS:
                    configs[int(m.group(1))] = _count(value)
            if not configs:
                configs = {1: _count(model.available)}
            gpu = gpu_id(catalog_spelling(base), None, NAME)
            billings = (Billing.SPOT,) if spot_row else (
                (Billing.HOURLY,) if base in spot_listed else (Billing.HOURLY, Billing.SPOT))
            for billing in billings:
                per_gpu = prices.get((base, billing))
                if per_gpu is None:
                    continue  # no price published for it: nothing to compare
                if per_gpu <= 0:
                    out.skip(f"{model.model} {billing}: price {per_gpu} per GPU-hour")
                    continue
                for count, free in sorted(configs.items()):
                    out.add(sku=base, gpu=gpu, gpu_name=base, gpu_count=count,
                            location=stock.region, billing=billing, price=round(per_gpu * count, 4),
                            currency="USD", period=Period.HOUR, in_stock=free > 0, available=free,
                            url=ORDER_URL)
    return out.result()


PROVIDER: Provider[ProviderSettings] = Provider(
    info=ProviderInfo(name=NAME, title="Hyperstack", home="https://hyperstack.cloud", key_settings=("API_KEY",),
                      sells="GPU cloud, per hour (on-demand and spot), USD, Europe / North America"),
    settings=ProviderSettings(base_url="https://infrahub-api.nexgencloud.com", interval=300),
    paths=(STOCKS_PATH, PRICEBOOK_PATH), currency="USD", period=Period.HOUR, order_url=ORDER_URL,
    fetch=fetch, parse=parse, rate_limit_per_minute=30, conditional=False,
)
