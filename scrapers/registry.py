"""Per-provider facts as data (streetmerchant style): live API paths, currency and period of the stated price,
politeness (rate limit, conditional requests) and the storefront page. Modules under `scrapers/providers/` read
their paths from here; the poller and scheduler find a provider's `fetch`/`parse` through `load`."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from core.offers import Period


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    name: str
    title: str
    paths: tuple[str, ...]  # live API paths appended to the base URL (first = the main catalog)
    currency: str  # what the provider states prices in (HOSTKEY / Selectel: configurable, this is the default)
    period: Period
    order_url: str  # the storefront page where a configuration is ordered
    rate_limit_per_minute: float | None = None  # None: no documented limit (we still poll only every interval)
    conditional: bool = True  # send If-None-Match / If-Modified-Since on GETs when the provider gave validators
    module: str = ""  # scrapers.providers.<module>; defaults to the name
    max_body_bytes: int = 32 * 1024 * 1024  # an answer larger than this is not read (Vast's 3,000 rows: ~6 MB)

    @property
    def module_name(self) -> str:
        return f"scrapers.providers.{self.module or self.name}"


PROVIDERS: dict[str, ProviderSpec] = {
    spec.name: spec
    for spec in (
        ProviderSpec("selectel", "Selectel", ("/servers/v2/pub/service/server", "/servers/v2/pub/location"),
                     "RUB", Period.MONTH, "https://selectel.ru/services/dedicated/"),
        ProviderSpec("hostkey", "HOSTKEY", ("/presets.php",), "EUR", Period.MONTH,
                     "https://hostkey.com/gpu-dedicated-servers/"),
        # Vast.ai's search spec: 10 requests a minute per IP address.
        ProviderSpec("vastai", "Vast.ai", ("/api/v0/bundles/",), "USD", Period.HOUR, "https://cloud.vast.ai/create/",
                     rate_limit_per_minute=10, conditional=False),
        ProviderSpec("runpod", "RunPod", ("/graphql",), "USD", Period.HOUR, "https://console.runpod.io/deploy",
                     rate_limit_per_minute=30, conditional=False),
        ProviderSpec("cloudrift", "CloudRift", ("/api/v1/instance-types/list",), "USD", Period.HOUR,
                     "https://console.cloudrift.ai/", rate_limit_per_minute=30, conditional=False),
        ProviderSpec("vultr", "Vultr", ("/v2/plans", "/v2/plans-metal", "/v2/regions/{region}/availability"),
                     "USD", Period.HOUR, "https://www.vultr.com/products/cloud-gpu/", rate_limit_per_minute=60),
        ProviderSpec("immers", "immers.cloud", ("/",), "RUB", Period.HOUR, "https://immers.cloud/",
                     module="declarative"),
    )
}


def get_spec(name: str) -> ProviderSpec:
    """The facts for a provider; a declarative provider not listed here gets a generic spec."""
    if name in PROVIDERS:
        return PROVIDERS[name]
    return ProviderSpec(name, name, ("/",), "RUB", Period.HOUR, "", module="declarative")


def load(name: str) -> ModuleType:
    """The provider's module: `fetch(client, settings)` and `parse(payload, settings=None)`."""
    return importlib.import_module(get_spec(name).module_name)
