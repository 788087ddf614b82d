"""Issue 19: a subscription's price cap is stored with its meaning.

"до 80 ₽/ч" is what the user pays per hour for the whole configuration; a cap per GPU-hour only when said so
("80 ₽/GPU-ч").
A subscription made from an estimate also keeps the per-GPU figure that answer said (answer_gib) and the per-GPU
memory of a comfortable fit (rec_gib_by_count: an offer under it is marked tight).
An offer row keeps its slice share (offers.gpu_fraction), so a slice read back is still one.
Until now every cap was stored and matched per GPU-hour, so every existing subscription keeps that
meaning: the new column's server default is "gpu" (new subscriptions always write it).

Revision ID: 0013_price_basis
Revises: 0012_availability_series_state
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013_price_basis"
down_revision: str | None = "0012_availability_series_state"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A plain ADD COLUMN (no table copy on SQLite); the default fills every existing row.
    op.add_column("subscriptions", sa.Column("price_basis", sa.String(8), nullable=False, server_default="gpu"))
    op.add_column("subscriptions", sa.Column("answer_gib", sa.Float(), nullable=True))
    op.add_column("subscriptions", sa.Column("rec_gib_by_count", sa.JSON(), nullable=True))
    op.add_column("offers", sa.Column("gpu_fraction", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("offers") as batch:
        batch.drop_column("gpu_fraction")
    with op.batch_alter_table("subscriptions") as batch:
        batch.drop_column("rec_gib_by_count")
        batch.drop_column("answer_gib")
        batch.drop_column("price_basis")
