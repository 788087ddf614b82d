"""Offers: one rentable configuration (provider, GPU, count, location, billing) with its price and availability.

Providers' parsers build `Offer`s; prices are normalised to per-GPU-hour in RUB and USD by `normalise_price`
with the exchange rates the caller supplies (a month counts as 730 hours). Every comparison uses the price the
buyer pays: VAT added where the seller publishes prices without it (`core.providers` holds each seller's terms).

Values are bounded (`allow_inf_nan=False`, counts and prices within sane limits): a provider record claiming 10^9
GPUs or a price of 10^30 fails validation, and the scraper skips and counts it like any other invalid record. So
does a price at or below zero: nobody rents a GPU server for nothing, so a 0 is a provider's placeholder or bug,
never the cheapest offer.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from core.msg import Msg, msg
from core.providers import vat_terms

HOURS_PER_MONTH = 730
MAX_GPUS = 128  # the largest single configuration rented as one (16-GPU servers exist; 10^9 does not)
MAX_PRICE = 1e8  # per configuration per period, any currency: ~100 M is beyond any GPU server for a month
MAX_AVAILABLE = 1_000_000


class Billing(StrEnum):
    HOURLY = "hourly"
    MONTHLY = "monthly"
    SPOT = "spot"  # interruptible / bid


class Period(StrEnum):
    HOUR = "hour"
    MONTH = "month"


class Offer(BaseModel):
    """One configuration a user could rent, as one provider lists it."""

    model_config = ConfigDict(frozen=True, allow_inf_nan=False)

    provider: str  # provider name as in the settings ("selectel", "vastai", ...)
    sku: str  # the provider's own id for this configuration (plan id, gpu type, ...); unique with the key fields
    gpu: str | None  # catalog GPU id (core.gpus), None when the spelling is unknown (kept, never guessed)
    gpu_name: str  # the provider's spelling, as received
    gpu_count: int = Field(ge=1, le=MAX_GPUS)
    gpu_memory_gb: float | None = Field(default=None, gt=0, le=4096)  # per GPU
    gpu_fraction: float | None = Field(default=None, gt=0, lt=1)  # a vGPU slice: this share of one card
    vcpu: int | None = Field(default=None, ge=0, le=100_000)
    ram_gb: float | None = Field(default=None, ge=0, le=1e7)
    disk_gb: float | None = Field(default=None, ge=0, le=1e9)
    location: str = ""  # region / data centre code; "" when the provider does not say
    billing: Billing = Billing.HOURLY
    price: float = Field(gt=0, le=MAX_PRICE)  # for the whole configuration, per `period`, as published
    currency: str  # ISO 4217: "RUB", "USD", "EUR"
    period: Period = Period.HOUR
    in_stock: bool
    available: int | None = Field(default=None, ge=0, le=MAX_AVAILABLE)  # rentable now, when the provider says
    url: str = ""  # where it is ordered
    vat_rate: float | None = Field(default=None, ge=0, le=1)  # None: the provider's terms in core.providers
    vat_included: bool | None = None  # whether `price` already includes VAT (None: the provider's terms)

    @property
    def key(self) -> str:
        """Stable identity across polls: alerts follow configurations, not listings (`key_place` reads it back)."""
        # `billing` is a StrEnum: joined as its value (without the enum's slower `.value`; computed per offer per poll).
        return "|".join((self.provider, self.sku, str(self.gpu_count), self.location, self.billing))

    @property
    def vat(self) -> tuple[float, bool]:
        """(rate, included) for this price: explicit on the offer, else the provider's catalog terms."""
        rate, included = vat_terms(self.provider, self.currency)
        return (self.vat_rate if self.vat_rate is not None else rate,
                self.vat_included if self.vat_included is not None else included)

    @property
    def gross_price(self) -> float:
        """`price` with VAT, what the buyer pays (equal to `price` where VAT is included or does not apply)."""
        return gross(self.price, self.vat)

    @property
    def price_per_hour(self) -> float:
        """Whole configuration, per hour, in the offer's currency, VAT included where it applies."""
        return hourly(self.gross_price, self.period)

    @property
    def price_per_gpu_hour(self) -> float:
        return self.price_per_hour / self.gpu_count

    @property
    def fraction(self) -> float | None:
        """Share of one card when this offer is a slice of it (vGPU / MIG), else None (whole cards): as the provider
        said it (`gpu_fraction`), or read from a per-GPU memory well below the catalog card's."""
        if self.gpu_fraction is not None:
            return self.gpu_fraction
        return gpu_fraction(self.gpu, self.gpu_count, self.gpu_memory_gb)


def gross(price: float, vat: tuple[float, bool]) -> float:
    """A published price with VAT added where it is not included (`Offer.vat`'s rate and inclusion)."""
    rate, included = vat
    return price if included or not rate else price * (1 + rate)


