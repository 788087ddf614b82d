"""/providers: every provider the bot knows — watched and healthy, degraded (since when, why), switched off, or
waiting for an API key — with display names from the one provider catalog (core.providers). For admins (their
/providers and /health, bot/handlers/admin.py) each provider also lists the GPU names of its latest listing the
catalog does not know ("3 offers with unknown GPU `X`"): those offers are shown to nobody until mapped."""

from __future__ import annotations

from datetime import datetime

from aiogram import Router
from aiogram.filters import Command
from aiogram.types import Message
from sqlalchemy.ext.asyncio import AsyncSession

from bot.formatting import esc
from bot.provider_reasons import short_reason
from bot.texts import t
from core.providers import provider_title
from storage.queries import provider_health, unknown_gpu_offers

router = Router(name="providers")


def when(moment: datetime | None, lang: str) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment is not None else t(lang, "never")


@router.message(Command("providers"))
async def providers(message: Message, session: AsyncSession, lang: str, provider_names: list[str],
                    provider_setup: dict[str, str] | None = None, *, admin: bool = False) -> None:
    setup = provider_setup if provider_setup is not None else dict.fromkeys(provider_names, "enabled")
    health = {h.provider: h for h in await provider_health(session)}
    unknown = await unknown_gpu_offers(session) if admin else {}
    lines = [t(lang, "providers_title")]
    order = {"enabled": 0}
    names = sorted(set(setup) | set(provider_names) | set(health),
                   key=lambda n: (order.get(setup.get(n, "enabled"), 1), provider_title(n).lower()))
    for name in names:
        title = esc(provider_title(name))
        state = setup.get(name, "enabled")
        h = health.get(name)
        if state == "disabled":
            lines.append(t(lang, "provider_off", name=title))
        elif state.startswith("needs:"):
            lines.append(t(lang, "provider_needs_key", name=title,
                           settings=", ".join(f"<code>{esc(s)}</code>" for s in state[6:].split(","))))
        elif h is None:
            lines.append(t(lang, "provider_unknown", name=title))
        elif h.status == "ok":
            lines.append(t(lang, "provider_ok", name=title, when=when(h.last_success, lang)))
        else:
            lines.append(t(lang, "provider_degraded", name=title, since=when(h.since, lang),
                           reason=short_reason(lang, h.reason), when=when(h.last_success, lang)))
        for gpu, count in sorted(unknown.get(name, {}).items(), key=lambda item: (-item[1], item[0])):
            lines.append("    " + t(lang, "provider_unknown_gpu", count=count, name=esc(gpu)))
    await message.answer("\n".join(lines))
