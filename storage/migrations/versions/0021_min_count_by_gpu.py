"""A subscription with a serving target ("1000 requests a minute", "30 tok/s each") watches each card from the fewest
GPUs of it that keep up with the target (core.answer.Answer.keeping_counts): {"h100-sxm": 1, "b200": 2}. NULL for
every other subscription, as for all rows before this one.

Revision ID: 0021_min_count_by_gpu
Revises: 0020_cooling_alerts
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021_min_count_by_gpu"
down_revision: str | None = "0020_cooling_alerts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("subscriptions") as batch:
        batch.add_column(sa.Column("min_count_by_gpu", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("subscriptions") as batch:
        batch.drop_column("min_count_by_gpu")
