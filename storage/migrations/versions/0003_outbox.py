"""Alert delivery: the outbox, the delivery log and the cooldown state.

Revision ID: 0003_outbox
Revises: 0002_bot
Create Date: 2025-01-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003_outbox"
down_revision: str | None = "0002_bot"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEY = sa.String(512)


def _ts(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "alert_deliveries",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("reply_markup", sa.JSON(), nullable=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        _ts("not_before"),
        sa.Column("telegram_message_id", sa.BigInteger(), nullable=True),
        _ts("created_at"),
        _ts("sending_at", True),
        _ts("sent_at", True),
        sa.Column("error", sa.String(255), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert_deliveries")),
    )
    with op.batch_alter_table("alert_deliveries") as batch:
        batch.create_index("ix_alert_deliveries_state", ["state"])
        batch.create_index(batch.f("ix_alert_deliveries_user_id"), ["user_id"])

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


def downgrade() -> None:
    op.drop_table("alert_cooldowns")
    with op.batch_alter_table("alert_outbox") as batch:
        batch.drop_index(batch.f("ix_alert_outbox_delivery_id"))
        batch.drop_index(batch.f("ix_alert_outbox_user_id"))
        batch.drop_index(batch.f("ix_alert_outbox_subscription_id"))
        batch.drop_index("ix_alert_outbox_state_not_before")
    op.drop_table("alert_outbox")
    with op.batch_alter_table("alert_deliveries") as batch:
        batch.drop_index(batch.f("ix_alert_deliveries_user_id"))
        batch.drop_index("ix_alert_deliveries_state")
    op.drop_table("alert_deliveries")
