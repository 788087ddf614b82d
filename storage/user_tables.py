"""Tables of the bot: users (language, currency, quiet hours, grouping) and their subscriptions.

The alert engineer's matcher reads `subscriptions` by these column names; keep them. A workload subscription keeps
the user's text, the completed workload (so it can be re-estimated when the estimator improves) and the derived
requirement `{gpu_count: GiB per GPU}`, which is what matching needs without running the estimator per offer.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from storage.db import Base
from storage.offer_tables import NAME_LEN, UTCDateTime


def _now() -> datetime:
    return datetime.now(UTC)


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)  # Telegram user id
    chat_id: Mapped[int] = mapped_column(BigInteger)  # where alerts go (private chat = user id, may migrate)
    lang: Mapped[str] = mapped_column(String(2), default="en")  # "ru" | "en"
    lang_chosen: Mapped[bool] = mapped_column(Boolean, default=False)  # set by /lang: language_code no longer wins
    currency: Mapped[str] = mapped_column(String(3), default="USD")  # "RUB" | "USD"
    quiet_start: Mapped[int | None] = mapped_column(Integer)  # local hour 0-23; alerts wait, never dropped
    quiet_end: Mapped[int | None] = mapped_column(Integer)
    tz_offset_minutes: Mapped[int] = mapped_column(Integer, default=0)  # 180 (Moscow) for ru, 0 for en
    grouping: Mapped[bool] = mapped_column(Boolean, default=True)  # several offers in one cycle -> one message
    active: Mapped[bool] = mapped_column(Boolean, default=True)  # False once the chat blocked the bot
    # The last alert_events.id already turned into this user's messages (storage.alert_tables, bot/sender.py).
    alert_cursor: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=_now)

    subscriptions: Mapped[list[Subscription]] = relationship(back_populates="user", cascade="all, delete-orphan",
                                                             passive_deletes=True)


class Subscription(Base):
    __tablename__ = "subscriptions"
    __table_args__ = (Index("ix_subscriptions_user_paused", "user_id", "paused"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("users.id", ondelete="CASCADE"))
    chat_id: Mapped[int] = mapped_column(BigInteger)
    kind: Mapped[str] = mapped_column(String(16))  # "workload" | "gpu"
    query_text: Mapped[str] = mapped_column(Text)  # what the user wrote, shown back in /subs and alerts
    gpu_ids: Mapped[list[str] | None] = mapped_column(JSON)  # catalog ids (kind gpu; optional pin for workload)
    workload_json: Mapped[dict[str, Any] | None] = mapped_column(JSON)  # completed Workload dump (kind workload)
    min_gib_by_count: Mapped[dict[str, float] | None] = mapped_column(JSON)  # {"1": 38.2, "2": 21.0, ...}
    # A serving target: each card from the fewest GPUs of it that keep up ({"h100-sxm": 1, "b200": 2}; 0021)
    min_count_by_gpu: Mapped[dict[str, int] | None] = mapped_column(JSON)
    # The per-GPU figure the estimate this was made from said ("VRAM per GPU"), on its own GPU count: shown back
    # as it was said, never recomputed (matching uses min_gib_by_count, which adds the runtime's own memory).
    answer_gib: Mapped[float | None] = mapped_column(Float)
    # Per-GPU memory for a comfortable fit by count ({"1": 42.0, ...}): an offer under it is marked tight.
    rec_gib_by_count: Mapped[dict[str, float] | None] = mapped_column(JSON)
    max_price: Mapped[float | None] = mapped_column(Float)  # in price_currency, per price_basis
    price_currency: Mapped[str] = mapped_column(String(3), default="USD")  # "RUB" | "USD"
    # What max_price bounds: "total" = the whole configuration per hour (what "80 ₽/ч" means), "gpu" = per GPU-hour
    # (said so: "80 ₽/GPU-ч"). Rows from before 0012 were stored per GPU-hour and keep it (server default).
    price_basis: Mapped[str] = mapped_column(String(8), default="total", server_default="gpu")
    # The unit the cap was said in, and is said back in: "hour", or "month" ("до 150 000 ₽ в месяц"). max_price is
    # per hour either way (a month is 730 hours), as offers are compared; rows before 0022 were said per hour.
    price_period: Mapped[str] = mapped_column(String(8), default="hour", server_default="hour")
    providers: Mapped[list[str] | None] = mapped_column(JSON)  # provider names, None = any
    gpu_count: Mapped[int | None] = mapped_column(Integer)
    billing: Mapped[str | None] = mapped_column(String(NAME_LEN))  # "hourly" | "monthly" | "spot"
    region: Mapped[str | None] = mapped_column(String(255))  # substring of the offer's location, case-insensitive
    paused: Mapped[bool] = mapped_column(Boolean, default=False, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=_now)

    user: Mapped[User] = relationship(back_populates="subscriptions")


class SubscriptionChange(Base):
    """One row per change to a user's subscriptions or to their `active` flag, written by database triggers
    (migration 0014): the alert sender reloads only those users into its index (storage.outbox.FanOut)."""

    __tablename__ = "subscription_changes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(BigInteger)
    at: Mapped[float] = mapped_column(Float, index=True)  # the database's clock, Unix seconds
