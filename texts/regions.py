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

from texts.i18n import t

# place -> the ISO 3166-1 country it is in (None: the place is a country, or not a place at all).
PLACES: dict[str, str | None] = {
    "seoul": "KR", "taiwan": None, "italy": None, "north_carolina": "US", "new_york": "US", "texas": "US",
    "new_jersey": "US", "chicago": "US", "dallas": "US", "seattle": "US", "los_angeles": "US", "atlanta": "US",
    "amsterdam": "NL", "london": "GB", "frankfurt": "DE", "silicon_valley": "US", "sydney": "AU", "tokyo": "JP",
    "paris": "FR", "warsaw": "PL", "madrid": "ES", "stockholm": "SE", "singapore": None, "miami": "US",
    "toronto": "CA", "mumbai": "IN", "delhi": "IN", "bangalore": "IN", "johannesburg": "ZA", "melbourne": "AU",
    "osaka": "JP", "sao_paulo": "BR", "mexico_city": "MX", "manchester": "GB", "honolulu": "US", "tel_aviv": "IL",
    "santiago": "CL", "moscow": "RU", "saint_petersburg": "RU", "novosibirsk": "RU", "helsinki": "FI",
    "virginia": "US", "california": "US", "washington_dc": "US", "iowa": "US", "south_carolina": "US",
    "netherlands": None, "michigan": "US", "chennai": "IN", "noida": "IN", "milan": "IT", "frosinone": "IT",
    "iceland": None, "oregon": "US", "ohio": "US", "arizona": "US", "utah": "US", "illinois": "US",
    "san_francisco": "US", "kansas": "US", "georgia_us": "US",
    "secure_cloud": None, "community_cloud": None,
}

# Codes that mean the same place whoever writes them (lower case).
REGIONS: dict[str, str] = {
    # Vultr's region ids (its API, GET /v2/regions: "ewr" New Jersey, "ord" Chicago …;
    # tests/fixtures/providers/vultr.region-availability.sample.json)
    "ewr": "new_jersey", "ord": "chicago", "dfw": "dallas", "sea": "seattle", "lax": "los_angeles",
    "atl": "atlanta", "ams": "amsterdam", "lhr": "london", "fra": "frankfurt", "sjc": "silicon_valley",
    "syd": "sydney", "nrt": "tokyo", "icn": "seoul", "par": "paris", "waw": "warsaw", "mad": "madrid",
    "sto": "stockholm", "sgp": "singapore", "mia": "miami", "yto": "toronto", "bom": "mumbai", "del": "delhi",
    "blr": "bangalore", "jnb": "johannesburg", "mel": "melbourne", "osa": "osaka", "sao": "sao_paulo",
    "mex": "mexico_city", "man": "manchester", "hnl": "honolulu", "tlv": "tel_aviv", "scl": "santiago",
    # CloudRift's datacenter ids (its API's instance-types answer, tests/fixtures/providers/cloudrift.sample.json)
    "ap_northeast_kr_se_1": "seoul", "ap-east-tw-kn-2": "taiwan", "eu-central-it-gv-1": "italy",
    "us-east-nc-nr-1": "north_carolina", "usny01_a01": "new_york", "ustx1a_a01": "texas",
    # RunPod's cloud kinds are not places: its "Secure Cloud" (its own data centres) and "Community Cloud" (vetted
    # hosts), as https://docs.runpod.io/pods/choose-a-pod names them
    "secure": "secure_cloud", "community": "community_cloud",
    # Selectel's dedicated-server locations (/pub/location names,
    # tests/fixtures/providers/selectel.location.sample.json; https://selectel.ru/about/dc/: MSK Moscow, SPB Saint
    # Petersburg, NSK Novosibirsk) and the city names HOSTKEY and immers.cloud write
    "msk-1": "moscow", "msk-4": "moscow", "spb-2": "saint_petersburg", "spb-3": "saint_petersburg",
    "spb-5": "saint_petersburg", "nsk-1": "novosibirsk",
    "moscow": "moscow", "msk": "moscow", "москва": "moscow", "saint petersburg": "saint_petersburg",
    "st petersburg": "saint_petersburg", "spb": "saint_petersburg", "санкт-петербург": "saint_petersburg",
    "novosibirsk": "novosibirsk", "новосибирск": "novosibirsk",
}

