"""What a text asks of the offers: its cards or workload, and the filters of /subscribe said with them ("x8",
"under $2/h", "on runpod", "spot", "in Russia"). /offers lists what they let through, and an estimate said with them
ranks only those offers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.offer_cache import CachedOffer
from bot.subscribe_query import SubscribeRequest, gpu_list, parse_subscribe
from bot.views import render_filters
from core.matching import watch_from_row

Keep = Callable[[CachedOffer], bool]


@dataclass(frozen=True)
class OffersAsked:
    """What an /offers text asks for: the cards or workload (the whole text when it says no filter, as before
    filters were read), and the filters /subscribe and /when read in it ("x8", "under $2/h", "on runpod", "spot",
    "in Russia"), as the offers to keep; `req` holds what was read, a filter out of bounds included."""

    target: str
    keep: Keep | None
    req: SubscribeRequest

    @property
    def listed(self) -> str:
        """The cards or workload whose listed prices the page shows below its offers (through the same filters:
        a listed price has its provider, count, billing, place and price as an offer in stock has)."""
        return self.target

    def said(self, lang: str, currency: str) -> str:
        """The filters as /subs says a watch's ("up to $1.00/h for the whole configuration · on RunPod")."""
        return filters_said(self.req, lang, currency)

    @property
    def count(self) -> int | None:
        """The GPU count the filters keep ("x2"), if they keep one."""
        return self.req.gpu_count

    @property
    def workload(self) -> str:
        """The workload the page's market button opens, with the filters said with it (the page reads them as the
        bot does): none for a card name."""
        return self.req.text if self.target and gpu_list(self.target) is None else ""


def filters_said(req: SubscribeRequest, lang: str, currency: str, *, price: bool = True, count: bool = True) -> str:
    """The filters `req` read, as /subs says a watch's; without the cap (`price`) or the count (`count`) where the
    answer says those its own way (/when: "H100 × 2 under $5.00/hour")."""
    return render_filters(lang, max_price=req.max_price if price else None,
                          price_currency=req.price_currency or currency, price_basis=req.price_basis or "total",
                          price_period="month" if req.price_monthly else "hour", providers=req.providers,
                          gpu_count=req.gpu_count if count else None, billing=req.billing,
                          region=req.region).removeprefix(" · ")


def offers_asked(text: str, currency: str, req: SubscribeRequest | None = None) -> OffersAsked:
    """`req`: `parse_subscribe(text)`, when the caller has read it already."""
    req = req or parse_subscribe(text)
    if not req.has_filters:
        return OffersAsked(text, None, req)
    watch = watch_from_row(id=0, gpu_ids=None, min_gib_by_count=None, max_price=req.max_price,
                           price_currency=req.price_currency or currency, price_basis=req.price_basis or "total",
                           providers=req.providers, gpu_count=req.gpu_count, billing=req.billing, region=req.region)
    return OffersAsked(req.target, lambda o: watch.matches(o.target()), req)


def filters_with_workload(text: str, currency: str, req: SubscribeRequest | None = None) -> OffersAsked | None:
    """The filters said with a workload ("13B LoRA under $1/h on runpod", "70B QLoRA x2 spot"), when the text says
    some, each within bounds, and what they leave is not a card name; else None. An estimate of what they leave
    ranks only the offers they let through (bot.handlers.estimate.estimate_of, inline mode)."""
    asked = offers_asked(text, currency, req)
    if asked.keep is None or not asked.target or asked.req.gpu_ids is not None or asked.req.problem is not None:
        return None
    return asked
