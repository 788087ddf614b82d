"""Tables of the offer store: current offers (the state change detection needs), price history, scrape runs,
provider health and the events each trusted poll produced.

Generic column types only, so the same models (and migration 0001_offers) run on SQLite and PostgreSQL.
Times are stored as timezone-aware UTC datetimes.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import JSON, Boolean, DateTime, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from core.offers import Billing, Offer, Period
from storage.db import Base

KEY_LEN = 512  # provider|sku|count|location|billing
NAME_LEN = 64  # provider names, GPU ids, statuses


class UTCDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes in and out. SQLite keeps no zone, so values are stored as UTC and marked UTC on read;
    naive values handed in are taken to be UTC already."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value if dialect.name == "sqlite" else value.replace(tzinfo=UTC)
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class CurrentOffer(Base):
    """One configuration's latest listing and its change-detection state (`core.changes.OfferState`)."""

    __tablename__ = "offers"

    key: Mapped[str] = mapped_column(String(KEY_LEN), primary_key=True)
    provider: Mapped[str] = mapped_column(String(NAME_LEN), index=True)
    sku: Mapped[str] = mapped_column(String(255))
    gpu: Mapped[str | None] = mapped_column(String(NAME_LEN), index=True)  # catalog id, None when unknown
    gpu_name: Mapped[str] = mapped_column(String(255))
    gpu_count: Mapped[int] = mapped_column(Integer)
    gpu_memory_gb: Mapped[float | None] = mapped_column(Float)
    # A vGPU / MIG slice: the share of one card the provider sold (Offer.gpu_fraction); kept so a slice stays one
    # when read back, even where its card is not in the catalog (its share cannot be read from the memory then).
    gpu_fraction: Mapped[float | None] = mapped_column(Float)
    vcpu: Mapped[int | None] = mapped_column(Integer)
    ram_gb: Mapped[float | None] = mapped_column(Float)
    disk_gb: Mapped[float | None] = mapped_column(Float)
    location: Mapped[str] = mapped_column(String(255), default="")
    billing: Mapped[str] = mapped_column(String(16))
    price: Mapped[float] = mapped_column(Float)  # whole configuration, per `period`, in `currency`
    currency: Mapped[str] = mapped_column(String(8))
    period: Mapped[str] = mapped_column(String(8))
    listed_in_stock: Mapped[bool] = mapped_column(Boolean)  # as the provider listed it in the latest trusted poll
    available: Mapped[int | None] = mapped_column(Integer)
    url: Mapped[str] = mapped_column(Text, default="")
    # normalised per GPU-hour; None when no exchange rate was known for the conversion
    price_per_gpu_hour_rub: Mapped[float | None] = mapped_column(Float, index=True)
    price_per_gpu_hour_usd: Mapped[float | None] = mapped_column(Float)
    # change-detection state
    in_stock: Mapped[bool] = mapped_column(Boolean, index=True)  # confirmed: False only after a confirmed sell-out
    missing: Mapped[int] = mapped_column(Integer, default=0)  # consecutive trusted polls absent / at zero
    ref_price: Mapped[float] = mapped_column(Float)  # last announced price per GPU-hour, offer currency
    first_seen: Mapped[datetime] = mapped_column(UTCDateTime())
    last_seen: Mapped[datetime] = mapped_column(UTCDateTime())  # last trusted poll that listed it
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())

    def to_offer(self) -> Offer:
        """The latest listing as the domain model (validated again: the row may predate a model change)."""
        return Offer(
            provider=self.provider, sku=self.sku, gpu=self.gpu, gpu_name=self.gpu_name, gpu_count=self.gpu_count,
            gpu_memory_gb=self.gpu_memory_gb, gpu_fraction=self.gpu_fraction, vcpu=self.vcpu, ram_gb=self.ram_gb,
            disk_gb=self.disk_gb,
            location=self.location, billing=Billing(self.billing), price=self.price, currency=self.currency,
            period=Period(self.period), in_stock=self.listed_in_stock, available=self.available, url=self.url,
        )

    def set_offer(self, offer: Offer) -> None:
        """Copy a listing's fields onto the row (state and normalised prices are set by the caller)."""
        self.provider, self.sku, self.gpu, self.gpu_name = offer.provider, offer.sku, offer.gpu, offer.gpu_name
        self.gpu_count, self.gpu_memory_gb, self.gpu_fraction = offer.gpu_count, offer.gpu_memory_gb, offer.gpu_fraction
        self.vcpu, self.ram_gb, self.disk_gb = offer.vcpu, offer.ram_gb, offer.disk_gb
        self.location, self.billing, self.url = offer.location, offer.billing.value, offer.url
        self.price, self.currency, self.period = offer.price, offer.currency, offer.period.value
        self.listed_in_stock, self.available = offer.in_stock, offer.available


