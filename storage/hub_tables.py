"""Hugging Face Hub lookups remembered by every replica: one row per repository name asked for.

A lookup costs a round trip to the Hub (hundreds of milliseconds, or a timeout); the bot's inline answers must
not pay it per keystroke, and a replica must not repeat what another one already fetched. Found architectures
live a week, "not found" / "gated" an hour (a repository can appear, a licence be accepted); the Hub being
unreachable is never remembered (`modelhub/resolver.py`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, String
from sqlalchemy.orm import Mapped, mapped_column

from storage.db import Base
from storage.offer_tables import UTCDateTime

REPO_LEN = 200  # "org/name": the Hub allows 96 characters each


class HubModel(Base):
    __tablename__ = "hub_models"

    repo: Mapped[str] = mapped_column(String(REPO_LEN), primary_key=True)  # lower-cased "org/name"
    status: Mapped[str] = mapped_column(String(16))  # "ok" or a core.hub.HubError code
    arch: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # core.hub.arch_to_record
    fetched_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
