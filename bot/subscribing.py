"""Creating a subscription from text (the command, a deep link, the "Notify me" button and the wizard all end here)
and saying what it now watches and what already matches."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from aiogram.types import Chat, InlineKeyboardButton, InlineKeyboardMarkup
from sqlalchemy.ext.asyncio import AsyncSession

from bot.callbacks import SubCb
from bot.estimates import Estimate, Estimator, Failure
from bot.formatting import cap_amount, esc, money
from bot.names import cards_label, query_words
from bot.offer_cache import OfferCache
from bot.subscribe_query import SubscribeRequest, parse_subscribe
from bot.texts import examples, t
from bot.views import ranked_line, subscription_filters, subscription_what
from core.fit import DEFAULT_COUNTS
from core.limits import MAX_GPUS, MAX_PRICE, MIN_GPUS
from core.matching import tight_at, usable_gib, watch_from_row
from core.parser import ParseError, left_out
from core.providers import provider_title
from core.ranking import Ranked, rank
from storage.subscriptions import (
    MAX_SUBSCRIPTIONS_PER_USER,
    SubscriptionDraft,
    SubscriptionLimitError,
    add_subscription,
)
from storage.user_tables import Subscription, User

MATCHES_SHOWN = 5
_SIZE = re.compile(r"\d+(?:[.,]\d+)?\s*[bбm]\b|\d+x\d+", re.IGNORECASE)


@dataclass(frozen=True)
class Reply:
    """What to answer after a subscribe attempt: the text and, in a group, the button that sends the new
    subscription's alerts to that group instead of the user's private chat."""

    text: str
    markup: InlineKeyboardMarkup | None = None
    subscription: Subscription | None = None  # what was stored (or already existed); None when refused
    created: bool = False


def draft_for(req: SubscribeRequest, est: Estimate | None, query_text: str, user_currency: str) -> SubscriptionDraft:
    common = dict(query_text=query_text[:500], max_price=req.max_price,
                  price_currency=req.price_currency or user_currency, price_basis=req.price_basis or "total",
                  price_period="month" if req.price_monthly and req.max_price is not None else "hour",
                  providers=req.providers,
                  gpu_count=req.gpu_count, billing=req.billing, region=req.region)
    if est is None:
        return SubscriptionDraft(kind="gpu", gpu_ids=req.gpu_ids, **common)
    pinned = list(est.workload.gpu_ids) or None  # "70B full on 8 H100": watch that GPU (every H100 variant) only
    least: dict[str, int] | None = None
    if est.answer.has_target:  # "1000 requests a minute": each card from the fewest of it that keep up
        least = est.answer.keeping_counts()
        pinned = list(least)
    w = est.workload
    count = watched_count(req, est)
    common["gpu_count"] = count
    # The figure the answer said is kept only where it is the need on the watched count (a filter "x8" on a
    # one-GPU estimate watches another configuration: the need shown is then that count's).
    said = est.memory.per_gpu_gib
    fits_as_said = math.isfinite(said) and (count or 1) == w.gpus and not est.answer.single_device_total
    answer_gib = round(said, 3) if fits_as_said else None  # a one-device total is no per-GPU need
    return SubscriptionDraft(kind="workload", gpu_ids=pinned, workload_json=est.workload.model_dump(mode="json"),
                             min_gib_by_count=est.min_gib_by_count(), min_count_by_gpu=least, answer_gib=answer_gib,
                             rec_gib_by_count=est.rec_gib_by_count(), **common)


def watched_count(req: SubscribeRequest, est: Estimate) -> int | None:
    """The GPU count a workload's watch is about: the filter said ("x2"), else the count the workload asked for."""
    return req.gpu_count or est.workload.count_asked


def fit_problem(est: Estimate | None, count: int | None, lang: str) -> str | None:
    """A workload that no card the watch covers holds at the count watched (at any count up to 8 when none is):
    nothing could ever be alerted ("13B LoRA on one 4090"), so it is said instead of stored, with how many of those
    cards would hold it."""
    if est is None or est.holds_at(count):
        return None
    cards = esc(cards_label(est.workload, lang) or t(lang, "sub_fit_any_card"))
    if count is None:
        return t(lang, "sub_fit_none_any", cards=cards)
    fewest = next((n for n in DEFAULT_COUNTS if n != count and est.holds_at(n)), None)
    hint = t(lang, "sub_fit_from", count=fewest) if fewest is not None else t(lang, "sub_fit_never")
    return t(lang, "sub_fit_none", cards=cards, count=count) + "\n" + hint


def target_problem(est: Estimate | None, lang: str) -> str | None:
    """A serving target no card keeps up with at any count that holds the workload: nothing could ever be alerted,
    so it is said instead of stored."""
    if est is None or not est.answer.has_target or est.answer.keeping_counts():
        return None
    return t(lang, "sub_target_none")


