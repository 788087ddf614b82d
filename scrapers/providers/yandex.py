"""Yandex Cloud GPU VMs, price only: the Billing API's SKU list `GET /billing/v1/skus?currency=RUB`, Compute Cloud's
SKUs (`filter=serviceId="dn22pas77ftg9h3f2djj"`), with an IAM token as a Bearer token.

The API answers only with an IAM token; it is obtained from the operator's OAuth token (`PROVIDERS__YANDEX__
OAUTH_TOKEN`) with `POST /iam/v1/tokens {yandexPassportOauthToken}` -> `{iamToken, expiresAt}` on the IAM host
(`iam.api.cloud.yandex.net`; a mirror of the billing API — or the test stand-in — serves both under one origin) and
kept until shortly before it expires (tokens live up to 12 hours). Evidence: yandex-cloud/docs
`en/billing/api-ref/Sku/list.md` (method, `currency`, `filter`, `pageSize`, `pageToken`, the answer: `{skus: [{id,
name, description, serviceId, pricingUnit, pricingVersions: [{type: STREET_PRICE|CONTRACT_PRICE, effectiveTime,
pricingExpressions: [{rates: [{startPricingQuantity, unitPrice (a decimal string), currency}]}]}]}],
nextPageToken}`), `en/iam/operations/iam-token/create.md` (the OAuth exchange); the Compute Cloud service id and
reading the last STREET_PRICE version's first rate as the price from public third-party code (research notes
`yandex.md`).

GPU SKUs are priced per GPU-hour (`pricingUnit` `gpu*hour`), named like "AMD Epyc with NVIDIA A100. 1 GPU"
(". Preemptible": interruptible, offered as spot). The GPU SKU is the GPU's share of a VM only — the platform's
vCPUs and RAM are billed on top (their own SKUs) — so an offer's price is what one GPU of the platform costs per
hour, and the sku says "GPU only". No stock signal at all: "listed price, availability unknown"
(`info.stock_known` False), never alerted as in stock.
"""

from __future__ import annotations

import re
import time
from typing import Any
from urllib.parse import urlsplit

from pydantic import Field, SecretStr

from core.offers import Billing, Period
from core.providers import RU_VAT_RATE, ProviderInfo, Vat
from scrapers.http import PoliteClient
from scrapers.provider import Provider
from scrapers.providers._common import Collector, Lenient, Offers, gpu_id, join_url, token_paged_list, validate
from scrapers.settings import ProviderSettings

NAME = "yandex"
SKUS_PATH, TOKEN_PATH = "/billing/v1/skus", "/iam/v1/tokens"
LIVE_BILLING_HOST, LIVE_IAM = "billing.api.cloud.yandex.net", "https://iam.api.cloud.yandex.net"
COMPUTE_SERVICE = "dn22pas77ftg9h3f2djj"
ORDER_URL = "https://yandex.cloud/ru/prices"
MAX_PAGES = 20
_GPU = re.compile(r"\bwith\s+NVIDIA\s+(?:Tesla\s+)?(.+?)\.\s*(\d+)\s*GPU", re.IGNORECASE)
# Unconfirmed: the research notes read Yandex's pricing tables as RUB prices with VAT; not cited from the page here.
VAT = Vat(RU_VAT_RATE, True, source="research notes (yandex.md): Yandex Cloud docs pricing tables state RUB prices "
                                    "with VAT; the page's own wording not cited yet")
# (OAuth token, IAM origin) -> (IAM token, monotonic expiry)
_tokens: dict[tuple[str, str], tuple[str, float]] = {}


class YandexSettings(ProviderSettings):
    oauth_token: SecretStr | None = None
    iam_url: str | None = None  # None: the live IAM host for the live billing API, else the billing origin itself


class _Rate(Lenient):
    unitPrice: float = Field(le=1e8)
    currency: str = "RUB"


class _Expression(Lenient):
    rates: list[_Rate] = Field(default_factory=list)


class _Version(Lenient):
    type: str = ""
    effectiveTime: str = ""
    pricingExpressions: list[_Expression] = Field(default_factory=list)


