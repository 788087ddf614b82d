"""One estimate answer (workload -> memory, fits, time) and its two renderings: a JSON object and a readable table
in Russian or English. Shared by `gpuradar estimate`; free of argparse so other front ends can reuse it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.names import cards_label, ctx_label, method_said
from core.answer import Answer, answer, target_said
from core.engines import engine_notes, profile, strategy_said
from core.gpus import get_gpu
from core.models import Arch
from core.msg import msg
from core.offers import Offer
from core.providers import provider_title
from core.ranking import Ranked, cheapest_per_config, rank
from core.workload import Workload
from texts.i18n import number, render, t

MAX_FITS_SHOWN = 15

EstimateAnswer = Answer  # the one estimate pipeline, shared with the bot (`core.answer`)

__all__ = ["EstimateAnswer", "OfferRow", "answer", "render_text", "to_json"]


@dataclass(frozen=True, slots=True)
class OfferRow:
    """A stored in-stock offer with its normalised prices, in the shape `core.ranking` reads."""

    offer: Offer
    price_per_gpu_hour_rub: float | None
    price_per_gpu_hour_usd: float | None

    @property
    def key(self) -> str:
        return self.offer.key

    @property
    def gpu(self) -> str | None:
        return self.offer.gpu

    @property
    def gpu_count(self) -> int:
        return self.offer.gpu_count

    @property
    def billing(self) -> str:
        return self.offer.billing.value

    @property
    def fraction(self) -> float | None:
        return self.offer.fraction

    def per_hour(self, currency: str) -> float | None:
        per_gpu = self.price_per_gpu_hour_usd if currency == "USD" else self.price_per_gpu_hour_rub
        return None if per_gpu is None else per_gpu * self.offer.gpu_count


def _cheapest(a: Answer, offers: Sequence[OfferRow]) -> dict[tuple[str, int], Ranked]:
    fitting = [o for o in offers if o.gpu is not None and a.suits(o.gpu, o.gpu_count, o.fraction)]

    def hours(gpu: str, count: int) -> float | None:
        row = a.config_time(gpu, count)
        return None if row is None else row.hours

    return cheapest_per_config(rank(fitting, "USD", hours if a.has_time else None))


def _offer_json(r: Ranked | None, hours: float | None) -> dict[str, Any] | None:
    if r is None:
        return None
    o = r.offer
    assert isinstance(o, OfferRow)
    usd, rub = o.per_hour("USD"), o.per_hour("RUB")
    return {"provider": o.offer.provider, "billing": o.billing, "price_per_hour_usd": _opt(usd, 4),
            "price_per_hour_rub": _opt(rub, 2),
            "job_cost_usd": _opt(None if usd is None or hours is None else usd * hours, 2),
            "job_cost_rub": _opt(None if rub is None or hours is None else rub * hours, 2)}


def _opt(x: float | None, nd: int) -> float | None:
    return None if x is None else round(float(x), nd)


def _r(x: float, nd: int = 2) -> float:
    return round(float(x), nd)


def arch_json(arch: Arch) -> dict[str, Any]:
    """`workload.arch` of `--json`: the shape plus what changes memory and speed (MoE, attention kind, window)."""
    return {"name": arch.name, "hidden": arch.hidden, "layers": arch.layers, "heads": arch.heads,
            "kv_heads": arch.kv_heads, "head_dim": arch.head_dim, "intermediate": arch.intermediate,
            "vocab": arch.vocab, "experts": arch.experts,
            "experts_per_token": arch.experts_active if arch.experts > 1 else 1,
            "attention": arch.attention, "window": arch.window or None,
            "kv_lora_rank": arch.kv_lora_rank or None, "tied_embeddings": arch.tied_embeddings,
            "vision_params_b": arch.vision_params_b or None, "native_quant": arch.native_quant or None,
            "source": arch.source or None}


def to_json(a: EstimateAnswer, lang: str, offers: Sequence[OfferRow] = ()) -> dict[str, Any]:
    """The answer as one JSON object; `offers` (stored, in stock) give each configuration its cheapest offer."""
    w, m = a.workload, a.memory
    best = _cheapest(a, offers) if offers else {}
    te, sp = a.time(), a.speed()
    workload = w.model_dump(mode="json")
    workload["active_params_b"] = round(w.active_params_b, 3)
    workload["arch"] = arch_json(w.arch)
    b = m.breakdown
    time = None
    if te is not None:
        rows = []
        for c in te.per_config:
            row: dict[str, Any] = {"gpu": c.gpu_name, "gpu_id": c.gpu, "count": c.count, "fits": c.fits,
                                   "tokens_per_second": _r(c.tokens_per_second, 1), "hours": _r(c.hours, 3)}
            cheapest = _offer_json(best.get((c.gpu, c.count)), c.hours)
            if cheapest is not None:
                row["cheapest_offer"] = cheapest
            rows.append(row)
        time = {"tokens": te.tokens, "examples": te.examples, "tokens_per_example": te.tokens_per_example,
                "epochs": te.epochs, "flops_per_token": te.flops_per_token, "assumed": te.assumed, "per_config": rows}
    speed = None
    if sp is not None:
        srows = []
        for s in sp.per_config:
            srow: dict[str, Any] = {
                "gpu": s.gpu_name, "gpu_id": s.gpu, "count": s.count, "fits": s.fits,
                "prefill_tokens_per_s": _r(s.prefill_tokens_per_s, 1),
                "decode_tokens_per_s": _r(s.decode_tokens_per_s, 2),
                "aggregate_decode_tokens_per_s": _r(s.aggregate_decode_tokens_per_s, 1), "bound": s.bound}
            if s.meets is not None:  # a serving target was said: whether this configuration keeps up with it
                srow["keeps_up"] = s.meets
            cheapest = _offer_json(best.get((s.gpu, s.count)), None)
            if cheapest is not None:
                srow["cheapest_offer"] = cheapest
            srows.append(srow)
        speed = {"concurrency": sp.concurrency, "context": sp.context, "per_config": srows}
        if w.has_target:
            speed["target"] = {"answer_tokens_per_s": sp.answer_tps, "tokens_per_s_in_all": sp.demand_tps,
                               "requests_per_s": sp.request_rate, "first_token_s": sp.ttft_s}
    return {
        "workload": workload,
        "assumptions": [render(lang, x.msg) for x in a.assumptions],
        "engine": None if w.engine is None else {
            "name": w.engine.value, "changes": [render(lang, n) for n in engine_notes(w)],
            "source": profile(w.engine).source},
        "memory": {"per_gpu_gib": _r(m.per_gpu_gib), "recommended_per_gpu_gib": _r(m.recommended_per_gpu_gib),
                   "safety_margin": m.safety_margin, "runtime_gib": _r(m.runtime_gib),
                   # what per_gpu_gib is ("reserved": the allocator's peak, "allocated": live tensors), both figures,
                   # and what nvidia-smi shows (reserved + runtime); an OOM is decided by reserved + runtime
                   "basis": m.basis, "allocated_gib": _r(m.allocated_gib), "reserved_gib": _r(m.reserved_gib),
                   "device_gib": _r(m.device_gib),
                   "cpu_ram_gib": _r(m.cpu_ram_gib), "gpus": m.gpus, "strategy": m.strategy.value,
                   # per_gpu_gib is the whole workload on one device that no card holds: a total, not a need
                   "total_on_one_device": a.single_device_total,
                   "first_fit_per_gpu_gib": _r(a.first_fit.per_gpu_gib) if a.first_fit is not None else None,
                   "breakdown_gib": {"weights": _r(b.weights), "trainable_states": _r(b.trainable_states),
                                     "activations": _r(b.activations), "logits": _r(b.logits),
                                     "kv_cache": _r(b.kv_cache), "overhead": _r(b.overhead)}},
        "fits": [{"gpu": f.gpu_name, "gpu_id": f.gpu, "count": f.count, "per_gpu_gib": _r(f.per_gpu_gib),
                  "usable_gib": f.usable_gib, "utilization": _r(f.utilization, 3), "strategy": f.strategy.value,
                  "tight": f.tight, **({"keeps_up": a.suits(f.gpu, f.count)} if a.has_target else {})}
                 for f in a.listed_fits()],
        "advice": [{"code": x.code, "text": render(lang, x.msg)} for x in a.report.advice],
        # each a real re-estimate of the workload with that one change (core.remedies)
        "remedies": [{"change": r.code, "text": render(lang, r.label), "cli": r.cli, "per_gpu_gib": _r(r.per_gpu_gib),
                      "smallest_fit": None if r.smallest_fit is None else {
                          "gpu": r.smallest_fit.gpu_name, "gpu_id": r.smallest_fit.gpu,
                          "count": r.smallest_fit.count}} for r in a.remedies()],
        "time": time,
        "speed": speed,
    }


# --- the human table ---------------------------------------------------------------------------------------------

def _t(key: str, lang: str, **kw: Any) -> str:
    return t(lang, f"cli_est_{key}", **kw)


def _table(rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for n, row in enumerate(rows):
        cells = [c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(row)]
        out.append("  " + "  ".join(cells).rstrip())
        if n == 0:
            out.append("  " + "  ".join("-" * x for x in widths))
    return out


def params_text(billions: float, lang: str) -> str:
    """'70B', '1.03T' (never '1.03e+03B'), in the language's number style."""
    if billions >= 1000:
        return number(billions / 1000, 2, lang) + "T"
    return (number(billions, 0, lang) if billions >= 10 else number(billions, 1, lang).rstrip("0").rstrip(".,")) + "B"


