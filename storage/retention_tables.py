"""Retention's own bookkeeping (storage/retention.py)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from storage.db import Base
from storage.offer_tables import UTCDateTime


class RetentionMark(Base):
    """How far back a thinning step has already been done (so a run does only the new part)."""

    __tablename__ = "retention_marks"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    upto: Mapped[datetime] = mapped_column(UTCDateTime())
