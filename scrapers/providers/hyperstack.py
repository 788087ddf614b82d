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
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field

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


class _Model(Lenient):
    model: str
    available: int | str | None = None
    configurations: dict[str, int | None] | None = None


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
    try:
        return max(0, int(str(value).strip())) if value is not None else 0
    except ValueError:
        return 0


def parse(payload: Any, settings: ProviderSettings | None = None) -> Offers:
    data = validate(_Payload, payload, NAME)
    out = Collector(NAME)
    prices = {p.name: p.value for p in out.each(_Price, data.pricebook)}
    for stock in out.each(_Stock, data.stocks):
        for model in out.each(_Model, stock.models):
            per_gpu = prices.get(model.model)
            if not per_gpu:
                continue  # no price published for it: nothing to compare
            configs: dict[int, int] = {}
            for key, value in (model.configurations or {}).items():
                if (m := _CONFIG.match(key)) and 1 <= int(m.group(1)) <= MAX_GPUS:
                    configs[int(m.group(1))] = _count(value)
            if not configs:
                configs = {1: _count(model.available)}
            gpu = gpu_id(model.model, None, NAME)
            for count, free in sorted(configs.items()):
                out.add(sku=model.model, gpu=gpu, gpu_name=model.model, gpu_count=count, location=stock.region,
                        billing=Billing.HOURLY, price=round(per_gpu * count, 4), currency="USD",
                        period=Period.HOUR, in_stock=free > 0, available=free, url=ORDER_URL)
    return out.result()


PROVIDER: Provider[ProviderSettings] = Provider(
    info=ProviderInfo(name=NAME, title="Hyperstack", home="https://hyperstack.cloud", key_settings=("API_KEY",),
                      sells="GPU cloud, per hour, USD, Europe / North America"),
    settings=ProviderSettings(base_url="https://infrahub-api.nexgencloud.com", interval=300),
    paths=(STOCKS_PATH, PRICEBOOK_PATH), currency="USD", period=Period.HOUR, order_url=ORDER_URL,
    fetch=fetch, parse=parse, rate_limit_per_minute=30, conditional=False,
)
