"""Alert fan-out proportional to events: one queued row per alerting event (not per subscription reached), a cursor
per user, and the cooldown kept per offer; retention's marks and indexes.

`alert_outbox` (one row per subscription x event) and `alert_cooldowns` (one per subscription x offer) made a
poll's alert work grow with every subscriber it reached. They are replaced by `alert_events`, `users.alert_cursor`
and `alert_offer_state` (see storage/alert_tables.py). Alerts still pending at the upgrade are carried over: each
distinct pending event becomes an `alert_events` row, which every matching subscriber then hears.

Revision ID: 0009_alert_events
Revises: 0008_private_alerts
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_alert_events"
down_revision: str | None = "0008_private_alerts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEY = sa.String(512)


def _ts(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "alert_events",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("dedup_key", sa.String(576), nullable=False),
        sa.Column("offer_key", KEY, nullable=False),
        sa.Column("event_kind", sa.String(16), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=True),
        sa.Column("payload", sa.JSON(), nullable=False),
        _ts("created_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert_events")),
        sa.UniqueConstraint("dedup_key", name=op.f("uq_alert_events_dedup_key")),
    )
    with op.batch_alter_table("alert_events") as batch:
        batch.create_index(batch.f("ix_alert_events_created_at"), ["created_at"])
    op.create_table(
        "alert_offer_state",
        sa.Column("offer_key", KEY, nullable=False),
        _ts("last_alert_at"),
        sa.Column("last_price", sa.Float(), nullable=True),
        sa.Column("last_price_rub", sa.Float(), nullable=True),
        sa.Column("last_price_usd", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("offer_key", name=op.f("pk_alert_offer_state")),
    )
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("alert_cursor", sa.BigInteger(), server_default="0", nullable=False))

    # Carry pending alerts over: one event row per distinct pending (offer, kind, event).
    bind = op.get_bind()
    outbox = sa.table("alert_outbox", sa.column("offer_key", sa.String), sa.column("event_kind", sa.String),
                      sa.column("event_id", sa.Integer), sa.column("payload", sa.JSON), sa.column("state", sa.String),
                      sa.column("created_at", sa.DateTime(timezone=True)), sa.column("id", sa.Integer))
    events = sa.table("alert_events", sa.column("dedup_key", sa.String), sa.column("offer_key", sa.String),
                      sa.column("event_kind", sa.String), sa.column("event_id", sa.Integer),
                      sa.column("payload", sa.JSON), sa.column("created_at", sa.DateTime(timezone=True)))
    seen: set[str] = set()
    carried = []
    for r in bind.execute(sa.select(outbox).where(outbox.c.state == "pending").order_by(outbox.c.id)):
        key = f"{r.offer_key}|{r.event_kind}|{r.event_id if r.event_id is not None else r.created_at}"
        if key in seen:
            continue
        seen.add(key)
        p = dict(r.payload or {})
        payload = {k: p.get(k) for k in ("kind", "offer", "currency", "old_price", "new_price", "price_rub",
                                         "price_usd", "old_price_rub", "old_price_usd")}
        carried.append({"dedup_key": key, "offer_key": r.offer_key, "event_kind": r.event_kind,
                        "event_id": r.event_id, "payload": payload, "created_at": r.created_at})
    if carried:
        op.bulk_insert(events, carried)

    with op.batch_alter_table("alert_outbox") as batch:
        batch.drop_index(batch.f("ix_alert_outbox_delivery_id"))
        batch.drop_index(batch.f("ix_alert_outbox_user_id"))
        batch.drop_index(batch.f("ix_alert_outbox_subscription_id"))
        batch.drop_index("ix_alert_outbox_state_not_before")
    op.drop_table("alert_outbox")
    op.drop_table("alert_cooldowns")

    # Retention (storage/retention.py): its marks, and the indexes its range deletes use.
    op.create_table(
        "retention_marks",
        sa.Column("name", sa.String(64), nullable=False),
        _ts("upto"),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_retention_marks")),
    )
    with op.batch_alter_table("price_history") as batch:
        batch.create_index("ix_price_history_at", ["at"])
    with op.batch_alter_table("offer_events") as batch:
        batch.create_index("ix_offer_events_at", ["at"])


def downgrade() -> None:
    with op.batch_alter_table("offer_events") as batch:
        batch.drop_index("ix_offer_events_at")
    with op.batch_alter_table("price_history") as batch:
        batch.drop_index("ix_price_history_at")
    op.drop_table("retention_marks")
    op.create_table(
        "alert_outbox",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("dedup_key", sa.String(640), nullable=False),
        sa.Column("subscription_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("offer_key", KEY, nullable=False),
        sa.Column("event_kind", sa.String(16), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=True),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        _ts("not_before"),
        sa.Column("delivery_id", sa.Integer(), nullable=True),
        _ts("created_at"),
        _ts("done_at", True),
        sa.Column("reason", sa.String(255), nullable=True),
        sa.ForeignKeyConstraint(["subscription_id"], ["subscriptions.id"],
                                name=op.f("fk_alert_outbox_subscription_id_subscriptions"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["delivery_id"], ["alert_deliveries.id"],
                                name=op.f("fk_alert_outbox_delivery_id_alert_deliveries"), ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert_outbox")),
        sa.UniqueConstraint("dedup_key", name=op.f("uq_alert_outbox_dedup_key")),
    )
    with op.batch_alter_table("alert_outbox") as batch:
        batch.create_index("ix_alert_outbox_state_not_before", ["state", "not_before"])
        batch.create_index(batch.f("ix_alert_outbox_subscription_id"), ["subscription_id"])
        batch.create_index(batch.f("ix_alert_outbox_user_id"), ["user_id"])
        batch.create_index(batch.f("ix_alert_outbox_delivery_id"), ["delivery_id"])
    op.create_table(
        "alert_cooldowns",
        sa.Column("subscription_id", sa.Integer(), nullable=False),
        sa.Column("offer_key", KEY, nullable=False),
        _ts("last_alert_at"),
        sa.Column("last_price", sa.Float(), nullable=True),
        sa.Column("last_kind", sa.String(64), nullable=False),
        sa.ForeignKeyConstraint(["subscription_id"], ["subscriptions.id"],
                                name=op.f("fk_alert_cooldowns_subscription_id_subscriptions"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("subscription_id", "offer_key", name=op.f("pk_alert_cooldowns")),
    )
    with op.batch_alter_table("users") as batch:
        batch.drop_column("alert_cursor")
    op.drop_table("alert_offer_state")
    with op.batch_alter_table("alert_events") as batch:
        batch.drop_index(batch.f("ix_alert_events_created_at"))
    op.drop_table("alert_events")
