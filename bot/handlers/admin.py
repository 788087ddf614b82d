"""Admin commands (/stats, /health, /testalert, and the admins' /providers with unknown GPU names) for ADMIN_IDS
only. The router's filter lets nobody else in, so everyone else's /stats falls through to the fallback's ordinary
"unknown command" answer, and their /providers to the public one."""

from __future__ import annotations

from aiogram import F, Router
from aiogram.filters import Command
from aiogram.types import Message
from sqlalchemy.ext.asyncio import AsyncSession

from bot.handlers.providers import providers
from bot.offer_cache import OfferCache
from bot.texts import t
from storage.subscriptions import bot_stats


def make_router(admin_ids: frozenset[int]) -> Router:
    router = Router(name="admin")
    router.message.filter(F.from_user.id.in_(admin_ids))

    @router.message(Command("stats"))
    async def stats(message: Message, session: AsyncSession, lang: str, offers: OfferCache) -> None:
        s = await bot_stats(session)
        await message.answer(t(lang, "admin_stats", offers=len(offers), **s.model_dump()))

    @router.message(Command("health", "providers"))
    async def health(message: Message, session: AsyncSession, lang: str, provider_names: list[str],
                     provider_setup: dict[str, str]) -> None:
        await providers(message, session, lang, provider_names, provider_setup, admin=True)

    @router.message(Command("testalert"))
    async def testalert(message: Message, lang: str) -> None:
        await message.answer(t(lang, "admin_testalert"))

    return router
