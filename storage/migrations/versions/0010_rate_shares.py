"""Replicas split Telegram's overall rate limit: one `rate_shares` row per sending replica, renewed while it runs
(storage/rate_share.py).

Revision ID: 0010_rate_shares
Revises: 0009_alert_events
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_rate_shares"
down_revision: str | None = "0009_alert_events"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "rate_shares",
        sa.Column("replica", sa.String(255), primary_key=True),
        sa.Column("seen_at", sa.Float(), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("rate_shares")
