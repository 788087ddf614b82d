"""/estimate <workload>: VRAM with the breakdown, fitting configurations, cheapest fitting offers, time and cost.

Buttons: "Notify me" subscribes to the same workload; "More offers" (when more fit than are shown) turns the same
message into the list of the others, starting after the ones shown. A phrase that names a model but no method
("mistral 7b") is answered with method buttons.
"""

from __future__ import annotations

import contextlib

from aiogram import F, Router
from aiogram.exceptions import TelegramBadRequest
from aiogram.filters import Command, CommandObject
from aiogram.types import CallbackQuery, InlineKeyboardMarkup, Message
from sqlalchemy.ext.asyncio import AsyncSession

from bot import keyboards
from bot.callbacks import EstimateCb
from bot.estimates import Estimate, Estimator, Failure, HubPending, reading_choices
from bot.formatting import esc
from bot.handlers.common import answer_long, argument
from bot.handlers.start import start_keyboard
from bot.market_button import with_market
from bot.offer_cache import OfferCache
from bot.offers_asked import OffersAsked, filters_with_workload
from bot.subscribe_query import parse_subscribe
from bot.subscribing import limits_problem, subscribe_answer
from bot.texts import examples_block, t
from bot.tokens import QueryTokens
from bot.views import has_assumptions, rank_for, render_estimate
from core.parser import ParseError
from storage.user_tables import User

router = Router(name="estimate")


async def estimate_view(est: Estimate, token: str, *, lang: str, currency: str, offers: OfferCache,
                        tokens: QueryTokens, assumptions: bool = False,
                        asked: OffersAsked | None = None) -> tuple[str, InlineKeyboardMarkup]:
    """The answer and its buttons; what was assumed stays behind the "Assumptions" button unless `assumptions`.
    `asked`: the filters said with the workload (`estimate_of`): its offers are those they let through, said so,
    and each remedy keeps them."""
    ranked = rank_for(est, offers, currency, asked.keep if asked else None)
    said = said_text(est, asked)
    remedies = [(r.code, await tokens.stored(said + r.query_suffix)) for r in est.remedies()]
    toggle = assumptions if has_assumptions(est) else None
    holds = est.holds_at(asked.count if asked else None)
    return (render_estimate(est, ranked, lang, currency, assumptions=assumptions,
                            filters=asked.said(lang, currency) if asked else "",
                            filter_count=asked.count if asked else None),
            keyboards.estimate_keyboard(lang, token, len(ranked), remedies, assumptions=toggle,
                                        notify=holds and (not est.answer.has_target
                                                          or bool(est.answer.keeping_counts()))))


async def estimate_of(text: str, estimator: Estimator, currency: str,
                      user_id: int | None) -> tuple[Estimate | Failure, OffersAsked | None]:
    """The estimate `text` asks for, and the filters its offers go through: a workload said with the filters of
    /offers and /subscribe ("13B LoRA under $1/h on runpod", "70B QLoRA x2 spot") is the estimate of the workload,
    whose offers are those the filters let through, on the GPU count they keep ("x2") when the workload says
    none (or its method question, asked of the whole text); anything
    else is the estimate of the text as it is, with none."""
    result = await estimator.get_resolved(text, user_id)
    if not isinstance(result, Failure):
        return result, None
    asked = filters_with_workload(text, currency)
    if asked is None:
        return result, None
    shorter = await estimator.get_resolved(asked.target, user_id, count=asked.count)
    return (shorter, asked) if isinstance(shorter, Estimate) or needs_method(shorter) else (result, None)


def said_text(est: Estimate, asked: OffersAsked | None) -> str:
    """The text an estimate answers, as said: with the filters said with its workload (`estimate_of`). What its
    buttons and the market page stand for."""
    return asked.req.text if asked is not None else est.query


# core's "which method?" questions -> the question the bot asks instead, and its buttons
_METHOD_QUESTIONS = {"wl_which_method": ("ask_method", keyboards.METHOD_CHOICES),
                     "wl_which_training": ("ask_training", keyboards.TRAINING_CHOICES)}


def needs_method(result: Failure) -> bool:
    err = result.error
    return isinstance(err, ParseError) and err.problem is not None and err.problem.key in _METHOD_QUESTIONS


def filters_hint(text: str, estimator: Estimator, lang: str) -> str | None:
    """A workload said with a filter out of bounds ("13B LoRA under $0/h"): which bounds it must keep; None for
    anything else (a workload said with good filters is answered, its offers filtered: `estimate_of`)."""
    req = parse_subscribe(text)
    if req.problem is None or not req.target or not isinstance(estimator.get(req.target), Estimate):
        return None
    return limits_problem(req, lang)


