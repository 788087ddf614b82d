"""/estimate <workload>: VRAM with the breakdown, fitting configurations, cheapest fitting offers, time and cost.

Buttons: "Notify me" subscribes to the same workload, "More offers" opens the paginated offer list for it.
"""

from __future__ import annotations

from aiogram import Router
from aiogram.filters import Command, CommandObject
from aiogram.types import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup, Message
from aiogram.utils.keyboard import InlineKeyboardBuilder
from sqlalchemy.ext.asyncio import AsyncSession

from bot.callbacks import EstimateCb, OffersCb
from bot.estimates import Estimate, Estimator, Failure, HubPending
from bot.formatting import esc
from bot.handlers.common import answer_long, argument
from bot.offer_cache import OfferCache
from bot.subscribing import subscribe_text
from bot.texts import examples_block, t
from bot.tokens import QueryTokens
from bot.views import rank_for, render_estimate
from storage.user_tables import User

router = Router(name="estimate")


def estimate_keyboard(lang: str, token: str) -> InlineKeyboardMarkup:
    kb = InlineKeyboardBuilder()
    kb.row(InlineKeyboardButton(text=t(lang, "btn_notify"),
                                callback_data=EstimateCb(action="notify", q=token).pack()))
    kb.row(InlineKeyboardButton(text=t(lang, "btn_more_offers"), callback_data=OffersCb(q=token, page=1).pack()))
    return kb.as_markup()


async def reply_estimate(message: Message, text: str, *, lang: str, currency: str, estimator: Estimator,
                         offers: OfferCache, tokens: QueryTokens) -> bool:
    """Answer with the estimate of `text`; False (nothing sent) when it is not a workload."""
    result = await estimator.get_resolved(text)
    if isinstance(result, Failure):
        return False
    await send_estimate(message, result, lang=lang, currency=currency, offers=offers, tokens=tokens)
    return True


async def send_estimate(message: Message, est: Estimate, *, lang: str, currency: str, offers: OfferCache,
                        tokens: QueryTokens) -> None:
    body = render_estimate(est, rank_for(est, offers, currency), lang, currency)
    await answer_long(message, body, estimate_keyboard(lang, await tokens.stored(est.query)))


@router.message(Command("estimate"), flags={"rate": "estimate"})
async def estimate(message: Message, command: CommandObject, lang: str, currency: str, estimator: Estimator,
                   offers: OfferCache, tokens: QueryTokens) -> None:
    text = await argument(message, command, lang)
    if not text:
        await message.answer(t(lang, "estimate_usage", examples=examples_block(lang)))
        return
    result = estimator.get(text)
    if isinstance(result, HubPending):  # a model only the Hugging Face Hub knows: say so, then look it up
        looking = await message.answer(esc(result.message(lang)))
        result = await estimator.get_resolved(text)
        if isinstance(result, Failure):
            await looking.edit_text(esc(result.message(lang)) or t(lang, "unknown", examples=examples_block(lang)))
            return
    if isinstance(result, Failure):
        await message.answer(esc(result.message(lang)) or t(lang, "unknown", examples=examples_block(lang)))
        return
    await send_estimate(message, result, lang=lang, currency=currency, offers=offers, tokens=tokens)


@router.callback_query(EstimateCb.filter(), flags={"rate": "deep_link"})
async def notify_me(query: CallbackQuery, callback_data: EstimateCb, session: AsyncSession, user: User, lang: str,
                    estimator: Estimator, offers: OfferCache, tokens: QueryTokens) -> None:
    text = await tokens.resolve(callback_data.q)
    if not text or query.message is None:
        await query.answer(t(lang, "deep_link_bad"), show_alert=True)
        return
    reply = await subscribe_text(session, user, text, lang=lang, estimator=estimator, cache=offers,
                                 chat=query.message.chat)
    await query.answer()
    await query.message.answer(reply.text, reply_markup=reply.markup, disable_web_page_preview=True)
