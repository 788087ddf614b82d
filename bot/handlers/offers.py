"""/offers [GPU or workload]: in-stock offers, a page at a time with ‹ › buttons.

Ranked by what the user pays: the whole configuration per hour (and, for a workload with a dataset, the job's cost
there), on-demand before spot. A family name covers its variants ('H100' lists SXM, PCIe and NVL)."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence

from aiogram import Router
from aiogram.exceptions import TelegramBadRequest
from aiogram.filters import Command, CommandObject
from aiogram.types import CallbackQuery, InlineKeyboardMarkup, Message

from bot import keyboards
from bot.availability_marks import StayMarks
from bot.callbacks import OffersCb
from bot.estimates import Estimator, Failure
from bot.formatting import esc, split_message
from bot.handlers.common import argument
from bot.handlers.estimate import estimate_of, estimate_view
from bot.listed_prices import ListedPrices, with_listed
from bot.market_button import with_market
from bot.names import cards_named
from bot.offer_cache import CachedOffer, OfferCache
from bot.offers_asked import OffersAsked, offers_asked
from bot.subscribe_query import SubscribeRequest, card_spec, gpu_list, parse_subscribe
from bot.subscribing import limits_problem
from bot.texts import examples_block, t
from bot.tokens import QueryTokens
from bot.views import rank_for, ranked_line, vat_note
from core.ranking import Ranked, rank_groups

router = Router(name="offers")

PAGE_SIZE = 8


def select_offers(text: str, offers: OfferCache, estimator: Estimator, lang: str,
                  currency: str = "RUB", asked: OffersAsked | None = None) -> Sequence[Ranked] | str:
    """The offers `text` asks for (all, a GPU list, or those fitting a workload; with the filters said), ranked, or
    the error to show. `asked`: `offers_asked(text, currency)`, when the caller has read it already."""
    if not text:
        return rank_groups(offers.groups(currency), currency)
    asked = asked or offers_asked(text, currency)
    problem = limits_problem(asked.req, lang)
    if problem is not None:
        return problem
    target, keep = asked.target, asked.keep
    if not target:  # filters alone: "/offers under $2/h on runpod"
        return rank_groups(offers.groups(currency, keep=keep), currency)
    ids = asked.req.gpu_ids or gpu_list(target)  # "H100 8x": the cards, their count read as a filter
    if ids is None and (cards := cards_asked(target)) is not None:  # "h100 price per hour"
        ids = gpu_list(cards)
    if ids is not None:
        return rank_groups(offers.groups(currency, gpu_ids=ids, keep=keep), currency)
    result = estimator.get(target)
    if isinstance(result, Failure):
        return esc(result.message(lang)) or t(lang, "unknown", examples=examples_block(lang))
    return rank_for(result, offers, currency, keep)


def page_items(items: Sequence[Ranked], page: int, skip: int = 0) -> tuple[Sequence[Ranked], int, int]:
    """The offers on a page (after the first `skip`), the page number kept within range, and the page count."""
    count = max(0, len(items) - skip)
    pages = max(1, math.ceil(count / PAGE_SIZE))
    page = min(max(page, 1), pages)
    return items[skip + (page - 1) * PAGE_SIZE: skip + page * PAGE_SIZE], page, pages


async def short_marks(marks: StayMarks, items: Sequence[Ranked], page: int, skip: int = 0) -> frozenset[str]:
    chunk, _, _ = page_items(items, page, skip)
    return (await marks.short(r.offer for r in chunk if isinstance(r.offer, CachedOffer))).keys


def render_page(items: Sequence[Ranked], text: str, page: int, token: str, lang: str,
                currency: str, skip: int = 0,
                short: frozenset[str] = frozenset()) -> tuple[str, InlineKeyboardMarkup | None]:
    """One page of the offers after the first `skip` (those an estimate already showed; its page 1 then has
    ‹ Back to the estimate). `short`: keys of offers to mark short-lived."""
    what = t(lang, "offers_filter", what=esc(text)) if text else ""
    if len(items) <= skip:
        return t(lang, "offers_none", filter=what), None
    chunk, page, pages = page_items(items, page, skip)
    lines = [t(lang, "offers_title", filter=what, page=page, pages=pages)]
    lines.extend(ranked_line(r, lang, currency, short) for r in chunk)
    if any(isinstance(r.offer, CachedOffer) and r.offer.key in short for r in chunk):
        lines.append(t(lang, "avail_mark_legend"))
    if note := vat_note([r.offer for r in chunk if isinstance(r.offer, CachedOffer)], lang):
        lines.append(note)
    return "\n".join(lines), keyboards.offers_page_keyboard(lang, token, page, pages, skip)


def cards_asked(text: str) -> str | None:
    """The card(s) a phrase asks about when it names nothing else ("h100", "сколько стоит A100 80GB в час",
    "h100 price per hour"): their name as /offers reads it, else None. Such a phrase is a price question, answered
    with the offers; as a workload it would only lead to "which method?" and then "which model?"."""
    spec = card_spec(text)
    if spec is None or spec.gpu is None:
        return None
    return cards_named(spec.gpu_family or (spec.gpu,))  # "4090 or 3090", "A100/H100": each card, or its family


def card_query(text: str, req: SubscribeRequest | None = None) -> str | None:
    """What /offers is asked for by a phrase about cards alone: their name ("h100", "цена a100 в час" -> "A100"), or
    the whole phrase when it says filters with them ("h100 x8", "a100 в россии до 200 ₽"); None for anything else.
    A plain message and an inline query answer such a phrase with those offers. `req`: `parse_subscribe(text)`,
    when the caller has read it already."""
    if (cards := cards_asked(text)) is not None:
        return cards
    return text if (req or parse_subscribe(text)).gpu_ids is not None else None


async def send_offers(message: Message, text: str, *, lang: str, currency: str, offers: OfferCache,
                      estimator: Estimator, tokens: QueryTokens, stay_marks: StayMarks,
                      webapp_url: str | None = None, listed_prices: ListedPrices | None = None) -> None:
    """The first page of the offers `text` asks for (all, cards, or those fitting a workload)."""
    if "/" in text:  # a workload naming a Hugging Face repository: look it up first (cached afterwards)
        await estimator.get_resolved(text, message.from_user.id if message.from_user else None)
    asked = offers_asked(text, currency)
    items = select_offers(text, offers, estimator, lang, currency, asked)
    if isinstance(items, str):
        await message.answer(items)
        return
    body, kb = render_page(items, text, 1, await tokens.stored(text) if text else "", lang, currency,
                           short=await short_marks(stay_marks, items, 1))
    body = await with_listed(body, asked.listed, listed_prices, offers, estimator, lang, currency,
                                 keep=asked.keep)  # issue 20
    workload = asked.workload  # the market page starts from a workload, not a card name
    await message.answer(body, reply_markup=with_market(kb, webapp_url, lang, message.chat, workload),
                         disable_web_page_preview=True)


@router.message(Command("offers"), flags={"rate": "estimate"})
async def offers_command(message: Message, command: CommandObject, lang: str, currency: str, offers: OfferCache,
                         estimator: Estimator, tokens: QueryTokens, stay_marks: StayMarks,
                         webapp_url: str | None = None, listed_prices: ListedPrices | None = None) -> None:
    text = await argument(message, command, lang)
    await send_offers(message, text, lang=lang, currency=currency, offers=offers, estimator=estimator, tokens=tokens,
                      stay_marks=stay_marks, webapp_url=webapp_url, listed_prices=listed_prices)


@router.callback_query(OffersCb.filter())
async def offers_page(query: CallbackQuery, callback_data: OffersCb, lang: str, currency: str, offers: OfferCache,
                      estimator: Estimator, tokens: QueryTokens, stay_marks: StayMarks,
                      webapp_url: str | None = None, listed_prices: ListedPrices | None = None) -> None:
    text = await tokens.resolve(callback_data.q) if callback_data.q else ""
    if text is None or not isinstance(query.message, Message):
        await query.answer(t(lang, "deep_link_bad"), show_alert=True)
        return
    await query.answer()
    asked = offers_asked(text, currency)
    kb: InlineKeyboardMarkup | None
    if callback_data.page < 1 and callback_data.skip:  # ‹ Back from the list to the estimate it came from
        result, said = await estimate_of(text, estimator, currency, query.from_user.id)
        if isinstance(result, Failure):
            return
        body, kb = await estimate_view(result, callback_data.q, lang=lang, currency=currency, offers=offers,
                                       tokens=tokens, asked=said)
    else:
        items = select_offers(text, offers, estimator, lang, currency, asked)
        if isinstance(items, str):
            await query.message.answer(items)
            return
        page = max(callback_data.page, 1)
        body, kb = render_page(items, text, page, callback_data.q, lang, currency, skip=callback_data.skip,
                               short=await short_marks(stay_marks, items, page, callback_data.skip))
        body = await with_listed(body, asked.listed, listed_prices, offers, estimator, lang, currency,
                                 keep=asked.keep)
    workload = asked.workload
    kb = with_market(kb, webapp_url, lang, query.message.chat, workload)  # the edit keeps the market button
    # Every page turn (and "More offers" under an estimate) edits the message it was pressed on.
    with contextlib.suppress(TelegramBadRequest):  # unchanged: 'message is not modified'
        await query.message.edit_text(split_message(body)[-1] if len(body) > 4096 else body, reply_markup=kb,
                                      disable_web_page_preview=True)
