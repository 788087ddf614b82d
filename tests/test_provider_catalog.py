"""One provider catalog (core.providers): the scrapers' registry, the settings, the bot's `/subscribe … on X`
parser, its wizard, alerts and welcome text all read provider names from it."""

from __future__ import annotations

import pytest

from bot.alert_texts import provider_name
from bot.handlers.start import start_text
from bot.handlers.subscribe import PROVIDERS
from bot.subscribe_query import parse_subscribe
from bot.views import render_filters
from core.providers import CATALOG, aliases, provider_title
from scrapers.registry import PROVIDERS as REGISTRY
from scrapers.registry import load
from scrapers.settings import ProvidersSettings


def test_every_provider_is_in_the_catalog_the_registry_and_the_settings() -> None:
    configured = {name for name, _ in ProvidersSettings()}
    assert set(CATALOG) == set(REGISTRY) == configured
    for name in CATALOG:
        module = load(name)
        assert callable(module.fetch) and callable(module.parse)
        assert REGISTRY[name].title == CATALOG[name].title


@pytest.mark.parametrize("text,provider", [
    ("H100 on lambda labs", "lambda"), ("H100 on Lambda", "lambda"), ("A100 на datacrunch", "verda"),
    ("A100 on verda", "verda"), ("B200 on shadeform", "shadeform"), ("H100 on hyperstack", "hyperstack"),
    ("RTX 4090 on lium", "lium"), ("A100 у селектел", "selectel"), ("H100 on vast.ai", "vastai"),
    ("H100 on immers.cloud", "immers"),
])
def test_subscribe_parser_knows_every_spelling_in_the_catalog(text: str, provider: str) -> None:
    assert parse_subscribe(text).providers == [provider]


def test_names_shown_to_users_come_from_the_catalog() -> None:
    assert provider_name("vastai") == "Vast.ai" and provider_name("verda") == "Verda"
    assert provider_name("somebody-new") == "somebody-new"  # an operator-defined provider keeps its id
    assert set(PROVIDERS) == set(CATALOG)  # the wizard offers every provider
    assert "Vast.ai, Lambda" in render_filters("en", max_price=None, price_currency="USD",
                                               providers=["vastai", "lambda"], gpu_count=None, billing=None,
                                               region=None)
    welcome = start_text("en", ["selectel", "vastai", "lium"])
    assert "It watches Selectel, Vast.ai and Lium," in welcome
    assert "Я слежу за Selectel и HOSTKEY" in start_text("ru", ["selectel", "hostkey"])
    assert all(provider_title(a) for a in aliases().values())
