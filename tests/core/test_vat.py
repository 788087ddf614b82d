"""Prices as a Russian buyer reads them: each provider's VAT terms (core.providers) travel with its offers, every
comparison uses the price with VAT, and the bot says so once under a list that holds such a price."""

from __future__ import annotations

import pytest

from bot.offer_cache import CachedOffer
from bot.views import vat_note
from core.offers import HOURS_PER_MONTH, Offer, Period, Rates, normalise_price
from core.providers import RU_VAT_RATE, catalog, provider_info, vat_terms
from scrapers.poller import with_vat
from scrapers.providers.hostkey import HostkeySettings
from storage.ingest import normalised

RATES = Rates(rub_per={"USD": 80.0, "EUR": 90.0})


def offer(provider: str, price: float, currency: str, period: Period = Period.MONTH, **extra: object) -> Offer:
    return Offer(provider=provider, sku="s", gpu="a100-80gb", gpu_name="A100", gpu_count=2, price=price,
                 currency=currency, period=period, in_stock=True, **extra)  # type: ignore[arg-type]


def test_every_provider_states_its_vat_terms_with_a_source() -> None:
    for name in catalog():
        info = provider_info(name)
        if info.vat is not None:
            assert info.vat.rate == RU_VAT_RATE and info.vat.source and info.vat.currencies == ("RUB",)
    assert {"selectel", "hostkey", "immers"} <= {n for n in catalog() if provider_info(n).vat}  # Russian sellers
    assert vat_terms("vastai", "USD") == (0.0, True) and vat_terms("hostkey", "EUR") == (0.0, True)
    assert vat_terms("hostkey", "RUR") == (RU_VAT_RATE, False)


def test_prices_compare_with_vat() -> None:
    included = offer("selectel", 150_000, "RUB")  # the storefront price already has it
    assert included.gross_price == 150_000
    assert included.price_per_gpu_hour == pytest.approx(150_000 / HOURS_PER_MONTH / 2)
    excluded = offer("hostkey", 100_000, "RUB")  # a list price before VAT
    assert excluded.gross_price == pytest.approx(100_000 * (1 + RU_VAT_RATE))
    assert excluded.price == 100_000  # the published price is kept as published
    rub, usd = normalised(excluded, RATES)
    assert rub == pytest.approx(round(122_000 / HOURS_PER_MONTH / 2, 4))
    assert usd == pytest.approx(round(122_000 / HOURS_PER_MONTH / 2 / 80, 4), abs=1e-4)
    assert normalise_price(excluded, RATES).price_per_gpu_hour_rub == rub
    eur = offer("hostkey", 1000, "EUR")  # invoiced abroad: no НДС
    assert eur.gross_price == 1000
    usd_market = offer("vastai", 2.0, "USD", Period.HOUR)
    assert usd_market.price_per_gpu_hour == 1.0


def test_operator_overrides_a_providers_terms() -> None:
    cfg = HostkeySettings(base_url="x", vat_included=True)
    [overridden] = with_vat([offer("hostkey", 100_000, "RUB")], cfg)
    assert overridden.gross_price == 100_000 and overridden.vat == (RU_VAT_RATE, True)
    [rate] = with_vat([offer("hostkey", 100_000, "RUB")], HostkeySettings(base_url="x", vat_rate=0.2))
    assert rate.gross_price == pytest.approx(120_000)


def cached(provider: str) -> CachedOffer:
    return CachedOffer(key=f"{provider}|k", provider=provider, gpu="a100-80gb", gpu_name="A100", gpu_count=1,
                       location="", billing="hourly", price_per_gpu_hour_rub=100.0, price_per_gpu_hour_usd=1.2,
                       url="https://example.com/")


def test_the_vat_note_is_said_once_and_only_when_it_applies() -> None:
    assert vat_note([cached("vastai"), cached("runpod")], "en") is None
    note = vat_note([cached("selectel"), cached("hostkey"), cached("vastai")], "en")
    assert note is not None and "22%" in note and "VAT" in note
    ru = vat_note([cached("immers")], "ru")
    assert ru is not None and "НДС 22%" in ru
