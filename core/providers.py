"""The provider catalog: every provider's id, display name, the spellings users type for it, and whether its
published prices carry Russian VAT (НДС). One place for these facts: the scrapers' registry, the bot's
`/subscribe ... on runpod` parser, alert texts and the start text all read them from here.

VAT: a Russian seller's price for a Russian buyer includes or excludes НДС; foreign marketplaces (USD) charge none.
Prices are compared and shown *with* VAT (what the buyer pays), so a price published without it is raised by
`rate` before any comparison. Rate: 22 % from 2026-01-01 (Federal Law No. 425-FZ of 28.11.2025 amending art. 164
of the Tax Code; 20 % before). An operator can override a provider's terms in its settings (`VAT_RATE`,
`VAT_INCLUDED`) when the contract says otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field

RU_VAT_RATE = 0.22


@dataclass(frozen=True, slots=True)
class Vat:
    rate: float  # 0.22 = 22 %
    included: bool  # the published price already includes it
    currencies: tuple[str, ...] = ("RUB",)  # VAT applies to prices in these currencies only
    source: str = ""


@dataclass(frozen=True, slots=True)
class ProviderInfo:
    name: str  # the id used in settings, storage and callbacks ("vastai")
    title: str  # how people write it ("Vast.ai")
    aliases: tuple[str, ...] = ()  # extra spellings a user may type (lower case); name and title always count
    vat: Vat | None = None  # None: the seller charges no Russian VAT
    home: str = ""  # the provider's site
    needs_key: bool = False  # its API answers only with credentials: disabled until they are configured
    key_settings: tuple[str, ...] = ("API_KEY",)  # which PROVIDERS__<NAME>__... settings hold them
    sells: str = ""  # one line for operators: what it sells, where
    extra: dict[str, str] = field(default_factory=dict)

    def spellings(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((self.name, self.title.lower(), *self.aliases)))


_SELECTEL_VAT = Vat(RU_VAT_RATE, True, source="selectel.ru storefront: prices are stated including VAT (inferred)")
_IMMERS_VAT = Vat(RU_VAT_RATE, True, source="immers.cloud price pages state ₽/hour for individuals, VAT included "
                                            "(inferred; operator confirms with `gpuradar providers check immers`)")
_HOSTKEY_VAT = Vat(RU_VAT_RATE, False, source="HOSTKEY invapi `price[LOC].RUR` is the Russian entity's list price "
                                              "before VAT (inferred; EUR/USD prices are invoiced abroad, no НДС)")

CATALOG: dict[str, ProviderInfo] = {
    p.name: p for p in (
        ProviderInfo("selectel", "Selectel", ("селектел",), _SELECTEL_VAT, "https://selectel.ru",
                     sells="dedicated GPU servers, monthly, RUB, Moscow / St Petersburg / Novosibirsk"),
        ProviderInfo("hostkey", "HOSTKEY", ("хосткей",), _HOSTKEY_VAT, "https://hostkey.com",
                     sells="dedicated GPU servers, monthly, EUR/USD/RUB, NL/FI/DE/IS/US/UK/TR"),
        ProviderInfo("immers", "immers.cloud", ("immers", "иммерс"), _IMMERS_VAT, "https://immers.cloud",
                     sells="GPU cloud VMs, per hour, RUB, Moscow (HTML price page; operator enables it)"),
        ProviderInfo("vastai", "Vast.ai", ("vast", "vast.ai", "васт"), None, "https://vast.ai",
                     sells="GPU marketplace, per hour, USD"),
        ProviderInfo("runpod", "RunPod", ("ранпод",), None, "https://runpod.io",
                     sells="GPU cloud (Secure / Community), per hour, USD"),
        ProviderInfo("cloudrift", "CloudRift", (), None, "https://cloudrift.ai", sells="GPU cloud, per hour, USD"),
        ProviderInfo("vultr", "Vultr", (), None, "https://vultr.com", sells="cloud and bare-metal GPUs, per hour, USD"),
        ProviderInfo("lambda", "Lambda", ("lambda labs", "lambdalabs", "lambda cloud"), None, "https://lambda.ai",
                     needs_key=True, sells="GPU cloud, per hour, USD"),
        ProviderInfo("verda", "Verda", ("datacrunch", "verda cloud"), None, "https://verda.com", needs_key=True,
                     key_settings=("CLIENT_ID", "CLIENT_SECRET"),
                     sells="GPU cloud (formerly DataCrunch), per hour and spot, USD, Finland / Iceland"),
        ProviderInfo("hyperstack", "Hyperstack", (), None, "https://hyperstack.cloud", needs_key=True,
                     sells="GPU cloud, per hour, USD, Europe / North America"),
        ProviderInfo("shadeform", "Shadeform", (), None, "https://shadeform.ai", needs_key=True,
                     sells="aggregator of a dozen GPU clouds, per hour, USD"),
        ProviderInfo("lium", "Lium", ("lium.io", "celium"), None, "https://lium.io",
                     sells="Bittensor GPU marketplace (subnet 51), per hour, USD"),
    )
}


def provider_info(name: str) -> ProviderInfo:
    """The catalog entry; an operator-defined provider not listed here gets a plain one."""
    return CATALOG.get(name) or ProviderInfo(name, name)


def provider_title(name: str) -> str:
    return provider_info(name).title


def aliases() -> dict[str, str]:
    """Every spelling (lower case) -> provider id."""
    return {spelling: info.name for info in CATALOG.values() for spelling in info.spellings()}


def vat_terms(provider: str, currency: str) -> tuple[float, bool]:
    """(rate, included) for a price of `provider` in `currency`; (0, True) where no VAT applies."""
    vat = provider_info(provider).vat
    cur = "RUB" if currency.upper() == "RUR" else currency.upper()
    if vat is None or cur not in vat.currencies:
        return 0.0, True
    return vat.rate, vat.included