async def answer_failure(message: Message, text: str, result: Failure, *, lang: str, tokens: QueryTokens,
                         hint: str | None = None) -> None:
    """A phrase that is not (yet) a workload: ask for the method with buttons when only that is missing (the ways
    to train when a training word was said); a family named without its size gets its models as buttons, and two
    fragments that contradict each other either reading; else say what was and was not understood (and `hint`:
    where the filters said with a workload apply)."""
    if needs_method(result):
        assert isinstance(result.error, ParseError) and result.error.problem is not None  # needs_method says so
        question, choices = _METHOD_QUESTIONS[result.error.problem.key]
        await message.answer(t(lang, question, workload=esc(text)),
                             reply_markup=keyboards.method_keyboard(lang, await tokens.stored(text), choices))
        return
    said = esc(result.message(lang)) or t(lang, "unknown", examples=examples_block(lang))
    if hint is not None:
        said += "\n\n" + hint
    readings = reading_choices(result)
    if readings:
        buttons = [(label, await tokens.stored(phrase)) for label, phrase in readings]
        await message.answer(said, reply_markup=keyboards.choice_keyboard(buttons))
        return
    await message.answer(said)


def _user_id(message: Message) -> int | None:
    return message.from_user.id if message.from_user else None


async def reply_estimate(message: Message, text: str, *, lang: str, currency: str, estimator: Estimator,
                         offers: OfferCache, tokens: QueryTokens, webapp_url: str | None = None) -> bool:
    """Answer with the estimate of `text` (or the method question); False (nothing sent) when it is not a
    workload at all."""
    result, asked = await estimate_of(text, estimator, currency, _user_id(message))
    if isinstance(result, Failure):
        if needs_method(result):
            await answer_failure(message, text, result, lang=lang, tokens=tokens)
            return True
        return False
    await send_estimate(message, result, lang=lang, currency=currency, offers=offers, tokens=tokens,
                        webapp_url=webapp_url, asked=asked)
    return True


async def send_estimate(message: Message, est: Estimate, *, lang: str, currency: str, offers: OfferCache,
                        tokens: QueryTokens, webapp_url: str | None = None, asked: OffersAsked | None = None) -> None:
    """The estimate as a new message; its buttons stand for the text as said, filters and all."""
    said = said_text(est, asked)
    body, keyboard = await estimate_view(est, await tokens.stored(said), lang=lang, currency=currency, offers=offers,
                                         tokens=tokens, asked=asked)
    await answer_long(message, body, with_market(keyboard, webapp_url, lang, message.chat, said))


@router.message(Command("estimate"), flags={"rate": "estimate"})
async def estimate(message: Message, command: CommandObject, lang: str, currency: str, estimator: Estimator,
                   offers: OfferCache, tokens: QueryTokens, webapp_url: str | None = None) -> None:
    text = await argument(message, command, lang)
    if not text:  # the examples as buttons (shown once: not also in the text), each answering with its estimate
        await message.answer(t(lang, "estimate_usage"), reply_markup=await start_keyboard(lang, tokens))
        return
    result = estimator.get(text)
    if isinstance(result, HubPending):  # a model only the Hugging Face Hub knows: say so, then look it up
        looking = await message.answer(esc(result.message(lang)))
        result = await estimator.get_resolved(text, _user_id(message))
        if isinstance(result, Failure):
            await looking.edit_text(esc(result.message(lang)) or t(lang, "unknown", examples=examples_block(lang)))
            return
    asked = None
    if isinstance(result, Failure):
        result, asked = await estimate_of(text, estimator, currency, _user_id(message))
    if isinstance(result, Failure):
        await answer_failure(message, text, result, lang=lang, tokens=tokens,
                             hint=filters_hint(text, estimator, lang))
        return
    await send_estimate(message, result, lang=lang, currency=currency, offers=offers, tokens=tokens,
                        webapp_url=webapp_url, asked=asked)