def _describe(w: Workload, lang: str = "en") -> str:
    """The workload as understood, in the language's own words: 'Kimi-K2 (MoE 1.03T / 32B active) · inference …'."""
    name = w.arch.name
    if w.arch.experts > 1:  # a MoE model: memory follows the total, speed the active parameters
        name += " " + _t("moe", lang, total=params_text(w.params_b, lang), active=params_text(w.active_params_b, lang))
    parts = [name, method_said(lang, w)]
    if w.quant.value != "none":
        parts.append(w.quant.value)
    if w.is_training:
        parts.append(f"{ctx_label(w, lang)} · {t(lang, 'label_batch', n=str(w.batch))}")
        if w.lora_rank:
            parts.append(f"LoRA r{w.lora_rank} {w.lora_targets}")
        parts.append(f"{w.precision.value}, {w.optimizer.value if w.optimizer else '-'}")
        parts.append(_t("grad_ckpt_on" if w.grad_ckpt else "grad_ckpt_off", lang))
    else:
        parts.append(f"{ctx_label(w, lang)} × {w.concurrency}, KV {w.kv_dtype}")
    if w.gpus > 1:
        parts.append(f"{w.gpus} GPU · {render(lang, strategy_said(w.strategy, w.engine))}")
    if w.offload.value != "none":
        parts.append(_t("offload", lang, what=render(lang, msg(f"val_offload_{w.offload.value}"))))
    if w.memory_class_gb is not None:  # a class of cards: which cards it is, is said as an assumption
        parts.append(t(lang, "cards_of_memory", gb=f"{w.memory_class_gb:g}"))
    elif w.gpu:
        parts.append(" / ".join(get_gpu(g).name for g in w.gpu_ids))
    return " · ".join(parts)


