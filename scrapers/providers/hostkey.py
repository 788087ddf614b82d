"""HOSTKEY GPU presets: `GET /presets.php?action=list&filter=yes&location=XX`, one request per location.

With `filter=yes&location=XX` the preset's `available` is that location's stock (unfiltered it is a global number
that cannot be placed), so the payload is `{location: answer}`. Prices are per server per month in
`price[LOC].{EUR,USD,RUR}`; a preset not priced in a location is not sold there. `active == 0`: not for sale.

Locations: one unfiltered `action=list` first; every location a GPU preset is priced in (the `price` keys and the
`locations` list) is then polled, together with the configured ones, so a new data centre is not missed. If the
discovery call fails, the configured list is polled. The PHP endpoint may label JSON as `text/html`: the body
decides (see `scrapers.http.decode_json`), and a real HTML page is still rejected. Preset names carry the card when
the free-text `gpu` field is empty: `gpu.v3-4090t` -> RTX 4090, `gpu.v2-a5000` -> RTX A5000, `gpu.v4-2xa100` ->
2x A100 (name prefixes from hostkey-cloud/terraform-provider-hostkey `docs/data-sources/presets.md`).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field

from core.offers import Billing, Period
from core.providers import RU_VAT_RATE, ProviderInfo, Vat
from scrapers.errors import PayloadValidationError, ScrapeError
from scrapers.http import PoliteClient
from scrapers.provider import Provider
from scrapers.providers._common import Collector, Lenient, Offers, gather_limited, gpu_id, join_url, validate
from scrapers.settings import ProviderSettings

NAME = "hostkey"
PRESETS_PATH = "/presets.php"
ORDER_URL = "https://hostkey.com/gpu-dedicated-servers/"
# Unconfirmed: no statement on hostkey.ru's own pages could be cited; `gpuradar providers` shows them "unconfirmed".
VAT = Vat(RU_VAT_RATE, False, source="inferred: HOSTKEY invapi `price[LOC].RUR` read as the Russian entity's list "
                                     "price before VAT (EUR/USD prices are invoiced abroad, no НДС); no statement "
                                     "on HOSTKEY's own pages cited yet")
GPU_PREFIXES = ("gpu.", "vgpu.")  # dedicated GPU servers and VDS with GPU (HOSTKEY's own naming)

_GPU_TEXT = re.compile(r"^\s*(?:(\d+)\s*[x×]\s*)?(.+?)\s*$", re.IGNORECASE)  # "4 x RTX 4090 24GB"
_NAME_GPU = re.compile(r"-(?:(\d+)x)?([a-z0-9]+)$")  # "gpu.v4-2xa100" -> 2, "a100"
_GEFORCE = re.compile(r"^(\d{4})[a-z]*$")  # "4090t" -> RTX 4090 (a letter suffix marks a server variant)
_RTX_PRO = re.compile(r"^a(\d{4})$")  # "a5000" -> RTX A5000 (A100/A40 have 2-3 digits and stay as they are)
_LOCATION = re.compile(r"^[A-Z]{2,3}$")
_CURRENCY = {"RUR": "RUB"}


class HostkeySettings(ProviderSettings):
    # `presets.php?filter=yes&location=XX` gives the stock of that location only: one request per location.
    locations: list[str] = Field(default_factory=lambda: ["NL", "FI", "DE", "IS", "US", "UK", "TR"])
    currency: str = "EUR"  # one of the price keys HOSTKEY returns: EUR, USD, RUR



class _Preset(Lenient):
    id: int
    name: str
    active: int | bool = 1
    cpu: int | None = None
    ram: float | None = None
    gpu: str | None = None
    available: int | None = None
    price: dict[str, dict[str, float | None] | None] | None = None


class _Answer(Lenient):
    result: str | int | None = None
    presets: list[Any] = Field(default_factory=list)


def listed_locations(answer: Any) -> list[str]:
    """Locations a GPU preset of an unfiltered answer is sold in (its `price` keys and `locations`)."""
    found: set[str] = set()
    presets = answer.get("presets") if isinstance(answer, dict) else None
    for preset in presets if isinstance(presets, list) else []:
        if not isinstance(preset, dict) or not str(preset.get("name", "")).lower().startswith(GPU_PREFIXES):
            continue
        prices = preset.get("price")
        found.update(str(k).upper() for k in (prices if isinstance(prices, dict) else {}))
        listed = preset.get("locations")
        if isinstance(listed, str):
            found.update(part.strip().upper() for part in listed.split(","))
    return sorted(loc for loc in found if _LOCATION.match(loc))


async def fetch(client: PoliteClient, settings: ProviderSettings) -> dict[str, Any]:
    configured = (settings.locations if isinstance(settings, HostkeySettings)
                  else HostkeySettings(base_url="").locations)
    url = join_url(settings.base_url, PRESETS_PATH)
    try:
        everything = await client.get_json(NAME, url, params={"action": "list"}, timeout=settings.timeout)
        discovered = listed_locations(everything)
    except ScrapeError:
        discovered = []  # the per-location calls below still say what is wrong, if anything is
    locations = list(dict.fromkeys([*configured, *discovered]))
    # A few at a time: a handful of requests every few minutes, overlapped, is still polite.
    answers = await gather_limited(client.get_json(NAME, url, params={"action": "list", "filter": "yes",
                                                                     "location": loc}, timeout=settings.timeout)
                                   for loc in locations)
    return dict(zip(locations, answers, strict=True))


def _gpu(preset: _Preset) -> tuple[str, int] | None:
    """(spelling, count) from the free-text `gpu` field, else from the preset name."""
    if preset.gpu and preset.gpu.strip():
        m = _GPU_TEXT.match(preset.gpu)
        if m:
            return m.group(2), int(m.group(1) or 1)
    m = _NAME_GPU.search(preset.name.lower())
    if m:
        return card_from_name(m.group(2)), int(m.group(1) or 1)
    return None


def card_from_name(token: str) -> str:
    """The card a preset-name token stands for: '4090t' -> 'RTX 4090', 'a5000' -> 'RTX A5000', 'h100' as is."""
    if m := _GEFORCE.match(token):
        return f"RTX {m.group(1)}"
    if m := _RTX_PRO.match(token):
        return f"RTX A{m.group(1)}"
    return token.upper()


def parse(payload: Any, settings: ProviderSettings | None = None) -> Offers:
    cfg = settings if isinstance(settings, HostkeySettings) else HostkeySettings(base_url="")
    currency = cfg.currency.upper()
    if not isinstance(payload, dict):
        raise PayloadValidationError(f"{NAME}: expected {{location: answer}}, got {type(payload).__name__}")
    out = Collector(NAME)
    for loc, raw in payload.items():
        answer = validate(_Answer, raw, NAME)
        if answer.result not in (None, "OK"):
            raise PayloadValidationError(f"{NAME}: {loc} answered result={answer.result!r}")
        for preset in out.each(_Preset, answer.presets):
            if not preset.name.lower().startswith(GPU_PREFIXES) and not preset.gpu:
                continue
            gpu = _gpu(preset)
            price = ((preset.price or {}).get(loc) or {}).get(currency)
            if gpu is None or not price:
                continue  # not a GPU preset we can read, or not sold in this location
            spelling, count = gpu
            available = max(0, preset.available or 0) if preset.active else 0  # inactive: none rentable
            out.add(
                sku=preset.name, gpu=gpu_id(spelling, None, NAME), gpu_name=spelling,
                gpu_count=max(1, count), vcpu=preset.cpu, ram_gb=preset.ram, location=loc,
                billing=Billing.MONTHLY, price=price, currency=_CURRENCY.get(currency, currency),
                period=Period.MONTH, in_stock=bool(preset.active) and available > 0, available=available,
                url=ORDER_URL,
            )
    return out.result()


PROVIDER: Provider[HostkeySettings] = Provider(
    info=ProviderInfo(
        name=NAME, title="HOSTKEY", aliases=("хосткей",), home="https://hostkey.com", vat=VAT,
        sells="dedicated GPU servers, monthly, EUR/USD/RUB, NL/FI/DE/IS/US/UK/TR"),
    settings=HostkeySettings(base_url="https://invapi.hostkey.com", interval=600),
    paths=(PRESETS_PATH,), currency="EUR", period=Period.MONTH, order_url=ORDER_URL,
    fetch=fetch, parse=parse,
)
