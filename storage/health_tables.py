"""The row `/healthz` writes: a replica is healthy only while the database accepts writes, not merely reads (a
read-only or full database answers `SELECT 1` happily while every alert and scrape fails)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from storage.db import Base
from storage.offer_tables import UTCDateTime


class HealthProbe(Base):
    __tablename__ = "health_probes"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)  # one row, "healthz", shared by the replicas
    checked_at: Mapped[datetime] = mapped_column(UTCDateTime())
