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
from bot.subscribe_query import parse_subscribe
from bot.subscribing import subscribe_answer
from bot.texts import examples_block, t
from bot.tokens import QueryTokens
from bot.views import has_assumptions, rank_for, render_estimate
from core.parser import ParseError
from storage.user_tables import User

router = Router(name="estimate")


async def estimate_view(est: Estimate, token: str, *, lang: str, currency: str, offers: OfferCache,
                        tokens: QueryTokens, assumptions: bool = False) -> tuple[str, InlineKeyboardMarkup]:
    """The answer and its buttons; what was assumed stays behind the "Assumptions" button unless `assumptions`."""
    ranked = rank_for(est, offers, currency)
    remedies = [(r.code, await tokens.stored(est.query + r.query_suffix)) for r in est.remedies()]
    toggle = assumptions if has_assumptions(est) else None
    return (render_estimate(est, ranked, lang, currency, assumptions=assumptions),
            keyboards.estimate_keyboard(lang, token, len(ranked), remedies, assumptions=toggle,
                                        notify=est.holds_at() and (not est.answer.has_target
                                                                   or bool(est.answer.keeping_counts()))))


# core's "which method?" questions -> the question the bot asks instead, and its buttons
_METHOD_QUESTIONS = {"wl_which_method": ("ask_method", keyboards.METHOD_CHOICES),
                     "wl_which_training": ("ask_training", keyboards.TRAINING_CHOICES)}


def needs_method(result: Failure) -> bool:
    err = result.error
    return isinstance(err, ParseError) and err.problem is not None and err.problem.key in _METHOD_QUESTIONS


def filters_hint(text: str, estimator: Estimator, lang: str) -> str | None:
    """A workload said with the filters of /offers and /subscribe ("13B LoRA under $1/h on runpod"): an estimate
    reads no filter, so the answer says where they apply, with the commands to send; None for anything else."""
    req = parse_subscribe(text)
    if not req.has_filters or not req.target or not isinstance(estimator.get(req.target), Estimate):
        return None
    return t(lang, "est_filters_hint", text=esc(text))


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
    result = await estimator.get_resolved(text, _user_id(message))
    if isinstance(result, Failure):
        if needs_method(result):
            await answer_failure(message, text, result, lang=lang, tokens=tokens)
            return True
        return False
    await send_estimate(message, result, lang=lang, currency=currency, offers=offers, tokens=tokens,
                        webapp_url=webapp_url)
    return True


async def send_estimate(message: Message, est: Estimate, *, lang: str, currency: str, offers: OfferCache,
                        tokens: QueryTokens, webapp_url: str | None = None) -> None:
    body, keyboard = await estimate_view(est, await tokens.stored(est.query), lang=lang, currency=currency,
                                         offers=offers, tokens=tokens)
    await answer_long(message, body, with_market(keyboard, webapp_url, lang, message.chat, est.query))


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
    if isinstance(result, Failure):
        await answer_failure(message, text, result, lang=lang, tokens=tokens,
                             hint=filters_hint(text, estimator, lang))
        return
    await send_estimate(message, result, lang=lang, currency=currency, offers=offers, tokens=tokens,
                        webapp_url=webapp_url)


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
    result = await estimator.get_resolved(phrase, query.from_user.id)
    if isinstance(result, Failure):
        await query.message.answer(esc(result.message(lang)) or t(lang, "unknown", examples=examples_block(lang)))
        return
    body, markup = await estimate_view(result, await tokens.stored(phrase), lang=lang, currency=currency,
                                       offers=offers, tokens=tokens)
    keyboard = with_market(markup, webapp_url, lang, query.message.chat, phrase)
    if len(body) <= 4096:
        with contextlib.suppress(TelegramBadRequest):
            await query.message.edit_text(body, reply_markup=keyboard, disable_web_page_preview=True)
            return
    await answer_long(query.message, body, keyboard)


async def _pressed_estimate(query: CallbackQuery, callback_data: EstimateCb, lang: str, estimator: Estimator,
                            tokens: QueryTokens) -> tuple[Message, Estimate, str] | None:
    """The estimate a button stands for, or None once the user has been told why there is none."""
    text = await tokens.resolve(callback_data.q)
    if not text or not isinstance(query.message, Message):
        await query.answer(t(lang, "deep_link_bad"), show_alert=True)
        return None
    await query.answer()
    result = await estimator.get_resolved(text, query.from_user.id)
    if isinstance(result, Failure):  # a model picked from a family may still need its method: asked with buttons
        await answer_failure(query.message, text, result, lang=lang, tokens=tokens)
        return None
    return query.message, result, text


@router.callback_query(EstimateCb.filter(F.action == "again"), flags={"rate": "estimate"})
async def remedy_pressed(query: CallbackQuery, callback_data: EstimateCb, lang: str, currency: str,
                         estimator: Estimator, offers: OfferCache, tokens: QueryTokens) -> None:
    """A remedy button: the estimate re-run with that change, as a new answer (the one it came from stays)."""
    pressed = await _pressed_estimate(query, callback_data, lang, estimator, tokens)
    if pressed is None:
        return
    message, result, _ = pressed
    await send_estimate(message, result, lang=lang, currency=currency, offers=offers, tokens=tokens)


@router.callback_query(EstimateCb.filter(F.action.in_({"assume", "hide"})), flags={"rate": "deep_link"})
async def toggle_assumptions(query: CallbackQuery, callback_data: EstimateCb, lang: str, currency: str,
                             estimator: Estimator, offers: OfferCache, tokens: QueryTokens,
                             webapp_url: str | None = None) -> None:
    """"Assumptions" shows what the estimate assumed in the same message; "Hide assumptions" takes it away again."""
    pressed = await _pressed_estimate(query, callback_data, lang, estimator, tokens)
    if pressed is None:
        return
    message, result, text = pressed
    body, markup = await estimate_view(result, callback_data.q, lang=lang, currency=currency, offers=offers,
                                       tokens=tokens, assumptions=callback_data.action == "assume")
    keyboard = with_market(markup, webapp_url, lang, message.chat, text)
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
