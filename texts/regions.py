"""Where an offer is, as people say it: the one table of providers' region codes -> a place in the user's language.

`region_name(lang, code, provider)` is what every front end shows (bot lists, inline results, alerts, the CLI, the
market page): English 'New Jersey, US' / 'Helsinki, FI' (the place and its ISO 3166 country), Russian 'Нью-Джерси'
(the place alone). Place names are catalog texts (`texts/locales/<lang>/names.ftl`, `city_<place>`); country names
come from Babel's CLDR data. A code nobody knows is shown cleaned up (its provider prefix and underscores gone),
never raised on.

The rules, in order: the provider's own table (`PROVIDER_REGIONS`), the codes every provider means alike
(`REGIONS`), RunPod's cloud kinds, a two-letter country (Vast.ai, HOSTKEY), an ISO 3166-2 subdivision ('US-TX',
'FI-18': Lium), a marketplace's 'cloud/region' (Shadeform: read as that cloud's region), then the words of the code
('india-chennai-01', 'helsinki-finland-1', 'NORWAY-1'), then a country inside a cloud id ('ap-east-tw-kn-2').
"""

from __future__ import annotations

import re
from functools import lru_cache

from core.places import (  # the one copy of the tables (core.matching reads them too); here they become words
    AREA_PREFIX,
    AREAS,
    CLOUD_ALIASES,
    COUNTRY_IN_ID,
    PLACE_WORDS,
    PLACES,
    PROVIDER_REGIONS,
    REGIONS,
    SUBDIVISION,
    US_STATES,
)
from texts.i18n import t


def _country(lang: str, code: str) -> str | None:
    from babel import Locale

    return Locale(lang).territories.get(code.upper())


@lru_cache(maxsize=1)
def _countries_by_english_name() -> dict[str, str]:
    from babel import Locale

    return {name.lower().replace(" ", ""): code for code, name in Locale("en").territories.items()
            if code.isalpha() and len(code) == 2}


def _place(lang: str, place: str) -> str:
    name = t(lang, f"city_{place}")
    country = PLACES.get(place)
    return f"{name}, {country}" if lang == "en" and country else name


def _from_words(lang: str, code: str) -> str | None:
    """A place named by the words of a code: a city we know first, else a country."""
    words = [w for w in re.split(r"[^a-z]+", code.lower()) if w]
    for w in words:
        if w in PLACE_WORDS:
            return _place(lang, PLACE_WORDS[w])
    countries = {**_countries_by_english_name(), "us": "US", "usa": "US", "uk": "GB"}
    for w in words:
        if w in countries:
            return _country(lang, countries[w])
    return None


def clean_code(code: str) -> str:
    """A code nobody maps, shown as readably as it goes: a cloud prefix and underscores gone ('us_east_1')."""
    return " ".join(code.rsplit("/", 1)[-1].replace("_", "-").split()) or code


@lru_cache(maxsize=4096)
def region_name(lang: str, location: str, provider: str | None = None) -> str:
    """A location as people say it, in `lang` (see the module's rules); never raises."""
    raw = " ".join(location.split())
    key = raw.lower()
    if not raw:
        return raw
    place = PROVIDER_REGIONS.get(provider or "", {}).get(key) or REGIONS.get(key)
    if place is not None:
        return _place(lang, place)
    if re.fullmatch(r"[A-Za-z]{2}", raw):
        return _country(lang, raw) or raw
    if (m := SUBDIVISION.match(raw)) is not None and (country := _country(lang, m.group("cc"))) is not None:
        state = US_STATES.get(m.group("sub").upper()) if m.group("cc").upper() == "US" else None
        return _place(lang, state) if state else country
    if "/" in raw:
        cloud, _, region = raw.partition("/")
        cloud = CLOUD_ALIASES.get(cloud.lower(), cloud.lower())
        if region:
            found = region_name(lang, region, cloud)
            if found != clean_code(region):
                return found
    if (named := _from_words(lang, key)) is not None:
        return named
    if (m := COUNTRY_IN_ID.match(key)) is not None and (country := _country(lang, m.group("cc"))) is not None:
        return country
    return clean_code(raw)


def filter_region_name(lang: str, region: str) -> str:
    """A subscription's region filter as people say it: its countries and areas by name ("@US,CA" -> "Canada,
    United States" / "Канада, Соединенные Штаты", "@EU" -> "Europe" / "Европа"); any other filter as written."""
    if not region.startswith(AREA_PREFIX):
        return region
    names = []
    for code in region[len(AREA_PREFIX):].split(","):
        if code in AREAS:
            names.append(t(lang, f"area_{code.lower()}"))
        elif code:
            names.append(_country(lang, code) or code)
    return ", ".join(names)
