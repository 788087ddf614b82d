"""Issue 26: a change log of who's subscriptions changed, so the alert sender's index follows them one user at a time.

Every insert, update or delete of a subscription, and every change of a user's `active` flag (a blocked chat, a
return) or a user's deletion, adds one `subscription_changes` row naming the user, by database triggers: every
write path (the bot's services, the sender's own chat moves, an operator's SQL) is caught without the code having
to remember. The sender (storage.outbox.FanOut) reads the rows past the last one it applied and reloads only those
users' subscriptions into its index; there is no periodic full rebuild. `at` is the database's clock (Unix
seconds) when the row was written: the reader re-reads the last minute's rows, so a PostgreSQL transaction that
committed after a later one (ids are taken before commit) is still seen. Retention trims rows older than a day.

Revision ID: 0014_subscription_changes
Revises: 0013_price_basis
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014_subscription_changes"
down_revision: str | None = "0013_price_basis"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SQLITE_NOW = "((julianday('now') - 2440587.5) * 86400.0)"
_PG_NOW = "extract(epoch from clock_timestamp())"


def upgrade() -> None:
    op.create_table(
        "subscription_changes",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
    )
    op.create_index("ix_subscription_changes_at", "subscription_changes", ["at"])
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"""
CREATE FUNCTION gpuradar_subscription_changed() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    INSERT INTO subscription_changes (user_id, at) VALUES (OLD.user_id, {_PG_NOW});
    RETURN OLD;
  END IF;
  INSERT INTO subscription_changes (user_id, at) VALUES (NEW.user_id, {_PG_NOW});
  RETURN NEW;
END $$ LANGUAGE plpgsql""")
        op.execute(f"""
CREATE FUNCTION gpuradar_user_changed() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    INSERT INTO subscription_changes (user_id, at) VALUES (OLD.id, {_PG_NOW});
    RETURN OLD;
  END IF;
  INSERT INTO subscription_changes (user_id, at) VALUES (NEW.id, {_PG_NOW});
  RETURN NEW;
END $$ LANGUAGE plpgsql""")
        op.execute("CREATE TRIGGER subscriptions_changed AFTER INSERT OR UPDATE OR DELETE ON subscriptions "
                   "FOR EACH ROW EXECUTE FUNCTION gpuradar_subscription_changed()")
        op.execute("CREATE TRIGGER users_active_changed AFTER UPDATE OF active ON users FOR EACH ROW "
                   "WHEN (OLD.active IS DISTINCT FROM NEW.active) EXECUTE FUNCTION gpuradar_user_changed()")
        op.execute("CREATE TRIGGER users_deleted AFTER DELETE ON users FOR EACH ROW "
                   "EXECUTE FUNCTION gpuradar_user_changed()")
        return
    log = "INSERT INTO subscription_changes (user_id, at) VALUES ({}, " + _SQLITE_NOW + ");"
    op.execute(f"CREATE TRIGGER subscriptions_inserted AFTER INSERT ON subscriptions BEGIN "
               f"{log.format('NEW.user_id')} END")
    op.execute(f"CREATE TRIGGER subscriptions_updated AFTER UPDATE ON subscriptions BEGIN "
               f"{log.format('NEW.user_id')} END")
    op.execute(f"CREATE TRIGGER subscriptions_deleted AFTER DELETE ON subscriptions BEGIN "
               f"{log.format('OLD.user_id')} END")
    op.execute(f"CREATE TRIGGER users_active_changed AFTER UPDATE OF active ON users "
               f"WHEN OLD.active IS NOT NEW.active BEGIN {log.format('NEW.id')} END")
    op.execute(f"CREATE TRIGGER users_deleted AFTER DELETE ON users BEGIN {log.format('OLD.id')} END")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS subscriptions_changed ON subscriptions")
        op.execute("DROP TRIGGER IF EXISTS users_active_changed ON users")
        op.execute("DROP TRIGGER IF EXISTS users_deleted ON users")
        op.execute("DROP FUNCTION IF EXISTS gpuradar_subscription_changed()")
        op.execute("DROP FUNCTION IF EXISTS gpuradar_user_changed()")
    else:
        for name in ("subscriptions_inserted", "subscriptions_updated", "subscriptions_deleted",
                     "users_active_changed", "users_deleted"):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
    op.drop_index("ix_subscription_changes_at", table_name="subscription_changes")
    op.drop_table("subscription_changes")
