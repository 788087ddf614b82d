"""Turning estimates, offers and subscriptions into message text (HTML) in the user's language.

Pure functions of their inputs, shared by commands, callbacks and inline mode, so each answer reads the same
wherever it is shown.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bot.estimates import Estimate
from bot.formatting import cap_amount, esc, gib, href, money
from bot.names import (
    cards_label,
    cards_named,
    ctx_label,
    method_said,
    model_name,
    provider_name,
    quant_name,
    query_words,
    region_name,
)
from bot.offer_cache import CachedOffer, OfferCache
from bot.texts import t
from core.answer import target_said
from core.engines import engine_notes, strategy_said
from core.estimator import Breakdown
from core.gpus import get_gpu
from core.matching import LEVELS, usable_gib
from core.msg import Msg, msg
from core.objectives import facts
from core.offers import HOURS_PER_MONTH, slice_label
from core.providers import provider_info
from core.ranking import Ranked, RankedGroups, cheapest_per_config, rank_groups
from core.workload import Method, Quant
from storage.user_tables import Subscription
from texts.i18n import number, render
from texts.regions import filter_region_name

FITS_SHOWN = 6
KEEPING_NAMED = 8  # cards named in a subscription with a serving target; the rest counted
COMPACT_ROWS = 3  # rows of each table while the assumptions are hidden: the answer fits a phone screen
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
    parts = [model_name(w.arch.name if w.arch else w.model), method_said(lang, w)]
    if w.quant is not Quant.NONE:
        parts.append(quant_name(w.quant.value))
    parts.append(ctx_label(w, lang))
    if w.method is Method.INFERENCE:
        if w.concurrency > 1:
            parts.append(f"×{w.concurrency}")
    else:
        parts.append(t(lang, "label_batch", n=str(w.batch)))
    if w.gpus > 1:  # "8 GPUs · ZeRO-3": the count and how the work is split
        parts.append(t(lang, "label_gpus", n=w.gpus))
        parts.append(render(lang, strategy_said(w.strategy, w.engine)))
    return " · ".join(parts)


def vat_note(offers: Sequence[CachedOffer], lang: str) -> str | None:
    """One line, once per message, when a listed price carries Russian VAT: prices are compared with it."""
    rates = {vat.rate for o in offers if (vat := provider_info(o.provider).vat) is not None}
    if not rates:
        return None
    return t(lang, "vat_note", rate="/".join(f"{r * 100:g}" for r in sorted(rates)))


def offer_what(offer: CachedOffer, lang: str) -> str:
    """'H100 SXM × 8', or '1/20 A100 80GB · 4 GB': a slice is never shown as a whole card."""
    gpu = esc(gpu_label(offer.gpu, offer.gpu_name))
    if offer.fraction is not None:
        return render(lang, slice_label(gpu, offer.gpu, offer.fraction, offer.memory_gb))
    return f"{gpu} × {offer.gpu_count}"


def offer_line(offer: CachedOffer, lang: str, currency: str, *, job_cost: float | None = None,
               short: bool = False, tight: bool = False) -> str:
    """One offer: the whole configuration's price per hour and per month, spot marked, the job's cost if known,
    ⚡ when such offers are usually gone within the hour."""
    per_hour = offer.per_hour(currency)
    url = href(offer.url)
    link = t(lang, "offer_link", url=url) if url else t(lang, "offer_nolink")
    location = f" ({esc(region_name(lang, offer.location, offer.provider))})" if offer.location else ""
    extra = t(lang, "est_job_cost", cost=money(job_cost, currency, lang)) if job_cost is not None else ""
    if offer.billing == "spot":
        extra += t(lang, "offer_spot")
    if tight:  # as the fit table says it: the same configuration is marked wherever it is listed
        extra += t(lang, "offer_tight")
    if short:
        extra += " " + t(lang, "avail_mark_short")
    return t(lang, "offer_line", provider=esc(provider_name(offer.provider)), what=offer_what(offer, lang),
             location=location, per_hour=money(per_hour, currency, lang),
             per_month=money(None if per_hour is None else per_hour * HOURS_PER_MONTH, currency, lang), extra=extra,
             link=link)


def ranked_line(r: Ranked, lang: str, currency: str, short: frozenset[str] = frozenset()) -> str:
    """`short`: keys of the offers to mark short-lived."""
    offer = r.offer
    assert isinstance(offer, CachedOffer)
    return offer_line(offer, lang, currency, job_cost=r.job_cost, short=offer.key in short, tight=r.tight)


def rank_for(est: Estimate, offers: OfferCache, currency: str,
             keep: Callable[[CachedOffer], bool] | None = None) -> RankedGroups:
    """The offers in stock that run a workload (of those `keep` keeps), best first: what the configuration costs per
    hour, or the job when the dataset is known; on-demand before spot. Lazy: a page ranks only what it shows."""
    groups = offers.groups(currency, gpu_ids=list(est.workload.gpu_ids) or None, fits=est.fits, keep=keep)
    return rank_groups(groups, currency, est.hours, est.tight)


def _breakdown(bd: Breakdown, lang: str) -> str:
    items = []
    for name in BREAKDOWN:
        value = float(getattr(bd, name))
        if value >= 0.05:
            items.append(f"{t(lang, 'bd_' + name)} {gib(value, lang)}")
    return ", ".join(items)


def _count(n: float, lang: str) -> str:
    return number(n, 0 if n >= 100 else 1, lang)


def remedy_label(code: str) -> Msg:
    return msg(f"remedy_{code}")


def remedy_lines(est: Estimate, lang: str) -> list[str]:
    """"Try:" and up to three changes, each with its re-estimated per-GPU memory and where it then fits."""
    found = est.remedies()
    if not found:
        return []
    lines = [t(lang, "est_remedies_title")]
    for r in found:
        change = esc(render(lang, r.label))
        if r.smallest_fit is not None:
            lines.append(t(lang, "est_remedy_line", change=change, per_gpu=gib(r.per_gpu_gib, lang),
                           gpu=esc(r.smallest_fit.gpu_name), count=r.smallest_fit.count))
        else:
            lines.append(t(lang, "est_remedy_line_nofit", change=change, per_gpu=gib(r.per_gpu_gib, lang)))
    return lines


def vram_lines(est: Estimate, lang: str) -> list[str]:
    """The headline figure: per GPU, or, when the workload was estimated on one device that no card holds, the
    total "in all" with the per-GPU figure of the first configuration that fits."""
    mem = est.memory
    if not est.answer.single_device_total:
        return [t(lang, "est_vram", per_gpu=gib(mem.per_gpu_gib, lang),
                  recommended=gib(mem.recommended_per_gpu_gib, lang))]
    cards = cards_label(est.workload, lang)  # the total is too much for the cards named, not for every card
    lines = [t(lang, "est_vram_total_named" if cards else "est_vram_total", total=gib(mem.per_gpu_gib, lang),
               recommended=gib(mem.recommended_per_gpu_gib, lang), cards=esc(cards))]
    first = est.answer.first_fit
    if first is not None:
        lines.append(t(lang, "est_vram_first_fit", gpu=esc(first.gpu_name), count=first.count,
                       per_gpu=gib(first.per_gpu_gib, lang)))
    return lines


def headline_gib(est: Estimate) -> tuple[float, bool]:
    """(figure, per GPU?) for one-line titles: the per-GPU need, or the first fit's when the estimate is a total."""
    first = est.answer.first_fit
    if est.answer.single_device_total and first is not None:
        return first.per_gpu_gib, True
    return est.memory.per_gpu_gib, not est.answer.single_device_total


