"""Alert messages in Russian and English: what appeared, where, for how much, why it fits, where to order it.

An alert is built from outbox payloads (`storage.outbox.alert_payload`), one block per offer. Several blocks for
one user go into one message (the user's `grouping` setting), packed so every message stays under Telegram's
4096 characters; each message carries one "stop these alerts" button per subscription it speaks for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.formatting import esc, href, money
from bot.i18n import t
from bot.names import provider_name, region_name
from core.gpus import get_gpu
from core.offers import HOURS_PER_MONTH

MESSAGE_LIMIT = 4000  # under Telegram's 4096, leaving room for the header
QUERY_SHOWN = 200  # characters of the subscription's text repeated in an alert
MAX_STOP_BUTTONS = 8  # a keyboard, not a wall: the rest can be paused from /subs

def at(lang: str, key: str, **values: Any) -> str:
    """An alert text (catalog key `alert_<key>`)."""
    return t(lang, f"alert_{key}", **values)


def _gpu_name(offer: dict[str, Any]) -> str:
    gpu_id = offer.get("gpu")
    if gpu_id:
        try:
            return get_gpu(gpu_id).name
        except KeyError:
            pass
    return str(offer.get("gpu_name") or "GPU")


def _per_gpu_hour(payload: dict[str, Any], currency: str, *, old: bool = False) -> tuple[float | None, str]:
    """The price per GPU-hour in the user's currency, or in the offer's own when no rate converted it."""
    prefix = "old_price" if old else "price"
    value = payload.get(f"{prefix}_{currency.lower()}")
    if value is not None:
        return float(value), currency
    own = payload.get("old_price" if old else "new_price")
    return (float(own) if own is not None else None), str(payload.get("currency") or currency)


def render_block(payload: dict[str, Any], lang: str, currency: str) -> str:
    """One offer: headline, prices (per GPU-hour, per hour, per month), was-price, why it fits, order link."""
    offer = payload["offer"]
    count = int(offer.get("gpu_count") or 1)
    what = esc(f"{_gpu_name(offer)} ×{count}" if count > 1 else _gpu_name(offer))
    location = offer.get("location") or ""
    where = at(lang, "where", location=esc(region_name(lang, location))) if location else ""
    billing = offer.get("billing")
    if billing in ("monthly", "spot"):
        where += at(lang, f"billing_{billing}")
    provider = esc(provider_name(str(offer.get("provider", ""))))
    kind = payload.get("kind", "appeared")
    lines = [at(lang, kind if kind in ("appeared", "back_in_stock", "price_drop") else "appeared",
                what=what, provider=provider, where=where)]

    per_gpu, cur = _per_gpu_hour(payload, currency)
    if per_gpu is not None:
        lines.append(at(lang, "price", per_gpu_hour=money(per_gpu, cur), per_hour=money(per_gpu * count, cur),
                        per_month=money(per_gpu * count * HOURS_PER_MONTH, cur)))
    if kind == "price_drop":
        old, old_cur = _per_gpu_hour(payload, currency, old=True)
        if old is not None and per_gpu is not None and old > 0 and old_cur == cur:
            change = f"{(per_gpu - old) / old * 100:+.0f} %".replace("-", "−")
            lines.append(at(lang, "was", old=money(old, cur), change=change))

    query_text = str(payload.get("query_text") or "")
    # The user's own text is the only part of a block without a natural bound (up to 500 characters).
    query = esc(query_text if len(query_text) <= QUERY_SHOWN else query_text[: QUERY_SHOWN - 1] + "…")
    need, have = payload.get("need_gib"), payload.get("usable_gib")
    if payload.get("sub_kind") == "workload" and need is not None and have is not None:
        reason = at(lang, "fits_workload", query=query, need=f"{float(need):.0f}", have=f"{float(have):.0f}",
                    gpu=esc(payload.get("gpu_name") or _gpu_name(offer)))
    else:
        reason = at(lang, "fits_gpu", query=query)
    cap, cap_cur = payload.get("max_price"), payload.get("max_price_currency") or "USD"
    if cap is not None:
        reason += at(lang, "under_cap", cap=money(float(cap), cap_cur))
    lines.append(reason)
    url = href(offer.get("url"))
    if url:
        lines.append(at(lang, "order", url=url, provider=provider))
    return "\n".join(lines)


@dataclass(frozen=True)
class AlertMessage:
    """One Telegram message: its text and which outbox rows (and subscriptions) it speaks for."""

    text: str
    row_ids: tuple[int, ...]
    subscriptions: tuple[tuple[int, str], ...]  # (subscription id, its text), for the stop buttons


def pack_messages(items: Sequence[tuple[int, int, str, str]], lang: str, *, grouping: bool,
                  limit: int = MESSAGE_LIMIT) -> list[AlertMessage]:
    """(row id, subscription id, subscription text, block) -> messages: one per block without grouping, else as
    few as fit under `limit` (a header counts the offers in each message)."""
    if not grouping:
        return [AlertMessage(block, (rid,), ((sid, q),)) for rid, sid, q, block in items]
    groups: list[list[tuple[int, int, str, str]]] = []
    size = 0
    header_room = len(at(lang, "group_header", n=9999)) + 2
    for item in items:
        block = item[3]
        if groups and size + len(block) + 2 <= limit - header_room:
            groups[-1].append(item)
            size += len(block) + 2
        else:
            groups.append([item])
            size = len(block)
    out: list[AlertMessage] = []
    for group in groups:
        if len(group) == 1:
            text = group[0][3]
        else:
            text = at(lang, "group_header", n=len(group)) + "\n\n" + "\n\n".join(i[3] for i in group)
        subs: dict[int, str] = {}
        for _, sid, q, _ in group:
            subs.setdefault(sid, q)
        out.append(AlertMessage(text, tuple(i[0] for i in group), tuple(subs.items())))
    return out


def stop_buttons(subscriptions: Sequence[tuple[int, str]], lang: str) -> list[tuple[str, int]]:
    """(label, subscription id) for the "stop these alerts" buttons, at most MAX_STOP_BUTTONS."""
    out = []
    for sid, query in subscriptions[:MAX_STOP_BUTTONS]:
        label = query if len(query) <= 40 else query[:39] + "…"
        out.append((at(lang, "stop", query=label), sid))
    return out
