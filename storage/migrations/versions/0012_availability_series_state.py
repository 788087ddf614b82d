"""Availability series without a copy of their state: a series' state is its latest change row
(storage/availability.py reads it from there when it builds its index), so a poll that moves thousands of offer
groups writes their change rows only, not an UPDATE of each series as well (bench/availability.py: that UPDATE was
a third of the upkeep's cost on a 50,000-group ingest).

Revision ID: 0012_availability_series_state
Revises: 0011_availability
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012_availability_series_state"
down_revision: str | None = "0011_availability"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_STATE = ("in_stock", "price_usd", "price_rub", "changed_at")


def upgrade() -> None:
    with op.batch_alter_table("availability_series") as batch:
        for column in _STATE:
            batch.drop_column(column)


def downgrade() -> None:
    with op.batch_alter_table("availability_series") as batch:
        batch.add_column(sa.Column("in_stock", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column("price_usd", sa.Float(), nullable=True))
        batch.add_column(sa.Column("price_rub", sa.Float(), nullable=True))
        batch.add_column(sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False,
                                   server_default=sa.func.current_timestamp()))
    # Each series' state back from its latest change (by time, then id: the order ingest wrote them in).
    latest = ("(SELECT {col} FROM availability_changes c WHERE c.series_key = availability_series.key "
              "ORDER BY c.at DESC, c.id DESC LIMIT 1)")
    op.execute("UPDATE availability_series SET " + ", ".join(
        f"{col} = COALESCE({latest.format(col=src)}, {fallback})" if fallback else f"{col} = {latest.format(col=src)}"
        for col, src, fallback in (("in_stock", "c.in_stock", "in_stock"), ("price_usd", "c.price_usd", ""),
                                   ("price_rub", "c.price_rub", ""), ("changed_at", "c.at", "changed_at"))))
