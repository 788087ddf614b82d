"""Last router: anything no other handler took. A plain message that reads as a workload gets its estimate;
an unknown command (including admin commands from non-admins) and anything else get a short answer with examples;
a stale button is acknowledged so the client stops spinning."""

from __future__ import annotations

from aiogram import F, Router
from aiogram.types import CallbackQuery, Message

from bot.availability_marks import StayMarks
from bot.estimates import Estimator, Failure, reading_choices
from bot.handlers.common import argument
from bot.handlers.estimate import answer_failure, filters_hint, reply_estimate
from bot.handlers.offers import card_query, send_offers
from bot.listed_prices import ListedPrices
from bot.offer_cache import OfferCache
from bot.texts import examples_block, t
from bot.tokens import QueryTokens
from core.parser import ParseError

router = Router(name="fallback")


@router.message(F.text.startswith("/"))
async def unknown_command(message: Message, lang: str) -> None:
    await message.answer(t(lang, "unknown_command"))


@router.message(F.text, F.chat.type == "private", flags={"rate": "estimate"})
async def free_text(message: Message, lang: str, currency: str, estimator: Estimator, offers: OfferCache,
                    tokens: QueryTokens, stay_marks: StayMarks, webapp_url: str | None = None,
                    listed_prices: ListedPrices | None = None) -> None:
    """A plain message in a private chat is read as /estimate: the estimate, the method question, or — when part
    of it was understood, or it names a model family — what was and was not; a card and nothing else ("h100",
    "цена a100 в час") is a price question, answered with that card's offers as /offers is; only text with nothing
    of a workload gets the examples."""
    text = await argument(message, None, lang)
    if text and (cards := card_query(text)) is not None:  # "h100", "h100 x8", "a100 в россии до 200 ₽"
        await send_offers(message, cards, lang=lang, currency=currency, offers=offers, estimator=estimator,
                          tokens=tokens, stay_marks=stay_marks, webapp_url=webapp_url, listed_prices=listed_prices)
        return
    if text and await reply_estimate(message, text, lang=lang, currency=currency, estimator=estimator,
                                     offers=offers, tokens=tokens, webapp_url=webapp_url):
        return
    result = estimator.get(text) if text else None
    if isinstance(result, Failure) and isinstance(result.error, ParseError) and (
            result.error.understood or reading_choices(result)):  # "qwen3" alone: which Qwen3?
        await answer_failure(message, text, result, lang=lang, tokens=tokens,
                             hint=filters_hint(text, estimator, lang))
        return
    await message.answer(t(lang, "unknown", examples=examples_block(lang)))


@router.message(F.text)
async def group_text(message: Message) -> None:
    """Plain talk in a group is not addressed to the bot: no answer (commands still work there)."""


@router.message()
async def anything_else(message: Message, lang: str) -> None:
    await message.answer(t(lang, "unknown", examples=examples_block(lang)))


@router.callback_query()
async def stale_button(query: CallbackQuery, lang: str) -> None:
    await query.answer(t(lang, "button_stale"))
