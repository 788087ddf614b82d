"""immers.cloud: GPU cloud VMs in Moscow, priced per hour in roubles on HTML pages (no machine-readable API found;
see tests/fixtures/providers/SOURCES.md). A declarative provider (`scrapers/providers/declarative.py`): the operator
writes the page's selectors in the settings and enables it after `gpuradar providers check immers`; it ships
disabled because no live page has been captured to write the selectors against."""

from __future__ import annotations

from core.offers import Period
from core.providers import RU_VAT_RATE, ProviderInfo, Vat
from scrapers.providers.declarative import declarative
from scrapers.settings import DeclarativeProviderSettings

NAME = "immers"
# Unconfirmed: no statement on immers.cloud's own pages could be cited; `gpuradar providers` shows them "unconfirmed".
VAT = Vat(RU_VAT_RATE, True, source="inferred: immers.cloud price pages quote ₽/hour to individuals, read as VAT "
                                    "included; no statement on immers.cloud's own pages cited yet")

PROVIDER = declarative(
    ProviderInfo(name=NAME, title="immers.cloud", aliases=("immers", "иммерс"), home="https://immers.cloud", vat=VAT,
                 sells="GPU cloud VMs, per hour, RUB, Moscow (HTML price page; operator enables it)"),
    DeclarativeProviderSettings(base_url="https://immers.cloud"),
    currency="RUB", period=Period.HOUR, order_url="https://immers.cloud/")
