"""FullGPU: whole GPU servers (H100, H200, B200, B300, 8-GPU nodes) rented by the month, priced in US dollars on
its Russian-language pages (`/ru/gpus/…`; the publisher of the fine-tuning memory seed, whose pages quote e.g.
"NVIDIA H100 SXM: 2 190 $ в месяц" and link each card's page under `https://fullgpu.com/ru/gpus/`). No
machine-readable API is known, so it is a declarative page provider (`scrapers/providers/declarative.py`): monthly
billing, USD per server per month; the operator writes the page's selectors in the settings and enables it after
`gpuradar providers check fullgpu` — it ships disabled because no live page has been captured to write them
against. VAT: prices in USD, so no Russian VAT is applied (the catalog's VAT terms apply to RUB prices only);
whether FullGPU adds VAT on invoice is not stated on the pages seen.
"""

from __future__ import annotations

from core.offers import Period
from core.providers import ProviderInfo
from scrapers.providers.declarative import declarative
from scrapers.settings import DeclarativeProviderSettings

NAME = "fullgpu"

PROVIDER = declarative(
    ProviderInfo(name=NAME, title="FullGPU", aliases=("full gpu", "fullgpu.com"), home="https://fullgpu.com",
                 sells="whole GPU servers by the month, USD (HTML pages; operator enables it)"),
    DeclarativeProviderSettings(base_url="https://fullgpu.com", path="/ru/gpus", format="html", currency="USD",
                                period="month", billing="monthly", order_url="https://fullgpu.com/ru/gpus"),
    currency="USD", period=Period.MONTH, order_url="https://fullgpu.com/ru/gpus")
