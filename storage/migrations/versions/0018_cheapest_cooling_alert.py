"""The cooldown remembers the cheapest cooling alert about an offer since its last alert (core.alerts.LastAlert), so
a subscriber whose cap only that price met is not told again each time the offer flaps back at it.

Revision ID: 0018_cheapest_cooling_alert
Revises: 0017_sender_shares
Create Date: 2026-12-05
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018_cheapest_cooling_alert"
down_revision: str | None = "0017_sender_shares"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_PRICES = ("cheapest_price", "cheapest_price_rub", "cheapest_price_usd")


def upgrade() -> None:
    # Added empty: an offer's state written before knows no cooling alert, as the sender then reads it.
    with op.batch_alter_table("alert_offer_state") as batch:
        batch.add_column(sa.Column("cheapest_at", sa.DateTime(timezone=True), nullable=True))
        for name in _PRICES:
            batch.add_column(sa.Column(name, sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("alert_offer_state") as batch:
        for name in ("cheapest_at", *_PRICES):
            batch.drop_column(name)
