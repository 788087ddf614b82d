"""The offer store: current offers, price history, scrape runs, provider health, events.

Revision ID: 0001_offers
Revises:
Create Date: 2025-01-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001_offers"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEY = sa.String(512)
NAME = sa.String(64)


def _ts(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "offers",
        sa.Column("key", KEY, nullable=False),
        sa.Column("provider", NAME, nullable=False),
        sa.Column("sku", sa.String(255), nullable=False),
        sa.Column("gpu", NAME, nullable=True),
        sa.Column("gpu_name", sa.String(255), nullable=False),
        sa.Column("gpu_count", sa.Integer(), nullable=False),
        sa.Column("gpu_memory_gb", sa.Float(), nullable=True),
        sa.Column("vcpu", sa.Integer(), nullable=True),
        sa.Column("ram_gb", sa.Float(), nullable=True),
        sa.Column("disk_gb", sa.Float(), nullable=True),
        sa.Column("location", sa.String(255), nullable=False),
        sa.Column("billing", sa.String(16), nullable=False),
        sa.Column("price", sa.Float(), nullable=False),
        sa.Column("currency", sa.String(8), nullable=False),
        sa.Column("period", sa.String(8), nullable=False),
        sa.Column("listed_in_stock", sa.Boolean(), nullable=False),
        sa.Column("available", sa.Integer(), nullable=True),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("price_per_gpu_hour_rub", sa.Float(), nullable=True),
        sa.Column("price_per_gpu_hour_usd", sa.Float(), nullable=True),
        sa.Column("in_stock", sa.Boolean(), nullable=False),
        sa.Column("missing", sa.Integer(), nullable=False),
        sa.Column("ref_price", sa.Float(), nullable=False),
        _ts("first_seen"),
        _ts("last_seen"),
        _ts("updated_at"),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_offers")),
    )
    with op.batch_alter_table("offers") as batch:
        batch.create_index(batch.f("ix_offers_provider"), ["provider"])
        batch.create_index(batch.f("ix_offers_gpu"), ["gpu"])
        batch.create_index(batch.f("ix_offers_in_stock"), ["in_stock"])
        batch.create_index(batch.f("ix_offers_price_per_gpu_hour_rub"), ["price_per_gpu_hour_rub"])

    op.create_table(
        "price_history",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("offer_key", KEY, nullable=False),
        sa.Column("provider", NAME, nullable=False),
        sa.Column("gpu", NAME, nullable=True),
        sa.Column("gpu_count", sa.Integer(), nullable=False),
        _ts("at"),
        sa.Column("price", sa.Float(), nullable=False),
        sa.Column("currency", sa.String(8), nullable=False),
        sa.Column("period", sa.String(8), nullable=False),
        sa.Column("price_per_gpu_hour_rub", sa.Float(), nullable=True),
        sa.Column("price_per_gpu_hour_usd", sa.Float(), nullable=True),
        sa.Column("in_stock", sa.Boolean(), nullable=False),
        sa.Column("available", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_price_history")),
    )
    with op.batch_alter_table("price_history") as batch:
        batch.create_index(batch.f("ix_price_history_offer_key"), ["offer_key"])
        batch.create_index("ix_price_history_gpu_at", ["gpu", "at"])

    op.create_table(
        "scrape_runs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("provider", NAME, nullable=False),
        _ts("started_at"),
        _ts("finished_at"),
        sa.Column("reported_status", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("shrink", sa.Boolean(), nullable=False),
        sa.Column("offer_count", sa.Integer(), nullable=False),
        sa.Column("event_count", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_scrape_runs")),
        sa.UniqueConstraint("provider", "started_at", name="uq_scrape_runs_provider_started"),
    )
    with op.batch_alter_table("scrape_runs") as batch:
        batch.create_index("ix_scrape_runs_provider_id", ["provider", "id"])

    op.create_table(
        "provider_health",
        sa.Column("provider", NAME, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        _ts("since"),
        _ts("last_poll"),
        _ts("last_success", nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        _ts("last_error_at", nullable=True),
        sa.Column("consecutive_failures", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("provider", name=op.f("pk_provider_health")),
    )

    op.create_table(
        "offer_events",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("offer_key", KEY, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("provider", NAME, nullable=False),
        sa.Column("gpu", NAME, nullable=True),
        sa.Column("gpu_count", sa.Integer(), nullable=False),
        _ts("at"),
        sa.Column("old_price", sa.Float(), nullable=True),
        sa.Column("new_price", sa.Float(), nullable=True),
        sa.Column("currency", sa.String(8), nullable=False),
        sa.Column("old_price_rub", sa.Float(), nullable=True),
        sa.Column("new_price_rub", sa.Float(), nullable=True),
        sa.Column("old_price_usd", sa.Float(), nullable=True),
        sa.Column("new_price_usd", sa.Float(), nullable=True),
        sa.Column("offer", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["scrape_runs.id"], name=op.f("fk_offer_events_run_id_scrape_runs"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_offer_events")),
        sa.UniqueConstraint("offer_key", "kind", "run_id", name="uq_offer_events_key_kind_run"),
    )
    with op.batch_alter_table("offer_events") as batch:
        batch.create_index(batch.f("ix_offer_events_run_id"), ["run_id"])
        batch.create_index(batch.f("ix_offer_events_gpu"), ["gpu"])
        batch.create_index("ix_offer_events_provider_at", ["provider", "at"])


def downgrade() -> None:
    op.drop_table("offer_events")
    op.drop_table("provider_health")
    op.drop_table("scrape_runs")
    op.drop_table("price_history")
    op.drop_table("offers")
