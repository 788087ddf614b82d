"""Provider settings: `PROVIDERS__<NAME>__ENABLED`, `__BASE_URL`, `__INTERVAL`, `__API_KEY`, ...

`ProviderSettings` is what every provider shares; a provider with more options subclasses it in its own module
(`scrapers/providers/<name>.py`), and its `PROVIDER.settings` carries the live defaults. The container of them all
(`ProvidersSettings`, the app settings' `providers`) is derived from the registry's list (`scrapers.registry`).

The base URL is the live origin by default; each scraper appends the live API's own paths to it, so a test or a
mirror can serve the same paths elsewhere. A provider whose API answers only with credentials (its
`info.key_settings`) is not polled until they are configured: `enabled()` leaves it out and `gpuradar providers`
/ `/providers` say "needs key".
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

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

    def unset(self, keys: tuple[str, ...]) -> list[str]:
        """Those of `keys` (setting names, upper case: "API_KEY") that are empty here."""
        missing = []
        for key in keys:
            value = getattr(self, key.lower()) if key.lower() in type(self).model_fields else None
            if isinstance(value, SecretStr):
                value = value.get_secret_value()
            if not (isinstance(value, str) and value.strip()):
                missing.append(key)
        return missing


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


class ProvidersBase(BaseModel):
    """The base of `scrapers.registry.ProvidersSettings`, whose fields (one per provider, its settings model and
    live defaults) the registry derives from the providers' definitions."""

    key_settings: ClassVar[dict[str, tuple[str, ...]]] = {}  # provider -> the settings its API needs (registry)

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
        for key, cfg in self:
            if key == name:
                return cfg if isinstance(cfg, ProviderSettings) else None
        return None

    def setup(self) -> dict[str, str]:
        """Every configured provider -> "enabled", "disabled" or "needs:PROVIDERS__X__API_KEY,..." (credentials
        missing), for `/providers` and `gpuradar providers`."""
        out: dict[str, str] = {}
        for name, cfg in self:
            if not isinstance(cfg, ProviderSettings):
                continue
            missing = self.missing(name, cfg)
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
                if isinstance(cfg, ProviderSettings) and cfg.enabled and not self.missing(name, cfg)}

    def missing(self, name: str, cfg: ProviderSettings) -> list[str]:
        """The key settings `name` needs that `cfg` leaves empty (see `Provider.missing`)."""
        return cfg.unset(self.key_settings.get(name, ()))
