"""Users owed a withdrawn alert are stored with the plan that moved their cursor past it, so an offer back inside
its cooldown still reaches them after the sender restarts or the replicas' shares change (storage.outbox.FanOut;
until now kept in the sender's memory only).

Revision ID: 0019_alert_owed
Revises: 0018_cheapest_cooling_alert
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019_alert_owed"
down_revision: str | None = "0018_cheapest_cooling_alert"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "alert_owed",
        sa.Column("user_id", sa.BigInteger(), sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("offer_key", sa.String(512), primary_key=True),  # storage.offer_tables.KEY_LEN
        sa.Column("withdrawal_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_alert_owed_created_at", "alert_owed", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_alert_owed_created_at", table_name="alert_owed")
    op.drop_table("alert_owed")
