"""A user's planned events as the messages they receive: text and "stop these alerts" buttons.

The texts themselves are `bot.alert_texts`; this part decides what goes into which message (per chat, grouped or
one per offer) and shares what readers have in common instead of writing it again for each (issue 26: at 1,000
messages a second the sender's CPU per message is the limit): an offer's headline, prices and link per event,
language and currency; an offer's whole block per event, language, currency and the reasons' wording (the same
query text and cap read the same for everyone, only the subscription id differs, and it is not in the text); a
stop button's label per language and query. A user's messages are then joined from shared blocks.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any

from bot.alert_texts import (
    DIGEST_MESSAGES,
    MAX_STOP_BUTTONS,
    AlertMessage,
    pack_digest,
    reason_line,
    render_offer,
    stop_buttons,
)
from bot.callbacks import AlertCb
from core.availability import WindowStats
from storage.outbox import AlertItem, PlannedDelivery, UserPlan

log = logging.getLogger(__name__)

SHARED_PARTS = 8192  # offers' rendered parts kept (per event, language, currency): a poll's worth of events
# Offers' whole blocks kept (per event, language, currency, reasons' wording). A block is ~1.1 KB; at 32,768 they were
# 36 MB of the sender child's memory for no gain: most blocks are one reader's (their query and caps are in it), and
# rendering 12,000 users of a 50,000-user poll took 0.20 ms a user with 8,192 against 0.22 ms with 32,768. A reader's
# digest renders its blocks one after another and readers of the same query come in the same plan, so what is shared
# is recent: 2,048 hold a plan's worth (PLAN_USERS readers).
SHARED_BLOCKS = 2_048
SHARED_LABELS = 8192  # stop buttons' labels kept (per language, query text)
# Reasons' lines kept (per language, wording and card). A line is ~0.5 KB with its key; most are one reader's (their
# query and cap), reused across the offers of their digest, which follow one another: 32,768 filled ~16 MB of the
# sender child over a 20-minute soak, 8,192 still 12 MB (tracemalloc, 7 Dec 2026).
SHARED_LINES = 2_048


def _remember(cache: OrderedDict[Any, Any], key: Any, value: Any, cap: int) -> Any:
    """Store in a dict bounded to `cap` entries, the oldest going first (an OrderedDict: a plain dict's first key,
    behind thousands of deleted slots, costs a scan each time)."""
    cache[key] = value
    if len(cache) > cap:
        cache.popitem(last=False)
    return value


def _subscriptions(item: AlertItem) -> tuple[tuple[int, str], ...]:
    return item.subscriptions


def _cost(item: AlertItem, currency: str) -> tuple[bool, float]:
    """What the user pays for the offer per hour, the whole configuration in their currency (offers without a
    price in it after those with one)."""
    per_gpu, cur = item.event.price_in(currency)
    if per_gpu is None or cur != currency:
        return True, 0.0
    return False, per_gpu * item.event.offer.gpu_count


class DigestRenderer:
    def __init__(self, max_messages: int = DIGEST_MESSAGES) -> None:
        self.max_messages = max_messages  # messages one grouped digest may take (SENDER__DIGEST_MESSAGES)
        # An offer's headline, prices and link per (event, language, currency): shared by every reader of it.
        self._offer_parts: OrderedDict[tuple[int, str, str], tuple[str, str]] = OrderedDict()
        # An offer's block per (event, language, currency, what its reasons say): readers with the same query text
        # and cap (most of a poll's thousands) share it.
        self._blocks: OrderedDict[tuple[Any, ...], str] = OrderedDict()
        self._labels: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._lines: OrderedDict[tuple[Any, ...], str] = OrderedDict()
        self._costs: OrderedDict[tuple[int, str], tuple[bool, float]] = OrderedDict()  # per (event, currency)

    def render(self, plan: UserPlan, weeks: dict[str, WindowStats] | None = None) -> list[PlannedDelivery]:
        """`weeks`: the alerted offers' groups' last 7 days, by offer key (storage.availability). Offers go cheapest
        first by what the user pays (the whole configuration per hour, in their currency); a grouped digest takes at
        most `max_messages` messages, the offers beyond them counted on its last (`pack_digest`)."""
        out: list[PlannedDelivery] = []
        for chat_id, items in plan.by_chat.items():
            currency = plan.currency
            costs = self._costs
            ordered = sorted(items, key=lambda item: costs.get((item.event_id, currency))
                             or _remember(costs, (item.event_id, currency), _cost(item, currency), SHARED_PARTS))

            def block(item: AlertItem) -> str | None:
                return self._shared_block(item, plan, weeks)

            if plan.grouping:
                messages = pack_digest(ordered, plan.lang, max_messages=self.max_messages,
                                       subscriptions=_subscriptions, block=block)
            else:
                messages = [AlertMessage(b, item.subscriptions) for item in ordered if (b := block(item)) is not None]
            out.extend(PlannedDelivery(plan.user_id, chat_id, m.text, self.markup(m.subscriptions, plan.lang))
                       for m in messages)
        return out

    def _shared_block(self, item: AlertItem, plan: UserPlan, weeks: dict[str, WindowStats] | None) -> str | None:
        """The offer's block for this reader, shared with every reader whose block reads the same; None when the
        event cannot be rendered (it fails alone)."""
        # Everything the block's text depends on: the event, language, currency and each reason but its
        # subscription id (which only the buttons carry).
        bkey = (item.event_id, plan.lang, plan.currency,
                *((r.kind, r.query_text, r.max_price, r.max_price_currency, r.need_gib, r.usable_gib,
                   r.gpu_name, r.price_basis, r.tight, r.keeps_up) for r in item.reasons))
        block = self._blocks.get(bkey)
        if block is None:
            try:
                key = (item.event_id, plan.lang, plan.currency)
                parts = self._offer_parts.get(key)
                if parts is None:
                    week = (weeks or {}).get(item.target.key)
                    parts = _remember(self._offer_parts, key,
                                      render_offer(item.event, plan.lang, plan.currency, week), SHARED_PARTS)
                block = self._block(item, plan.lang, parts)
            except (KeyError, TypeError, ValueError) as e:  # a malformed event fails alone
                log.warning("alert event %s cannot be rendered: %s", item.event_id, e)
                return None
            _remember(self._blocks, bkey, block, SHARED_BLOCKS)
        return block

    def _block(self, item: AlertItem, lang: str, parts: tuple[str, str]) -> str:
        """`render_block(item.event, item.reasons, lang, currency, parts)`, its reason lines shared: a line says the
        reader's query and cap, and of the offer only its card and billing, so a user's lines repeat over every offer
        of their digest and readers with the same query share them."""
        offer = item.event.offer
        head, order = parts
        lines = [head]
        for r in item.reasons:
            key = (lang, r.kind, r.query_text, r.max_price, r.max_price_currency, r.need_gib, r.usable_gib,
                   r.gpu_name, r.price_basis, r.tight, r.keeps_up, offer.gpu, offer.gpu_name, offer.fraction,
                   offer.gpu_memory_gb, offer.billing)
            line = self._lines.get(key)
            if line is None:
                line = _remember(self._lines, key, reason_line(r, offer, lang), SHARED_LINES)
            lines.append(line)
        if order:
            lines.append(order)
        return "\n".join(lines)

    def needs_week(self, event_id: int, lang: str, currency: str) -> bool:
        """Whether rendering this event for this language and currency still needs its offer's last 7 days (its
        shared parts are not made yet)."""
        return (event_id, lang, currency) not in self._offer_parts

    def markup(self, subscriptions: tuple[tuple[int, str], ...], lang: str) -> dict[str, Any] | None:
        """One "stop" button per subscription the message speaks for, as the Bot API's `reply_markup` dict (it is
        stored with the delivery); the buttons' labels are shared per language and query."""
        if not subscriptions:
            return None
        rows = []
        for sid, text in subscriptions[:MAX_STOP_BUTTONS]:
            label = self._labels.get((lang, text))
            if label is None:
                label = _remember(self._labels, (lang, text), stop_buttons([(0, text)], lang)[0][0], SHARED_LABELS)
            rows.append([{"text": label, "callback_data": AlertCb(action="stop", sub=sid).pack()}])
        return {"inline_keyboard": rows}

