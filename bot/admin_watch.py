"""Telling admins when a provider stays degraded: once per degradation, after it has lasted `after` seconds."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from aiogram import Bot
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.formatting import esc
from bot.names import provider_name
from bot.provider_reasons import short_reason
from bot.texts import t
from core.redaction import redact
from storage.queries import provider_health
from storage.subscriptions import get_user

log = logging.getLogger(__name__)


def _reason(lang: str, raw: str | None) -> str:
    """Admins get the short reason and, for the logs, the poller's own words (redacted again: a row stored by an
    older version may hold what a provider echoed)."""
    return f"{short_reason(lang, raw)} — {esc(redact(raw) if raw else '?')}"


class DegradedWatch:
    def __init__(self, bot: Bot, sessionmaker: async_sessionmaker[AsyncSession], admin_ids: Iterable[int], *,
                 after: timedelta = timedelta(minutes=30)) -> None:
        self.bot = bot
        self.sessionmaker = sessionmaker
        self.admin_ids = tuple(admin_ids)
        self.after = after
        self._told: set[tuple[str, datetime]] = set()  # (provider, degraded since) already reported

    async def check(self, now: datetime | None = None) -> list[str]:
        """Notify admins of providers degraded for longer than `after`; returns the providers reported now."""
        now = now or datetime.now(UTC)
        async with self.sessionmaker() as session:
            health = await provider_health(session)
            langs = {a: (u.lang if (u := await get_user(session, a)) else "en") for a in self.admin_ids}
        reported = []
        for h in health:
            key = (h.provider, h.since)
            if h.status == "ok" or key in self._told or now - h.since < self.after:
                continue
            self._told.add(key)
            reported.append(h.provider)
            minutes = int((now - h.since).total_seconds() // 60)
            for admin, lang in langs.items():
                try:
                    await self.bot.send_message(admin, t(lang, "admin_degraded", name=esc(provider_name(h.provider)),
                                                         minutes=minutes, reason=_reason(lang, h.reason)))
                except Exception:  # an admin who blocked the bot must not stop the others hearing
                    log.warning("could not tell admin %s about %s", admin, h.provider, exc_info=True)
        return reported
