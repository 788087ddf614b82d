"""/providers: which providers are watched, when each last succeeded, and which are degraded."""

from __future__ import annotations

from datetime import datetime

from aiogram import Router
from aiogram.filters import Command
from aiogram.types import Message
from sqlalchemy.ext.asyncio import AsyncSession

from bot.formatting import esc
from bot.names import provider_name
from bot.provider_reasons import short_reason
from bot.texts import t
from storage.queries import provider_health

router = Router(name="providers")


def when(moment: datetime | None, lang: str) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment is not None else t(lang, "never")


@router.message(Command("providers"))
async def providers(message: Message, session: AsyncSession, lang: str, provider_names: list[str]) -> None:
    health = {h.provider: h for h in await provider_health(session)}
    lines = [t(lang, "providers_title")]
    for name in sorted(set(provider_names) | set(health)):
        h = health.get(name)
        if h is None:
            lines.append(t(lang, "provider_unknown", name=esc(provider_name(name))))
        elif h.status == "ok":
            lines.append(t(lang, "provider_ok", name=esc(provider_name(name)), when=when(h.last_success, lang)))
        else:
            lines.append(t(lang, "provider_degraded", name=esc(provider_name(name)), since=when(h.since, lang),
                           reason=short_reason(lang, h.reason), when=when(h.last_success, lang)))
    await message.answer("\n".join(lines))
