"""Who each provider is, as the bot and the domain read it: its id, display name, the spellings users type, and
whether its published prices carry Russian VAT (НДС). This module holds the *types* and the catalog the wiring
installs; the facts themselves live once, in each provider's own module (`scrapers/providers/<name>.py`, its
`PROVIDER.info`), and `scrapers.registry.catalog()` collects them. Core never imports scrapers: `gpuradar`
(the wiring) calls `install(registry.catalog())` when it is imported, and everything here reads the installed
catalog. Reading it before anything was installed is a loud error, never an empty list (see docs/providers.md).

VAT: a Russian seller's price for a Russian buyer includes or excludes НДС; foreign marketplaces (USD) charge none.
Prices are compared and shown *with* VAT (what the buyer pays), so a price published without it is raised by
`rate` before any comparison. Rate: 22 % from 2026-01-01 (Federal Law No. 425-FZ of 28.11.2025 amending art. 164
of the Tax Code; 20 % before). An operator can override a provider's terms in its settings (`VAT_RATE`,
`VAT_INCLUDED`) when the contract says otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

RU_VAT_RATE = 0.22


@dataclass(frozen=True, slots=True)
class Vat:
    rate: float  # 0.22 = 22 %
    included: bool  # the published price already includes it
    currencies: tuple[str, ...] = ("RUB",)  # VAT applies to prices in these currencies only
    source: str = ""  # where the terms are stated (the provider's own page), or why they are assumed
    confirmed: bool = False  # True only when `source` is the provider's own statement; else shown "unconfirmed"


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderInfo:
    name: str  # the id used in settings, storage and callbacks ("vastai")
    title: str  # how people write it ("Vast.ai")
    aliases: tuple[str, ...] = ()  # extra spellings a user may type (lower case); name and title always count
    vat: Vat | None = None  # None: the seller charges no Russian VAT
    home: str = ""  # the provider's site
    key_settings: tuple[str, ...] = ()  # PROVIDERS__<NAME>__... settings its API needs; () = none (public API)
    sells: str = ""  # one line for operators: what it sells, where
    # False for a price-only source (a hyperscaler's public price list): "listed price, availability unknown"; its
    # offers are never in stock (the poller enforces it), so they are never alerted as available.
    stock_known: bool = True

    @property
    def needs_key(self) -> bool:
        return bool(self.key_settings)

    def spellings(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((self.name, self.title.lower(), *self.aliases)))


class ProviderCatalog:
    """Every known provider's `ProviderInfo`, in the order the wiring gave them."""

    def __init__(self, infos: Iterable[ProviderInfo]) -> None:
        self._infos = {info.name: info for info in infos}
        self._aliases = {spelling: info.name for info in self._infos.values() for spelling in info.spellings()}

    def __contains__(self, name: object) -> bool:
        return name in self._infos

    def __iter__(self) -> Iterator[str]:
        return iter(self._infos)

    def __len__(self) -> int:
        return len(self._infos)

    def get(self, name: str) -> ProviderInfo | None:
        return self._infos.get(name)

    def info(self, name: str) -> ProviderInfo:
        """The entry; an operator-defined provider not listed gets a plain one (its id as its title)."""
        return self._infos.get(name) or ProviderInfo(name=name, title=name)

    def aliases(self) -> dict[str, str]:
        """Every spelling (lower case) -> provider id."""
        return dict(self._aliases)


_installed: ProviderCatalog | None = None
_loader: Callable[[], ProviderCatalog] | None = None


def install(catalog: ProviderCatalog | Callable[[], ProviderCatalog]) -> None:
    """Make `catalog` the one every reader here sees (the wiring does this once, on `import gpuradar`). A callable
    is called on the first read: building the catalog imports every provider module (and httpx), which a command
    that never names a provider (`gpuradar --help`, `estimate`) should not wait for."""
    global _installed, _loader
    if isinstance(catalog, ProviderCatalog):
        _installed, _loader = catalog, None
    else:
        _installed, _loader = None, catalog


def catalog() -> ProviderCatalog:
    global _installed
    if _installed is None and _loader is not None:
        _installed = _loader()
    if _installed is None:
        raise RuntimeError("no provider catalog installed: import gpuradar (the wiring) first, or call "
                           "core.providers.install(scrapers.registry.catalog())")
    return _installed


def provider_info(name: str) -> ProviderInfo:
    return catalog().info(name)


def provider_title(name: str) -> str:
    return provider_info(name).title


def provider_names() -> tuple[str, ...]:
    return tuple(catalog())


def price_only_names() -> tuple[str, ...]:
    """The price-only sources (`stock_known` False): their offers are listed prices, availability unknown."""
    return tuple(name for name in catalog() if not catalog().info(name).stock_known)


def aliases() -> dict[str, str]:
    """Every spelling (lower case) -> provider id."""
    return catalog().aliases()


def vat_terms(provider: str, currency: str) -> tuple[float, bool]:
    """(rate, included) for a price of `provider` in `currency`; (0, True) where no VAT applies."""
    vat = provider_info(provider).vat
    cur = "RUB" if currency.upper() == "RUR" else currency.upper()
    if vat is None or cur not in vat.currencies:
        return 0.0, True
    return vat.rate, vat.included