OFFERS_SHOWN = 5


def _offer_lines(a: EstimateAnswer, offers: Sequence[OfferRow], lang: str) -> list[str]:
    """The cheapest fitting offers in stock, as the bot lists them: the whole configuration per hour, on-demand
    first, slices labelled and after whole cards, tight fits marked."""
    if not offers:  # no store (or nothing in stock): nothing to import for it (storage pulls in SQLAlchemy)
        return []
    from gpuradar.commands.offers import gpu_label
    from storage.subscriptions import DEFAULT_CURRENCY  # the bot's default currency for the language

    currency = DEFAULT_CURRENCY.get(lang, "USD")
    fitting = [o for o in offers if o.gpu is not None and a.suits(o.gpu, o.gpu_count, o.fraction)]
    ranked = rank(fitting, currency, tight_of=a.tight)[:OFFERS_SHOWN]
    if not ranked:
        return []
    lines = ["", f"{_t('offers_title', lang)}:"]
    for r in ranked:
        o = r.offer
        assert isinstance(o, OfferRow)
        what = gpu_label(o.offer, lang) if o.fraction is not None else f"{gpu_label(o.offer, lang)} × {o.gpu_count}"
        price = "—" if r.price_per_hour is None else number(r.price_per_hour, 0 if r.price_per_hour >= 100 else 2,
                                                             lang)
        marks = (f" ({_t('spot', lang)})" if r.spot else "") + (f" ({_t('tight', lang)})" if r.tight else "")
        lines.append("  " + _t("offer_line", lang, provider=provider_title(o.offer.provider), what=what,
                                 price=price, currency=currency) + marks)
    return lines


