"""Inline mode: `@bot 70B QLoRA` -> the estimate and the best fitting offers as results.

Served from memory only (the estimate LRU, the offer cache, the prefs cache): no database round trip per
keystroke. At most 50 results per answer with unique ids; `next_offset` pages through the rest. Every result
carries a "Subscribe" deep link (`/start sub_<token>`) that subscribes in one tap.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from aiogram import Router
from aiogram.types import (
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InlineQuery,
    InlineQueryResultArticle,
    InlineQueryResultUnion,
    InputTextMessageContent,
    LinkPreviewOptions,
)

from bot.estimates import Estimate, Estimator, Failure, HubPending
from bot.formatting import cut_input, esc, gib, money
from bot.handlers.start import DEEP_LINK_PREFIX
from bot.names import provider_name, region_name
from bot.offer_cache import CachedOffer, OfferCache
from bot.prefs import PrefsCache
from bot.texts import examples, t
from bot.tokens import QueryTokens
from bot.views import offer_what, rank_for, ranked_line, render_estimate, workload_label
from core.limits import MAX_PAGE
from core.offers import HOURS_PER_MONTH
from core.ranking import Ranked, RankedGroups

router = Router(name="inline")

# Built answers are big (~20 rendered articles with keyboards: hundreds of KB), so only the hottest few are kept;
# the ranking behind an answer is small (references to cached offers) and is kept for many more phrases.
ANSWERS_KEPT = 64
RANKINGS_KEPT = 2048
_ANSWERS: OrderedDict[tuple[object, ...], tuple[list[InlineQueryResultUnion], str]] = OrderedDict()
_RANKINGS: OrderedDict[tuple[object, ...], RankedGroups] = OrderedDict()

PAGE = 20  # offers per answer page (plus the estimate itself on the first page): well under Telegram's 50
CACHE_TIME = 30  # seconds Telegram may reuse an answer: prices change only when a poll is ingested


def _subscribe_kb(bot_username: str, token: str, lang: str) -> InlineKeyboardMarkup:
    url = f"https://t.me/{bot_username}?start={DEEP_LINK_PREFIX}{token}"
    return InlineKeyboardMarkup(inline_keyboard=[[InlineKeyboardButton(text=t(lang, "btn_subscribe"), url=url)]])


def _article(id_: str, title: str, description: str, text: str,
             kb: InlineKeyboardMarkup | None) -> InlineQueryResultArticle:
    return InlineQueryResultArticle(id=id_, title=title[:200], description=description[:500], reply_markup=kb,
                                    input_message_content=InputTextMessageContent(
                                        message_text=text[:4096], parse_mode="HTML",
                                        link_preview_options=LinkPreviewOptions(is_disabled=True)))


def example_results(lang: str, bot_username: str, tokens: QueryTokens) -> list[InlineQueryResultUnion]:
    return [_article(f"x{i}", t(lang, "inline_example_title", example=ex), t(lang, "inline_example_desc"),
                     f"<code>@{bot_username} {esc(ex)}</code>", _subscribe_kb(bot_username, tokens.encode(ex), lang))
            for i, ex in enumerate(examples(lang))]


def estimate_results(est: Estimate, ranked: Sequence[Ranked], offset: int, lang: str, currency: str,
                     bot_username: str, tokens: QueryTokens) -> tuple[list[InlineQueryResultUnion], str]:
    kb = _subscribe_kb(bot_username, tokens.encode(est.query), lang)
    label = workload_label(est, lang)
    results: list[InlineQueryResultUnion] = []
    if offset == 0:
        fits = ", ".join(f"{f.gpu_name}×{f.count}" + ("!" if f.tight else "") for f in est.report.fits[:4]) \
            or t(lang, "est_no_fit")
        results.append(_article("e", t(lang, "inline_est_title", workload=label, per_gpu=gib(est.memory.per_gpu_gib)),
                                t(lang, "inline_est_desc", fits=fits),
                                render_estimate(est, ranked, lang, currency), kb))
    for i, r in enumerate(ranked[offset:offset + PAGE], start=offset):
        offer = r.offer
        assert isinstance(offer, CachedOffer)
        per_hour = r.price_per_hour
        location = f" · {region_name(lang, offer.location)}" if offer.location else ""
        title = t(lang, "inline_offer_title", what=offer_what(offer, lang), per_hour=money(per_hour, currency),
                  provider=provider_name(offer.provider), spot=t(lang, "inline_spot") if r.spot else "")
        desc = t(lang, "inline_offer_desc", location=location, workload=est.query,
                 per_month=money(None if per_hour is None else per_hour * HOURS_PER_MONTH, currency))
        text = f"{t(lang, 'est_header', workload=esc(label))}\n{ranked_line(r, lang, currency)}"
        results.append(_article(f"o{i}", title, desc, text, kb))
    next_offset = str(offset + PAGE) if offset + PAGE < len(ranked) else ""
    return results, next_offset


def parse_offset(raw: str) -> int:
    """The `next_offset` we gave Telegram, coming back; anything else (Unicode digits such as '²', which pass
    str.isdigit() but not int(), huge numbers, text) starts from the top."""
    if raw.isascii() and raw.isdigit() and len(raw) <= 5:
        return min(int(raw), MAX_PAGE * PAGE)
    return 0


@router.inline_query()
async def inline(query: InlineQuery, estimator: Estimator, offers: OfferCache, prefs: PrefsCache,
                 tokens: QueryTokens, bot_username: str) -> None:
    p = prefs.get(query.from_user.id, query.from_user.language_code)
    text, _ = cut_input(query.query)
    if not text:
        await query.answer(example_results(p.lang, bot_username, tokens), cache_time=CACHE_TIME, is_personal=True)
        return
    result = estimator.get(text)
    if isinstance(result, HubPending):  # the answer comes with a later keystroke (or the same text again)
        estimator.lookup_soon(result.repo)
    if isinstance(result, Failure):
        syntax = _article("syntax", t(p.lang, "inline_syntax_title", query=text[:60]), t(p.lang, "inline_syntax_desc"),
                          esc(result.message(p.lang)) or t(p.lang, "inline_syntax_desc"), None)
        only: list[InlineQueryResultUnion] = [syntax]
        await query.answer(only, cache_time=CACHE_TIME, is_personal=True)
        return
    offset = parse_offset(query.offset)
    # Keystrokes repeat the same few phrases: the built answer is kept until the next ingest changes the offers.
    key = (id(offers), offers.version, result.query.lower(), offset, p.lang, p.currency, bot_username)
    answer = _ANSWERS.get(key)
    if answer is None:
        rank_key = (id(offers), offers.version, result.query.lower(), p.currency)
        ranked = _RANKINGS.get(rank_key)
        if ranked is None:
            ranked = _RANKINGS[rank_key] = rank_for(result, offers, p.currency)
            while len(_RANKINGS) > RANKINGS_KEPT:
                _RANKINGS.popitem(last=False)
        else:
            _RANKINGS.move_to_end(rank_key)
        answer = estimate_results(result, ranked, offset, p.lang, p.currency, bot_username, tokens)
        _ANSWERS[key] = answer
        while len(_ANSWERS) > ANSWERS_KEPT:
            _ANSWERS.popitem(last=False)
    else:
        _ANSWERS.move_to_end(key)
    results, next_offset = answer
    await query.answer(results, cache_time=CACHE_TIME, is_personal=True, next_offset=next_offset)
