"""Where an offer is, as facts: providers' region codes -> a place, each place's country (ISO 3166-1 alpha-2), and
the areas a subscription's region filter names ("RU", "US,CA", "EU").

`texts.regions` turns a place into words in the user's language; `country_of` is what a region filter compares
(`core.matching.region_matches`). Both read these tables, the one copy of them.
"""

from __future__ import annotations

import re
from functools import lru_cache

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
COUNTRY_IN_ID = re.compile(r"^(?:ap|eu|us|na|sa|af|me|ca)[-_][a-z]+[-_](?P<cc>[a-z]{2})[-_]")
SUBDIVISION = re.compile(r"^(?P<cc>[A-Za-z]{2})-(?P<sub>[A-Za-z0-9]{1,3})$")

# Places named only through a rule above (not in PLACES' first lines): their countries.
PLACES.update({"washington_state": "US", "ireland": None, "florida": "US"})



# Places that are countries themselves (PLACES maps them to None: no country is said after their name).
COUNTRY_PLACES = {"taiwan": "TW", "italy": "IT", "singapore": "SG", "netherlands": "NL", "iceland": "IS",
                  "ireland": "IE"}

# English names of the countries region codes spell out ("india-chennai-01", "NORWAY-1"), for `country_of`.
_COUNTRY_WORDS = {"us": "US", "usa": "US", "uk": "GB", "india": "IN", "norway": "NO", "finland": "FI",
                  "canada": "CA", "germany": "DE", "france": "FR", "japan": "JP", "korea": "KR", "singapore": "SG",
                  "netherlands": "NL", "sweden": "SE", "iceland": "IS", "italy": "IT", "spain": "ES",
                  "poland": "PL", "australia": "AU", "brazil": "BR", "taiwan": "TW", "israel": "IL",
                  "ireland": "IE", "switzerland": "CH", "denmark": "DK", "austria": "AT", "belgium": "BE",
                  "portugal": "PT", "czechia": "CZ", "turkey": "TR", "kazakhstan": "KZ", "russia": "RU",
                  "europe": "", "mexico": "MX", "chile": "CL", "africa": ""}

# Areas a region filter may name (codes that are no ISO country): Europe as its countries (the EU, the EEA, the UK
# and Switzerland; Russia is its own answer: "в Европе" and "в России" are asked apart), North America, Asia.
AREAS: dict[str, frozenset[str]] = {
    "EU": frozenset({"AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "GR", "HU", "IE", "IT", "LV",
                     "LT", "LU", "MT", "NL", "PL", "PT", "RO", "SK", "SI", "ES", "SE", "IS", "LI", "NO", "GB", "CH"}),
    "NA": frozenset({"US", "CA", "MX"}),
    "ASIA": frozenset({"JP", "KR", "TW", "SG", "IN", "HK", "CN", "ID", "MY", "TH", "VN", "PH", "IL", "AE", "KZ"}),
}


def _place_of(key: str, provider: str | None) -> str | None:
    if provider:
        return PROVIDER_REGIONS.get(provider, {}).get(key) or REGIONS.get(key)
    found = REGIONS.get(key)
    if found is None:  # no provider said: a code one provider's table knows (no two tables disagree on a country)
        found = next((table[key] for table in PROVIDER_REGIONS.values() if key in table), None)
    return found


def _country_of_place(place: str) -> str | None:
    return PLACES.get(place) or COUNTRY_PLACES.get(place)


@lru_cache(maxsize=4096)
def country_of(location: str, provider: str | None = None) -> str | None:
    """The ISO 3166-1 country an offer's location is in, by the rules `texts.regions.region_name` reads places by;
    None where the code says no country (RunPod's cloud kinds, a code no list places)."""
    raw = " ".join(location.split())
    key = raw.lower()
    if not raw:
        return None
    place = _place_of(key, provider)
    if place is not None:
        return _country_of_place(place)
    if re.fullmatch(r"[A-Za-z]{2}", raw):
        return raw.upper()
    if (m := SUBDIVISION.match(raw)) is not None:
        return m.group("cc").upper()
    if "/" in raw:
        cloud, _, region = raw.partition("/")
        if region:
            return country_of(region, CLOUD_ALIASES.get(cloud.lower(), cloud.lower()))
    words = [w for w in re.split(r"[^a-z]+", key) if w]
    for w in words:
        if w in PLACE_WORDS:
            return _country_of_place(PLACE_WORDS[w])
    for w in words:
        if _COUNTRY_WORDS.get(w):
            return _COUNTRY_WORDS[w]
    if (m := COUNTRY_IN_ID.match(key)) is not None:
        return m.group("cc").upper()
    return None