# The listing columns of an `offers` row, in the order storage.ingest reads and compares them (and storage.availability
# reads raw rows by): one place, so a new column shifts every reader alike.
OFFER_COLUMNS = ("provider", "sku", "gpu", "gpu_name", "gpu_count", "gpu_memory_gb", "gpu_fraction", "vcpu",
                 "ram_gb", "disk_gb", "location", "billing", "price", "currency", "period", "listed_in_stock",
                 "available", "url")


class PricePoint(Base):
    """A point each time a configuration's price or availability changes (for history charts)."""

    __tablename__ = "price_history"
    __table_args__ = (Index("ix_price_history_gpu_at", "gpu", "at"), Index("ix_price_history_at", "at"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    offer_key: Mapped[str] = mapped_column(String(KEY_LEN), index=True)
    provider: Mapped[str] = mapped_column(String(NAME_LEN))
    gpu: Mapped[str | None] = mapped_column(String(NAME_LEN))
    gpu_count: Mapped[int] = mapped_column(Integer)
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    price: Mapped[float] = mapped_column(Float)
    currency: Mapped[str] = mapped_column(String(8))
    period: Mapped[str] = mapped_column(String(8))
    price_per_gpu_hour_rub: Mapped[float | None] = mapped_column(Float)
    price_per_gpu_hour_usd: Mapped[float | None] = mapped_column(Float)
    in_stock: Mapped[bool] = mapped_column(Boolean)  # available in this poll (listed, in stock, not at zero)
    available: Mapped[int | None] = mapped_column(Integer)


class ScrapeRun(Base):
    """One poll of one provider. Unique per (provider, started_at): recording the same poll twice is a no-op."""

    __tablename__ = "scrape_runs"
    __table_args__ = (
        UniqueConstraint("provider", "started_at", name="uq_scrape_runs_provider_started"),
        Index("ix_scrape_runs_provider_id", "provider", "id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    provider: Mapped[str] = mapped_column(String(NAME_LEN))
    started_at: Mapped[datetime] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime] = mapped_column(UTCDateTime())
    reported_status: Mapped[str] = mapped_column(String(16))  # as the scraper said
    status: Mapped[str] = mapped_column(String(16))  # after the shrink verdict: ok | suspect | failed
    shrink: Mapped[bool] = mapped_column(Boolean, default=False)  # suspect because it shrank abnormally
    offer_count: Mapped[int] = mapped_column(Integer, default=0)
    event_count: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text)


class ProviderHealth(Base):
    """Whether a provider's polls are currently believed, and why not."""

    __tablename__ = "provider_health"

    provider: Mapped[str] = mapped_column(String(NAME_LEN), primary_key=True)
    status: Mapped[str] = mapped_column(String(16))  # ok | degraded
    reason: Mapped[str | None] = mapped_column(Text)
    since: Mapped[datetime] = mapped_column(UTCDateTime())  # when the current status began
    last_poll: Mapped[datetime] = mapped_column(UTCDateTime())
    last_success: Mapped[datetime | None] = mapped_column(UTCDateTime())
    last_error: Mapped[str | None] = mapped_column(Text)
    last_error_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    consecutive_failures: Mapped[int] = mapped_column(Integer, default=0)


class OfferEventRow(Base):
    """An event, written once: unique per (offer key, kind, poll) so a replayed poll can never write it again."""

    __tablename__ = "offer_events"
    __table_args__ = (
        UniqueConstraint("offer_key", "kind", "run_id", name="uq_offer_events_key_kind_run"),
        Index("ix_offer_events_provider_at", "provider", "at"),
        Index("ix_offer_events_at", "at"),  # retention
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("scrape_runs.id", ondelete="CASCADE"), index=True)
    offer_key: Mapped[str] = mapped_column(String(KEY_LEN))
    kind: Mapped[str] = mapped_column(String(16))
    provider: Mapped[str] = mapped_column(String(NAME_LEN))
    gpu: Mapped[str | None] = mapped_column(String(NAME_LEN), index=True)
    gpu_count: Mapped[int] = mapped_column(Integer)
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    old_price: Mapped[float | None] = mapped_column(Float)  # per GPU-hour, offer currency
    new_price: Mapped[float | None] = mapped_column(Float)
    currency: Mapped[str] = mapped_column(String(8))
    old_price_rub: Mapped[float | None] = mapped_column(Float)
    new_price_rub: Mapped[float | None] = mapped_column(Float)
    old_price_usd: Mapped[float | None] = mapped_column(Float)
    new_price_usd: Mapped[float | None] = mapped_column(Float)
    offer: Mapped[dict] = mapped_column(JSON)  # the Offer as listed, for messages written later
