"""Claims on alert deliveries, so several replicas can send from one outbox.

Each delivery names the sender (replica) that holds it and until when (database clock, seconds since the epoch,
as in `leases`); a claim that is not renewed in time can be taken over by another sender.

Revision ID: 0006_delivery_claims
Revises: 0005_fsm
Create Date: 2025-01-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_delivery_claims"
down_revision: str | None = "0005_fsm"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("alert_deliveries") as batch:
        batch.add_column(sa.Column("claimed_by", sa.String(255), nullable=True))
        batch.add_column(sa.Column("claim_expires_at", sa.Float(), nullable=True))
        batch.create_index(op.f("ix_alert_deliveries_claimed_by"), ["claimed_by"])


def downgrade() -> None:
    with op.batch_alter_table("alert_deliveries") as batch:
        batch.drop_index(op.f("ix_alert_deliveries_claimed_by"))
        batch.drop_column("claim_expires_at")
        batch.drop_column("claimed_by")
