"""Offers: one rentable configuration (provider, GPU, count, location, billing) with its price and availability.

Providers' parsers build `Offer`s; prices are normalised to per-GPU-hour in RUB and USD by `normalise_price`
with the exchange rates the caller supplies (a month counts as 730 hours).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

HOURS_PER_MONTH = 730


class Billing(StrEnum):
    HOURLY = "hourly"
    MONTHLY = "monthly"
    SPOT = "spot"  # interruptible / bid


class Period(StrEnum):
    HOUR = "hour"
    MONTH = "month"


class Offer(BaseModel):
    """One configuration a user could rent, as one provider lists it."""

    model_config = ConfigDict(frozen=True)

    provider: str  # provider name as in the settings ("selectel", "vastai", ...)
    sku: str  # the provider's own id for this configuration (plan id, gpu type, ...); unique with the key fields
    gpu: str | None  # catalog GPU id (core.gpus), None when the spelling is unknown (kept, never guessed)
    gpu_name: str  # the provider's spelling, as received
    gpu_count: int = Field(ge=1)
    gpu_memory_gb: float | None = None  # per GPU
    vcpu: int | None = None
    ram_gb: float | None = None
    disk_gb: float | None = None
    location: str = ""  # region / data centre code; "" when the provider does not say
    billing: Billing = Billing.HOURLY
    price: float = Field(ge=0)  # for the whole configuration, per `period`
    currency: str  # ISO 4217: "RUB", "USD", "EUR"
    period: Period = Period.HOUR
    in_stock: bool
    available: int | None = None  # how many the provider says can be rented now, when it says
    url: str = ""  # where it is ordered

    @property
    def key(self) -> str:
        """Stable identity across polls: alerts follow configurations, not listings."""
        return "|".join((self.provider, self.sku, str(self.gpu_count), self.location, self.billing.value))

    @property
    def price_per_hour(self) -> float:
        """Whole configuration, per hour, in the offer's currency."""
        return self.price / HOURS_PER_MONTH if self.period is Period.MONTH else self.price

    @property
    def price_per_gpu_hour(self) -> float:
        return self.price_per_hour / self.gpu_count

    @property
    def fraction(self) -> float | None:
        """Share of one card when this offer is a slice of it (vGPU / MIG), else None (whole cards)."""
        return gpu_fraction(self.gpu, self.gpu_count, self.gpu_memory_gb)


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
