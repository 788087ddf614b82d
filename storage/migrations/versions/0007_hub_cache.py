"""Hugging Face Hub lookups cached in the database, shared by the replicas.

Revision ID: 0007_hub_cache
Revises: 0006_delivery_claims
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_hub_cache"
down_revision: str | None = "0006_delivery_claims"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "hub_models",
        sa.Column("repo", sa.String(200), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("arch", sa.JSON(), nullable=True),
        sa.Column("fetched_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("repo", name=op.f("pk_hub_models")),
    )
    op.create_index(op.f("ix_hub_models_expires_at"), "hub_models", ["expires_at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_hub_models_expires_at"), table_name="hub_models")
    op.drop_table("hub_models")
