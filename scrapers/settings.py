"""Per-provider settings: `PROVIDERS__<NAME>__ENABLED`, `__BASE_URL`, `__INTERVAL`, `__API_KEY`.

The base URL is the live origin by default; each scraper appends the live API's own paths to it, so a test or a
mirror can serve the same paths elsewhere. A provider whose API answers only with credentials (Lambda, Verda,
Hyperstack, Shadeform) is not polled until they are configured: `enabled()` leaves it out and `gpuradar providers`
/ `/providers` say "needs key".
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator


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


class KeyedProviderSettings(ProviderSettings):
    """A provider whose API needs an API key (`PROVIDERS__<NAME>__API_KEY`)."""

    def credentials_missing(self) -> list[str]:
        return [] if self.api_key and self.api_key.get_secret_value().strip() else ["API_KEY"]


class VerdaSettings(ProviderSettings):
    """Verda (DataCrunch): OAuth 2 client credentials (`PROVIDERS__VERDA__CLIENT_ID`, `__CLIENT_SECRET`)."""

    client_id: str | None = None
    client_secret: SecretStr | None = None
    spot: bool = True  # also watch spot (interruptible) prices and availability

    def credentials_missing(self) -> list[str]:
        missing = [] if self.client_id and self.client_id.strip() else ["CLIENT_ID"]
        if not (self.client_secret and self.client_secret.get_secret_value().strip()):
            missing.append("CLIENT_SECRET")
        return missing


class ProvidersSettings(BaseModel):
    selectel: SelectelSettings = SelectelSettings(base_url="https://api.selectel.ru", interval=600, timeout=40)
    hostkey: HostkeySettings = HostkeySettings(base_url="https://invapi.hostkey.com", interval=600)
    vastai: VastSettings = VastSettings(base_url="https://console.vast.ai", interval=120)
    runpod: ProviderSettings = ProviderSettings(base_url="https://api.runpod.io", interval=120)
    cloudrift: ProviderSettings = ProviderSettings(base_url="https://api.cloudrift.ai", interval=120)
    vultr: VultrSettings = VultrSettings(base_url="https://api.vultr.com", interval=900)
    immers: DeclarativeProviderSettings = DeclarativeProviderSettings(base_url="https://immers.cloud")
    lambda_: KeyedProviderSettings = Field(
        default=KeyedProviderSettings(base_url="https://cloud.lambdalabs.com", interval=300), alias="lambda")
    verda: VerdaSettings = VerdaSettings(base_url="https://api.verda.com", interval=300)
    hyperstack: KeyedProviderSettings = KeyedProviderSettings(base_url="https://infrahub-api.nexgencloud.com",
                                                              interval=300)
    shadeform: KeyedProviderSettings = KeyedProviderSettings(base_url="https://api.shadeform.ai", interval=300)
    lium: ProviderSettings = ProviderSettings(base_url="https://lium.io", interval=300)

    model_config = ConfigDict(populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _over_defaults(cls, data: Any) -> Any:
        """`PROVIDERS__VASTAI__API_KEY=…` alone changes that one field: the rest keeps the provider's defaults (its
        live base URL, interval...) instead of failing for a missing base URL."""
        if not isinstance(data, dict):
            return data
        out = dict(data)
        for name, info in cls.model_fields.items():
            for key in {name, info.alias or name}:
                given = out.get(key)
                if isinstance(given, dict) and isinstance(info.default, BaseModel):
                    out[key] = {**info.default.model_dump(), **given}
        return out

    def __iter__(self) -> Iterator[tuple[str, Any]]:  # type: ignore[override]
        """(provider name, settings): `lambda` under its own name, not the Python-safe attribute."""
        fields = type(self).model_fields
        for name, value in super().__iter__():
            yield (fields[name].alias or name) if name in fields else name, value

    def get(self, name: str) -> ProviderSettings | None:
        cfg = getattr(self, "lambda_" if name == "lambda" else name, None)
        return cfg if isinstance(cfg, ProviderSettings) else None

    def setup(self) -> dict[str, str]:
        """Every configured provider -> "enabled", "disabled" or "needs:PROVIDERS__X__API_KEY,..." (credentials
        missing), for `/providers` and `gpuradar providers`."""
        out: dict[str, str] = {}
        for name, cfg in self:
            if not isinstance(cfg, ProviderSettings):
                continue
            missing = cfg.credentials_missing()
            if not cfg.enabled:
                out[name] = "disabled"
            elif missing:
                out[name] = "needs:" + ",".join(f"PROVIDERS__{name.upper()}__{m}" for m in missing)
            else:
                out[name] = "enabled"
        return out

    def enabled(self) -> dict[str, ProviderSettings]:
        """Providers to poll: enabled and with the credentials they need."""
        return {name: cfg for name, cfg in self
                if isinstance(cfg, ProviderSettings) and cfg.enabled and not cfg.credentials_missing()}