def explain_failure(req: SubscribeRequest, failure: Failure, lang: str) -> str:
    """A parse error's own explanation, or "unknown GPU" when the text looked like a card name rather than a job; a
    misspelt workload gets the whole command put right, filters and all, to send back."""
    message = failure.message(lang)
    if len(req.target.split()) <= 2 and not _SIZE.search(req.target):
        return t(lang, "unknown_gpu", name=esc(req.target))
    if not message:
        return t(lang, "unknown", examples=", ".join(examples(lang, "examples_short")))
    err = failure.error
    if isinstance(err, ParseError) and err.respelled is not None:
        command = respelled_command(req.text or req.target, req.target, err.respelled)
        return esc(message) + "\n" + t(lang, "sub_respelled", command=esc(command))
    if isinstance(err, ParseError) and err.left_out and (shorter := left_out(req.text or req.target, err.left_out)):
        return esc(message) + "\n" + t(lang, "sub_respelled", command=esc(shorter))
    return esc(message)


def respelled_command(text: str, target: str, respelled: str) -> str:
    """`text` with the words the target's respelling changed changed in it too (the filters kept as typed)."""
    for typed, right in zip(target.split(), respelled.split(), strict=False):
        if typed != right:
            text = re.sub(rf"(?<!\w){re.escape(typed)}(?!\w)", right, text, count=1)
    return text


def filter_words(sub: Subscription, lang: str) -> list[str]:
    """The subscription's filters as `/subscribe` reads them back (bot/subscribe_query.py), so a command suggested
    to the user watches the same count, providers, billing and region."""
    words = [f"x{sub.gpu_count}"] if sub.gpu_count else []
    if sub.providers:
        words.append(t(lang, "sub_cmd_providers", providers=", ".join(sub.providers)))
    if sub.billing:
        words.append(sub.billing)
    if sub.region:
        words.append(t(lang, "sub_cmd_region", region=sub.region))
    return words


def cap_reading(sub: Subscription, lang: str) -> str:
    """Which reading of the price cap was taken, with the other one beside it and how to ask for it instead."""
    if sub.max_price is None:
        return ""
    monthly = sub.price_period == "month"  # said back in the unit it was said in
    cap = cap_amount(sub.max_price, monthly)
    month = "_month" if monthly else ""
    price = money(cap, sub.price_currency, lang, exact=True)
    query = esc(" ".join((query_words(lang, sub.query_text)[:160], *filter_words(sub, lang))))
    if sub.price_basis == "total":
        return t(lang, "sub_cap_total" + month, price=price, query=query)
    n = sub.gpu_count if sub.gpu_count and sub.gpu_count > 1 else 8
    return t(lang, "sub_cap_gpu" + month, price=price, query=query, n=n,
             total=money(cap * n, sub.price_currency, lang))


def matching_now(sub: Subscription, cache: OfferCache, currency: str = "RUB") -> list[Ranked]:
    """Offers in stock that the subscription matches, ranked as everywhere else (whole configuration per hour,
    on-demand before spot)."""
    watch = watch_from_row(id=sub.id, gpu_ids=sub.gpu_ids, min_gib_by_count=sub.min_gib_by_count,
                           max_price=sub.max_price, price_currency=sub.price_currency,
                           price_basis=sub.price_basis, providers=sub.providers,
                           gpu_count=sub.gpu_count, billing=sub.billing, region=sub.region,
                           min_count_by_gpu=sub.min_count_by_gpu)
    recs = sub.rec_gib_by_count

    def tight(gpu: str, count: int, fraction: float | None) -> bool:
        have = usable_gib(gpu)
        return tight_at(recs, count, None if have is None else have * (fraction or 1.0))

    # A slice is matched by its share of the card (core.matching); tight fits are marked as the estimate marks them.
    return rank((o for o in cache.all() if watch.matches(o.target())), currency, tight_of=tight if recs else None)


async def subscribe_text(session: AsyncSession, user: User, text: str, *, lang: str, estimator: Estimator,
                         cache: OfferCache, chat: Chat | None = None,
                         setup: Mapping[str, str] | None = None) -> Reply:
    """Parse, store and describe: what is watched and what matches now, or why not (HTML). `chat`: where the
    request came from; only a group matters (the answer then offers to post the alerts there). `setup`: each
    provider's state here ("enabled", "disabled", "needs:…"), so a subscription to one nobody polls says so."""
    return await subscribe_request(session, user, parse_subscribe(text), lang=lang, estimator=estimator, cache=cache,
                                   chat=chat, setup=setup)


def limits_problem(req: SubscribeRequest, lang: str) -> str | None:
    """The clear answer for a filter outside core.limits, read from the user's text (None when all are fine)."""
    if req.problem == "count":
        return t(lang, "sub_bad_count", low=str(MIN_GPUS), high=str(MAX_GPUS))  # str: exact, no grouping
    if req.problem == "price":
        return t(lang, "sub_bad_price_cap", high=f"{MAX_PRICE:,.0f}".replace(",", " "))
    return None


