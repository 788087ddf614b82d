"""/start (with `sub_<token>` deep links that subscribe in one tap) and /help."""

from __future__ import annotations

from aiogram import Router
from aiogram.filters import Command, CommandObject, CommandStart
from aiogram.types import Message
from sqlalchemy.ext.asyncio import AsyncSession

from bot.estimates import Estimator
from bot.offer_cache import OfferCache
from bot.subscribing import subscribe_text
from bot.texts import examples, t
from bot.tokens import QueryTokens
from core.providers import provider_title
from storage.user_tables import User

router = Router(name="start")


def start_text(lang: str, provider_names: list[str]) -> str:
    """The welcome, naming the providers actually watched (display names from the one catalog)."""
    names = [provider_title(n) for n in provider_names] or ["—"]
    joined = names[0] if len(names) == 1 else (", ".join(names[:-1]) + (" и " if lang == "ru" else " and ")
                                               + names[-1])
    return t(lang, "start", providers=joined)

DEEP_LINK_PREFIX = "sub_"


@router.message(CommandStart(deep_link=True))
async def start_deep_link(message: Message, command: CommandObject, session: AsyncSession, user: User, lang: str,
                          estimator: Estimator, offers: OfferCache, tokens: QueryTokens,
                          provider_names: list[str]) -> None:
    payload = command.args or ""
    query = tokens.decode(payload[len(DEEP_LINK_PREFIX):]) if payload.startswith(DEEP_LINK_PREFIX) else None
    if not query:
        await message.answer(start_text(lang, provider_names))
        if payload.startswith(DEEP_LINK_PREFIX):
            await message.answer(t(lang, "deep_link_bad"))
        return
    reply = await subscribe_text(session, user, query, lang=lang, estimator=estimator, cache=offers)
    await message.answer(reply, disable_web_page_preview=True)


@router.message(CommandStart())
async def start(message: Message, lang: str, provider_names: list[str]) -> None:
    await message.answer(start_text(lang, provider_names))


@router.message(Command("help"))
async def help_(message: Message, lang: str, bot_username: str) -> None:
    sample = " · ".join(f"<code>{e}</code>" for e in examples(lang))
    await message.answer(t(lang, "help", examples=sample, bot=bot_username))
