"""Link tokens shared by every replica: the text behind a "Notify me" button or a `/start sub_<token>` deep link.

Telegram carries at most 64 characters of a deep link and 64 bytes of callback data, so a longer workload text
(most Cyrillic phrases) travels as a short hash of itself. The text behind the hash lives here, not in one process's
memory, so the replica that handles the press (webhook mode spreads updates over all of them) can resolve it.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import String, Text
from sqlalchemy.orm import Mapped, mapped_column

from storage.db import Base
from storage.offer_tables import UTCDateTime

TOKEN_LEN = 32


def _now() -> datetime:
    return datetime.now(UTC)


class QueryToken(Base):
    __tablename__ = "query_tokens"

    token: Mapped[str] = mapped_column(String(TOKEN_LEN), primary_key=True)  # "h" + 16 hex digits of SHA-1(text)
    text: Mapped[str] = mapped_column(Text)  # at most core.limits.MAX_INPUT_CHARS characters
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=_now, index=True)  # for purging old ones