async def subscribe_request(session: AsyncSession, user: User, req: SubscribeRequest, *, lang: str,
                            estimator: Estimator, cache: OfferCache, chat: Chat | None = None,
                            setup: Mapping[str, str] | None = None) -> Reply:
    problem = limits_problem(req, lang)
    if problem is not None:
        return Reply(problem)
    if not req.target:
        return Reply(t(lang, "sub_ask_workload", examples=", ".join(examples(lang, "examples_short"))))
    est: Estimate | None = None
    if req.gpu_ids is None:
        result = await estimator.get_resolved(req.target, user.id, count=req.gpu_count)  # "x2": on 2 GPUs
        if isinstance(result, Failure):
            return Reply(explain_failure(req, result, lang))
        est = result
    problem = target_problem(est, lang) or (fit_problem(est, watched_count(req, est), lang) if est else None)
    if problem is not None:
        return Reply(problem)
    draft = draft_for(req, est, req.target, user.currency)
    return await store_and_describe(session, user, draft, lang=lang, cache=cache, chat=chat, setup=setup)


async def subscribe_answer(session: AsyncSession, user: User, text: str, *, lang: str, estimator: Estimator,
                           cache: OfferCache, chat: Chat | None = None) -> Reply:
    """The 🔔 button under an estimate: the subscription keeps that answer's workload, per-GPU need and GPU count
    exactly, so the workload is estimated from the answer's own text (as the answer was), not from what is left of
    it once the filters are taken out; the filters in it (a price cap, providers) still apply. An answer whose text
    is a workload only once its filters are out was the estimate of that rest, and is watched as such."""
    req = parse_subscribe(text)
    problem = limits_problem(req, lang)
    if problem is not None:
        return Reply(problem)
    result = await estimator.get_resolved(text, user.id)
    said = text
    if isinstance(result, Failure) and req.has_filters and req.target and req.gpu_ids is None:
        # an answer to a workload said with filters ("7B LoRA under $0.22/h", bot.handlers.estimate.estimate_of):
        # its workload is what the filters leave, and every filter, the count too, is the watch's
        shorter = await estimator.get_resolved(req.target, user.id, count=req.gpu_count)
        if isinstance(shorter, Estimate):
            result, said = shorter, req.target
    if isinstance(result, Failure):
        return Reply(explain_failure(req, result, lang))
    if said is text:
        req.gpu_count = req.gpu_count if req.gpu_count == result.workload.gpus else None
    problem = target_problem(result, lang) or fit_problem(result, watched_count(req, result), lang)
    if problem is not None:
        return Reply(problem)
    draft = draft_for(req, result, said, user.currency)
    return await store_and_describe(session, user, draft, lang=lang, cache=cache, chat=chat)


def in_group(chat: Chat | None) -> bool:
    return chat is not None and chat.type != "private"


def not_polled_note(providers: list[str] | None, setup: Mapping[str, str] | None, lang: str) -> str | None:
    """When every provider a subscription names is one this bot does not poll: nothing would ever arrive, and
    the answer says so (and why) instead of promising an alert."""
    if not providers or setup is None:
        return None
    idle = [p for p in providers if setup.get(p, "enabled") != "enabled"]
    if len(idle) < len(providers):
        return None

    def why(p: str) -> str:
        return t(lang, "sub_provider_needs_key" if setup[p].startswith("needs:") else "sub_provider_off")

    return t(lang, "sub_not_polled", providers=esc(", ".join(f"{provider_title(p)} ({why(p)})" for p in idle)))


async def store_and_describe(session: AsyncSession, user: User, draft: SubscriptionDraft, *, lang: str,
                             cache: OfferCache, chat: Chat | None = None,
                             setup: Mapping[str, str] | None = None) -> Reply:
    try:
        added = await add_subscription(session, user, draft)  # alerts to the private chat until the user chooses
    except SubscriptionLimitError as e:
        return Reply(t(lang, "sub_limit", limit=e.limit))
    await session.commit()  # stored before the user is told so
    sub = added.subscription
    what, filters = subscription_what(sub, lang), subscription_filters(sub, lang)
    if not added.created:
        head = t(lang, "sub_exists", what=what, filters=filters)
    else:
        head = t(lang, "sub_saved", what=what, filters=filters, n=added.total, limit=MAX_SUBSCRIPTIONS_PER_USER)
    cap = cap_reading(sub, lang)
    if cap:
        head += "\n" + cap
    matches = matching_now(sub, cache, user.currency)
    idle = not_polled_note(sub.providers, setup, lang)
    if idle is not None:
        lines = [head, "", idle]
    elif not matches:
        lines = [head, "", t(lang, "sub_no_matches_now")]
    else:
        lines = [head, "", t(lang, "sub_matches_now")]
        lines.extend(ranked_line(r, lang, user.currency) for r in matches[:MATCHES_SHOWN])
    if not in_group(chat) or chat is None or sub.chat_id == chat.id:
        return Reply("\n".join(lines), subscription=sub, created=added.created)
    lines += ["", t(lang, "sub_group_note")]
    button = InlineKeyboardButton(text=t(lang, "btn_alerts_here"),
                                  callback_data=SubCb(action="here", id=sub.id).pack())
    return Reply("\n".join(lines), InlineKeyboardMarkup(inline_keyboard=[[button]]), subscription=sub,
                 created=added.created)


