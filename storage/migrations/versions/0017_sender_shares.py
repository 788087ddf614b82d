"""Issue 26: replicas share the matching work. One `sender_shares` row per running alert sender, renewed while it
runs; the senders split the users between them (storage/sender_shares.py).

Revision ID: 0017_sender_shares
Revises: 0016_paid_broadcast_spend
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017_sender_shares"
down_revision: str | None = "0016_paid_broadcast_spend"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "sender_shares",
        sa.Column("sender", sa.String(255), primary_key=True),
        sa.Column("seen_at", sa.Float(), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("sender_shares")