# Codes whose place depends on who writes them (provider -> code -> place), each from the provider's own list.
PROVIDER_REGIONS: dict[str, dict[str, str]] = {
    # Lambda's instance-types answer names each region ("us-east-1": "Virginia, USA", "us-east-3": "Washington DC,
    # USA", "us-south-2": "Texas, USA": tests/fixtures/providers/lambda.sample.json); the rest from
    # https://docs.lambda.ai/public-cloud/on-demand/#regions
    "lambda": {"us-east-1": "virginia", "us-east-2": "washington_dc", "us-east-3": "washington_dc",
               "us-west-1": "california", "us-west-2": "arizona", "us-west-3": "utah", "us-south-1": "texas",
               "us-south-2": "texas", "us-south-3": "texas", "us-midwest-1": "illinois"},
    # Google Cloud regions (https://cloud.google.com/compute/docs/regions-zones)
    "gcp": {"us-central1": "iowa", "us-east1": "south_carolina", "us-east4": "virginia", "us-west1": "oregon",
            "us-east5": "ohio", "us-south1": "dallas", "us-west2": "los_angeles", "us-west4": "utah",
            "europe-west4": "netherlands", "europe-west1": "netherlands", "europe-west3": "frankfurt",
            "europe-west2": "london", "europe-north1": "helsinki", "asia-northeast1": "tokyo",
            "asia-southeast1": "singapore", "asia-south1": "mumbai", "asia-northeast3": "seoul"},
    # Azure regions (https://learn.microsoft.com/azure/reliability/regions-list)
    "azure": {"eastus": "virginia", "eastus2": "virginia", "southcentralus": "texas", "westus": "california",
              "westus2": "washington_state", "westus3": "arizona", "centralus": "iowa", "northcentralus": "illinois",
              "westeurope": "netherlands", "northeurope": "ireland", "swedencentral": "stockholm",
              "uksouth": "london", "francecentral": "paris", "germanywestcentral": "frankfurt",
              "japaneast": "tokyo", "koreacentral": "seoul", "australiaeast": "sydney", "canadacentral": "toronto"},
    # DigitalOcean datacenters (https://docs.digitalocean.com/platform/regional-availability/)
    "digitalocean": {"nyc1": "new_york", "nyc2": "new_york", "nyc3": "new_york", "atl1": "atlanta",
                     "tor1": "toronto", "sfo2": "san_francisco", "sfo3": "san_francisco", "ams3": "amsterdam",
                     "lon1": "london", "fra1": "frankfurt", "sgp1": "singapore", "blr1": "bangalore",
                     "syd1": "sydney"},
    # Seeweb's data centres (https://www.seeweb.it/en/data-center: Frosinone and Milan)
    "seeweb": {"it-fr2": "frosinone", "it-fr1": "frosinone", "it-mi2": "milan", "it-mi1": "milan"},
    # Verda (ex DataCrunch) locations (its /locations answer: FIN-01 … "Finland", ICE-01 "Iceland";
    # tests/fixtures/providers/verda.availability.sample.json)
    "verda": {"fin-01": "helsinki", "fin-02": "helsinki", "fin-03": "helsinki", "ice-01": "iceland"},
    # Selectel's cloud pools (https://docs.selectel.ru/en/control-panel-actions/availability-matrix/: ru-1, ru-3
    # Saint Petersburg; ru-2, ru-7, ru-9 Moscow; ru-8 Novosibirsk)
    "selectel_cloud": {"ru-1": "saint_petersburg", "ru-3": "saint_petersburg", "ru-2": "moscow", "ru-7": "moscow",
                       "ru-9": "moscow", "ru-8": "novosibirsk"},
    # Hot Aisle's one region (its availability answer, tests/fixtures/providers/hotaisle.sample.json)
    "hotaisle": {"us-michigan-1": "michigan"},
}
# A marketplace's "cloud/region" (Shadeform) names the cloud as it does; read the region as that provider's.
CLOUD_ALIASES = {"lambdalabs": "lambda", "datacrunch": "verda"}
# Words inside a code that name a place (jarvislabs 'india-chennai-01', shadeform 'helsinki-finland-1').
PLACE_WORDS = {p.replace("_", ""): p for p in PLACES if PLACES[p] is not None or p in ("iceland", "netherlands")}
# US states by their ISO 3166-2 code (Lium's 'US-TX', 'US-VA').
US_STATES = {"TX": "texas", "VA": "virginia", "CA": "california", "NY": "new_york", "NJ": "new_jersey",
             "IL": "illinois", "OR": "oregon", "OH": "ohio", "AZ": "arizona", "UT": "utah", "GA": "georgia_us",
             "NC": "north_carolina", "SC": "south_carolina", "IA": "iowa", "MI": "michigan", "WA": "washington_state",
             "KS": "kansas", "FL": "florida"}
_COUNTRY_IN_ID = re.compile(r"^(?:ap|eu|us|na|sa|af|me|ca)[-_][a-z]+[-_](?P<cc>[a-z]{2})[-_]")
_SUBDIVISION = re.compile(r"^(?P<cc>[A-Za-z]{2})-(?P<sub>[A-Za-z0-9]{1,3})$")

# Places named only through a rule above (not in PLACES' first lines): their countries.
PLACES.update({"washington_state": "US", "ireland": None, "florida": "US"})


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
    if (m := _SUBDIVISION.match(raw)) is not None and (country := _country(lang, m.group("cc"))) is not None:
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
    if (m := _COUNTRY_IN_ID.match(key)) is not None and (country := _country(lang, m.group("cc"))) is not None:
        return country
    return clean_code(raw)
