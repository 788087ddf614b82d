"""A user's planned events as the messages they receive: text and "stop these alerts" buttons.

The texts themselves are `bot.alert_texts`; this part decides what goes into which message (per chat, grouped or
one per offer) and shares an offer's headline, prices and link between every reader of one language and currency.
"""

from __future__ import annotations

import logging
from typing import Any

from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup

from bot.alert_texts import pack_messages, render_block, render_offer, stop_buttons
from bot.callbacks import AlertCb
from core.availability import WindowStats
from storage.outbox import PlannedDelivery, UserPlan

log = logging.getLogger(__name__)

SHARED_PARTS = 8192  # offers' rendered parts kept (per event, language, currency): a poll's worth of events


class DigestRenderer:
    def __init__(self) -> None:
        # An offer's headline, prices and link per (event, language, currency): shared by every reader of it.
        self._offer_parts: dict[tuple[int, str, str], tuple[str, str]] = {}

    def render(self, plan: UserPlan, weeks: dict[str, WindowStats] | None = None) -> list[PlannedDelivery]:
        """`weeks`: the alerted offers' groups' last 7 days, by offer key (storage.availability)."""
        out: list[PlannedDelivery] = []
        for chat_id, items in plan.by_chat.items():
            blocks: list[tuple[tuple[tuple[int, str], ...], str]] = []
            for item in items:
                try:
                    key = (item.event_id, plan.lang, plan.currency)
                    parts = self._offer_parts.get(key)
                    if parts is None:
                        week = (weeks or {}).get(item.event.offer.key)
                        parts = self._offer_parts[key] = render_offer(item.event, plan.lang, plan.currency, week)
                        if len(self._offer_parts) > SHARED_PARTS:
                            self._offer_parts.pop(next(iter(self._offer_parts)))
                    block = render_block(item.event, item.reasons, plan.lang, plan.currency, parts)
                except (KeyError, TypeError, ValueError) as e:  # a malformed event fails alone
                    log.warning("alert event %s cannot be rendered: %s", item.event_id, e)
                    continue
                blocks.append((tuple((r.subscription_id, r.query_text) for r in item.reasons), block))
            out.extend(PlannedDelivery(plan.user_id, chat_id, m.text, markup(m.subscriptions, plan.lang))
                       for m in pack_messages(blocks, plan.lang, grouping=plan.grouping))
        return out


def markup(subscriptions: tuple[tuple[int, str], ...], lang: str) -> dict[str, Any] | None:
    """One "stop" button per subscription the message speaks for (as a dict: it is stored with the delivery)."""
    buttons = stop_buttons(subscriptions, lang)
    if not buttons:
        return None
    rows = [[InlineKeyboardButton(text=label, callback_data=AlertCb(action="stop", sub=sid).pack())]
            for label, sid in buttons]
    return InlineKeyboardMarkup(inline_keyboard=rows).model_dump(exclude_none=True)
