"""FSM state in the database, so a conversation survives a switch between replicas.

Revision ID: 0005_fsm
Revises: 0004_lease
Create Date: 2025-01-05
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_fsm"
down_revision: str | None = "0004_lease"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "fsm_states",
        sa.Column("key", sa.String(255), nullable=False),
        sa.Column("state", sa.String(255), nullable=True),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_fsm_states")),
    )
    op.create_index(op.f("ix_fsm_states_updated_at"), "fsm_states", ["updated_at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_fsm_states_updated_at"), table_name="fsm_states")
    op.drop_table("fsm_states")