def render_text(a: EstimateAnswer, lang: str, offers: Sequence[OfferRow] = ()) -> str:
    """The human answer; `offers` (the store's, in stock) add the cheapest fitting ones, as the bot shows them."""
    m, b = a.memory, a.memory.breakdown
    gib = _t("gib", lang)
    lines = [f"{_t('workload', lang)}: {_describe(a.workload, lang)}"]
    if a.assumptions:
        lines.append(f"{_t('assumed', lang)}:")
        lines += [f"  - {render(lang, x.msg)}" for x in a.assumptions]
    notes = engine_notes(a.workload)
    if notes and a.workload.engine is not None:
        lines.append(f"{render(lang, msg('engine_changes', engine=a.workload.engine.value))}:")
        lines += [f"  - {render(lang, n)}" for n in notes]
    lines.append("")
    strategy = render(lang, strategy_said(m.strategy, a.workload.engine))
    where = f" ({_t('on', lang)} {m.gpus} GPU, {strategy})" if m.gpus > 1 else ""
    named = cards_label(a.workload, lang)  # a total too big for the cards named, not for every card
    title = (_t("memory_total_named", lang, cards=named) if named else _t("memory_total", lang)) \
        if a.single_device_total else _t("memory", lang)
    lines.append(f"{title}{where}:")
    rows = [[_t(k, lang), f"{number(getattr(b, k), 2, lang)} {gib}"]
            for k in ("weights", "trainable_states", "activations", "logits", "kv_cache", "overhead")
            if getattr(b, k) > 0.005]
    rows.append([_t("peak", lang), f"{number(m.per_gpu_gib, 2, lang)} {gib}"])
    rows.append([_t("recommended", lang, m=f"{m.safety_margin:.0%}"),
                 f"{number(m.recommended_per_gpu_gib, 2, lang)} {gib}"])
    rows.append([_t("runtime", lang), f"{number(m.runtime_gib, 2, lang)} {gib}"])
    if m.cpu_ram_gib > 0:
        rows.append([_t("cpu", lang), f"{number(m.cpu_ram_gib, 0, lang)} {gib}"])
    width = max(len(r[0]) for r in rows)
    lines += [f"  {r[0].ljust(width)}  {r[1].rjust(12)}" for r in rows]
    first = a.first_fit
    if a.single_device_total and first is not None:
        lines.append("  " + _t("first_fit", lang, gpu=first.gpu_name, count=first.count,
                                per_gpu=f"{number(first.per_gpu_gib, 2, lang)} {gib}"))
    lines.append("")
    fits = a.listed_fits()  # with a serving target, the configurations that keep up with it first
    if fits:
        lines.append(f"{_t('fits', lang)}:")
        head = [_t("gpu", lang), _t("count", lang), _t("need", lang), _t("usable", lang), _t("load", lang)]
        body = [[f.gpu_name, str(f.count), f"{number(f.need_gib, 1, lang)}", f"{number(f.usable_gib, 1, lang)}",
                 f"{f.utilization:.0%}" + (f" ({_t('tight', lang)})" if f.tight else "")
                 + ("" if a.suits(f.gpu, f.count) else f" ({_t('too_slow', lang)})")]
                for f in fits[:MAX_FITS_SHOWN]]
        lines += _table([head, *body], right={1, 2, 3, 4})
        if len(fits) > MAX_FITS_SHOWN:
            lines.append("  " + _t("more", lang, n=len(fits) - MAX_FITS_SHOWN))
    elif a.report.gpu:
        lines.append(_t("no_fit", lang, where=f"{max(1, a.workload.gpus)}x "
                       + " / ".join(get_gpu(g).name for g in a.report.gpu_ids)))
    else:
        lines.append(_t("none", lang))
    remedies = a.remedies()
    covered = {"offload", "qlora", "more_nodes"} if remedies else set()  # said below as re-estimated remedies
    advice = [x for x in a.report.advice if x.code not in covered]
    if advice:
        lines.append(f"{_t('advice', lang)}:")
        lines += [f"  - {render(lang, x.msg)}" for x in advice]
    for r in remedies:
        where = (_t("try_fits", lang, gpu=r.smallest_fit.gpu_name, count=r.smallest_fit.count)
                 if r.smallest_fit is not None else _t("try_nofit", lang))
        lines.append(_t("try", lang, cli=r.cli, change=render(lang, r.label), per_gpu=number(r.per_gpu_gib, 1, lang),
                        where=where))
    te = a.time(limit=MAX_FITS_SHOWN)
    if te is not None and te.per_config:
        lines.append("")
        lines.append(f"{_t('time', lang, tokens=te.tokens)}:")
        head = [_t("gpu", lang), _t("count", lang), _t("tps", lang), _t("hours", lang)]
        body = [[c.gpu_name + ("" if c.fits else f" ({_t('no_fit_mark', lang)})"), str(c.count),
                 f"{number(c.tokens_per_second, 0, lang)}", f"{number(c.hours, 1, lang)}"] for c in te.per_config]
        lines += _table([head, *body], right={1, 2, 3})
    sp = a.speed(limit=MAX_FITS_SHOWN)
    if sp is not None and sp.per_config:
        lines.append("")
        lines.append(f"{_t('speed', lang, n=sp.concurrency, ctx=sp.context)}:")
        target = target_said(sp)
        if target is not None:
            lines.append(_t("target", lang, target=render(lang, target)))
        head = [_t("gpu", lang), _t("count", lang), _t("prefill", lang), _t("decode", lang), _t("aggregate", lang)]
        body = [[s.gpu_name + ("" if s.fits else f" ({_t('no_fit_mark', lang)})"), str(s.count),
                 f"{number(s.prefill_tokens_per_s, 0, lang)}", f"{number(s.decode_tokens_per_s, 1, lang)}",
                 f"{number(s.aggregate_decode_tokens_per_s, 0, lang)}"] for s in sp.per_config]
        if target is not None:  # which configurations keep up with it
            head.append(_t("keeps_up", lang))
            for row, s in zip(body, sp.per_config, strict=True):
                row.append(_t("keeps_yes" if s.meets else "keeps_no", lang))
        lines += _table([head, *body], right={1, 2, 3, 4})
    lines += _offer_lines(a, offers, lang)
    return "\n".join(lines)
