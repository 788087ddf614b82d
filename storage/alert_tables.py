"""Tables of alert delivery: the queued events, the cooldown state per offer and the delivery log.

- `alert_events`: one row per alerting event, written in the transaction that records the event
  (`storage.outbox.OutboxWriter`); `dedup_key` is unique, so a replayed hook can never queue an event twice. A poll
  writes as many rows as it has alerting events, whatever the number of subscribers.
- `users.alert_cursor` (storage.user_tables): the last `alert_events.id` already turned into messages for that user.
  The sender advances it in the transaction that writes the user's deliveries, so every event reaches each user
  exactly once, in as few messages as the user's grouping allows.
- `alert_deliveries`: one row per Telegram message. It is written, with its final text, BEFORE the message is sent,
  so a restart re-sends exactly the same message (never re-groups or re-renders it).
  States: queued -> sending (the request may have reached Telegram) -> sent (with Telegram's message id) | failed.
- `alert_offer_state`: the last alert about an offer everyone matching heard, so stock that flaps in and out does
  not alert every time it comes back (core.alerts).
- `alert_owed`: users whose cursor a plan moved past an offer's withdrawn alert: they never heard it, so the offer
  back inside its cooldown is theirs too (storage.outbox.FanOut), after a restart as before it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from core.matching import ALERT_KINDS, WITHDRAWING_KINDS
from storage.db import Base
from storage.offer_tables import KEY_LEN, UTCDateTime

# What an `alert_events.event_kind` says the row is: an alert, or a withdrawal of the offer's earlier alerts.
ALERT_ROW_KINDS = tuple(sorted(kind.value for kind in ALERT_KINDS))
WITHDRAWAL_ROW_KINDS = frozenset(kind.value for kind in WITHDRAWING_KINDS)


def _now() -> datetime:
    return datetime.now(UTC)


class DeliveryState:
    QUEUED = "queued"
    SENDING = "sending"
    SENT = "sent"
    FAILED = "failed"


class AlertEventRow(Base):
    """One alerting event (appeared, back in stock, price drop), queued in the transaction that recorded it. Who it
    reaches is worked out by the sender, per user, when it builds that user's next message (bot/sender.py). A row
    whose `event_kind` is sold_out or price_rise is a withdrawal: the offer's alerts before it that a user has not
    heard yet are no longer true, and are not sent (storage.outbox.FanOut)."""

    __tablename__ = "alert_events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    # offer key | event kind | stored event id: the same event can be queued only once
    dedup_key: Mapped[str] = mapped_column(String(KEY_LEN + 64), unique=True)
    offer_key: Mapped[str] = mapped_column(String(KEY_LEN))
    event_kind: Mapped[str] = mapped_column(String(16))
    event_id: Mapped[int | None] = mapped_column(Integer)
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)  # core.alerts.AlertEvent
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=_now, index=True)


class OfferAlertState(Base):
    """The last alert everyone matching an offer heard (core.alerts.LastAlert): the cooldown's memory, per offer."""

    __tablename__ = "alert_offer_state"

    offer_key: Mapped[str] = mapped_column(String(KEY_LEN), primary_key=True)
    last_alert_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_price: Mapped[float | None] = mapped_column(Float)  # per GPU-hour in the offer's currency
    last_price_rub: Mapped[float | None] = mapped_column(Float)
    last_price_usd: Mapped[float | None] = mapped_column(Float)
    # The cooling alerts since the last one that no later one undercuts (core.alerts.LastAlert.cooling: a handful,
    # each core.alerts.CoolingAlert in JSON), None for none: migration 0020 (0018 kept the cheapest one alone).
    cooling_alerts: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON(none_as_null=True))


class AlertOwed(Base):
    """A user owed an offer's alert: a plan moved their cursor past the offer's withdrawn alert (sold out or dearer
    before they heard it), so their cursor says they heard it and they did not. Written with that plan's cursor move
    (storage.outbox.FanOut.record_owed), deleted with the plan that tells them the offer; void once a fresh alert of
    the offer (one everyone matching hears) was queued after `withdrawal_id`, or past MAX_EVENT_AGE (retention)."""

    __tablename__ = "alert_owed"

    user_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    offer_key: Mapped[str] = mapped_column(String(KEY_LEN), primary_key=True)
    # The `alert_events` row that withdrew the offer's alert (the first since the offer's last fresh alert).
    withdrawal_id: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=_now, index=True)


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


class PaidBroadcastSpend(Base):
    """Paid broadcasts' spending per budget period (`storage.paid_spend`): the paid attempts senders have taken out
    of the period's budget, each 0.1 Star. Taken before the messages are sent, so a sender that restarts, or runs
    beside others for the same bot, goes on counting from what was taken (issue 26)."""

    __tablename__ = "paid_broadcast_spend"

    period: Mapped[str] = mapped_column(String(16), primary_key=True)  # "2026-12" (a UTC month) or "2026-12-02"
    attempts: Mapped[int] = mapped_column(BigInteger)
