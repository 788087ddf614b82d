"""A user's settings: each change stored and committed before the user is told, and the process's memory of the
user's language and currency (`bot.prefs.PrefsCache`, read by inline mode) kept in step with what was committed."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from bot.prefs import PrefsCache
from storage.subscriptions import set_currency, set_grouping, set_language, set_quiet_hours, set_tz_offset
from storage.user_tables import User


async def _commit(session: AsyncSession, user: User, prefs: PrefsCache | None) -> None:
    await session.commit()
    if prefs is not None:
        prefs.remember(user.id, user.lang, user.currency)


async def change_language(session: AsyncSession, user: User, lang: str, prefs: PrefsCache) -> None:
    """ValueError for a language the bot does not speak."""
    await set_language(session, user, lang)
    await _commit(session, user, prefs)


async def change_quiet_hours(session: AsyncSession, user: User, start: int | None, end: int | None) -> None:
    """Quiet hours from `start` to `end` (whole hours of the user's time zone), or none. ValueError when invalid."""
    await set_quiet_hours(session, user, start, end)
    await _commit(session, user, None)


async def change_time_zone(session: AsyncSession, user: User, minutes: int) -> None:
    """The time zone quiet hours are read in, as minutes east of UTC. ValueError when out of range."""
    await set_tz_offset(session, user, minutes)
    await _commit(session, user, None)


async def change_by_button(session: AsyncSession, user: User, what: str, value: str, prefs: PrefsCache) -> None:
    """A settings button (`bot.callbacks.SettingsCb`: what it changes, to which value). ValueError for a
    setting or value that is not one: a forged or outdated button changes nothing."""
    if what == "currency":
        await set_currency(session, user, value)
    elif what == "grouping":
        await set_grouping(session, user, value == "1")
    elif what == "lang":
        await set_language(session, user, value)
    else:
        raise ValueError(f"not a setting: {what!r}")
    await _commit(session, user, prefs)
