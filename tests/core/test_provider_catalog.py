"""One provider catalog (core.providers): the scrapers' registry, the settings, the bot's `/subscribe … on X`
parser, its wizard, alerts and welcome text all read provider names from it."""

from __future__ import annotations

import pytest

from bot.alert_texts import provider_name
from bot.handlers.start import start_text
from bot.subscribe_query import parse_subscribe
from bot.views import render_filters
from core.providers import aliases, catalog, provider_info, provider_names, provider_title
from scrapers.provider import Provider
from scrapers.registry import PROVIDERS as REGISTRY
from scrapers.registry import ProvidersSettings


def test_every_provider_is_in_the_catalog_the_registry_and_the_settings() -> None:
    configured = {name for name, _ in ProvidersSettings()}
    assert set(catalog()) == set(REGISTRY) == configured
    for name, provider in REGISTRY.items():
        assert isinstance(provider, Provider) and provider.name == name
        assert provider.info is provider_info(name)  # the catalog the bot reads is the providers' own facts
        assert type(ProvidersSettings().get(name)) is provider.settings_model
        # "needs a key" is stated once: the settings' setup reads the provider's key settings
        needs = ProvidersSettings().setup()[name]
        assert needs.startswith("needs:") == (provider.info.needs_key and provider.settings.enabled)


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
    assert set(provider_names()) == set(REGISTRY)  # the wizard offers every provider
    assert "Vast.ai, Lambda" in render_filters("en", max_price=None, price_currency="USD",
                                               providers=["vastai", "lambda"], gpu_count=None, billing=None,
                                               region=None)
    welcome = start_text("en", ["selectel", "vastai", "lium"])
    assert "It watches Selectel, Vast.ai and Lium," in welcome
    assert "Я слежу за Selectel и HOSTKEY" in start_text("ru", ["selectel", "hostkey"])
    assert all(provider_title(a) for a in aliases().values())
