"""Every provider, found once: each module of `scrapers.providers` that defines `PROVIDER` (a `Provider`) is one.
From that list come the settings container (`ProvidersSettings`: one field per provider, its settings model with
the live defaults), the catalog the bot reads (`catalog()`, installed into `core.providers` by the wiring), the
poller's and `providers check`'s lookup (`resolve`). Adding a provider is adding its module: nothing here changes.
"""

from __future__ import annotations

import importlib
import keyword
import pkgutil
from typing import TYPE_CHECKING, Any

from pydantic import Field, create_model

from core.offers import Period
from core.providers import ProviderCatalog, ProviderInfo
from scrapers import providers as _package
from scrapers.provider import Provider
from scrapers.settings import DeclarativeProviderSettings, ProvidersBase, ProviderSettings


def _discover() -> dict[str, Provider[Any]]:
    found: list[Provider[Any]] = []
    for module in pkgutil.iter_modules(_package.__path__):
        if module.name.startswith("_"):
            continue
        provider = getattr(importlib.import_module(f"{_package.__name__}.{module.name}"), "PROVIDER", None)
        if isinstance(provider, Provider):
            found.append(provider)
    # Home market first (the providers that charge Russian VAT), then the rest, each by name.
    found.sort(key=lambda p: (p.info.vat is None, p.name))
    names = [p.name for p in found]
    if len(set(names)) != len(names):
        raise RuntimeError(f"two provider modules define the same name: {sorted(names)}")
    return {p.name: p for p in found}


PROVIDERS: dict[str, Provider[Any]] = _discover()


def field_name(name: str) -> str:
    """The Python-safe attribute for a provider id (`lambda` -> `lambda_`); settings read it by the id itself."""
    return name + "_" if keyword.iskeyword(name) or not name.isidentifier() else name


def _settings_model() -> type[ProvidersBase]:
    fields: dict[str, Any] = {
        field_name(p.name): (p.settings_model, Field(default=p.settings, alias=p.name)) for p in PROVIDERS.values()}
    model = create_model("ProvidersSettings", __base__=ProvidersBase, **fields)
    model.key_settings = {p.name: p.info.key_settings for p in PROVIDERS.values()}
    return model


if TYPE_CHECKING:
    class ProvidersSettings(ProvidersBase):
        """Typed as the base: read a provider's settings with `.get(name)` or iterate `(name, settings)`."""
else:
    ProvidersSettings = _settings_model()


def catalog() -> ProviderCatalog:
    """What the bot and core read about providers (names, spellings, VAT): each provider's `info`."""
    return ProviderCatalog(p.info for p in PROVIDERS.values())


def get(name: str) -> Provider[Any]:
    return PROVIDERS[name]


def resolve(name: str, cfg: ProviderSettings) -> Provider[Any]:
    """The provider polled under `name` with settings `cfg`: a registered one, or — for an operator's own
    declarative definition under a new name — a declarative provider built for it. KeyError otherwise."""
    if name in PROVIDERS:
        return PROVIDERS[name]
    if isinstance(cfg, DeclarativeProviderSettings):
        from scrapers.providers.declarative import declarative

        return declarative(ProviderInfo(name=name, title=name), cfg, currency=cfg.currency,
                           period=Period(cfg.period), order_url=cfg.order_url)
    raise KeyError(name)
