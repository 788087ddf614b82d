"""Last router: anything no other handler took. A plain message that reads as a workload gets its estimate;
an unknown command (including admin commands from non-admins) and anything else get a short answer with examples;
a stale button is acknowledged so the client stops spinning."""

from __future__ import annotations

from aiogram import F, Router
from aiogram.types import CallbackQuery, Message

from bot.estimates import Estimator
from bot.handlers.common import argument
from bot.handlers.estimate import reply_estimate
from bot.offer_cache import OfferCache
from bot.texts import examples_block, t
from bot.tokens import QueryTokens

router = Router(name="fallback")


@router.message(F.text.startswith("/"))
async def unknown_command(message: Message, lang: str) -> None:
    await message.answer(t(lang, "unknown_command"))


@router.message(F.text, flags={"rate": "estimate"})
async def free_text(message: Message, lang: str, currency: str, estimator: Estimator, offers: OfferCache,
                    tokens: QueryTokens) -> None:
    text = await argument(message, None, lang)
    if text and await reply_estimate(message, text, lang=lang, currency=currency, estimator=estimator,
                                     offers=offers, tokens=tokens):
        return
    await message.answer(t(lang, "unknown", examples=examples_block(lang)))


@router.message()
async def anything_else(message: Message, lang: str) -> None:
    await message.answer(t(lang, "unknown", examples=examples_block(lang)))


@router.callback_query()
async def stale_button(query: CallbackQuery, lang: str) -> None:
    await query.answer(t(lang, "button_stale"))
