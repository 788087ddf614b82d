"""Listed prices beside the marketplaces: what the price-only sources (a hyperscaler's public price list,
`ProviderInfo.stock_known` False) charge for the same cards, shown under the in-stock list of /offers.

Kept apart from `bot.offer_cache.OfferCache` on purpose: it is the in-stock set, which matching, alerts, "already
matching" and the estimate's "Cheapest in stock now" all read; a listed price never enters it. These offers are never
in stock (the poller stores them so), so they are labelled "listed price, availability unknown" and never alerted.
The listing is read from the database again only when the in-stock cache was refreshed (an ingest happened): its
`version` says so, so a page turn costs no query.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from operator import attrgetter

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.estimates import Estimator, Failure
from bot.offer_cache import CachedOffer, OfferCache
from bot.subscribe_query import gpu_list
from bot.texts import t
from bot.views import offer_line, vat_note
from core.providers import price_only_names
from storage.queries import listed_prices

SHOWN = 5  # a short section under the in-stock list, not a second list
MESSAGE_LIMIT = 4096  # Telegram's limit on a message's text


class ListedPrices:
    """The current listed prices of the price-only sources, re-read when the in-stock cache's version moves."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession]) -> None:
        self._sessionmaker = sessionmaker
        self._offers: tuple[CachedOffer, ...] = ()
        self._version: int | None = None
        self._lock = asyncio.Lock()

    async def current(self, version: int) -> tuple[CachedOffer, ...]:
        """Every listed price (of a card the catalog knows), as of the in-stock cache's `version`."""
        async with self._lock:
            if self._version != version:
                async with self._sessionmaker() as session:
                    stored = await listed_prices(session, list(price_only_names()))
                self._offers = tuple(CachedOffer.from_stored(s) for s in stored)
                self._version = version
            return self._offers

    async def matching(self, version: int, currency: str, *, gpu_ids: Iterable[str] | None = None,
                       fits: Callable[[str, int, float | None], bool] | None = None,
                       keep: Callable[[CachedOffer], bool] | None = None, limit: int = SHOWN) -> list[CachedOffer]:
        """The listed prices of these cards and/or configurations that `fits` (and that `keep`, the filters said,
        lets through), cheapest whole configuration per hour first (in `currency`), at most `limit`."""
        wanted = set(gpu_ids) if gpu_ids is not None else None
        found = [o for o in await self.current(version)
                 if o.gpu is not None and (wanted is None or o.gpu in wanted)
                 and (fits is None or fits(o.gpu, o.gpu_count, o.fraction)) and (keep is None or keep(o))]
        found.sort(key=attrgetter("sort_usd" if currency == "USD" else "sort_rub", "key"))
        return found[:limit]


def listed_block(offers: Sequence[CachedOffer], lang: str, currency: str, *, shown_note: str = "") -> list[str]:
    """The section's lines (none when nothing is listed): a title saying these are listed prices with availability
    unknown, one line per offer in the in-stock list's price style, and the VAT note unless `shown_note` (the text
    above it) already has it."""
    if not offers:
        return []
    lines = ["", t(lang, "listed_title")]
    lines.extend(offer_line(o, lang, currency) for o in offers)
    if (note := vat_note(offers, lang)) and note not in shown_note:
        lines.append(note)
    return lines


async def with_listed(body: str, text: str, listed: ListedPrices | None, offers: OfferCache, estimator: Estimator,
                      lang: str, currency: str, *, keep: Callable[[CachedOffer], bool] | None = None) -> str:
    """`body` (an /offers page) with the listed prices of what `text` asks for below it: the cards named, or the
    configurations that fit the workload, through the filters said with it (`keep`). The whole list (no `text`)
    gets none: there is no "same card" to show."""
    if listed is None or not text:
        return body
    ids = gpu_list(text)
    if ids is not None:
        found = await listed.matching(offers.version, currency, gpu_ids=ids, keep=keep)
    else:
        result = estimator.get(text)
        if isinstance(result, Failure):
            return body
        found = await listed.matching(offers.version, currency, gpu_ids=list(result.workload.gpu_ids) or None,
                                      fits=result.fits, keep=keep)
    while found:  # one message: rows the message has no room for are left off, the in-stock part never
        joined = "\n".join([body, *listed_block(found, lang, currency, shown_note=body)])
        if len(joined) <= MESSAGE_LIMIT:
            return joined
        found = found[:-1]
    return body
