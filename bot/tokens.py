"""Short tokens for user text that must travel in a deep link (64 characters) or callback data (64 bytes).

Short text travels itself (base64url, so it survives a restart and needs no storage); longer text (most Cyrillic
phrases) travels as a hash of itself, and the text behind the hash is stored in the shared database
(`query_tokens`), so whichever replica handles the press can resolve it. This process keeps an LRU of recent ones
to spare the database the common case. A token nobody knows resolves to None and the user is asked to send the
text again: a polite failure instead of a wrong subscription.

Every text is cut to core.limits.MAX_INPUT_CHARS, the same limit as every other entry point.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import hashlib
import logging
from collections import OrderedDict
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.formatting import has_control
from core.limits import MAX_INPUT_CHARS
from storage.token_tables import QueryToken
from storage.upsert import upsert_insert

log = logging.getLogger(__name__)

INLINE_MAX = 40  # characters of encoded text kept inline; leaves room for prefixes such as "sub_" and "o:12:"
KEEP_FOR = timedelta(days=180)  # a link older than this may resolve to "expired" (a shared message lives long)
PURGE_EVERY = timedelta(hours=6)
# Hashed tokens this process remembers (the longest-unused forgotten first). Every inline answer page makes one
# (its "Subscribe" link); an entry is its text (up to MAX_INPUT_CHARS) and a 17-character token, ~300 bytes in an
# OrderedDict, so 50,000 held ~15 MB. The shared database holds them all (`query_tokens`): a forgotten one costs one
# indexed read when its button is pressed, which a link shared long ago pays anyway.
TOKENS_KEPT = 10_000


class QueryTokens:
    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession] | None = None,
                 capacity: int = TOKENS_KEPT) -> None:
        self._known: OrderedDict[str, str] = OrderedDict()
        self._capacity = capacity
        self._sessionmaker = sessionmaker
        self._pending: dict[str, str] = {}
        self._flushing: asyncio.Task[None] | None = None
        self._purged_at: datetime | None = None

    # ------------------------------------------------------------------ encoding
    def encode(self, text: str) -> str:
        """The token of `text`. A hashed one is stored in the background (see `stored` to wait for it)."""
        text = text[:MAX_INPUT_CHARS]
        raw = base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")
        if len(raw) + 1 <= INLINE_MAX:
            return "b" + raw
        token = "h" + hashlib.sha1(text.encode()).hexdigest()[:16]
        self._remember(token, text)
        if self._sessionmaker is not None:
            self._pending[token] = text
            self._flush_soon()
        return token

    async def stored(self, text: str) -> str:
        """The token of `text`, once the database has it: for a button the user may press at once on any replica."""
        token = self.encode(text)
        await self.flush()
        return token

    def _remember(self, token: str, text: str) -> None:
        self._known[token] = text
        self._known.move_to_end(token)
        while len(self._known) > self._capacity:
            self._known.popitem(last=False)

    def _flush_soon(self) -> None:
        if self._flushing is not None and not self._flushing.done():
            return
        with contextlib.suppress(RuntimeError):  # no running loop (a script): the next flush() writes them
            self._flushing = asyncio.get_running_loop().create_task(self._flush_logged())

    async def _flush_logged(self) -> None:
        while self._pending:  # tokens made while a write was under way go in the next one
            try:
                await self.flush()
            except Exception:  # the database is away: the token still works on this replica, and is retried
                log.warning("could not store link tokens", exc_info=True)
                return

    async def flush(self) -> None:
        """Write the tokens not yet stored (an upsert: replicas writing the same text agree on its token)."""
        if self._sessionmaker is None or not self._pending:
            return
        batch, self._pending = self._pending, {}
        now = datetime.now(UTC)
        try:
            async with self._sessionmaker() as session, session.begin():
                rows = [{"token": k, "text": v, "created_at": now} for k, v in batch.items()]
                # Rows as parameters of one statement (an executemany), not in it: a VALUES list is a new statement
                # for every count of rows, each compiled and kept by SQLAlchemy's statement cache.
                await session.execute(upsert_insert(session, QueryToken)
                                      .on_conflict_do_nothing(index_elements=["token"]), rows)
                if self._purged_at is None or now - self._purged_at > PURGE_EVERY:
                    await session.execute(delete(QueryToken).where(QueryToken.created_at < now - KEEP_FOR))
                    self._purged_at = now
        except BaseException:
            self._pending = {**batch, **self._pending}  # written next time
            raise

    # ------------------------------------------------------------------ decoding
    def decode(self, token: str) -> str | None:
        """The text of an inline token, or of a hashed one this process knows (no database)."""
        if token.startswith("b"):
            raw = token[1:]
            try:
                # validate: a tampered payload is rejected, not silently stripped of odd characters
                text = base64.b64decode(raw + "=" * (-len(raw) % 4), altchars=b"-_", validate=True).decode()
            except (binascii.Error, ValueError, UnicodeDecodeError):
                return None
            if has_control(text):  # encode() only ever sees text that passed cut_input: this one was forged
                return None
            return text or None  # the caller cuts it to MAX_INPUT_CHARS, telling the user, like any input
        if token.startswith("h"):
            return self._known.get(token)
        return None

    async def resolve(self, token: str) -> str | None:
        """`decode`, then the shared database for a hashed token another replica made."""
        text = self.decode(token)
        if text is not None or self._sessionmaker is None or not token.startswith("h") or len(token) != 17:
            return text
        async with self._sessionmaker() as session:
            text = await session.scalar(select(QueryToken.text).where(QueryToken.token == token))
        if text is None:
            return None
        text = text[:MAX_INPUT_CHARS]
        self._remember(token, text)
        return text

    async def close(self) -> None:
        """Write what is pending (called when the dispatcher stops)."""
        if self._flushing is not None:
            await asyncio.gather(self._flushing, return_exceptions=True)
        await self._flush_logged()
