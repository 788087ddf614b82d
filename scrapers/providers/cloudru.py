"""Cloud.ru (ex-SberCloud) Evolution GPU VMs, price only: the tariff document Cloud.ru publishes as an HTML page
under `https://cloud.ru/documents/tariffs/evolution/…` (no key; every Cloud.ru API needs IAM credentials, research
notes `cloud_ru.md`).

The tariff documents are one table: `№ | Наименование работ, услуг | Единица тарификации | Период тарификации |
Цена, без НДС, руб. | НДС* (22%), руб. | Цена с НДС*, руб.` ("Версия 260101 … Вступление в силу: 1 января 2026 г.";
seen on `cloud.ru/documents/tariffs/evolution/evolution-notebooks`). GPU rows are read from that layout: the row's
name names the card (its Latin words: "Использование GPU NVIDIA A100 80GB" -> "GPU NVIDIA A100 80GB"), the unit
is one GPU (`шт.`), the period `час` (or `месяц`), and the price is the one *without* VAT (VAT added at the
document's own 22 %). Which document lists Evolution Compute's GPUs is not confirmed (the default path,
`…/evolution-compute`, is inferred from the notebooks document's address): the provider ships disabled until an
operator confirms the page with `gpuradar providers check cloudru` (`PROVIDERS__CLOUDRU__PATH` to change it). A
tariff is a list price: "listed price, availability unknown" (`info.stock_known` False), never alerted as in stock.

VAT: Cloud.ru's own tariff document states the prices without VAT and the VAT at 22 % beside them — confirmed.
"""

from __future__ import annotations

import re
from typing import Any

from selectolax.lexbor import LexborHTMLParser

from core.offers import Billing, Period
from core.providers import RU_VAT_RATE, ProviderInfo, Vat
from scrapers.errors import NotJsonError
from scrapers.http import PoliteClient
from scrapers.provider import Provider
from scrapers.providers._common import Collector, Offers, gpu_id, join_url
from scrapers.providers.declarative import number
from scrapers.settings import ProviderSettings

NAME = "cloudru"
ORDER_URL = "https://cloud.ru/products/evolution-compute"
VAT = Vat(RU_VAT_RATE, False, confirmed=True,
          source="cloud.ru tariff documents (cloud.ru/documents/tariffs/evolution/…, version 260101, in force "
                 "2026-01-01): columns 'Цена, без НДС, руб.', 'НДС* (22%), руб.', 'Цена с НДС*, руб.'")
_LATIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-]*")
_GB = re.compile(r"(\d+)\s*(?:ГБ|Гб|GB|Gb|G)\b")
_PERIODS = {"час": Period.HOUR, "месяц": Period.MONTH, "мес": Period.MONTH}


class CloudRuSettings(ProviderSettings):
    enabled: bool = False  # until an operator confirms which document lists the GPUs
    path: str = "/documents/tariffs/evolution/evolution-compute"


async def fetch(client: PoliteClient, settings: ProviderSettings) -> str:
    path = settings.path if isinstance(settings, CloudRuSettings) else CloudRuSettings.model_fields["path"].default
    got = await client.request(NAME, "GET", join_url(settings.base_url, path), timeout=settings.timeout)
    if "html" not in got.headers.get("content-type", "text/html").lower():
        raise NotJsonError(f"{NAME}: expected the tariff document's HTML page")
    return got.content.decode("utf-8", errors="replace")


def card_spelling(name: str) -> str | None:
    """The card a tariff row names, from its Latin words and its memory ("… A100 80 ГБ" -> "NVIDIA A100 80GB")."""
    memory = _GB.search(name)
    words = [w for w in _LATIN.findall(_GB.sub("", name)) if w.upper() not in ("GPU", "VGPU")]
    if not words:
        return None
    return " ".join(words) + (f" {memory.group(1)}GB" if memory else "")


def parse(payload: Any, settings: ProviderSettings | None = None) -> Offers:
    out = Collector(NAME)
    if not isinstance(payload, str):
        out.records += 1
        out.skip(f"expected the tariff page's HTML, got {type(payload).__name__}")
        return out.result()
    for row in LexborHTMLParser(payload).css("tr"):
        cells = [c.text(strip=True) for c in row.css("td")]
        if len(cells) < 5 or "GPU" not in cells[1].upper() or "VGPU" in cells[1].upper():
            continue  # a header, a CPU / RAM / disk row, or a vGPU share
        out.records += 1
        spelling = card_spelling(cells[1])
        period = next((p for word, p in _PERIODS.items() if cells[3].lower().startswith(word)), None)
        price = number(cells[4])
        if spelling is None or period is None or price is None:
            out.skip(f"row {cells[0]}: {cells[1]!r} / {cells[3]!r} / {cells[4]!r} not a GPU price")
            continue
        out.add(sku=cells[1], gpu=gpu_id(spelling, None, NAME), gpu_name=spelling, gpu_count=1,
                billing=Billing.MONTHLY if period is Period.MONTH else Billing.HOURLY, price=price, currency="RUB",
                period=period, in_stock=False, url=ORDER_URL)
    return out.result()


PROVIDER: Provider[CloudRuSettings] = Provider(
    info=ProviderInfo(name=NAME, title="Cloud.ru", aliases=("cloud ru", "sbercloud", "клауд ру", "облако сбер"),
                      vat=VAT, home="https://cloud.ru", stock_known=False,
                      sells="Evolution GPU VMs, per GPU-hour, RUB before VAT: listed price, availability unknown "
                            "(tariff page; operator enables it)"),
    settings=CloudRuSettings(base_url="https://cloud.ru", interval=24 * 3600),
    paths=(CloudRuSettings.model_fields["path"].default,), currency="RUB", period=Period.HOUR, order_url=ORDER_URL,
    fetch=fetch, parse=parse, rate_limit_per_minute=6, max_body_bytes=8 * 1024 * 1024,
)
