"""The unit a subscription's price cap was said in, and is said back in: "hour" (every row before this one), or
"month" ("до 150 000 ₽ в месяц"). The cap itself stays per hour (a month is 730 hours), as offers are compared.

Revision ID: 0022_price_period
Revises: 0021_min_count_by_gpu
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022_price_period"
down_revision: str | None = "0021_min_count_by_gpu"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("subscriptions") as batch:
        batch.add_column(sa.Column("price_period", sa.String(8), nullable=False, server_default="hour"))


def downgrade() -> None:
    with op.batch_alter_table("subscriptions") as batch:
        batch.drop_column("price_period")
