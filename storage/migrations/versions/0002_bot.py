"""The bot: users and their subscriptions.

Revision ID: 0002_bot
Revises: 0001_offers
Create Date: 2025-01-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002_bot"
down_revision: str | None = "0001_offers"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("lang", sa.String(2), nullable=False),
        sa.Column("lang_chosen", sa.Boolean(), nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("quiet_start", sa.Integer(), nullable=True),
        sa.Column("quiet_end", sa.Integer(), nullable=True),
        sa.Column("tz_offset_minutes", sa.Integer(), nullable=False),
        sa.Column("grouping", sa.Boolean(), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_users")),
    )
    op.create_table(
        "subscriptions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("query_text", sa.Text(), nullable=False),
        sa.Column("gpu_ids", sa.JSON(), nullable=True),
        sa.Column("workload_json", sa.JSON(), nullable=True),
        sa.Column("min_gib_by_count", sa.JSON(), nullable=True),
        sa.Column("max_price", sa.Float(), nullable=True),
        sa.Column("price_currency", sa.String(3), nullable=False),
        sa.Column("providers", sa.JSON(), nullable=True),
        sa.Column("gpu_count", sa.Integer(), nullable=True),
        sa.Column("billing", sa.String(64), nullable=True),
        sa.Column("region", sa.String(255), nullable=True),
        sa.Column("paused", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_subscriptions_user_id_users"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_subscriptions")),
    )
    with op.batch_alter_table("subscriptions") as batch:
        batch.create_index("ix_subscriptions_user_paused", ["user_id", "paused"])
        batch.create_index(batch.f("ix_subscriptions_paused"), ["paused"])


def downgrade() -> None:
    with op.batch_alter_table("subscriptions") as batch:
        batch.drop_index(batch.f("ix_subscriptions_paused"))
        batch.drop_index("ix_subscriptions_user_paused")
    op.drop_table("subscriptions")
    op.drop_table("users")
