"""Availability statistics' aggregates: series state, their changes, and each provider's observed stretches
(storage/availability_tables.py).

Revision ID: 0011_availability
Revises: 0010_rate_shares
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_availability"
down_revision: str | None = "0010_rate_shares"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "availability_series",
        sa.Column("key", sa.String(512), primary_key=True),
        sa.Column("provider", sa.String(64), nullable=False),
        sa.Column("card", sa.String(255), nullable=False),
        sa.Column("gpu_count", sa.Integer(), nullable=False),
        sa.Column("region", sa.String(255), nullable=False),
        sa.Column("billing", sa.String(16), nullable=False),
        sa.Column("in_stock", sa.Boolean(), nullable=False),
        sa.Column("price_usd", sa.Float(), nullable=True),
        sa.Column("price_rub", sa.Float(), nullable=True),
        sa.Column("first_seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_availability_series_provider", "availability_series", ["provider"])
    op.create_index("ix_availability_series_card", "availability_series", ["card", "gpu_count"])
    op.create_table(
        "availability_changes",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("series_key", sa.String(512), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("in_stock", sa.Boolean(), nullable=False),
        sa.Column("price_usd", sa.Float(), nullable=True),
        sa.Column("price_rub", sa.Float(), nullable=True),
    )
    op.create_index("ix_availability_changes_series_at", "availability_changes", ["series_key", "at"])
    op.create_index("ix_availability_changes_at", "availability_changes", ["at"])
    op.create_table(
        "availability_coverage",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("provider", sa.String(64), nullable=False),
        sa.Column("start", sa.DateTime(timezone=True), nullable=False),
        sa.Column("end", sa.DateTime(timezone=True), nullable=False),
        sa.Column("polls", sa.Integer(), nullable=False),
    )
    op.create_index("ix_availability_coverage_provider_id", "availability_coverage", ["provider", "id"])


def downgrade() -> None:
    op.drop_table("availability_coverage")
    op.drop_table("availability_changes")
    op.drop_table("availability_series")
