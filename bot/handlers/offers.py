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
from aiogram.types import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup, Message
from aiogram.utils.keyboard import InlineKeyboardBuilder

from bot.callbacks import OffersCb
from bot.estimates import Estimator, Failure
from bot.formatting import esc
from bot.handlers.common import argument
from bot.offer_cache import CachedOffer, OfferCache
from bot.subscribe_query import gpu_list
from bot.texts import examples_block, t
from bot.tokens import QueryTokens
from bot.views import rank_for, ranked_line, vat_note
from core.ranking import Ranked, rank_groups

router = Router(name="offers")

PAGE_SIZE = 8


def select_offers(text: str, offers: OfferCache, estimator: Estimator, lang: str,
                  currency: str = "RUB") -> Sequence[Ranked] | str:
    """The offers `text` asks for (all, a GPU list, or those fitting a workload), ranked, or the error to show."""
    if not text:
        return rank_groups(offers.groups(currency, unknown=True), currency)
    ids = gpu_list(text)
    if ids is not None:
        return rank_groups(offers.groups(currency, gpu_ids=ids), currency)
    result = estimator.get(text)
    if isinstance(result, Failure):
        return esc(result.message(lang)) or t(lang, "unknown", examples=examples_block(lang))
    return rank_for(result, offers, currency)


def render_page(items: Sequence[Ranked], text: str, page: int, token: str, lang: str,
                currency: str) -> tuple[str, InlineKeyboardMarkup | None]:
    what = t(lang, "offers_filter", what=esc(text)) if text else ""
    if not items:
        return t(lang, "offers_none", filter=what), None
    pages = max(1, math.ceil(len(items) / PAGE_SIZE))
    page = min(max(page, 1), pages)
    chunk = items[(page - 1) * PAGE_SIZE: page * PAGE_SIZE]
    lines = [t(lang, "offers_title", filter=what, page=page, pages=pages)]
    lines.extend(ranked_line(r, lang, currency) for r in chunk)
    if note := vat_note([r.offer for r in chunk if isinstance(r.offer, CachedOffer)], lang):
        lines.append(note)
    kb = InlineKeyboardBuilder()
    buttons = []
    if page > 1:
        buttons.append(InlineKeyboardButton(text=t(lang, "btn_prev"),
                                            callback_data=OffersCb(q=token, page=page - 1).pack()))
    if page < pages:
        buttons.append(InlineKeyboardButton(text=t(lang, "btn_next"),
                                            callback_data=OffersCb(q=token, page=page + 1).pack()))
    if buttons:
        kb.row(*buttons)
    return "\n".join(lines), kb.as_markup() if buttons else None


@router.message(Command("offers"), flags={"rate": "estimate"})
async def offers_command(message: Message, command: CommandObject, lang: str, currency: str, offers: OfferCache,
                         estimator: Estimator, tokens: QueryTokens) -> None:
    text = await argument(message, command, lang)
    if "/" in text:  # a workload naming a Hugging Face repository: look it up first (cached afterwards)
        await estimator.get_resolved(text)
    items = select_offers(text, offers, estimator, lang, currency)
    if isinstance(items, str):
        await message.answer(items)
        return
    body, kb = render_page(items, text, 1, await tokens.stored(text) if text else "", lang, currency)
    await message.answer(body, reply_markup=kb, disable_web_page_preview=True)


@router.callback_query(OffersCb.filter())
async def offers_page(query: CallbackQuery, callback_data: OffersCb, lang: str, currency: str, offers: OfferCache,
                      estimator: Estimator, tokens: QueryTokens) -> None:
    text = await tokens.resolve(callback_data.q) if callback_data.q else ""
    if text is None or query.message is None:
        await query.answer(t(lang, "deep_link_bad"), show_alert=True)
        return
    items = select_offers(text, offers, estimator, lang, currency)
    if isinstance(items, str):
        await query.answer()
        await query.message.answer(items)
        return
    body, kb = render_page(items, text, callback_data.page, callback_data.q, lang, currency)
    await query.answer()
    # "More offers" under an estimate opens a new list; ‹ › on a list turns its page in place.
    if _is_offer_list(query) and isinstance(query.message, Message):
        with contextlib.suppress(TelegramBadRequest):  # unchanged: 'message is not modified'
            await query.message.edit_text(body, reply_markup=kb, disable_web_page_preview=True)
    else:
        await query.message.answer(body, reply_markup=kb, disable_web_page_preview=True)


def _is_offer_list(query: CallbackQuery) -> bool:
    markup = getattr(query.message, "reply_markup", None)
    if markup is None:
        return False
    return all(OffersCb.__prefix__ + ":" in (b.callback_data or "") for row in markup.inline_keyboard for b in row)
