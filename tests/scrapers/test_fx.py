"""CBR exchange rates: the real daily-file format (windows-1251, comma decimals, Nominal) served on loopback,
the in-memory and file caches, and the configured fallback."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from gpuradar.settings import Settings
from scrapers.errors import PayloadValidationError
from scrapers.fx import RatesProvider, fetch_rates, parse_cbr
from testkit.provider_server import Fault, ProviderServer

CBR_PATH = "/scripts/XML_daily.asp"
CBR_XML = """<?xml version="1.0" encoding="windows-1251"?>
<ValCurs Date="02.03.2026" name="Foreign Currency Market">
<Valute ID="R01235"><NumCode>840</NumCode><CharCode>USD</CharCode><Nominal>1</Nominal><Name>Доллар США</Name>
<Value>91,6359</Value><VunitRate>91,6359</VunitRate></Valute>
<Valute ID="R01239"><NumCode>978</NumCode><CharCode>EUR</CharCode><Nominal>1</Nominal><Name>Евро</Name>
<Value>99,1919</Value></Valute>
<Valute ID="R01335"><NumCode>398</NumCode><CharCode>KZT</CharCode><Nominal>100</Nominal><Name>Казахстанских тенге</Name>
<Value>20,3188</Value></Valute>
</ValCurs>""".encode("cp1251")


def settings(server: ProviderServer) -> Settings:
    return Settings(fx_url=server.base_url + CBR_PATH, fx_fallback_rub_per={"USD": 80.0, "EUR": 93.0, "CNY": 11.0})


def test_parse_cbr_windows_1251_comma_decimals_and_nominal() -> None:
    rates = parse_cbr(CBR_XML)
    assert rates.rub_per["USD"] == pytest.approx(91.6359)
    assert rates.rub_per["KZT"] == pytest.approx(0.203188)  # 100 tenge = 20.3188 roubles
    assert rates.as_of == "2026-03-02" and rates.source == "cbr"
    with pytest.raises(PayloadValidationError):
        parse_cbr(b"<html>maintenance</html>")
    with pytest.raises(PayloadValidationError):
        parse_cbr(b"<ValCurs Date='01.01.2026'></ValCurs>")


async def test_rates_from_cbr_then_memory_cache(provider_server: ProviderServer, tmp_path: Path) -> None:
    provider_server.serve(CBR_PATH, body=CBR_XML, content_type="application/xml")
    now = [1000.0]
    fx = RatesProvider.from_settings(settings(provider_server), cache_path=tmp_path / "rates.json",
                                     clock=lambda: now[0], ttl=3600)
    async with httpx.AsyncClient() as client:
        first = await fx.get(client)
        second = await fx.get(client)
        assert len(provider_server.requests_to(CBR_PATH)) == 1  # served from memory
        now[0] += 3601
        await fx.get(client)
        assert len(provider_server.requests_to(CBR_PATH)) == 2  # stale: asked again
    assert first.source == "cbr" and second == first
    assert first.rub_per["CNY"] == 11.0  # a currency missing from the file keeps its configured rate
    assert first.convert(1, "USD", "RUB") == pytest.approx(91.6359)
    assert (tmp_path / "rates.json").exists()


async def test_unreachable_cbr_uses_the_cache_file_then_the_fallback(provider_server: ProviderServer,
                                                                     tmp_path: Path) -> None:
    cache = tmp_path / "rates.json"
    provider_server.serve(CBR_PATH, body=CBR_XML, content_type="application/xml")
    async with httpx.AsyncClient() as client:
        assert (await fetch_rates(client, settings(provider_server), cache_path=cache)).source == "cbr"
        provider_server.inject(CBR_PATH, Fault.SERVER_ERROR, times=None)
        # a restart: a new provider object, only the file remembers
        cached = await fetch_rates(client, settings(provider_server), cache_path=cache)
        assert cached.source == "cache" and cached.rub_per["USD"] == pytest.approx(91.6359)
        fallback = await fetch_rates(client, settings(provider_server), cache_path=tmp_path / "none.json")
    assert fallback.source == "fallback" and fallback.rub_per == {"USD": 80.0, "EUR": 93.0, "CNY": 11.0}


async def test_html_answer_or_broken_cache_falls_back(provider_server: ProviderServer, tmp_path: Path) -> None:
    cache = tmp_path / "rates.json"
    cache.write_text("{not json")
    provider_server.inject(CBR_PATH, Fault.CAPTCHA, times=None)
    fx = RatesProvider.from_settings(settings(provider_server), cache_path=cache)
    async with httpx.AsyncClient() as client:
        rates = await fx.get(client)
    assert rates.source == "fallback" and "unexpected root <html>" in (fx.last_error or "")


async def test_a_failing_cbr_is_asked_again_only_after_retry_after(provider_server: ProviderServer,
                                                                   tmp_path: Path) -> None:
    # Every poll asks for rates before it is recorded: a failing CBR must not be asked (and waited for) each time.
    provider_server.inject(CBR_PATH, Fault.SERVER_ERROR, times=None)
    now = [1000.0]
    fx = RatesProvider.from_settings(settings(provider_server), cache_path=tmp_path / "rates.json",
                                     clock=lambda: now[0], ttl=3600, retry_after=300)
    async with httpx.AsyncClient() as client:
        first = await fx.get(client)
        for _ in range(5):  # polls within the retry interval
            now[0] += 50
            assert await fx.get(client) == first
        assert first.source == "fallback" and len(provider_server.requests_to(CBR_PATH)) == 1
        provider_server.serve(CBR_PATH, body=CBR_XML, content_type="application/xml")
        provider_server.clear_faults(CBR_PATH)
        now[0] += 51  # 301 s after the failure: asked again, and this time it answers
        fresh = await fx.get(client)
        assert fresh.source == "cbr" and len(provider_server.requests_to(CBR_PATH)) == 2
        now[0] += 3000  # fresh rates are kept for their ttl, as before
        assert await fx.get(client) == fresh and len(provider_server.requests_to(CBR_PATH)) == 2