def has_assumptions(est: Estimate) -> bool:
    """Whether the answer has assumptions (or an engine's notes) to keep behind the "Assumptions" button."""
    return bool(est.assumptions) or bool(est.answer.workload.engine is not None and engine_notes(est.answer.workload))


def render_estimate(est: Estimate, ranked: Sequence[Ranked], lang: str, currency: str, *,
                    assumptions: bool = True, filters: str = "", filter_count: int | None = None) -> str:
    """The whole answer; `assumptions` False leaves out what was assumed and the engine's notes (the bot keeps
    them behind a button, so the answer fits a phone screen, with its tables cut to COMPACT_ROWS). `filters`: the
    filters said with the workload, as /subs says them, which `ranked` went through (`filter_count`: the GPU
    count among them)."""
    mem = est.memory
    rows = FITS_SHOWN if assumptions else COMPACT_ROWS
    lines = [t(lang, "est_header", workload=esc(workload_label(est, lang)))]
    if est.changes:
        lines.append(t(lang, "est_changed", changes=esc(", ".join(render(lang, remedy_label(c)) for c in est.changes))))
        if est.changed:  # each setting the change touched, with what the phrase had
            lines.append(t(lang, "est_changed_from", items=esc("; ".join(render(lang, m) for _, m in est.changed))))
    lines += vram_lines(est, lang)
    breakdown = _breakdown(mem.breakdown, lang)
    if breakdown:
        lines.append(t(lang, "est_breakdown", items=breakdown))
    if mem.cpu_ram_gib:
        lines.append(t(lang, "est_cpu_ram", gib=gib(mem.cpu_ram_gib, lang)))
    if est.assumptions and assumptions:
        # a remedy's re-estimate: the settings it changed say what they were instead of what was assumed
        touched = {field for field, _ in est.changed}
        said = [m for _, m in est.changed] + [a.msg for a in est.assumptions if a.key not in touched]
        lines.append(t(lang, "est_assumptions", items=esc("; ".join(render(lang, m) for m in said))))
    w = est.answer.workload
    notes = engine_notes(w)
    if notes and w.engine is not None and assumptions:
        lines.append(esc(render(lang, msg("engine_changes", engine=w.engine.value)) + ": "
                         + "; ".join(render(lang, n) for n in notes)))
    lines.append("")
    fits = est.answer.listed_fits()  # with a serving target, the configurations that keep up with it first
    target = est.answer.has_target
    if fits:
        lines.append(t(lang, "est_fits_title"))
        for fit in fits[:rows]:
            line = t(lang, "est_fit_line", gpu=esc(fit.gpu_name), count=fit.count, per_gpu=gib(fit.per_gpu_gib, lang),
                     usable=gib(fit.usable_gib, lang), util=round(fit.utilization * 100))
            if target and not est.fits(fit.gpu, fit.count):
                line += t(lang, "est_speed_slow_mark")
            lines.append(line + (t(lang, "est_fit_tight") if fit.tight else ""))
        if len(fits) > rows:
            lines.append(t(lang, "est_fits_more", n=len(fits) - rows))
    else:
        report = est.report
        if report.gpu is not None:  # nothing of the card asked for; other cards may still fit (said below)
            cards, count = esc(cards_label(est.workload, lang) or report.gpu), est.workload.count_asked
            if count is None:  # every count up to 8 was tried, not one card
                lines.append(t(lang, "est_no_fit_named_any", cards=cards))
            else:
                lines.append(t(lang, "est_no_fit_named", where=f"{cards} × {count}"))
        elif est.workload.count_asked is not None:  # "on 1 GPU", "x2": any card, at that count
            lines.append(t(lang, "est_no_fit_count", count=est.workload.count_asked))
        else:
            lines.append(t(lang, "est_no_fit"))
        covered = {"offload", "qlora", "more_nodes"} if est.remedies() else set()  # said as remedies, re-estimated
        lines.extend(f"• {esc(render(lang, a.msg))}" for a in report.advice if a.code not in covered)
    lines.extend(remedy_lines(est, lang))
    lines.append("")
    if filters and est.holds_at():
        lines.append(t(lang, "est_filters_said", filters=filters))
    if ranked:
        lines.append(t(lang, "est_offers_title"))
        lines.extend(ranked_line(r, lang, currency) for r in ranked[:OFFERS_SHOWN])
        if note := vat_note([r.offer for r in ranked[:OFFERS_SHOWN] if isinstance(r.offer, CachedOffer)], lang):
            lines.append(note)
    elif est.answer.has_target and not est.answer.keeping_counts():  # nothing to wait for
        lines.append(t(lang, "est_no_keeping"))
    elif not est.holds_at():  # nothing fits as asked (said above, with what would): no offer to wait for either
        pass
    elif filter_count is not None and not est.holds_at(filter_count):  # nor at the count the filters keep
        lines.append(t(lang, "est_no_offers_count", count=filter_count))
    else:
        lines.append(t(lang, "est_no_offers"))
    for block in (render_time(est, ranked, lang, currency, rows), render_speed(est, lang, rows)):
        if block:
            lines.append("")
            lines.extend(block)
    return "\n".join(lines).strip()


