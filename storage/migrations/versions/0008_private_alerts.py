"""Issue 13: alerts go to the chat a subscription chose (the owner's private chat unless they picked a group);
link tokens shared by the replicas; the row /healthz writes.

Until now a subscription's alerts went to the chat of the user's first contact, which could be a group: every
existing subscription (none was ever an explicit group choice) is pointed at its owner's private chat, whose id is
the owner's user id, and so is the user's own chat.

Revision ID: 0008_private_alerts
Revises: 0007_hub_cache
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008_private_alerts"
down_revision: str | None = "0007_hub_cache"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("UPDATE subscriptions SET chat_id = user_id WHERE chat_id <> user_id")
    op.execute("UPDATE users SET chat_id = id WHERE chat_id <> id")
    op.create_table(
        "query_tokens",
        sa.Column("token", sa.String(32), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("token", name=op.f("pk_query_tokens")),
    )
    op.create_index(op.f("ix_query_tokens_created_at"), "query_tokens", ["created_at"])
    op.create_table(
        "health_probes",
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_health_probes")),
    )


def downgrade() -> None:
    # The chats are not put back: which of them were groups is exactly what must not leak again.
    op.drop_table("health_probes")
    op.drop_index(op.f("ix_query_tokens_created_at"), table_name="query_tokens")
    op.drop_table("query_tokens")
