"""Oracle Cloud (OCI) GPU shapes, price only: the public data files of Oracle's Cost Estimator,
`GET /a/ocom/docs/cloudestimator2/data/shapes.json` and `…/products.json` on www.oracle.com (no key).

A hyperscaler's price list, not stock: "listed price, availability unknown" (`info.stock_known` False), never
alerted as in stock. Shapes: `{items: [{name ("BM.GPU.H100.8"), hidden, status, allowPreemptible, gpuQty,
gpuMemoryQty (GB, the shape's total), shapeType {value: vm|bm}, subType {value: gpu|…}, products: [{type {value:
ocpu|memory}, partNumber, qty}]}]}`; products: `{items: [{partNumber, billingModel ("UCM"), pricetype ("HOUR"),
currencyCodeLocalizations: [{currencyCode, prices: [{model ("PAY_AS_YOU_GO"), value}]}]}]}`. On a GPU shape the
`ocpu` product is the per-GPU price (its CPUs and memory come with it): the shape costs that x `gpuQty` per hour.
Preemptible capacity costs half (Oracle docs "Preemptible Instances", billing), offered as spot where
`allowPreemptible`. OCI prices are the same in every region: offers carry no location. Evidence: dstackai/gpuhunt
`src/gpuhunt/providers/oci.py` (HEAD 35841515: the URLs, fields, the GPU shape's price = ocpu price x gpuQty, the
card from the shape name: GPU4 = A100 40GB, GPU3 = V100, `GPU.<card>` otherwise).
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

NAME = "oci"
SHAPES_PATH = "/a/ocom/docs/cloudestimator2/data/shapes.json"
PRODUCTS_PATH = "/a/ocom/docs/cloudestimator2/data/products.json"
ORDER_URL = "https://www.oracle.com/cloud/compute/gpu/"
PREEMPTIBLE_SHARE = 0.5  # "Preemptible capacity costs 50% less than on-demand capacity" (Oracle docs)
# Shape generations named by number, not by card (gpuhunt `get_gpu_name`).
GENERATIONS = {"GPU4": "A100 40GB", "GPU3": "V100 16GB", "GPU2": "P100"}


class _Value(Lenient):
    value: str = ""


class _ShapeProduct(Lenient):
    type: _Value = Field(default_factory=_Value)
    partNumber: str
    qty: float | None = None


class _Shape(Lenient):
    name: str
    hidden: bool = False
    status: str = "ACTIVE"
    allowPreemptible: bool = False
    gpuQty: int | None = Field(default=None, ge=0, le=MAX_GPUS)
    gpuMemoryQty: float | None = Field(default=None, ge=0)
    shapeType: _Value = Field(default_factory=_Value)
    subType: _Value = Field(default_factory=_Value)
    products: list[_ShapeProduct] = Field(default_factory=list)


class _Price(Lenient):
    model: str
    value: float


class _Localization(Lenient):
    currencyCode: str
    prices: list[_Price] = Field(default_factory=list)


class _Product(Lenient):
    partNumber: str
    billingModel: str = ""
    pricetype: str = ""
    currencyCodeLocalizations: list[_Localization] = Field(default_factory=list)

    def usd_per_hour(self) -> float | None:
        if self.billingModel != "UCM" or self.pricetype != "HOUR":
            return None
        for loc in self.currencyCodeLocalizations:
            if loc.currencyCode == "USD":
                payg = [p.value for p in loc.prices if p.model == "PAY_AS_YOU_GO"]
                return payg[0] if len(payg) == 1 else None
        return None


class _Items(Lenient):
    items: list[Any]


class _Payload(Lenient):
    shapes: _Items
    products: _Items


async def fetch(client: PoliteClient, settings: ProviderSettings) -> dict[str, Any]:
    shapes, products = await gather_limited([
        client.get_json(NAME, join_url(settings.base_url, path), timeout=settings.timeout)
        for path in (SHAPES_PATH, PRODUCTS_PATH)])
    return {"shapes": shapes, "products": products}


def card(shape: str) -> str | None:
    """The card a GPU shape's name carries: `BM.GPU.H100.8` -> "H100", `BM.GPU4.8` -> "A100 40GB"."""
    parts = re.split(r"[.\-]", shape.upper())
    for generation, name in GENERATIONS.items():
        if generation in parts:
            return name
    if "GPU" in parts and parts.index("GPU") + 1 < len(parts):
        return parts[parts.index("GPU") + 1]
    return None


def parse(payload: Any, settings: ProviderSettings | None = None) -> Offers:
    data = validate(_Payload, payload, NAME)
    out = Collector(NAME)
    products = {p.partNumber: p for p in out.each(_Product, data.products.items)}
    for shape in out.each(_Shape, data.shapes.items):
        if (shape.hidden or shape.status != "ACTIVE" or shape.subType.value != "gpu" or not shape.gpuQty
                or shape.shapeType.value not in ("vm", "bm")):
            continue
        ocpu = next((p for p in shape.products if p.type.value == "ocpu"), None)
        product = products.get(ocpu.partNumber) if ocpu else None
        per_gpu = product.usd_per_hour() if product else None
        name = card(shape.name)
        if per_gpu is None or name is None:
            out.skip(f"{shape.name}: no per-GPU pay-as-you-go USD price or no card in its name")
            continue
        memory = round(shape.gpuMemoryQty / shape.gpuQty, 1) if shape.gpuMemoryQty else None
        gpu = gpu_id(name, memory, NAME)
        price = per_gpu * shape.gpuQty
        for billing, share in ((Billing.HOURLY, 1.0), (Billing.SPOT, PREEMPTIBLE_SHARE)):
            if billing is Billing.SPOT and not shape.allowPreemptible:
                continue
            out.add(sku=shape.name, gpu=gpu, gpu_name=name, gpu_count=shape.gpuQty, gpu_memory_gb=memory,
                    billing=billing, price=round(price * share, 4), currency="USD", period=Period.HOUR,
                    in_stock=False, url=ORDER_URL)
    return out.result()


PROVIDER: Provider[ProviderSettings] = Provider(
    info=ProviderInfo(name=NAME, title="Oracle Cloud", aliases=("oci", "oracle", "oracle cloud infrastructure"),
                      stock_known=False, home="https://www.oracle.com/cloud/",
                      sells="hyperscaler GPU shapes, per hour and preemptible, USD: listed price, availability "
                            "unknown"),
    settings=ProviderSettings(base_url="https://www.oracle.com", interval=6 * 3600),
    paths=(SHAPES_PATH, PRODUCTS_PATH), currency="USD", period=Period.HOUR, order_url=ORDER_URL,
    fetch=fetch, parse=parse, rate_limit_per_minute=30,
)