class _Sku(Lenient):
    id: str
    name: str = ""
    description: str = ""
    pricingUnit: str = ""
    pricingVersions: list[_Version] = Field(default_factory=list)


class _Answer(Lenient):
    skus: list[Any]


class _Token(Lenient):
    iamToken: str
    expiresAt: str = ""


def iam_origin(cfg: YandexSettings) -> str:
    if cfg.iam_url:
        return cfg.iam_url
    return LIVE_IAM if urlsplit(cfg.base_url).hostname == LIVE_BILLING_HOST else cfg.base_url


async def iam_token(client: PoliteClient, cfg: YandexSettings) -> str:
    oauth = cfg.oauth_token.get_secret_value() if cfg.oauth_token else ""
    key = (oauth, iam_origin(cfg))
    cached = _tokens.get(key)
    if cached and time.monotonic() < cached[1]:
        return cached[0]
    answer = await client.post_json(NAME, join_url(iam_origin(cfg), TOKEN_PATH), {"yandexPassportOauthToken": oauth},
                                    timeout=cfg.timeout)
    token = validate(_Token, answer, NAME).iamToken
    _tokens[key] = (token, time.monotonic() + 11 * 3600)  # tokens live up to 12 hours
    return token


async def fetch(client: PoliteClient, settings: ProviderSettings) -> dict[str, Any]:
    cfg = settings if isinstance(settings, YandexSettings) else YandexSettings(base_url=settings.base_url)
    headers = {"Authorization": f"Bearer {await iam_token(client, cfg)}"}
    params: dict[str, Any] = {"currency": "RUB", "filter": f'serviceId="{COMPUTE_SERVICE}"', "pageSize": 1000}
    return await token_paged_list(client, NAME, join_url(cfg.base_url, SKUS_PATH), "skus", params=params,
                                  headers=headers, timeout=cfg.timeout, max_pages=MAX_PAGES)


def list_price(sku: _Sku) -> _Rate | None:
    """The latest list (STREET_PRICE) version's first rate."""
    street = sorted((v for v in sku.pricingVersions if v.type == "STREET_PRICE"), key=lambda v: v.effectiveTime)
    if not street or not street[-1].pricingExpressions or not street[-1].pricingExpressions[0].rates:
        return None
    return street[-1].pricingExpressions[0].rates[0]


def parse(payload: Any, settings: ProviderSettings | None = None) -> Offers:
    out = Collector(NAME)
    for sku in out.each(_Sku, validate(_Answer, payload, NAME).skus):
        m = _GPU.search(sku.name)
        if sku.pricingUnit != "gpu*hour" or m is None:
            continue  # vCPU, RAM, disks...; or a vGPU share the name does not count in whole GPUs
        rate = list_price(sku)
        if rate is None:
            out.skip(f"{sku.id}: no list price")
            continue
        card, count = m.group(1).strip(), int(m.group(2))
        spot = "preemptible" in (sku.name + " " + sku.description).lower()
        out.add(sku=f"{sku.description or sku.id} (GPU only)", gpu=gpu_id(card, None, NAME), gpu_name=card,
                gpu_count=count, billing=Billing.SPOT if spot else Billing.HOURLY, price=rate.unitPrice * count,
                currency=rate.currency.upper(), period=Period.HOUR, in_stock=False, url=ORDER_URL)
    return out.result()


PROVIDER: Provider[YandexSettings] = Provider(
    info=ProviderInfo(name=NAME, title="Yandex Cloud", aliases=("yandex", "яндекс", "яндекс облако", "yandex.cloud"),
                      vat=VAT, home="https://yandex.cloud", key_settings=("OAUTH_TOKEN",), stock_known=False,
                      sells="GPU VMs (per-GPU share), per hour and preemptible, RUB: listed price, availability "
                            "unknown"),
    settings=YandexSettings(base_url="https://billing.api.cloud.yandex.net", interval=6 * 3600),
    paths=(SKUS_PATH, TOKEN_PATH), currency="RUB", period=Period.HOUR, order_url=ORDER_URL,
    fetch=fetch, parse=parse, rate_limit_per_minute=30, conditional=False,
)
