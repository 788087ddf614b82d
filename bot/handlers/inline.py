"""Inline mode: `@bot 70B QLoRA` -> the estimate and the best fitting offers as results; `@bot h100 x8` -> that
card's offers in stock, as /offers lists them.

Served from memory only (the estimate LRU, the offer cache, the prefs cache): no database round trip per
keystroke. At most 50 results per answer with unique ids; `next_offset` pages through the rest. Every result
carries a "Subscribe" deep link (`/start sub_<token>`) that subscribes in one tap.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from aiogram import Router
from aiogram.types import (
    InlineKeyboardMarkup,
    InlineQuery,
    InlineQueryResultArticle,
    InlineQueryResultUnion,
    InputTextMessageContent,
    LinkPreviewOptions,
)

from bot import keyboards
from bot.availability_marks import Marks, StayMarks
from bot.estimates import Estimate, Estimator, Failure, HubPending, reading_choices
from bot.formatting import cut_input, esc, gib, money
from bot.handlers.offers import card_query, select_offers
from bot.handlers.start import DEEP_LINK_PREFIX
from bot.names import provider_name, region_name
from bot.offer_cache import CachedOffer, OfferCache
from bot.offers_asked import OffersAsked, filters_with_workload
from bot.prefs import PrefsCache
from bot.subscribe_query import parse_subscribe
from bot.texts import examples, t
from bot.tokens import QueryTokens
from bot.views import headline_gib, offer_what, rank_for, ranked_line, render_estimate, workload_label
from core.limits import MAX_PAGE
from core.offers import HOURS_PER_MONTH
from core.ranking import Ranked

router = Router(name="inline")

# Keystrokes repeat the same few phrases, so answer pages are kept until the next ingest changes the offers. What
# is kept is a page's text, about 30 KB for 21 articles (an emoji in a text makes Python keep it at 4 bytes a
# character), not the aiogram objects built from it (about 110 KB: each article is a pydantic model with its keyboard,
# content and preview options): building those again costs ~0.4 ms, the text ~2 ms. The ranking behind a page is not
# kept at all: a lazy merge ranks a page in ~0.3 ms, while keeping it kept the phrase's Estimate and a generator per
# offer group alive (~75 KB a phrase). Measured by bench/memory.py (RSS after 10,000 distinct inline queries).
PAGES_KEPT = 128  # ~4 MB at most


@dataclass(frozen=True, slots=True)
class Article:
    """One result's text, cut to the Bot API's limits (title 200, description 500, message 4,096 characters)."""

    id: str
    title: str
    description: str
    text: str  # HTML

    @classmethod
    def cut(cls, id_: str, title: str, description: str, text: str) -> Article:
        return cls(id_, title[:200], description[:500], text[:4096])


@dataclass(frozen=True, slots=True)
class Page:
    """One answer page as plain text: what `results()` turns into Bot API objects for each query."""

    articles: tuple[Article, ...]
    subscribe_url: str  # the deep link behind every article's "Subscribe" button
    next_offset: str

    def results(self, lang: str) -> list[InlineQueryResultUnion]:
        kb = keyboards.subscribe_link_keyboard(lang, self.subscribe_url)
        return [_article(a.id, a.title, a.description, a.text, kb) for a in self.articles]


_PAGES: OrderedDict[tuple[object, ...], Page] = OrderedDict()

PAGE = 20  # offers per answer page (plus the estimate itself on the first page): well under Telegram's 50
CACHE_TIME = 30  # seconds Telegram may reuse an answer: prices change only when a poll is ingested
# Seconds an answer waits for the ⚡ marks of groups not read yet (bot/availability_marks.py). The read is a few ms;
# its rare slow ones (91 ms in bench/soak.py) made the slowest answers. Past it the answer goes without those marks.
MARKS_WAIT = 0.02


def _subscribe_url(bot_username: str, token: str) -> str:
    return f"https://t.me/{bot_username}?start={DEEP_LINK_PREFIX}{token}"


def _article(id_: str, title: str, description: str, text: str,
             kb: InlineKeyboardMarkup | None) -> InlineQueryResultArticle:
    return InlineQueryResultArticle(id=id_, title=title[:200], description=description[:500], reply_markup=kb,
                                    input_message_content=InputTextMessageContent(
                                        message_text=text[:4096], parse_mode="HTML",
                                        link_preview_options=LinkPreviewOptions(is_disabled=True)))


def example_results(lang: str, bot_username: str, tokens: QueryTokens) -> list[InlineQueryResultUnion]:
    return [_article(f"x{i}", t(lang, "inline_example_title", example=ex), t(lang, "inline_example_desc"),
                     f"<code>@{bot_username} {esc(ex)}</code>",
                     keyboards.subscribe_link_keyboard(lang, _subscribe_url(bot_username, tokens.encode(ex))))
            for i, ex in enumerate(examples(lang))]


def estimate_article(id_: str, est: Estimate, ranked: Sequence[Ranked], lang: str, currency: str,
                     asked: OffersAsked | None = None) -> Article:
    """The estimate itself as a result: its memory in the title, the configurations that fit below, the whole
    answer (with the best of `ranked`) as the message."""
    fits = ", ".join(f"{f.gpu_name}×{f.count}" + ("!" if f.tight else "") for f in est.answer.listed_fits()[:4]) \
        or t(lang, "est_no_fit")
    figure, per_gpu = headline_gib(est)
    title = t(lang, "inline_est_title" if per_gpu else "inline_est_title_total", workload=workload_label(est, lang),
              per_gpu=gib(figure, lang))
    return Article.cut(id_, title, t(lang, "inline_est_desc", fits=fits),
                       render_estimate(est, ranked, lang, currency,
                                       filters=asked.said(lang, currency) if asked is not None else "",
                                       filter_count=asked.count if asked is not None else None))


def estimate_page(est: Estimate, ranked: Sequence[Ranked], offset: int, lang: str, currency: str,
                  bot_username: str, tokens: QueryTokens, short: frozenset[str] = frozenset(),
                  asked: OffersAsked | None = None) -> Page:
    """The estimate and its offers (`ranked`, through the filters of `asked` when some were said with the workload:
    said in the estimate, and watched by each result's "Subscribe")."""
    label = workload_label(est, lang)
    articles: list[Article] = []
    if offset == 0:
        articles.append(estimate_article("e", est, ranked, lang, currency, asked))
    header = t(lang, "est_header", workload=esc(label))
    articles.extend(_offer_article(i, r, header, lang, currency, short, workload=est.query)
                    for i, r in enumerate(ranked[offset:offset + PAGE], start=offset))
    next_offset = str(offset + PAGE) if offset + PAGE < len(ranked) else ""
    said = asked.req.text if asked is not None else est.query
    return Page(tuple(articles), _subscribe_url(bot_username, tokens.encode(said)), next_offset)


def cards_page(what: str, ranked: Sequence[Ranked], offset: int, lang: str, currency: str, bot_username: str,
               tokens: QueryTokens, short: frozenset[str] = frozenset()) -> Page:
    """Cards asked for with nothing of a workload ("@bot h100 x8", "@bot a100 в россии до 200 ₽"): their offers in
    stock, cheapest configuration first, as /offers lists them, one article each; none in stock is said as one
    article whose button watches them."""
    if not ranked:
        none = t(lang, "offers_none", filter=t(lang, "offers_filter", what=esc(what)))
        article = Article.cut("n", t(lang, "inline_cards_none_title", what=what), t(lang, "inline_cards_none_desc"),
                              none)
        return Page((article,) if offset == 0 else (), _subscribe_url(bot_username, tokens.encode(what)), "")
    header = t(lang, "inline_cards_header", what=esc(what))
    articles = tuple(_offer_article(i, r, header, lang, currency, short)
                     for i, r in enumerate(ranked[offset:offset + PAGE], start=offset))
    next_offset = str(offset + PAGE) if offset + PAGE < len(ranked) else ""
    return Page(articles, _subscribe_url(bot_username, tokens.encode(what)), next_offset)


def _offer_article(i: int, r: Ranked, header: str, lang: str, currency: str, short: frozenset[str],
                   workload: str | None = None) -> Article:
    """One offer as a result: what, price and provider in the title, the month's price and place (and the workload
    it fits) below, `header` and its line as the message."""
    offer = r.offer
    assert isinstance(offer, CachedOffer)
    per_hour = r.price_per_hour
    location = f" · {region_name(lang, offer.location, offer.provider)}" if offer.location else ""
    title = t(lang, "inline_offer_title", what=offer_what(offer, lang), per_hour=money(per_hour, currency, lang),
              provider=provider_name(offer.provider), spot=t(lang, "inline_spot") if r.spot else "")
    if r.tight:
        title += t(lang, "inline_tight")
    if offer.key in short:
        title += " " + t(lang, "avail_mark_short")
    per_month = money(None if per_hour is None else per_hour * HOURS_PER_MONTH, currency, lang)
    desc = (t(lang, "inline_offer_desc", location=location, workload=workload, per_month=per_month)
            if workload is not None else t(lang, "inline_card_offer_desc", location=location, per_month=per_month))
    return Article.cut(f"o{i}", title, desc, f"{header}\n{ranked_line(r, lang, currency, short)}")


def estimate_results(est: Estimate, ranked: Sequence[Ranked], offset: int, lang: str, currency: str,
                     bot_username: str, tokens: QueryTokens) -> tuple[list[InlineQueryResultUnion], str]:
    """The Bot API results of one answer page and its `next_offset`."""
    page = estimate_page(est, ranked, offset, lang, currency, bot_username, tokens)
    return page.results(lang), page.next_offset


def _reading_results(failure: Failure, estimator: Estimator, offers: OfferCache, lang: str, currency: str,
                     bot_username: str, tokens: QueryTokens) -> list[InlineQueryResultUnion]:
    """A phrase one fragment kept from being a workload: the estimate of each reading it could have had (a family's
    models, either side of a contradiction) that is then a whole workload, one article each."""
    out: list[InlineQueryResultUnion] = []
    for i, (_, phrase) in enumerate(reading_choices(failure)):
        est = estimator.get(phrase)
        if isinstance(est, Estimate):
            a = estimate_article(f"f{i}", est, rank_for(est, offers, currency), lang, currency)
            kb = keyboards.subscribe_link_keyboard(lang, _subscribe_url(bot_username, tokens.encode(est.query)))
            out.append(_article(a.id, a.title, a.description, a.text, kb))
    return out


def _kept(key: tuple[object, ...]) -> Page | None:
    page = _PAGES.get(key)
    if page is not None:
        _PAGES.move_to_end(key)
    return page


async def _marks(stay_marks: StayMarks, ranked: Sequence[Ranked], offset: int) -> Marks:
    """The ⚡ marks of the offers a page shows, waiting at most MARKS_WAIT for those not read yet."""
    shown = ranked[offset:offset + PAGE]
    return await stay_marks.short((r.offer for r in shown if isinstance(r.offer, CachedOffer)), MARKS_WAIT)


def _keep(key: tuple[object, ...], page: Page, marks: Marks) -> None:
    if marks.complete:  # one that went without some marks is made again by the next asker, who has them
        _PAGES[key] = page
        while len(_PAGES) > PAGES_KEPT:
            _PAGES.popitem(last=False)


async def _answer_cards(query: InlineQuery, cards: str, estimator: Estimator, offers: OfferCache, lang: str,
                        currency: str, bot_username: str, tokens: QueryTokens, stay_marks: StayMarks) -> None:
    offset = parse_offset(query.offset)
    key = ("cards", id(offers), offers.version, cards.lower(), offset, lang, currency, bot_username)
    page = _kept(key)
    if page is None:
        ranked = select_offers(cards, offers, estimator, lang, currency)
        if isinstance(ranked, str):  # a filter out of bounds ("x100"): said as it is in a chat
            said = _article("syntax", t(lang, "inline_syntax_title", query=cards[:60]), t(lang, "inline_syntax_desc"),
                            ranked, None)
            await query.answer([said], cache_time=CACHE_TIME, is_personal=True)
            return
        marks = await _marks(stay_marks, ranked, offset)
        page = cards_page(cards, ranked, offset, lang, currency, bot_username, tokens, marks.keys)
        _keep(key, page, marks)
    await query.answer(page.results(lang), cache_time=CACHE_TIME, is_personal=True, next_offset=page.next_offset)


async def _answer_failure(query: InlineQuery, text: str, result: Failure, estimator: Estimator, offers: OfferCache,
                          lang: str, currency: str, bot_username: str, tokens: QueryTokens,
                          stay_marks: StayMarks) -> tuple[Estimate, OffersAsked] | None:
    """A text that is not a workload as it is: each reading it could have had, a card's offers, or what was not
    understood, answered here (None); or a workload said with filters, "@bot 7B LoRA under $0.30/h", whose estimate
    the caller answers with only the offers they let through."""
    readings = _reading_results(result, estimator, offers, lang, currency, bot_username, tokens)
    if readings:  # "@bot qwen3 lora": each of the family's models, answered; "70B LoRA or QLoRA": both
        await query.answer(readings, cache_time=CACHE_TIME, is_personal=True)
        return None
    req = parse_subscribe(text)  # read once for both questions below
    cards = card_query(text, req)
    if cards is not None:  # "@bot h100 x8": that card's offers, as a plain message or /offers answers it
        await _answer_cards(query, cards, estimator, offers, lang, currency, bot_username, tokens, stay_marks)
        return None
    asked = filters_with_workload(text, currency, req)
    shorter = estimator.get(asked.target, count=asked.count) if asked is not None else None
    if asked is not None and isinstance(shorter, Estimate):
        return shorter, asked
    syntax = _article("syntax", t(lang, "inline_syntax_title", query=text[:60]), t(lang, "inline_syntax_desc"),
                      esc(result.message(lang)) or t(lang, "inline_syntax_desc"), None)
    only: list[InlineQueryResultUnion] = [syntax]
    await query.answer(only, cache_time=CACHE_TIME, is_personal=True)
    return None


def parse_offset(raw: str) -> int:
    """The `next_offset` we gave Telegram, coming back; anything else (Unicode digits such as '²', which pass
    str.isdigit() but not int(), huge numbers, text) starts from the top."""
    if raw.isascii() and raw.isdigit() and len(raw) <= 5:
        return min(int(raw), MAX_PAGE * PAGE)
    return 0


@router.inline_query(flags={"rate": "inline"})
async def inline(query: InlineQuery, estimator: Estimator, offers: OfferCache, prefs: PrefsCache,
                 tokens: QueryTokens, bot_username: str, stay_marks: StayMarks) -> None:
    p = prefs.get(query.from_user.id, query.from_user.language_code)
    text, _ = cut_input(query.query)
    if not text:
        await query.answer(example_results(p.lang, bot_username, tokens), cache_time=CACHE_TIME, is_personal=True)
        return
    result = estimator.get(text)
    if isinstance(result, HubPending):  # the answer comes with a later keystroke (or the same text again)
        refused = estimator.lookup_soon(result.repo, query.from_user.id)
        if refused is not None:
            result = Failure(result.query, refused)
    asked: OffersAsked | None = None
    if isinstance(result, Failure):
        filtered = await _answer_failure(query, text, result, estimator, offers, p.lang, p.currency, bot_username,
                                         tokens, stay_marks)
        if filtered is None:
            return
        result, asked = filtered
    offset = parse_offset(query.offset)
    said = asked.req.text if asked is not None else result.query
    key = (id(offers), offers.version, said.lower(), offset, p.lang, p.currency, bot_username)
    page = _kept(key)
    if page is None:
        ranked = rank_for(result, offers, p.currency, asked.keep if asked is not None else None)
        marks = await _marks(stay_marks, ranked, offset)
        page = estimate_page(result, ranked, offset, p.lang, p.currency, bot_username, tokens, marks.keys,
                             asked=asked)
        _keep(key, page, marks)
    await query.answer(page.results(p.lang), cache_time=CACHE_TIME, is_personal=True, next_offset=page.next_offset)
