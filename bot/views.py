"""Turning estimates, offers and subscriptions into message text (HTML) in the user's language.

Pure functions of their inputs, shared by commands, callbacks and inline mode, so each answer reads the same
wherever it is shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.estimates import Estimate
from bot.formatting import esc, gib, href, money
from bot.i18n import render
from bot.names import method_name, model_name, provider_name, quant_name, region_name
from bot.offer_cache import CachedOffer
from bot.texts import t
from core.gpus import get_gpu
from core.offers import HOURS_PER_MONTH
from core.workload import Method, Quant

FITS_SHOWN = 6
OFFERS_SHOWN = 5
BREAKDOWN = ("weights", "trainable_states", "activations", "logits", "kv_cache", "overhead")


def gpu_label(gpu_id: str | None, fallback: str = "") -> str:
    if gpu_id is None:
        return fallback
    try:
        return get_gpu(gpu_id).name
    except KeyError:
        return fallback or gpu_id


def workload_label(est: Estimate, lang: str = "en") -> str:
    """A one-line description of what was understood, in display names: 'Llama 3.1 70B · QLoRA · NF4 · ctx 8192'."""
    w = est.workload
    parts = [model_name(w.arch.name if w.arch else w.model), method_name(lang, w.method.value)]
    if w.quant is not Quant.NONE:
        parts.append(quant_name(w.quant.value))
    parts.append(f"ctx {w.seq_len}")
    if w.method is Method.INFERENCE:
        if w.concurrency > 1:
            parts.append(f"×{w.concurrency}")
    else:
        parts.append(f"bs {w.batch}")
    if w.gpus > 1:
        parts.append(f"{w.gpus} GPU")
    return " · ".join(parts)


def offer_line(offer: CachedOffer, lang: str, currency: str) -> str:
    per_hour = offer.per_hour(currency)
    url = href(offer.url)
    link = t(lang, "offer_link", url=url) if url else t(lang, "offer_nolink")
    location = f" ({esc(region_name(lang, offer.location))})" if offer.location else ""
    return t(lang, "offer_line", provider=esc(provider_name(offer.provider)),
             gpu=esc(gpu_label(offer.gpu, offer.gpu_name)), count=offer.gpu_count, location=location,
             per_hour=money(per_hour, currency),
             per_month=money(None if per_hour is None else per_hour * HOURS_PER_MONTH, currency), link=link)


def _breakdown(memory: Any, lang: str) -> str:
    bd = memory.breakdown
    items = []
    for name in BREAKDOWN:
        value = float(getattr(bd, name, 0.0) or 0.0)
        if value >= 0.05:
            items.append(f"{t(lang, 'bd_' + name)} {gib(value)}")
    return ", ".join(items)


def _util_percent(value: float) -> int:
    return round(value * 100) if value <= 1.5 else round(value)  # a fraction or already a percentage


def render_estimate(est: Estimate, offers: Sequence[CachedOffer], lang: str, currency: str) -> str:
    mem = est.memory
    lines = [t(lang, "est_header", workload=esc(workload_label(est, lang))),
             t(lang, "est_vram", per_gpu=gib(mem.per_gpu_gib), recommended=gib(mem.recommended_per_gpu_gib))]
    breakdown = _breakdown(mem, lang)
    if breakdown:
        lines.append(t(lang, "est_breakdown", items=breakdown))
    if getattr(mem, "cpu_ram_gib", 0):
        lines.append(t(lang, "est_cpu_ram", gib=gib(mem.cpu_ram_gib)))
    if est.assumptions:
        lines.append(t(lang, "est_assumptions", items=esc("; ".join(render(lang, a.msg) for a in est.assumptions))))
    lines.append("")
    fits = list(est.report.fits)
    if fits:
        lines.append(t(lang, "est_fits_title"))
        for fit in fits[:FITS_SHOWN]:
            lines.append(t(lang, "est_fit_line", gpu=esc(fit.gpu_name), count=fit.count, per_gpu=gib(fit.per_gpu_gib),
                           usable=gib(fit.usable_gib), util=_util_percent(fit.utilization)))
        if len(fits) > FITS_SHOWN:
            lines.append(t(lang, "est_fits_more", n=len(fits) - FITS_SHOWN))
    else:
        lines.append(t(lang, "est_no_fit"))
        lines.extend(f"• {esc(render(lang, a.msg))}" for a in getattr(est.report, "advice", []))
    lines.append("")
    if offers:
        lines.append(t(lang, "est_offers_title"))
        lines.extend(offer_line(o, lang, currency) for o in offers[:OFFERS_SHOWN])
    else:
        lines.append(t(lang, "est_no_offers"))
    time_lines = render_time(est, offers, lang, currency)
    if time_lines:
        lines.append("")
        lines.extend(time_lines)
    return "\n".join(lines).strip()


def render_time(est: Estimate, offers: Sequence[CachedOffer], lang: str, currency: str) -> list[str]:
    """Hours per fitting configuration, and the cost at the cheapest in-stock offer of that configuration."""
    te = est.time
    if te is None:
        return []
    per_config = list(getattr(te, "per_config", []) or [])
    if not per_config:
        return []
    cheapest: dict[tuple[str | None, int], CachedOffer] = {}
    for o in offers:
        cheapest.setdefault((o.gpu, o.gpu_count), o)
    lines = [t(lang, "est_time_title", tokens=f"{int(getattr(te, 'tokens', 0)):,}".replace(",", " "))]
    for row in per_config[:FITS_SHOWN]:
        gpu_id = getattr(row, "gpu_id", None) or getattr(row, "gpu", None)
        offer = cheapest.get((gpu_id, row.count))
        cost = ""
        if offer is not None and offer.per_hour(currency) is not None:
            cost = t(lang, "est_time_cost", cost=money(offer.per_hour(currency) * row.hours, currency))  # type: ignore[operator]
        lines.append(t(lang, "est_time_line", gpu=esc(getattr(row, "gpu_name", None) or gpu_label(gpu_id)),
                       count=row.count, hours=f"{row.hours:.1f}", cost=cost))
    return lines


def render_filters(lang: str, *, max_price: float | None, price_currency: str, providers: list[str] | None,
                   gpu_count: int | None, billing: str | None, region: str | None) -> str:
    out = ""
    if max_price is not None:
        out += t(lang, "f_price", price=money(max_price, price_currency))
    if providers:
        out += t(lang, "f_providers", providers=esc(", ".join(providers)))
    if gpu_count:
        out += t(lang, "f_count", count=gpu_count)
    if billing:
        out += t(lang, "f_billing", billing=t(lang, f"billing_{billing}"))
    if region:
        out += t(lang, "f_region", region=esc(region))
    return out


def subscription_what(sub: Any, lang: str) -> str:
    """'13B LoRA (needs 38.2 GiB per GPU)' or 'H100 SXM, A100 80GB'."""
    if sub.kind == "gpu":
        return esc(", ".join(gpu_label(g, g) for g in (sub.gpu_ids or [])) or sub.query_text)
    needs = sub.min_gib_by_count or {}
    one = needs.get("1")
    need = t(lang, "sub_need_gib", gib=gib(float(one))) if one is not None else t(lang, "sub_need_none")
    return f"{esc(sub.query_text)} ({need})"


def subscription_filters(sub: Any, lang: str) -> str:
    return render_filters(lang, max_price=sub.max_price, price_currency=sub.price_currency, providers=sub.providers,
                          gpu_count=sub.gpu_count, billing=sub.billing, region=sub.region)
