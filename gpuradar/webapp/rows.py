"""An in-stock offer as the Mini App's API gives it: both currencies, per GPU-hour, per hour and per month of the
whole configuration, formatted as the bot formats them, and only links a browser may follow.

The numbers are the offer cache's (what /offers ranks by); texts that come from the bot's catalog are turned from
Telegram HTML into plain text here, and the page only ever sets them as text, never as markup.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from bot.formatting import href, money
from bot.names import provider_name, region_name
from bot.offer_cache import CachedOffer
from bot.texts import t
from bot.views import gpu_label, offer_what, vat_note
from core.offers import HOURS_PER_MONTH
from core.ranking import Ranked
from gpuradar.webapp.responses import Body
from texts.i18n import has

CURRENCIES = ("RUB", "USD")
_TAG = re.compile(r"<[^>]*>")


def plain(text: str) -> str:
    """Telegram HTML (the bot's texts) as plain text: tags dropped, entities read."""
    return html.unescape(_TAG.sub("", text))


def link(url: str) -> str | None:
    """The offer's page when it is an absolute http(s) URL (bot.formatting.href's rule), else None."""
    return html.unescape(href(url) or "") or None


def prices(offer: CachedOffer) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for cur in CURRENCIES:
        per_gpu, per_hour = offer.per_gpu_hour(cur), offer.per_hour(cur)
        per_month = None if per_hour is None else per_hour * HOURS_PER_MONTH
        out[cur] = {"per_gpu_hour": per_gpu, "per_hour": per_hour, "per_month": per_month,
                    "text": {"per_gpu_hour": money(per_gpu, cur), "per_hour": money(per_hour, cur),
                             "per_month": money(per_month, cur)}}
    return out


def offer_row(offer: CachedOffer, lang: str, ranked: Ranked | None = None, currency: str = "RUB") -> dict[str, Any]:
    row: dict[str, Any] = {
        "key": offer.key,
        "provider": offer.provider,
        "provider_name": provider_name(offer.provider),
        "gpu": offer.gpu,
        "gpu_name": gpu_label(offer.gpu, offer.gpu_name),
        "count": offer.gpu_count,
        "fraction": offer.fraction,
        "what": plain(offer_what(offer, lang)),
        "region": offer.location,
        "region_name": region_name(lang, offer.location, offer.provider) if offer.location else "",
        "billing": offer.billing,
        "billing_name": plain(t(lang, f"billing_{offer.billing}")) if has(lang, f"billing_{offer.billing}")
        else offer.billing,
        "spot": offer.billing == "spot",
        "available": offer.available,
        "url": link(offer.url),
        "prices": prices(offer),
    }
    if ranked is not None:
        row["hours"] = ranked.hours
        row["job_cost"] = ranked.job_cost
        row["job_cost_text"] = money(ranked.job_cost, currency) if ranked.job_cost is not None else None
    return row


class CellPage(NamedTuple):
    """A page of one cell's offers as sent, and what it was made from: the offers shown (the very objects, in
    order) and how many the cell has (`total`). Only the page's own offers are held, not the whole cell's: the
    cyclic collector walks every reference kept here."""

    shown: tuple[CachedOffer, ...]
    total: int
    body: Body


class RowCache:
    """Each offer's row as JSON bytes, per language, made once per offer: a poll replaces only the cache entries of
    the offers it changed (the offer cache keeps the very same `CachedOffer` object for an unchanged one), so a cell's
    page after a poll is a join of rows already made, not a hundred rows formatted again. Read from the threads that
    build pages (each entry is set whole; two threads making the same row make the same bytes)."""

    def __init__(self, cap: int = 60_000) -> None:
        self.cap = cap  # entries (offer x language); past it the cache starts again (a few hundred bytes each)
        # Two flat dictionaries rather than one of (offer, row) pairs: no tuple per entry for the collector to walk.
        self._rows: dict[tuple[str, str], bytes] = {}
        self._of: dict[tuple[str, str], CachedOffer] = {}  # the offer object each row was made from
        self.made = 0  # rows formatted (tests: an unchanged offer is not formatted again)

    def row(self, offer: CachedOffer, lang: str) -> bytes:
        key = (offer.key, lang)
        if self._of.get(key) is offer:
            made = self._rows.get(key)
            if made is not None:
                return made
        made = json.dumps(offer_row(offer, lang), ensure_ascii=False, separators=(",", ":")).encode()
        if len(self._rows) >= self.cap:
            self._rows, self._of = {}, {}
        self._rows[key] = made
        self._of[key] = offer
        self.made += 1
        return made


def vat_line(offers: Iterable[CachedOffer], lang: str) -> str | None:
    """The bot's one line about Russian VAT when a listed price carries it (bot.views.vat_note), as plain text."""
    note = vat_note(list(offers), lang)
    return plain(note) if note else None


def rows_of(ranked: Sequence[Ranked], lang: str, currency: str) -> list[dict[str, Any]]:
    return [offer_row(r.offer, lang, r, currency) for r in ranked if isinstance(r.offer, CachedOffer)]
