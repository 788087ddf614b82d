"""The cooldown remembers every cooling alert about an offer since its last alert that no later one undercuts
(core.alerts.LastAlert.cooling), not only the cheapest: a subscription made after the cheapest one, reached by a
dearer one, is then not told again each time the offer flaps back at that dearer price.

The cheapest one stored by 0018 becomes the list's one entry (and, downgraded, the list's cheapest entry becomes it
again: the first, as the list is kept cheapest first).

Revision ID: 0020_cooling_alerts
Revises: 0019_alert_owed
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0020_cooling_alerts"
down_revision: str | None = "0019_alert_owed"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_CHEAPEST = ("cheapest_price", "cheapest_price_rub", "cheapest_price_usd")
# The keys of one list entry (core.alerts.CoolingAlert), in the order of the 0018 columns they come from.
_ENTRY = ("price", "price_rub", "price_usd")

_state = sa.table("alert_offer_state", sa.column("offer_key", sa.String()),
                  sa.column("cheapest_at", sa.DateTime(timezone=True)),
                  *(sa.column(c, sa.Float()) for c in _CHEAPEST), sa.column("cooling_alerts", sa.JSON()))


def _utc(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def upgrade() -> None:
    with op.batch_alter_table("alert_offer_state") as batch:
        batch.add_column(sa.Column("cooling_alerts", sa.JSON(), nullable=True))
    conn = op.get_bind()
    rows = conn.execute(sa.select(_state.c.offer_key, _state.c.cheapest_at, *(_state.c[c] for c in _CHEAPEST))
                        .where(_state.c.cheapest_at.is_not(None))).all()
    if rows:  # few: the offers alerted on within one cooldown
        conn.execute(
            _state.update().where(_state.c.offer_key == sa.bindparam("key"))
            .values(cooling_alerts=sa.bindparam("cool")),
            [{"key": r[0], "cool": [{"at": _utc(r[1]).isoformat(), **dict(zip(_ENTRY, r[2:], strict=True))}]}
             for r in rows])
    with op.batch_alter_table("alert_offer_state") as batch:
        for name in ("cheapest_at", *_CHEAPEST):
            batch.drop_column(name)


def downgrade() -> None:
    with op.batch_alter_table("alert_offer_state") as batch:
        batch.add_column(sa.Column("cheapest_at", sa.DateTime(timezone=True), nullable=True))
        for name in _CHEAPEST:
            batch.add_column(sa.Column(name, sa.Float(), nullable=True))
    conn = op.get_bind()
    rows = conn.execute(sa.select(_state.c.offer_key, _state.c.cooling_alerts)
                        .where(_state.c.cooling_alerts.is_not(None))).all()
    values: list[dict[str, Any]] = []
    for key, cooling in rows:
        if cooling:
            first = cooling[0]
            values.append({"key": key, "at": datetime.fromisoformat(first["at"]),
                           **{f"v_{c}": first.get(e) for c, e in zip(_CHEAPEST, _ENTRY, strict=True)}})
    if values:
        conn.execute(_state.update().where(_state.c.offer_key == sa.bindparam("key")).values(
            cheapest_at=sa.bindparam("at"), **{c: sa.bindparam(f"v_{c}") for c in _CHEAPEST}), values)
    with op.batch_alter_table("alert_offer_state") as batch:
        batch.drop_column("cooling_alerts")
