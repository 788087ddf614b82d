"""/when GPU|WORKLOAD [under cap] (also "когда …" typed as text): how often it was in stock over the last 30 days,
how soon it came back after selling out, and what is happening right now — from the availability aggregates
(storage/availability.py), one indexed read per question.

A GPU name means that card × 1 unless a count is named ('H100 x8'); a family name covers its variants. A workload
means any configuration it fits. A price cap without a currency sign is in the user's currency; it is the hourly price
of the whole configuration ('H100 x8 under $20' is $2.50 per GPU-hour) unless the user says it is per GPU ('per
GPU-hour', 'за GPU-час', '/h/GPU'). Spot offers count only when asked for ('spot'): interruptible capacity is not what
"in stock" means to most buyers.
"""

from __future__ import annotations

import re

from aiogram import F, Router
from aiogram.filters import Command, CommandObject
from aiogram.types import Message
from sqlalchemy.ext.asyncio import AsyncSession

from bot.availability_view import when_answer
from bot.estimates import Estimate, Estimator
from bot.formatting import cap_amount, esc, money
from bot.handlers.common import argument
from bot.offers_asked import filters_said
from bot.subscribe_query import parse_subscribe
from bot.subscribing import limits_problem
from bot.texts import t
from bot.when_question import asks_how_long, what_is_asked
from core.gpus import get_gpu
from storage.availability import DEFAULT_BILLINGS, card_stats
from storage.availability_cache import ChangeCache

router = Router(name="when")

WINDOW_DAYS = 30
_WORD = re.compile(r"^\s*(?:когда|when)\s+(?P<rest>\S.*)$", re.IGNORECASE | re.DOTALL)


def _gpu_label(ids: list[str]) -> str:
    names: list[str] = []
    for gpu_id in ids:
        gpu = get_gpu(gpu_id)
        family = [i for i in ids if get_gpu(i).family == gpu.family]
        name = gpu.family if len(family) > 1 else gpu.name
        if name not in names:
            names.append(name)
    return ", ".join(names)


def _fits(est: Estimate, count: int | None):  # type: ignore[no-untyped-def]
    def fits(card: str, n: int) -> bool:
        if count is not None and n != count:
            return False
        try:
            return bool(est.fits(card, n))
        except KeyError:  # a card outside the catalog is never guessed to fit
            return False

    return fits


async def answer_when(text: str, *, session: AsyncSession, lang: str, currency: str, estimator: Estimator,
                      user_id: int | None, cache: ChangeCache | None = None) -> str:
    """The answer to `/when <text>` (HTML): `text` may be asked as a question ("how long does an H100 stay in
    stock on runpod?"), whose asking is no part of what it is about."""
    req = parse_subscribe(what_is_asked(text))
    problem = limits_problem(req, lang)
    if problem is not None:
        return problem
    if not req.target:
        return t(lang, "when_usage")
    cur = req.price_currency or currency
    billings = (req.billing,) if req.billing else DEFAULT_BILLINGS
    if req.gpu_ids:
        count = req.gpu_count or 1
        what = t(lang, "when_what_gpu", gpu=esc(_gpu_label(req.gpu_ids)), count=str(count))
        stats = await card_stats(session, req.gpu_ids, count, cap=req.max_price, cap_per_gpu=req.price_per_gpu,
                                 currency=cur, days=WINDOW_DAYS, billings=billings, cache=cache,
                                 providers=req.providers, region=req.region)
    else:
        result = await estimator.get_resolved(req.target, user_id, count=req.gpu_count)  # "x2": on 2 GPUs
        if not isinstance(result, Estimate):
            return t(lang, "when_unknown", text=esc(req.target))
        what = t(lang, "when_what_workload", workload=esc(req.target))
        stats = await card_stats(session, None, None, fits=_fits(result, req.gpu_count), cap=req.max_price,
                                 cap_per_gpu=req.price_per_gpu, currency=cur, days=WINDOW_DAYS, billings=billings,
                                 cache=cache, providers=req.providers, region=req.region)
    monthly = req.price_monthly  # said back in the unit it was said in
    cap = money(cap_amount(req.max_price, monthly), cur, lang, exact=True) if req.max_price is not None else None
    # every other filter the figures went through, said after what they are about
    said = filters_said(req, lang, cur, price=False, count=not req.gpu_ids)
    return when_answer(lang, stats, what, cap, monthly=monthly, filters=said)


@router.message(Command("when"), flags={"rate": "estimate"})
async def when_command(message: Message, command: CommandObject, session: AsyncSession, lang: str,
                       currency: str, estimator: Estimator, availability: ChangeCache) -> None:
    text = await argument(message, command, lang)
    if not text:
        await message.answer(t(lang, "when_usage"))
        return
    user_id = message.from_user.id if message.from_user else None
    await message.answer(await answer_when(text, session=session, lang=lang, currency=currency,
                                           estimator=estimator, user_id=user_id, cache=availability),
                         disable_web_page_preview=True)


@router.message(F.text.func(asks_how_long), F.chat.type == "private", flags={"rate": "estimate"})
async def when_asked(message: Message, session: AsyncSession, lang: str, currency: str, estimator: Estimator,
                     availability: ChangeCache) -> None:
    """"How long does an H100 stay in stock?", "как часто бывает A100 у runpod?": the /when question, asked."""
    user_id = message.from_user.id if message.from_user else None
    await message.answer(await answer_when((message.text or "")[:500], session=session, lang=lang, currency=currency,
                                           estimator=estimator, user_id=user_id, cache=availability),
                         disable_web_page_preview=True)


@router.message(F.text.regexp(_WORD).as_("match"), flags={"rate": "estimate"})
async def when_word(message: Message, match: re.Match[str], session: AsyncSession, lang: str, currency: str,
                    estimator: Estimator, availability: ChangeCache) -> None:
    user_id = message.from_user.id if message.from_user else None
    text = match.group("rest")[:500]
    await message.answer(await answer_when(text, session=session, lang=lang, currency=currency,
                                           estimator=estimator, user_id=user_id, cache=availability),
                         disable_web_page_preview=True)
