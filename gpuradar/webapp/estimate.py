"""The workload box: the bot's own estimate (`bot.estimates.Estimator`, the instance the dispatcher holds, so the
same phrase hits the same memo) and its ranking of the offers in stock (`bot.views.rank_for`, what /estimate and
/offers list), as JSON: what was understood and assumed, VRAM per GPU, the configurations that fit with their tight
marks, the remedies when nothing does, and the fitting offers best first with job time or speed.

The estimate itself is the estimator's memo; what costs here is ranking and laying out thousands of fitting offers.
That runs in a thread, on the groups the offer cache handed over on the loop (immutable tuples), and the answer is
kept as sent per (phrase, language, currency) and offer-cache version (gpuradar.webapp.responses): the same phrase
typed again, by anyone, until the next poll is a look-up."""

from __future__ import annotations

import asyncio
from typing import Any

from bot.estimates import Estimate, Estimator, Failure
from bot.formatting import money
from bot.handlers.estimate import estimate_of, said_text
from bot.names import region_name
from bot.offer_cache import CachedOffer, OfferCache
from bot.texts import examples_block, t
from bot.views import rank_for, workload_label
from core.answer import Answer, target_said
from core.fit import Fit
from core.ranking import RankedGroups
from gpuradar.webapp.responses import Body, Built, body_of
from gpuradar.webapp.rows import plain, rows_of, vat_line
from texts.i18n import render

OFFERS_LISTED = 60  # the fitting offers the page lists (the matrix narrows to every fitting card regardless)
FITS_LISTED = 24


def _fit(f: Fit, a: Answer) -> dict[str, Any]:
    return {"gpu": f.gpu, "gpu_name": f.gpu_name, "count": f.count, "per_gpu_gib": round(f.per_gpu_gib, 1),
            "usable_gib": round(f.usable_gib, 1), "utilization": round(f.utilization, 3), "tight": f.tight,
            "keeps_up": a.suits(f.gpu, f.count) if a.has_target else None}


def _target(est: Estimate, lang: str) -> str | None:
    said = target_said(est.answer.workload)
    return render(lang, said) if said is not None else None


def estimate_json(est: Estimate, ranked: RankedGroups, lang: str, currency: str, *, query: str | None = None,
                  filters: str | None = None) -> dict[str, Any]:
    """The answer from the estimate and its ranking (`bot.views.rank_for`, taken on the loop): CPU work only.
    `query`: the text as said, filters and all (what "Subscribe" watches); `filters`: the line saying them."""
    mem = est.memory
    fits = {(f.gpu, f.count): f for f in est.report.fits}
    shown = ranked[:OFFERS_LISTED]
    rows = rows_of(shown, lang, currency)
    for row in rows:
        fit = fits.get((row["gpu"], row["count"])) if row["fraction"] is None else None
        row["per_gpu_gib"] = round(fit.per_gpu_gib if fit else mem.per_gpu_gib, 1)
        row["tight"] = bool(fit and fit.tight)
        speed = est.answer.config_speed(row["gpu"], row["count"]) if row["gpu"] and row["fraction"] is None else None
        row["decode_tokens_per_s"] = round(speed.decode_tokens_per_s, 1) if speed else None
    # The matrix narrowed to the workload: per card and provider, the cheapest fitting configuration (by what the
    # whole configuration costs, the ranking's order), so a cell never shows an offer that cannot run it.
    cells: dict[str, dict[str, Any]] = {}
    for r in ranked:
        o = r.offer
        if isinstance(o, CachedOffer) and o.gpu is not None and o.provider not in cells.setdefault(o.gpu, {}):
            cells[o.gpu][o.provider] = {"in_stock": True, "count": o.gpu_count, "fraction": o.fraction,
                                        "spot": r.spot, "region": o.location,
                                        "region_name": region_name(lang, o.location, o.provider) if o.location else "",
                                        "per_gpu_hour": {"RUB": o.price_per_gpu_hour_rub,
                                                         "USD": o.price_per_gpu_hour_usd},
                                        "text": {"RUB": money(o.price_per_gpu_hour_rub, "RUB"),
                                                 "USD": money(o.price_per_gpu_hour_usd, "USD")},
                                        "per_hour_text": money(r.price_per_hour, currency)}
    return {
        "ok": True,
        "query": query or est.query,
        "filters": filters,
        "workload": workload_label(est, lang),
        "assumptions": [render(lang, a.msg) for a in est.assumptions],
        "memory": {"per_gpu_gib": round(mem.per_gpu_gib, 1), "recommended_gib": round(mem.recommended_per_gpu_gib, 1)},
        "fits": [_fit(f, est.answer) for f in est.answer.listed_fits()[:FITS_LISTED]],
        # a serving target said ("1000 requests a minute"): in words, and each fit marked by whether it keeps up
        "target": _target(est, lang),
        "fit_count": len(est.report.fits),
        "cells": cells,
        "remedies": [render(lang, a.msg) for a in est.report.advice],
        "has_time": est.answer.has_time,
        "offers": rows,
        "offer_count": len(ranked),
        "currency": currency,
        "vat": vat_line((r.offer for r in shown if isinstance(r.offer, CachedOffer)), lang),
        "cheapest": money(shown[0].price_per_hour, currency) if shown else None,
    }


async def estimate_answer(estimator: Estimator, offers: OfferCache, text: str, *, lang: str, currency: str,
                          user_id: int | None, kept: Built[tuple[str, str, str], Body] | None = None) -> Body:
    """The answer to a typed workload, as the bot answers it: said with filters ("7B LoRA under $0.30/h on
    runpod", `bot.handlers.estimate.estimate_of`), its offers are only those they let through, and it says so;
    `{"ok": false, "message": ...}` when it is not one (the bot's explanation). `kept`: the answers kept (per phrase
    as said, language and currency; built once per offer-cache version)."""
    result, asked = await estimate_of(text, estimator, currency, user_id)
    if isinstance(result, Failure):
        message = plain(result.message(lang)) or plain(t(lang, "unknown", examples=examples_block(lang)))
        return body_of({"ok": False, "query": result.query, "message": message})
    est, said = result, said_text(result, asked)
    filters = plain(t(lang, "est_filters_said", filters=asked.said(lang, currency))) if asked is not None else None

    async def build() -> Body:
        # on the loop: takes the cache's current groups
        ranked = rank_for(est, offers, currency, asked.keep if asked is not None else None)
        return await asyncio.to_thread(lambda: body_of(estimate_json(est, ranked, lang, currency, query=said,
                                                                     filters=filters)))

    if kept is None:
        return await build()
    return await kept.get((said, lang, currency), offers.version, build)
