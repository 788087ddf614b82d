"""Conversation (FSM) state shared by every replica: one row per aiogram storage key.

With several replicas behind a load balancer, consecutive updates of one chat can reach different processes; the
`/subscribe` wizard's step and answers so far must therefore live in the database, not in one process's memory
(`bot.fsm_storage.SqlStorage` reads and writes this table).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, String
from sqlalchemy.orm import Mapped, mapped_column

from storage.db import Base
from storage.offer_tables import UTCDateTime

KEY_LEN = 255  # bot id, business connection, chat, thread, user and destiny joined: far below this


def _now() -> datetime:
    return datetime.now(UTC)


class FsmState(Base):
    __tablename__ = "fsm_states"

    key: Mapped[str] = mapped_column(String(KEY_LEN), primary_key=True)
    state: Mapped[str | None] = mapped_column(String(255))  # e.g. "Wizard:price"; None between conversations
    data: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)  # the answers collected so far
    # When it last changed: lets an operator purge conversations abandoned long ago.
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=_now, index=True)