def render_time(est: Estimate, ranked: Sequence[Ranked], lang: str, currency: str,
                rows: int = FITS_SHOWN) -> list[str]:
    """Hours per configuration (the fitting ones shown, and the one asked for by name), and the job's cost at the
    best offer in stock for that configuration."""
    te = est.answer.time(limit=rows)
    if te is None or not te.per_config:
        return []
    best = cheapest_per_config(ranked)
    # a number: Fluent picks the plural and the style; a pair trains both its answers, said so
    paired = facts(est.workload.objective).graded > 1
    lines = [t(lang, "est_time_title_pairs", tokens=te.tokens, pairs=te.examples) if paired
             else t(lang, "est_time_title", tokens=te.tokens)]
    for row in te.per_config:
        r = best.get((row.gpu, row.count))
        cost = ""
        if r is not None and r.price_per_hour is not None:
            cost = t(lang, "est_time_cost", cost=money(r.price_per_hour * row.hours, currency, lang))
        mark = "" if row.fits else t(lang, "est_not_fitting_mark")
        lines.append(t(lang, "est_time_line", gpu=esc(row.gpu_name), count=row.count, hours=number(row.hours, 1, lang),
                       cost=cost) + mark)
    return lines


def render_speed(est: Estimate, lang: str, rows: int = FITS_SHOWN) -> list[str]:
    """Inference: prompt and answer speed per configuration, per user and in total at the asked concurrency."""
    sp = est.answer.speed(limit=rows)
    if sp is None or not sp.per_config:
        return []
    lines = [t(lang, "est_speed_title", concurrency=sp.concurrency, context=sp.context)]
    target = target_said(sp)
    if target is not None:
        lines.append(t(lang, "est_speed_target", target=esc(render(lang, target))))
    for row in sp.per_config:
        mark = "" if row.fits else t(lang, "est_not_fitting_mark")
        if row.meets is not None:  # a target was said: whether this configuration keeps up with it
            mark += t(lang, "est_speed_keeps_mark" if row.meets else "est_speed_slow_mark")
        lines.append(t(lang, "est_speed_line", gpu=esc(row.gpu_name), count=row.count,
                       prefill=_count(row.prefill_tokens_per_s, lang), decode=_count(row.decode_tokens_per_s, lang),
                       aggregate=_count(row.aggregate_decode_tokens_per_s, lang), mark=mark))
    return lines


