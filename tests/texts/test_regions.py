"""texts.regions: every region code in the providers' sample payloads is shown as a place in both languages; an
unknown code is shown cleaned up and never raises."""

from __future__ import annotations

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gpuradar  # noqa: F401  (installs the provider catalog)
from core.places import country_of
from core.providers import provider_names
from scrapers.http import PoliteClient, RetryPolicy
from scrapers.poller import attempt
from testkit.provider_server import ProviderServer
from texts.regions import region_name

# Codes no public list of the provider places (shown cleaned up, as written).
UNPLACED = {("jarvislabs", "europe-01")}


async def sample_locations() -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    async with ProviderServer() as server:
        server.load_samples()
        settings = server.providers_settings(keys=True)
        async with httpx.AsyncClient() as http:
            # Each provider's documented request rate is kept, in scaled time: the pages are what this test reads.
            client = PoliteClient(http, retry=RetryPolicy(scale=0.001))
            for name in provider_names():
                got = await attempt(name, settings, client)
                found |= {(name, o.location) for o in got.offers if o.location}
    return found


async def test_every_region_code_of_the_sample_payloads_is_a_place_in_both_languages() -> None:
    codes = await sample_locations()
    assert len(codes) > 40 and {("vultr", "ewr"), ("cloudrift", "usny01_a01"), ("selectel", "NSK-1")} <= codes
    for provider, code in codes - UNPLACED:
        en, ru = region_name("en", code, provider), region_name("ru", code, provider)
        assert code not in (en, ru) and code.lower() not in (en.lower(), ru.lower()), (provider, code, en, ru)
        assert not any("a" <= ch.lower() <= "z" for ch in ru.split("(")[0]), (provider, code, ru)  # Russian words


@pytest.mark.parametrize(("code", "provider", "en", "ru"), [
    ("ewr", "vultr", "New Jersey, US", "Нью-Джерси"), ("helsinki-finland-1", None, "Helsinki, FI", "Хельсинки"),
    ("usny01_a01", "cloudrift", "New York, US", "Нью-Йорк"), ("ap-east-tw-kn-2", "cloudrift", "Taiwan", "Тайвань"),
    ("NSK-1", "selectel", "Novosibirsk, RU", "Новосибирск"), ("US-TX", "lium", "Texas, US", "Техас"),
    ("FI-18", "lium", "Finland", "Финляндия"), ("datacrunch/helsinki-finland-1", "shadeform", "Helsinki, FI",
                                                 "Хельсинки"),
    ("lambdalabs/us-east-1", "shadeform", "Virginia, US", "Виргиния"), ("us-east-1", "lambda", "Virginia, US",
                                                                         "Виргиния"),
    ("secure", "runpod", "Secure Cloud", "защищённое облако (Secure Cloud)"),
    ("community", "runpod", "Community Cloud", "облако сообщества (Community Cloud)"),
])
def test_known_codes(code: str, provider: str | None, en: str, ru: str) -> None:
    assert (region_name("en", code, provider), region_name("ru", code, provider)) == (en, ru)


@given(st.text(max_size=40), st.sampled_from([None, "vultr", "shadeform", "lium", "nobody"]))
def test_any_code_is_shown_without_raising(code: str, provider: str | None) -> None:
    for lang in ("en", "ru"):
        assert isinstance(region_name(lang, code, provider), str)


def test_an_unknown_code_is_cleaned_up() -> None:
    assert region_name("en", "zz_weird_9", "nobody") == "zz-weird-9"
    assert region_name("ru", "somecloud/zz_weird_9") == "zz-weird-9"


async def test_every_region_code_of_the_sample_payloads_is_in_a_country() -> None:
    # a region filter ("в России", "US only") compares countries: every place a provider sells in has one, and the
    # lookup without the provider (what the matcher has) agrees with the provider's own table
    codes = await sample_locations()
    for provider, code in codes - UNPLACED - {("runpod", "secure"), ("runpod", "community")}:
        country = country_of(code, provider)
        assert country is not None and len(country) == 2 and country == country_of(code), (provider, code)
    assert country_of("secure", "runpod") is None  # RunPod's cloud kinds are no place
