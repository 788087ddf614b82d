"""Availability statistics' compact aggregates (storage/availability.py, core/availability.py): what each offer
group and provider family is doing now, every change of that over the kept window, and when each provider was
actually observed. Written by ingest in the poll's own transaction; their own retention (31 days), independent of
the raw history's."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, Float, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from storage.db import Base
from storage.offer_tables import KEY_LEN, NAME_LEN, UTCDateTime


class AvailabilitySeries(Base):
    """One offer group (provider, card, GPU count, region, billing) or provider family (region "*"). Its state
    after the latest trusted poll (in stock if any of its configurations is, priced at the cheapest of those) is its
    latest change row: not copied here, so a moving poll writes one row per series that moved (migration 0012)."""

    __tablename__ = "availability_series"
    # families (region "*") of some cards: /when, the /history strip (migration 0015)
    __table_args__ = (Index("ix_availability_series_card", "card", "gpu_count"),
                      Index("ix_availability_series_region_card", "region", "card", "gpu_count"))

    key: Mapped[str] = mapped_column(String(KEY_LEN), primary_key=True)
    provider: Mapped[str] = mapped_column(String(NAME_LEN), index=True)
    card: Mapped[str] = mapped_column(String(255))  # catalog id, or "?<provider's spelling>" when unknown
    gpu_count: Mapped[int] = mapped_column(Integer)
    region: Mapped[str] = mapped_column(String(255))  # "*" for a provider family
    billing: Mapped[str] = mapped_column(String(16))
    first_seen: Mapped[datetime] = mapped_column(UTCDateTime())


class AvailabilityChange(Base):
    """A series' state from `at` on (until its next change)."""

    __tablename__ = "availability_changes"
    __table_args__ = (Index("ix_availability_changes_series_at", "series_key", "at"),
                      Index("ix_availability_changes_at", "at"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    series_key: Mapped[str] = mapped_column(String(KEY_LEN))
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    in_stock: Mapped[bool] = mapped_column(Boolean)
    price_usd: Mapped[float | None] = mapped_column(Float)  # cheapest in-stock, per GPU-hour
    price_rub: Mapped[float | None] = mapped_column(Float)


class AvailabilityCoverage(Base):
    """A stretch of time one provider was observed: consecutive trusted polls, none further apart than the gap
    allowance (storage.availability.gap_allowance)."""

    __tablename__ = "availability_coverage"
    __table_args__ = (Index("ix_availability_coverage_provider_id", "provider", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    provider: Mapped[str] = mapped_column(String(NAME_LEN))
    start: Mapped[datetime] = mapped_column(UTCDateTime())
    end: Mapped[datetime] = mapped_column(UTCDateTime())
    polls: Mapped[int] = mapped_column(Integer)
