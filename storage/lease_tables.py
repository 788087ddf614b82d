"""The leader lease table: one row per named lease (e.g. "scrapers"), shared by every replica.

Times are seconds since the epoch as floats, computed by the database's own clock in SQL (see `storage.lease`):
one clock for every replica means no skew between hosts decides who leads, and float arithmetic in SQL is the
same on SQLite and PostgreSQL, where interval arithmetic is not.
"""

from __future__ import annotations

from sqlalchemy import Float, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from storage.db import Base


class LeaseRow(Base):
    __tablename__ = "leases"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    holder: Mapped[str] = mapped_column(String(255))  # the replica holding (or last holding) the lease
    # Fencing token: grows by one every time the lease changes hands, so work stamped with an old term is recognisable.
    term: Mapped[int] = mapped_column(Integer)
    acquired_at: Mapped[float] = mapped_column(Float)  # when `holder` took it (start of this term)
    renewed_at: Mapped[float] = mapped_column(Float)
    expires_at: Mapped[float] = mapped_column(Float)  # free for anyone once the database clock passes this


class RateShareRow(Base):
    """One row per replica sending to Telegram (`storage.rate_share`): Telegram's overall limit is per bot, so the
    replicas split it between those whose row has not expired."""

    __tablename__ = "rate_shares"

    replica: Mapped[str] = mapped_column(String(255), primary_key=True)
    seen_at: Mapped[float] = mapped_column(Float)
    expires_at: Mapped[float] = mapped_column(Float)  # a handful of rows: no index


class SenderShareRow(Base):
    """One row per running alert sender (`storage.sender_shares`): the senders split the users between those whose
    row has not expired, each matching and planning only its part."""

    __tablename__ = "sender_shares"

    sender: Mapped[str] = mapped_column(String(255), primary_key=True)  # the sender's owner id (host:pid:nonce)
    seen_at: Mapped[float] = mapped_column(Float)
    expires_at: Mapped[float] = mapped_column(Float)  # a handful of rows: no index
