"""Tables of alert delivery: the outbox, the cooldown state and the delivery log.

- `alert_outbox`: one row per (subscription, offer key, event), written in the transaction that records the event
  (`storage.outbox.enqueue_alerts`); `dedup_key` is unique, so a replayed hook can never queue an alert twice.
  States: pending -> claimed (part of a delivery) -> sent | dropped (user blocked the bot, subscription gone)
  | failed (Telegram refused it for good). `not_before` holds an alert through the user's quiet hours.
- `alert_deliveries`: one row per Telegram message. It is written, with its final text, BEFORE the message is sent,
  so a restart re-sends exactly the same message for the same rows (never re-groups or re-renders them).
  States: queued -> sending (the request may have reached Telegram) -> sent (with Telegram's message id) | failed.
- `alert_cooldowns`: when (and at which price) a subscription was last alerted about an offer, so stock that flaps
  in and out does not alert every time it comes back.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from storage.db import Base
from storage.offer_tables import KEY_LEN, NAME_LEN, UTCDateTime


def _now() -> datetime:
    return datetime.now(UTC)


class OutboxState:
    PENDING = "pending"
    CLAIMED = "claimed"
    SENT = "sent"
    DROPPED = "dropped"
    FAILED = "failed"


class DeliveryState:
    QUEUED = "queued"
    SENDING = "sending"
    SENT = "sent"
    FAILED = "failed"


class AlertOutbox(Base):
    __tablename__ = "alert_outbox"
    __table_args__ = (Index("ix_alert_outbox_state_not_before", "state", "not_before"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    # subscription | offer key | event kind | stored event id: the same alert can be queued only once
    dedup_key: Mapped[str] = mapped_column(String(KEY_LEN + 128), unique=True)
    subscription_id: Mapped[int] = mapped_column(ForeignKey("subscriptions.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(BigInteger, index=True)
    offer_key: Mapped[str] = mapped_column(String(KEY_LEN))
    event_kind: Mapped[str] = mapped_column(String(16))
    event_id: Mapped[int | None] = mapped_column(Integer)
    # Everything the message needs, frozen at event time: the offer, normalised prices, why it fits.
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    state: Mapped[str] = mapped_column(String(16), default=OutboxState.PENDING)
    not_before: Mapped[datetime] = mapped_column(UTCDateTime(), default=_now)
    delivery_id: Mapped[int | None] = mapped_column(ForeignKey("alert_deliveries.id", ondelete="SET NULL"),
                                                    index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=_now)
    done_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    reason: Mapped[str | None] = mapped_column(String(255))  # why dropped / failed


class AlertDelivery(Base):
    __tablename__ = "alert_deliveries"
    __table_args__ = (Index("ix_alert_deliveries_state", "state"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(BigInteger, index=True)
    chat_id: Mapped[int] = mapped_column(BigInteger)
    text: Mapped[str] = mapped_column(Text)  # HTML, under Telegram's 4096 characters
    reply_markup: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    state: Mapped[str] = mapped_column(String(16), default=DeliveryState.QUEUED)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    not_before: Mapped[datetime] = mapped_column(UTCDateTime(), default=_now)  # backoff after network errors
    telegram_message_id: Mapped[int | None] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=_now)
    sending_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    error: Mapped[str | None] = mapped_column(String(255))
    # The sender (replica) holding this message, and until when in seconds by the database's clock (as in the
    # `leases` table): renewed while it lives; once lapsed, another sender takes the message over (bot/sender.py).
    claimed_by: Mapped[str | None] = mapped_column(String(255), index=True)
    claim_expires_at: Mapped[float | None] = mapped_column(Float)


class AlertCooldown(Base):
    __tablename__ = "alert_cooldowns"

    subscription_id: Mapped[int] = mapped_column(ForeignKey("subscriptions.id", ondelete="CASCADE"),
                                                 primary_key=True)
    offer_key: Mapped[str] = mapped_column(String(KEY_LEN), primary_key=True)
    last_alert_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_price: Mapped[float | None] = mapped_column(Float)  # per GPU-hour in the offer's currency
    last_kind: Mapped[str] = mapped_column(String(NAME_LEN))
