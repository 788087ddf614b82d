"""The one typed definition of a provider: everything the poller, the settings, `providers check` and the bot's
catalog need to know about it, in the provider's own module (`scrapers/providers/<name>.py` defines `PROVIDER`).

- `info`: who it is (`core.providers.ProviderInfo`: names, VAT terms with their source, the key settings it needs);
- the API facts: paths under the base URL, the currency and period prices are stated in, politeness (rate limit,
  conditional requests), the largest answer read, the storefront page;
- `settings`: its settings model with the live defaults (`PROVIDERS__<NAME>__...` override single fields);
- `fetch(client, settings)`: the network part; `parse(payload, settings)`: pure, payload -> `Offers`;
- `inspect` (optional): what `providers check` shows beyond the offers (a declarative page's rows and fields).

See docs/providers.md for adding one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from core.offers import Period
from core.providers import ProviderInfo
from scrapers.http import DEFAULT_MAX_BODY
from scrapers.settings import ProviderSettings

if TYPE_CHECKING:
    from scrapers.http import PoliteClient
    from scrapers.providers._common import Offers

S = TypeVar("S", bound=ProviderSettings)


@dataclass(frozen=True, slots=True, kw_only=True)
class Provider(Generic[S]):
    info: ProviderInfo
    settings: S  # the defaults; its class is the provider's settings model
    paths: tuple[str, ...]  # live API paths appended to the base URL (first = the main catalog)
    currency: str  # what prices are stated in (HOSTKEY / Selectel: configurable, this is the default)
    period: Period
    order_url: str  # the storefront page where a configuration is ordered
    fetch: Callable[[PoliteClient, S], Awaitable[Any]]
    parse: Callable[[Any, S], Offers]
    inspect: Callable[[Any, S], dict[str, Any]] | None = None
    rate_limit_per_minute: float | None = None  # None: no documented limit (we still poll only every interval)
    conditional: bool = True  # send If-None-Match / If-Modified-Since on GETs when the provider gave validators
    max_body_bytes: int = DEFAULT_MAX_BODY

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def title(self) -> str:
        return self.info.title

    @property
    def settings_model(self) -> type[S]:
        return type(self.settings)

    def missing(self, cfg: ProviderSettings) -> list[str]:
        """The key settings (`info.key_settings`) `cfg` leaves empty: the provider is not polled until they are set."""
        return cfg.unset(self.info.key_settings)

    def setting_names(self, keys: list[str]) -> list[str]:
        return [f"PROVIDERS__{self.name.upper()}__{key}" for key in keys]