# A region filter naming countries or areas ("@RU", "@US,CA", "@EU": bot/subscribe_query.py) rather than a code.
AREA_PREFIX = "@"


def area_countries(area: str) -> frozenset[str]:
    """The countries a region filter's code stands for: an area ("EU") or one country ("RU")."""
    code = area.strip().upper()
    return AREAS.get(code, frozenset({code}))


# Countries and areas as people write them in a request ("в России", "US only", "in Germany or the Netherlands",
# "европа"): a Russian name with its case endings, an English name; the short codes ("US", "EU", "UK") are read only
# in capitals or after "in" / "only" (`bot.subscribe_query`), never "let us know".
COUNTRY_NAMES: dict[str, str] = {
    "RU": r"russia|росси\w*|рф", "US": r"usa|united\s+states|america|сша|америк\w*",
    "CA": r"canada|канад\w*", "MX": r"mexico|мексик\w*", "BR": r"brazil|бразили\w*",
    "GB": r"united\s+kingdom|great\s+britain|britain|england|великобритани\w*|британи\w*|англи(?:я|и|ю|ей)",
    "IE": r"ireland|ирланди\w*", "FR": r"france|франци\w*", "DE": r"germany|германи\w*",
    "NL": r"(?:the\s+)?netherlands|holland|нидерланд\w*|голланди\w*", "BE": r"belgium|бельги\w*",
    "CH": r"switzerland|швейцари\w*", "AT": r"austria|австри(?:я|и|ю|ей)", "IT": r"italy|итали\w*",
    "ES": r"spain|испани\w*", "PT": r"portugal|португали\w*", "PL": r"poland|польш\w*",
    "CZ": r"czechia|czech\s+republic|чехи\w*", "SE": r"sweden|швеци\w*", "NO": r"norway|норвеги\w*",
    "FI": r"finland|финлянди\w*", "DK": r"denmark|дани(?:я|и|ю|ей)", "IS": r"iceland|исланди\w*",
    "EE": r"estonia|эстони\w*", "LV": r"latvia|латви\w*", "LT": r"lithuania|литв\w*",
    "TR": r"turkey|türkiye|турци\w*", "IL": r"israel|израил\w*", "AE": r"uae|emirates|оаэ|эмират\w*",
    "IN": r"india|инди(?:я|и|ю|ей)", "SG": r"singapore|сингапур\w*", "JP": r"japan|япони\w*",
    "KR": r"south\s+korea|korea|южн\w+\s+коре\w*|коре(?:я|и|ю|ей)", "TW": r"taiwan|тайван\w*",
    "HK": r"hong\s+kong|гонконг\w*", "CN": r"china|кита(?:й|е|я|ю|ем)", "AU": r"australia|австрали\w*",
    "KZ": r"kazakhstan|казахстан\w*",
    "NA": r"north\s+america|северн\w+\s+америк\w*", "EU": r"europe|european\s+union|европ\w*|евросоюз\w*",
    "ASIA": r"asia|ази(?:я|и|ю|ей)",
}
# Codes people write as such: read when capitalised or after "in" / "only" (lower-case "us" is also a pronoun).
COUNTRY_CODES: dict[str, str] = {"US": "US", "USA": "US", "UK": "GB", "EU": "EU", "РФ": "RU", "ЕС": "EU",
                                 "CA": "CA", "DE": "DE", "NL": "NL", "FI": "FI", "FR": "FR", "JP": "JP", "KR": "KR",
                                 "SG": "SG", "KZ": "KZ", "RU": "RU", "GB": "GB"}
