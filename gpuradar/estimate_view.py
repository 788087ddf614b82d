"""One estimate answer (workload -> memory, fits, time) and its two renderings: a JSON object and a readable table
in Russian or English. Shared by `gpuradar estimate`; free of argparse so other front ends can reuse it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.i18n import render, t
from core.defaults import Assumption
from core.estimator import MemoryEstimate, estimate_memory
from core.fit import FitReport, config_for, fit_configs
from core.gpus import get_gpu
from core.models import Arch
from core.timecost import TimeEstimate, estimate_time
from core.workload import Workload

MAX_FITS_SHOWN = 15


@dataclass(frozen=True)
class EstimateAnswer:
    workload: Workload
    assumptions: list[Assumption]
    memory: MemoryEstimate  # on the workload's own configuration (w.gpus GPUs)
    report: FitReport
    time: TimeEstimate | None


def answer(w: Workload, assumptions: list[Assumption]) -> EstimateAnswer:
    report = fit_configs(w)
    memory = estimate_memory(config_for(w, max(1, w.gpus)))
    return EstimateAnswer(workload=w, assumptions=assumptions, memory=memory, report=report,
                          time=estimate_time(w, report.fits))


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


def to_json(a: EstimateAnswer, lang: str) -> dict[str, Any]:
    w, m = a.workload, a.memory
    workload = w.model_dump(mode="json")
    workload["active_params_b"] = round(w.active_params_b, 3)
    workload["arch"] = arch_json(w.arch)
    b = m.breakdown
    time = None
    if a.time is not None:
        time = {"tokens": a.time.tokens, "examples": a.time.examples,
                "tokens_per_example": a.time.tokens_per_example, "epochs": a.time.epochs,
                "flops_per_token": a.time.flops_per_token,
                "per_config": [{"gpu": c.gpu_name, "gpu_id": c.gpu, "count": c.count,
                                "tokens_per_second": _r(c.tokens_per_second, 1), "hours": _r(c.hours, 3)}
                               for c in a.time.per_config]}
    return {
        "workload": workload,
        "assumptions": [render(lang, x.msg) for x in a.assumptions],
        "memory": {"per_gpu_gib": _r(m.per_gpu_gib), "recommended_per_gpu_gib": _r(m.recommended_per_gpu_gib),
                   "safety_margin": m.safety_margin, "runtime_gib": _r(m.runtime_gib),
                   "cpu_ram_gib": _r(m.cpu_ram_gib), "gpus": m.gpus, "strategy": m.strategy.value,
                   "breakdown_gib": {"weights": _r(b.weights), "trainable_states": _r(b.trainable_states),
                                     "activations": _r(b.activations), "logits": _r(b.logits),
                                     "kv_cache": _r(b.kv_cache), "overhead": _r(b.overhead)}},
        "fits": [{"gpu": f.gpu_name, "gpu_id": f.gpu, "count": f.count, "per_gpu_gib": _r(f.per_gpu_gib),
                  "usable_gib": f.usable_gib, "utilization": _r(f.utilization, 3), "strategy": f.strategy.value,
                  "tight": f.tight} for f in a.report.fits],
        "advice": [{"code": x.code, "text": render(lang, x.msg)} for x in a.report.advice],
        "time": time,
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


def _describe(w: Workload) -> str:
    name = w.arch.name
    if w.arch.experts > 1:  # a MoE model: memory follows the total, speed the active parameters
        name += f" (MoE {w.params_b:.3g}B / {w.active_params_b:.3g}B active)"
    parts = [name, w.method.value]
    if w.quant.value != "none":
        parts.append(w.quant.value)
    if w.is_training:
        parts.append(f"seq {w.seq_len} x batch {w.batch}")
        if w.lora_rank:
            parts.append(f"LoRA r{w.lora_rank} {w.lora_targets}")
        parts.append(f"{w.precision.value}, {w.optimizer.value if w.optimizer else '-'}")
        parts.append("grad-ckpt" if w.grad_ckpt else "no grad-ckpt")
    else:
        parts.append(f"ctx {w.seq_len} x {w.concurrency}, KV {w.kv_dtype}")
    if w.gpus > 1:
        parts.append(f"{w.gpus} GPU {w.strategy.value}")
    if w.offload.value != "none":
        parts.append(f"offload {w.offload.value}")
    if w.gpu:
        parts.append(get_gpu(w.gpu).name)
    return " · ".join(parts)


def render_text(a: EstimateAnswer, lang: str) -> str:
    m, b = a.memory, a.memory.breakdown
    gib = _t("gib", lang)
    lines = [f"{_t('workload', lang)}: {_describe(a.workload)}"]
    if a.assumptions:
        lines.append(f"{_t('assumed', lang)}:")
        lines += [f"  - {render(lang, x.msg)}" for x in a.assumptions]
    lines.append("")
    where = f" ({_t('on', lang)} {m.gpus} GPU, {m.strategy.value})" if m.gpus > 1 else ""
    lines.append(f"{_t('memory', lang)}{where}:")
    rows = [[_t(k, lang), f"{getattr(b, k):.2f} {gib}"]
            for k in ("weights", "trainable_states", "activations", "logits", "kv_cache", "overhead")
            if getattr(b, k) > 0.005]
    rows.append([_t("peak", lang), f"{m.per_gpu_gib:.2f} {gib}"])
    rows.append([_t("recommended", lang, m=f"{m.safety_margin:.0%}"), f"{m.recommended_per_gpu_gib:.2f} {gib}"])
    rows.append([_t("runtime", lang), f"{m.runtime_gib:.2f} {gib}"])
    if m.cpu_ram_gib > 0:
        rows.append([_t("cpu", lang), f"{m.cpu_ram_gib:.0f} {gib}"])
    width = max(len(r[0]) for r in rows)
    lines += [f"  {r[0].ljust(width)}  {r[1].rjust(12)}" for r in rows]
    lines.append("")
    fits = a.report.fits
    if fits:
        lines.append(f"{_t('fits', lang)}:")
        head = [_t("gpu", lang), _t("count", lang), _t("need", lang), _t("usable", lang), _t("load", lang)]
        body = [[f.gpu_name, str(f.count), f"{f.need_gib:.1f}", f"{f.usable_gib:.1f}",
                 f"{f.utilization:.0%}" + (f" ({_t('tight', lang)})" if f.tight else "")]
                for f in fits[:MAX_FITS_SHOWN]]
        lines += _table([head, *body], right={1, 2, 3, 4})
        if len(fits) > MAX_FITS_SHOWN:
            lines.append("  " + _t("more", lang, n=len(fits) - MAX_FITS_SHOWN))
    elif a.report.gpu:
        lines.append(_t("no_fit", lang, where=f"{max(1, a.workload.gpus)}x {get_gpu(a.report.gpu).name}"))
    else:
        lines.append(_t("none", lang))
    if a.report.advice:
        lines.append(f"{_t('advice', lang)}:")
        lines += [f"  - {render(lang, x.msg)}" for x in a.report.advice]
    if a.time is not None and a.time.per_config:
        lines.append("")
        lines.append(f"{_t('time', lang, tokens=a.time.tokens)}:")
        head = [_t("gpu", lang), _t("count", lang), _t("tps", lang), _t("hours", lang)]
        body = [[c.gpu_name, str(c.count), f"{c.tokens_per_second:,.0f}", f"{c.hours:.1f}"]
                for c in a.time.per_config[:MAX_FITS_SHOWN]]
        lines += _table([head, *body], right={1, 2, 3})
    return "\n".join(lines)
