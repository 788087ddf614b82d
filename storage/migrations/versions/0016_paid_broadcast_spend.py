"""Issue 26: paid broadcasts' Stars counted per budget period in the database, not per sender process.

The budget (SENDER__PAID_BROADCAST_BUDGET_STARS) was counted by each sender from its start, so a restart reset it.
One row per period holds the paid attempts the senders have taken out of it (storage/paid_spend.py).

Revision ID: 0016_paid_broadcast_spend
Revises: 0015_availability_family_index
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016_paid_broadcast_spend"
down_revision: str | None = "0015_availability_family_index"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "paid_broadcast_spend",
        sa.Column("period", sa.String(16), primary_key=True),
        sa.Column("attempts", sa.BigInteger(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("paid_broadcast_spend")