def hourly(price: float, period: Period) -> float:
    """A price per `period` as a price per hour."""
    return price / HOURS_PER_MONTH if period is Period.MONTH else price


# A card listed with less than this share of its catalog memory is a slice of it (a vGPU / MIG partition).
SLICE_BELOW = 0.85


def gpu_fraction(gpu_id: str | None, gpu_count: int, gpu_memory_gb: float | None) -> float | None:
    """The share of one card an offer rents when it is a slice (a 2 GB vGPU of a 16 GB A16: 0.125), else None.
    A slice is never counted as a whole card: it has that share of the memory (and of the compute)."""
    if gpu_id is None or gpu_memory_gb is None or gpu_count != 1:
        return None
    from core.gpus import get_gpu

    try:
        card = get_gpu(gpu_id)
    except KeyError:
        return None
    share = gpu_memory_gb / card.memory_gb
    return round(share, 4) if share < SLICE_BELOW else None


# The share of a card is said as a simple fraction when it is one (1/20, 1/8, 3/8: how vGPU profiles are sold),
# within this relative error of the exact share; else as a percentage.
_SHARE_TOLERANCE = 0.03
_SHARE_DENOMINATORS = range(2, 65)


def share_ratio(fraction: float) -> tuple[int, int] | None:
    """(k, n) with k/n the card share `fraction` is, smallest n first ((1, 20) for 0.05), or None."""
    for n in _SHARE_DENOMINATORS:
        k = round(fraction * n)
        if 0 < k < n and abs(k / n - fraction) <= fraction * _SHARE_TOLERANCE:
            return k, n
    return None


def slice_memory_gb(gpu_id: str | None, fraction: float, memory_gb: float | None = None) -> float | None:
    """The memory a slice gives: as the provider listed it, else its share of the catalog card's."""
    if memory_gb is not None:
        return memory_gb
    if gpu_id is None:
        return None
    from core.gpus import get_gpu

    try:
        return get_gpu(gpu_id).memory_gb * fraction
    except KeyError:
        return None


def slice_label(gpu_name: str, gpu_id: str | None, fraction: float, memory_gb: float | None = None) -> Msg:
    """'1/20 A100 · 4 GB': a slice is always said as a share of the card with the memory it gives, never as a
    card (`core.msg.Msg`, rendered in the user's language)."""
    ratio = share_ratio(fraction)
    share = msg("slice_ratio", k=ratio[0], n=ratio[1]) if ratio else msg("slice_percent",
                                                                        p=max(1, round(fraction * 100)))
    mem = slice_memory_gb(gpu_id, fraction, memory_gb)
    if mem is None:
        return msg("slice_label_nomem", share=share, gpu=gpu_name)
    # A whole number of GB as an int (no ".0"); a part of one as a float the catalog prints in the language's style.
    return msg("slice_label", share=share, gpu=gpu_name, mem=round(mem) if mem >= 10 or mem == round(mem) else
               round(mem, 1))


class Rates(BaseModel):
    """Roubles per unit of each currency (the Central Bank of Russia's way of quoting). RUB is 1."""

    rub_per: dict[str, float]
    as_of: str = ""  # date of the rates, ISO
    source: str = "fallback"  # "cbr" | "cache" | "fallback"

    def to_rub(self, amount: float, currency: str) -> float:
        cur = currency.upper()
        if cur in ("RUB", "RUR"):
            return amount
        if cur not in self.rub_per:
            raise KeyError(f"no exchange rate for {cur}")
        return amount * self.rub_per[cur]

    def convert(self, amount: float, currency: str, to: str) -> float:
        rub = self.to_rub(amount, currency)
        target = to.upper()
        if target in ("RUB", "RUR"):
            return rub
        return rub / self.rub_per[target]


class PricedOffer(BaseModel):
    """An offer with its price normalised per GPU-hour in RUB and USD."""

    model_config = ConfigDict(frozen=True)

    offer: Offer
    price_per_gpu_hour_rub: float
    price_per_gpu_hour_usd: float


def normalise_price(offer: Offer, rates: Rates) -> PricedOffer:
    per_gpu_hour = offer.price_per_gpu_hour
    return PricedOffer(
        offer=offer,
        price_per_gpu_hour_rub=round(rates.convert(per_gpu_hour, offer.currency, "RUB"), 4),
        price_per_gpu_hour_usd=round(rates.convert(per_gpu_hour, offer.currency, "USD"), 4),
    )


def key_place(key: str) -> tuple[str, str]:
    """(location, billing) of an `Offer.key`: its last two parts (the sku before them may hold anything)."""
    _, location, billing = key.rsplit("|", 2)
    return location, billing
