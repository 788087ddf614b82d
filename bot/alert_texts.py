"""Alert messages in Russian and English: what appeared, where, for how much, why it fits, where to order it.

An alert is built from queued events (`core.alerts.AlertEvent`), one block per offer naming every subscription of
the user it matches (`core.alerts.Reason`). Several blocks for one user go into one message (the user's `grouping`
setting), packed so every message stays under Telegram's 4096 characters; each message carries one "stop these
alerts" button per subscription it speaks for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar

from bot.availability_view import alert_line
from bot.formatting import cap_amount, esc, href, money
from bot.names import provider_name, query_words, region_name
from core.alerts import AlertEvent, Reason
from core.availability import WindowStats
from core.gpus import get_gpu
from core.offers import HOURS_PER_MONTH, Offer, slice_label
from texts.i18n import render, t

MESSAGE_LIMIT = 4000  # under Telegram's 4096, leaving room for the header
QUERY_SHOWN = 200  # characters of the subscription's text repeated in an alert
MAX_STOP_BUTTONS = 8  # a keyboard, not a wall: the rest can be paused from /subs
DIGEST_MESSAGES = 1  # messages a grouped digest takes at most (SENDER__DIGEST_MESSAGES): one a poll, the rest counted


def at(lang: str, key: str, **values: Any) -> str:
    """An alert text (catalog key `alert_<key>`)."""
    return t(lang, f"alert_{key}", **values)


def _gpu_name(offer: Offer) -> str:
    if offer.gpu:
        try:
            return get_gpu(offer.gpu).name
        except KeyError:
            pass
    return offer.gpu_name or "GPU"


def _reason(reason: Reason, offer: Offer, lang: str) -> str:
    # The user's own text is the only part of a block without a natural bound (up to 500 characters).
    q = query_words(lang, reason.query_text)
    query = esc(q if len(q) <= QUERY_SHOWN else q[: QUERY_SHOWN - 1] + "…")
    if reason.kind == "workload" and reason.need_gib is not None and reason.usable_gib is not None:
        gpu = esc(reason.gpu_name or _gpu_name(offer))
        if offer.fraction is not None:  # "1/20 A100 · 4 GB gives 3.9 GiB", never "A100 gives"
            gpu = render(lang, slice_label(gpu, offer.gpu, offer.fraction, offer.gpu_memory_gb))
        line = at(lang, "fits_workload", query=query, need=f"{reason.need_gib:.0f}", have=f"{reason.usable_gib:.0f}",
                  gpu=gpu)
        if reason.tight:
            line += at(lang, "tight")
        if reason.keeps_up:
            line += at(lang, "keeps_up")
    else:
        line = at(lang, "fits_gpu", query=query)
    if reason.max_price is not None:
        # a monthly offer's prices are read per month: the cap beside them too
        monthly = offer.billing.value == "monthly"
        key = ("under_cap_total" if reason.price_basis == "total" else "under_cap") + ("_month" if monthly else "")
        line += at(lang, key, cap=money(cap_amount(reason.max_price, monthly), reason.max_price_currency or "USD",
                                        lang, exact=True))
    return line


def reason_line(reason: Reason, offer: Offer, lang: str) -> str:
    """The line under an offer saying why it fits one subscription (what `render_block` writes per reason)."""
    return _reason(reason, offer, lang)


def render_offer(event: AlertEvent, lang: str, currency: str,
                 week: WindowStats | None = None) -> tuple[str, str]:
    """The parts of an offer's block every reader in this language and currency shares: headline, prices,
    was-price and, when its group's last 7 days say something, how long such offers last; and the order link.
    (The sender renders them once per event, not once per user.)"""
    offer = event.offer
    count = offer.gpu_count
    fraction = offer.fraction
    if fraction is not None:  # a slice is alerted as the share of a card it is, never as the card
        what = render(lang, slice_label(esc(_gpu_name(offer)), offer.gpu, fraction, offer.gpu_memory_gb))
    else:
        what = esc(f"{_gpu_name(offer)} ×{count}" if count > 1 else _gpu_name(offer))
    where = at(lang, "where", location=esc(region_name(lang, offer.location, offer.provider))) if offer.location else ""
    if offer.billing.value in ("monthly", "spot"):
        where += at(lang, f"billing_{offer.billing.value}")
    provider = esc(provider_name(offer.provider))
    kind = event.kind.value
    lines = [at(lang, kind if kind in ("appeared", "back_in_stock", "price_drop") else "appeared",
                what=what, provider=provider, where=where)]

    per_gpu, cur = event.price_in(currency)
    if per_gpu is not None and fraction is not None:  # a slice has no price per GPU-hour: it is not a GPU
        lines.append(at(lang, "price_slice", per_hour=money(per_gpu * count, cur, lang),
                        per_month=money(per_gpu * count * HOURS_PER_MONTH, cur, lang)))
    elif per_gpu is not None:
        lines.append(at(lang, "price", per_gpu_hour=money(per_gpu, cur, lang),
                        per_hour=money(per_gpu * count, cur, lang),
                        per_month=money(per_gpu * count * HOURS_PER_MONTH, cur, lang)))
    vat_rate, _included = offer.vat
    if per_gpu is not None and vat_rate:  # as the lists say it: the price compared is the one with VAT
        lines[-1] += at(lang, "vat", rate=f"{vat_rate * 100:g}")
    if kind == "price_drop":
        old, old_cur = event.price_in(currency, old=True)
        if old is not None and per_gpu is not None and old > 0 and old_cur == cur:
            change = f"{(per_gpu - old) / old * 100:+.0f} %".replace("-", "−")
            if fraction is not None:  # a slice was priced per hour of the share, never per GPU-hour
                lines.append(at(lang, "was_slice", old=money(old * count, cur, lang), change=change))
            else:
                lines.append(at(lang, "was", old=money(old, cur, lang), change=change))
    line = alert_line(lang, week)
    if line is not None:
        lines.append(line)
    url = href(offer.url)
    return "\n".join(lines), (at(lang, "order", url=url, provider=provider) if url else "")


def render_block(event: AlertEvent, reasons: Sequence[Reason], lang: str, currency: str,
                 offer_parts: tuple[str, str] | None = None) -> str:
    """One offer: headline, prices (per GPU-hour, per hour, per month), was-price, then why it fits — one line per
    subscription it matches (the offer is named once however many of the user's subscriptions it reaches) — and the
    order link. `offer_parts`: `render_offer(...)` already made for this event, language and currency."""
    head, order = offer_parts or render_offer(event, lang, currency)
    lines = [head, *(_reason(r, event.offer, lang) for r in reasons)]
    if order:
        lines.append(order)
    return "\n".join(lines)


@dataclass(frozen=True)
class AlertMessage:
    """One Telegram message: its text and the subscriptions it speaks for (for the stop buttons)."""

    text: str
    subscriptions: tuple[tuple[int, str], ...]  # (subscription id, its text)


Block = tuple[tuple[tuple[int, str], ...], str]  # (subscriptions the offer matches, the offer's block)


Item = TypeVar("Item")


@lru_cache(maxsize=256)
def _counted(lang: str, key: str, n: int) -> str:
    """A digest's header or closing line for a count (a few dozen distinct ones: made once, not per message)."""
    return at(lang, key, n=n)


def pack_digest(items: Sequence[Item], lang: str, *, max_messages: int,
                subscriptions: Callable[[Item], tuple[tuple[int, str], ...]],
                block: Callable[[Item], str | None], limit: int = MESSAGE_LIMIT) -> list[AlertMessage]:
    """A grouped digest in at most `max_messages` messages: the items' blocks packed in the order given (the
    caller's: cheapest first), as many a message as fit under `limit` (a header counts the offers in a message of
    several), each rendered (`block`) only when it goes in. The offers
    that do not fit are counted on the last message ("and 34 more: /offers") and its buttons speak for their
    subscriptions too, so a user hears of every offer once, in one message a poll, however many matched (47,000
    users at 3.9 messages each were 180,000 messages: over three minutes even at the paid 1,000 a second). An item
    whose block cannot be rendered (None) is left out."""
    header_room = len(_counted(lang, "group_header", 9999)) + 2
    more_room = len(_counted(lang, "more", 9999)) + 2
    groups: list[list[Block]] = []
    size = 0
    rest = 0  # offers left over once the messages are full
    rest_subs: dict[int, str] = {}
    for i, item in enumerate(items):
        if rest:
            rest += 1
            rest_subs.update(subscriptions(item))
            continue
        text = block(item)
        if text is None:
            continue
        last = len(groups) == max_messages
        room = limit - header_room - (more_room if last and i + 1 < len(items) else 0)
        if groups and size + len(text) + 2 <= room:
            groups[-1].append((subscriptions(item), text))
            size += len(text) + 2
        elif not last:
            groups.append([(subscriptions(item), text)])
            size = len(text)
        else:
            rest = 1
            rest_subs.update(subscriptions(item))
    out: list[AlertMessage] = []
    for k, group in enumerate(groups):
        more = rest if k == len(groups) - 1 else 0
        if len(group) == 1 and not more:
            body = group[0][1]
        else:
            body = _counted(lang, "group_header", len(group)) + "\n\n" + "\n\n".join(b for _, b in group)
        if more:
            body += "\n\n" + _counted(lang, "more", more)
        shown: dict[int, str] = {}
        for item_subs, _ in group:
            for sid, q in item_subs:
                shown.setdefault(sid, q)
        if more:
            for sid, q in rest_subs.items():
                shown.setdefault(sid, q)
        out.append(AlertMessage(body, tuple(shown.items())))
    return out


def stop_buttons(subscriptions: Sequence[tuple[int, str]], lang: str) -> list[tuple[str, int]]:
    """(label, subscription id) for the "stop these alerts" buttons, at most MAX_STOP_BUTTONS."""
    out = []
    for sid, text in subscriptions[:MAX_STOP_BUTTONS]:
        query = query_words(lang, text)
        label = query if len(query) <= 40 else query[:39] + "…"
        out.append((at(lang, "stop", query=label), sid))
    return out
