"""Per-provider settings: `PROVIDERS__<NAME>__ENABLED`, `__BASE_URL`, `__INTERVAL`, `__API_KEY`.

The base URL is the live origin by default; each scraper appends the live API's own paths to it, so a test or a
mirror can serve the same paths elsewhere.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, SecretStr


class ProviderSettings(BaseModel):
    enabled: bool = True
    base_url: str
    interval: int = Field(default=300, ge=1, description="seconds between polls")
    jitter: int = Field(default=10, ge=0, description="random extra seconds per poll")
    api_key: SecretStr | None = None
    timeout: float = Field(default=30.0, gt=0)
    max_body_mb: float | None = Field(default=None, gt=0, le=1024)  # None: the registry's limit for the provider
    redirect_hosts: list[str] = Field(default_factory=list)  # other hosts its API may redirect to
    # A poll with more than this share of invalid records is suspect (a few bad listings are normal).
    max_skipped_share: float = Field(default=0.2, ge=0, le=1)
    vat_rate: float | None = Field(default=None, ge=0, le=1)  # None: the provider's terms in core.providers
    vat_included: bool | None = None

    def credentials_missing(self) -> list[str]:
        """Settings this provider needs before it can be polled (empty when it needs none or has them)."""
        return []


class DeclarativeProviderSettings(ProviderSettings):
    """A provider described by data: a JSON document or an HTML page, rows and fields located by paths/selectors."""

    enabled: bool = False
    path: str = "/"
    format: str = "html"  # "json" | "html"
    rows: str = ""  # JSON path (dots) or CSS selector of one offer row
    fields: dict[str, str] = Field(default_factory=dict)  # offer field -> JSON path / CSS selector within a row
    currency: str = "RUB"
    period: str = "hour"  # "hour" | "month"
    billing: str = "hourly"  # "hourly" | "monthly" | "spot"
    method: str = "GET"
    order_url: str = ""  # where offers are ordered (default: the page itself)


class SelectelSettings(ProviderSettings):
    # The storefront counts stock only in its Russian data centres (location names start with these);
    # Tashkent / Almaty / Nairobi also appear in `available[]` but are not sold on selectel.ru.
    storefront_prefixes: list[str] = Field(default_factory=lambda: ["MSK", "SPB", "NSK"])
    currency: str = "RUB"


class HostkeySettings(ProviderSettings):
    # `presets.php?filter=yes&location=XX` gives the stock of that location only: one request per location.
    locations: list[str] = Field(default_factory=lambda: ["NL", "FI", "DE", "IS", "US", "UK", "TR"])
    currency: str = "EUR"  # one of the price keys HOSTKEY returns: EUR, USD, RUR


class VastSettings(ProviderSettings):
    limit: int = Field(default=3000, ge=1, le=10000)  # listings per query: a small limit would miss stock
    verified_only: bool = True


class VultrSettings(ProviderSettings):
    regions: list[str] = Field(default_factory=list)  # availability checked here; empty: every region a GPU plan lists


class ProvidersSettings(BaseModel):
    selectel: SelectelSettings = SelectelSettings(base_url="https://api.selectel.ru", interval=600, timeout=40)
    hostkey: HostkeySettings = HostkeySettings(base_url="https://invapi.hostkey.com", interval=600)
    vastai: VastSettings = VastSettings(base_url="https://console.vast.ai", interval=120)
    runpod: ProviderSettings = ProviderSettings(base_url="https://api.runpod.io", interval=120)
    cloudrift: ProviderSettings = ProviderSettings(base_url="https://api.cloudrift.ai", interval=120)
    vultr: VultrSettings = VultrSettings(base_url="https://api.vultr.com", interval=900)
    immers: DeclarativeProviderSettings = DeclarativeProviderSettings(base_url="https://immers.cloud")

    def enabled(self) -> dict[str, ProviderSettings]:
        return {name: cfg for name, cfg in self if isinstance(cfg, ProviderSettings) and cfg.enabled}
