"""Per-provider scraping facts as data (streetmerchant style): live API paths, currency and period of the stated
price, politeness (rate limit, conditional requests), the largest answer we read, and the storefront page. Modules
under `scrapers/providers/` read their paths from here; the poller and scheduler find a provider's `fetch`/`parse`
through `load`. Who a provider is (display name, the spellings users type, VAT terms) lives in `core.providers`,
the one provider catalog; `ProviderSpec.title` reads it from there.

Evidence for the newer providers' endpoints (repo and path; learned from, not copied):
- Lambda: `GET /api/v1/instance-types`, Bearer key, `data.<name>.instance_type{price_cents_per_hour, specs}` and
  `regions_with_capacity_available` — dstackai/gpuhunt `src/gpuhunt/providers/lambdalabs.py` (HEAD 35841515),
  lyfegame/lambda-cloud-sdk `lambda-cloud-sdk-python/docs/models/instancetypespecs.md`.
- Verda (DataCrunch): `POST /v1/oauth2/token` (client credentials), `GET /v1/instance-types?currency=usd`,
  `GET /v1/instance-availability?is_spot=…` -> `[{location_code, availabilities[]}]` — gpuhunt
  `src/gpuhunt/providers/verda.py` (prices as strings, `gpu.number_of_gpus`, `gpu_memory.size_in_gigabytes`).
- Hyperstack: `GET /v1/core/stocks` -> `stocks[{region, models[{model, available, configurations{1x,2x,4x,8x,10x}}]}]`
  and `GET /v1/pricebook` -> `[{name, value}]`, header `api_key` — szczad/hyperstack-api-python
  `docs/StockApi.md`, `docs/NewModelResponse.md`, `docs/NewConfigurationsResponse.md`, `docs/PricebookApi.md`.
- Shadeform: `GET /v1/instances/types?available=true`, header `X-API-KEY`, `instance_types[{cloud,
  shade_instance_type, cloud_instance_type, configuration{num_gpus, gpu_type, vram_per_gpu_in_gb, vcpus,
  memory_in_gb, storage_in_gb}, hourly_price (cents), availability[{region, available}]}]` — skypilot-org/skypilot
  `sky/catalog/data_fetchers/fetch_shadeform.py`.
- Lium: `GET https://lium.io/api/public/v1/nodes`, no key (public-apis PR #7434, see shared/providers/README.md);
  the node shape follows the executor listing of unconst/lium `lium/sdk.py` (`machine_name`, `specs.gpu.count`,
  `price_per_hour`, `location`) — inferred, the public feed's schema is not verified.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from core.offers import Period
from core.providers import provider_title


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    name: str
    paths: tuple[str, ...]  # live API paths appended to the base URL (first = the main catalog)
    currency: str  # what the provider states prices in (HOSTKEY / Selectel: configurable, this is the default)
    period: Period
    order_url: str  # the storefront page where a configuration is ordered
    rate_limit_per_minute: float | None = None  # None: no documented limit (we still poll only every interval)
    conditional: bool = True  # send If-None-Match / If-Modified-Since on GETs when the provider gave validators
    module: str = ""  # scrapers.providers.<module>; defaults to the name
    max_body_bytes: int = 32 * 1024 * 1024  # an answer larger than this is not read (Vast's 3,000 rows: ~6 MB)

    @property
    def title(self) -> str:
        return provider_title(self.name)

    @property
    def module_name(self) -> str:
        return f"scrapers.providers.{self.module or self.name}"


PROVIDERS: dict[str, ProviderSpec] = {
    spec.name: spec
    for spec in (
        ProviderSpec("selectel", ("/servers/v2/pub/service/server", "/servers/v2/pub/location"),
                     "RUB", Period.MONTH, "https://selectel.ru/services/dedicated/"),
        ProviderSpec("hostkey", ("/presets.php",), "EUR", Period.MONTH,
                     "https://hostkey.com/gpu-dedicated-servers/"),
        # Vast.ai's search spec: 10 requests a minute per IP address.
        ProviderSpec("vastai", ("/api/v0/bundles/",), "USD", Period.HOUR, "https://cloud.vast.ai/create/",
                     rate_limit_per_minute=10, conditional=False),
        ProviderSpec("runpod", ("/graphql",), "USD", Period.HOUR, "https://console.runpod.io/deploy",
                     rate_limit_per_minute=30, conditional=False),
        ProviderSpec("cloudrift", ("/api/v1/instance-types/list",), "USD", Period.HOUR,
                     "https://console.cloudrift.ai/", rate_limit_per_minute=30, conditional=False),
        ProviderSpec("vultr", ("/v2/plans", "/v2/plans-metal", "/v2/regions/{region}/availability"),
                     "USD", Period.HOUR, "https://www.vultr.com/products/cloud-gpu/", rate_limit_per_minute=60),
        ProviderSpec("immers", ("/",), "RUB", Period.HOUR, "https://immers.cloud/", module="declarative"),
        ProviderSpec("lambda", ("/api/v1/instance-types",), "USD", Period.HOUR, "https://cloud.lambda.ai/instances",
                     rate_limit_per_minute=30, conditional=False, module="lambdacloud"),
        ProviderSpec("verda", ("/v1/instance-types", "/v1/instance-availability", "/v1/oauth2/token"), "USD",
                     Period.HOUR, "https://console.verda.com/", rate_limit_per_minute=30, conditional=False),
        ProviderSpec("hyperstack", ("/v1/core/stocks", "/v1/pricebook"), "USD", Period.HOUR,
                     "https://console.hyperstack.cloud/", rate_limit_per_minute=30, conditional=False),
        ProviderSpec("shadeform", ("/v1/instances/types",), "USD", Period.HOUR, "https://platform.shadeform.ai/",
                     rate_limit_per_minute=30, conditional=False),
        ProviderSpec("lium", ("/api/public/v1/nodes",), "USD", Period.HOUR, "https://lium.io/",
                     rate_limit_per_minute=30),
    )
}


def get_spec(name: str) -> ProviderSpec:
    """The facts for a provider; a declarative provider not listed here gets a generic spec."""
    if name in PROVIDERS:
        return PROVIDERS[name]
    return ProviderSpec(name, ("/",), "RUB", Period.HOUR, "", module="declarative")


def load(name: str) -> ModuleType:
    """The provider's module: `fetch(client, settings)` and `parse(payload, settings=None)`."""
    return importlib.import_module(get_spec(name).module_name)
