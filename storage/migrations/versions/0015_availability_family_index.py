"""Issue 23: the availability questions find provider families by an index, not among every offer group.

/when, the /history strip and the alerts' "any H100 × 1" read the provider FAMILIES of some cards (region "*").
The only index was (card, gpu_count), so a question walked every offer group of the card as well: a Vast-sized
provider has thousands per card (bench/availability.py: ~7 ms of a /when answer on 50,000 groups). The new index
leads with the region, so families (and a workload's "any card" question, which names no card) are found directly.

Revision ID: 0015_availability_family_index
Revises: 0014_subscription_changes
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0015_availability_family_index"
down_revision: str | None = "0014_subscription_changes"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_availability_series_region_card", "availability_series", ["region", "card", "gpu_count"])


def downgrade() -> None:
    op.drop_index("ix_availability_series_region_card", table_name="availability_series")