def render_filters(lang: str, *, max_price: float | None, price_currency: str, providers: list[str] | None,
                   gpu_count: int | None, billing: str | None, region: str | None, price_basis: str = "total",
                   price_period: str = "hour") -> str:
    out = ""
    if max_price is not None:
        monthly = price_period == "month"  # the cap in the unit it was said in (stored per hour)
        key = ("f_price" if price_basis == "total" else "f_price_gpu") + ("_month" if monthly else "")
        out += t(lang, key, price=money(cap_amount(max_price, monthly), price_currency, lang, exact=True))
    if providers:
        out += t(lang, "f_providers", providers=esc(", ".join(provider_name(p) for p in providers)))
    if gpu_count:
        out += t(lang, "f_count", count=gpu_count)
    if billing:
        out += t(lang, "f_billing", billing=t(lang, f"billing_{billing}"))
    if region:
        out += t(lang, "f_region", region=esc(filter_region_name(lang, region)))
    return out


def subscription_what(sub: Subscription, lang: str) -> str:
    """'13B LoRA (needs 38.2 GiB per GPU)' or 'H100 SXM, A100 80GB'."""
    if sub.kind == "gpu":
        return esc(cards_named(sub.gpu_ids or []) or sub.query_text)  # "H100" for every variant, as asked
    count = sub.gpu_count or 1
    figure = sub.answer_gib if sub.answer_gib is not None else need_at(sub.min_gib_by_count or {}, count)
    pinned = max((usable_gib(g) or 0.0 for g in sub.gpu_ids or ()), default=0.0)  # the cards it is named on
    fewest = _fewest_holding(sub.min_gib_by_count or {}, pinned) if figure is not None and 0 < pinned < figure \
        and sub.gpu_count is None else None
    if fewest is not None:  # "13B LoRA on 4090": no one 4090 holds it, two do; the 28 GiB of one card misleads
        need = t(lang, "sub_need_gib_from", gib=gib(fewest[1], lang), count=fewest[0])
    elif figure is None or (sub.gpu_count is None and figure > max(LEVELS)):  # no single card holds it
        need = t(lang, "sub_need_none")
    elif count > 1:
        need = t(lang, "sub_need_gib_on", gib=gib(float(figure), lang), count=count)
    else:
        need = t(lang, "sub_need_gib", gib=gib(float(figure), lang))
    if sub.min_count_by_gpu:
        # a serving target watches only the cards that keep up with it, each from its fewest GPUs that do: those
        # that keep up alone first, the first few named (a list of twenty subscriptions stays readable)
        named = [gpu_label(g, g) + ("" if n <= 1 else f" ×{n}+")
                 for g, n in sorted(sub.min_count_by_gpu.items(), key=lambda item: item[1])]
        cards = esc(", ".join(named[:KEEPING_NAMED]))
        if len(named) > KEEPING_NAMED:
            cards += t(lang, "sub_keeping_more", n=len(named) - KEEPING_NAMED)
        need += t(lang, "sub_keeping_cards", cards=cards)
    return f"{esc(query_words(lang, sub.query_text))} ({need})"


def _fewest_holding(needs: dict[str, float], usable: float) -> tuple[int, float] | None:
    """The fewest GPUs whose per-GPU need (stored, as matching reads it) fits `usable` GiB, with that need."""
    for count in sorted(int(k) for k in needs):
        if needs[str(count)] <= usable:
            return count, float(needs[str(count)])
    return None


def need_at(needs: dict[str, float], count: int) -> float | None:
    """The stored per-GPU need that applies on `count` GPUs (the entry for the largest count <= it), as matching
    reads it (core.matching.Watch.need_for)."""
    counts = sorted(int(k) for k in needs if int(k) <= count)
    return float(needs[str(counts[-1])]) if counts else None


def subscription_filters(sub: Subscription, lang: str) -> str:
    return render_filters(lang, max_price=sub.max_price, price_currency=sub.price_currency,
                          price_basis=sub.price_basis, price_period=sub.price_period, providers=sub.providers,
                          gpu_count=sub.gpu_count, billing=sub.billing, region=sub.region)