@router.callback_query(EstimateCb.filter(F.action.startswith("m_")), flags={"rate": "deep_link"})
async def chose_method(query: CallbackQuery, callback_data: EstimateCb, lang: str, currency: str,
                       estimator: Estimator, offers: OfferCache, tokens: QueryTokens,
                       webapp_url: str | None = None) -> None:
    """A method button under "which method?": the question turns into the estimate of the phrase + that method."""
    text = await tokens.resolve(callback_data.q)
    method = callback_data.action.removeprefix("m_")
    if not text or method not in keyboards.ANY_METHOD_CHOICE or not isinstance(query.message, Message):
        await query.answer(t(lang, "deep_link_bad"), show_alert=True)
        return
    await query.answer()
    phrase = f"{text} {method}"
    result, asked = await estimate_of(phrase, estimator, currency, query.from_user.id)
    if isinstance(result, Failure):
        await query.message.answer(esc(result.message(lang)) or t(lang, "unknown", examples=examples_block(lang)))
        return
    body, markup = await estimate_view(result, await tokens.stored(phrase), lang=lang, currency=currency,
                                       offers=offers, tokens=tokens, asked=asked)
    keyboard = with_market(markup, webapp_url, lang, query.message.chat, said_text(result, asked))
    if len(body) <= 4096:
        with contextlib.suppress(TelegramBadRequest):
            await query.message.edit_text(body, reply_markup=keyboard, disable_web_page_preview=True)
            return
    await answer_long(query.message, body, keyboard)


async def _pressed_estimate(query: CallbackQuery, callback_data: EstimateCb, lang: str, currency: str,
                            estimator: Estimator,
                            tokens: QueryTokens) -> tuple[Message, Estimate, OffersAsked | None] | None:
    """The estimate a button stands for (with the filters said with it), or None once the user has been told why
    there is none."""
    text = await tokens.resolve(callback_data.q)
    if not text or not isinstance(query.message, Message):
        await query.answer(t(lang, "deep_link_bad"), show_alert=True)
        return None
    await query.answer()
    result, asked = await estimate_of(text, estimator, currency, query.from_user.id)
    if isinstance(result, Failure):  # a model picked from a family may still need its method: asked with buttons
        await answer_failure(query.message, text, result, lang=lang, tokens=tokens)
        return None
    return query.message, result, asked


@router.callback_query(EstimateCb.filter(F.action == "again"), flags={"rate": "estimate"})
async def remedy_pressed(query: CallbackQuery, callback_data: EstimateCb, lang: str, currency: str,
                         estimator: Estimator, offers: OfferCache, tokens: QueryTokens) -> None:
    """A remedy button: the estimate re-run with that change, as a new answer (the one it came from stays)."""
    pressed = await _pressed_estimate(query, callback_data, lang, currency, estimator, tokens)
    if pressed is None:
        return
    message, result, asked = pressed
    await send_estimate(message, result, lang=lang, currency=currency, offers=offers, tokens=tokens, asked=asked)


@router.callback_query(EstimateCb.filter(F.action.in_({"assume", "hide"})), flags={"rate": "deep_link"})
async def toggle_assumptions(query: CallbackQuery, callback_data: EstimateCb, lang: str, currency: str,
                             estimator: Estimator, offers: OfferCache, tokens: QueryTokens,
                             webapp_url: str | None = None) -> None:
    """"Assumptions" shows what the estimate assumed in the same message; "Hide assumptions" takes it away again."""
    pressed = await _pressed_estimate(query, callback_data, lang, currency, estimator, tokens)
    if pressed is None:
        return
    message, result, asked = pressed
    body, markup = await estimate_view(result, callback_data.q, lang=lang, currency=currency, offers=offers,
                                       tokens=tokens, assumptions=callback_data.action == "assume", asked=asked)
    keyboard = with_market(markup, webapp_url, lang, message.chat, said_text(result, asked))
    if len(body) <= 4096:
        with contextlib.suppress(TelegramBadRequest):  # unchanged: 'message is not modified'
            await message.edit_text(body, reply_markup=keyboard, disable_web_page_preview=True)
        return
    await answer_long(message, body, keyboard)


@router.callback_query(EstimateCb.filter(F.action == "notify"), flags={"rate": "deep_link"})
async def notify_me(query: CallbackQuery, callback_data: EstimateCb, session: AsyncSession, user: User, lang: str,
                    estimator: Estimator, offers: OfferCache, tokens: QueryTokens) -> None:
    text = await tokens.resolve(callback_data.q)
    if not text or query.message is None:
        await query.answer(t(lang, "deep_link_bad"), show_alert=True)
        return
    reply = await subscribe_answer(session, user, text, lang=lang, estimator=estimator, cache=offers,
                                   chat=query.message.chat)
    await query.answer()
    await query.message.answer(reply.text, reply_markup=reply.markup, disable_web_page_preview=True)
