"""What an expert would suggest when a workload does not fit, or fits only on large nodes: up to three changes,
each a real re-estimate of the changed workload (its per-GPU memory and the smallest configuration that then fits).

The changes are the usual levers, each only where it applies and changes something:
- offload the optimizer states (then also the parameters) to CPU, DeepSpeed ZeRO-3 offload (training);
- a fused / chunked cross-entropy, so the logits are never materialised whole (Liger, Unsloth, torchtune);
- micro-batch 1 with gradient accumulation (the same effective batch, a fraction of the activations);
- a preference objective's reference log-probs computed before training (no reference copy while training);
- QLoRA instead of LoRA / full fine-tuning (a 4-bit base);
- a shorter context (half, down to 1,024 tokens);
- FP8, then INT4 weights for inference;
- ZeRO-3 across more cards (more nodes) for training, at the named card where there is one.

A change is named by a code (`CHANGES`); a query may carry changes as a suffix, `"<text> [+offload_optimizer]"`,
which `split_changes` takes off and `apply` applies to the completed workload: that is how a button re-runs an
estimate with one change. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from core.fit import NODE_SIZE, Fit, fit_configs, requirement
from core.msg import Msg, msg
from core.objectives import facts
from core.parser import field_label, render_value
from core.workload import Method, Offload, Optimizer, Quant, Strategy, Workload

MAX_REMEDIES = 3
MIN_CONTEXT = 1024
_SUFFIX = re.compile(r"\s*\[\+([a-z0-9_]{1,32})\]\s*$")
_QUANT_16 = (Quant.NONE,)


def _offload(level: Offload) -> Callable[[Workload], Workload | None]:
    def change(w: Workload) -> Workload | None:
        if not w.is_training or w.offload is level or (level is Offload.OPTIMIZER and w.offload is Offload.ALL):
            return None
        strategy = w.strategy if w.gpus <= 1 else Strategy.ZERO3  # offload is DeepSpeed ZeRO's (stage 3 across GPUs)
        return w.with_(offload=level, strategy=strategy)
    return change


def _fused_ce(w: Workload) -> Workload | None:
    return None if not w.is_training or w.fused_ce else w.with_(fused_ce=True)


def _micro_batch_1(w: Workload) -> Workload | None:
    return None if not w.is_training or w.batch <= 1 else w.with_(batch=1)


def _qlora(w: Workload) -> Workload | None:
    if w.method not in (Method.FULL, Method.FREEZE, Method.LORA):
        return None
    return w.with_(method=Method.QLORA, quant=Quant.NF4, lora_rank=w.lora_rank or 16,
                   lora_targets=w.lora_targets or "all-linear", optimizer=w.optimizer or Optimizer.ADAMW,
                   offload=Offload.NONE)


def _precompute_ref(w: Workload) -> Workload | None:
    return w.with_(ref_precomputed=True) if facts(w.objective).reference and not w.ref_precomputed else None


def _shorter_context(w: Workload) -> Workload | None:
    if w.seq_len <= MIN_CONTEXT:
        return None
    seq = max(MIN_CONTEXT, w.seq_len // 2)
    prompt = min(w.prompt_len, seq) if w.prompt_len is not None else None
    return w.with_(seq_len=seq, prompt_len=prompt)


def _weights(quant: Quant) -> Callable[[Workload], Workload | None]:
    def change(w: Workload) -> Workload | None:
        if w.method is not Method.INFERENCE or w.quant not in (*_QUANT_16, *((Quant.FP8,) if quant is not Quant.FP8
                                                                           else ())):
            return None
        return w.with_(quant=quant)
    return change


def _zero3_more_cards(w: Workload) -> Workload | None:
    """The next node count up that holds it with ZeRO-3 (on the named card where there is one)."""
    if not w.is_training:
        return None
    req_card = w.gpu
    start = max(w.gpus, 1)
    for count in (2 * NODE_SIZE, 4 * NODE_SIZE, 8 * NODE_SIZE):
        if count <= start:
            continue
        alt = w.with_(gpus=count, strategy=Strategy.ZERO3, gpus_stated=True)
        fits = fit_configs(alt).fits  # a stated count: every fit is at `count`, none of them built to know it
        if req_card is None:
            if len(fits):
                return alt
        elif any(f.gpu in (w.gpu_family or (req_card,)) for f in fits):
            return alt
    return None


# code -> (the change, how the CLI says it): the order is the order they are tried and shown in.
CHANGES: dict[str, tuple[Callable[[Workload], Workload | None], str]] = {
    "offload_optimizer": (_offload(Offload.OPTIMIZER), "--offload optimizer"),
    "offload_all": (_offload(Offload.ALL), "--offload all"),
    "fused_ce": (_fused_ce, "--fused-ce"),
    "micro_batch_1": (_micro_batch_1, "--batch 1"),
    "precompute_ref": (_precompute_ref, "--precompute-ref"),
    "qlora": (_qlora, "--method qlora"),
    "shorter_context": (_shorter_context, "--seq {seq}"),
    "fp8": (_weights(Quant.FP8), "--quant fp8"),
    "int4": (_weights(Quant.GPTQ_INT4), "--quant gptq-int4"),
    "zero3_more_cards": (_zero3_more_cards, "--gpus {gpus} --strategy zero3"),
}


class Remedy(NamedTuple):
    code: str  # a key of CHANGES
    label: Msg  # what the change is, in the user's language ("remedy_<code>")
    workload: Workload  # the changed workload
    per_gpu_gib: float  # its predicted peak per GPU on its own GPU count (or the smallest fit's, when it has one)
    smallest_fit: Fit | None  # the first configuration that then fits (fit order: fewest GPUs first)
    cli: str  # the command-line options that make the same change

    @property
    def query_suffix(self) -> str:
        return f" [+{self.code}]"


def split_changes(text: str) -> tuple[str, tuple[str, ...]]:
    """'70B full on 8 H100 [+offload_optimizer]' -> ('70B full on 8 H100', ('offload_optimizer',)): the changes a
    remedy button asked for, in the order they were added (unknown codes are left in the text, and fail there)."""
    if "[+" not in text:  # what every suffix holds: a typed phrase skips the search
        return text, ()
    codes: list[str] = []
    while (m := _SUFFIX.search(text)) is not None and m.group(1) in CHANGES:
        codes.insert(0, m.group(1))
        text = text[:m.start()]
    return text, tuple(codes)


def apply(w: Workload, codes: tuple[str, ...]) -> Workload:
    """`w` with each change applied (one that does not apply leaves it as it is)."""
    for code in codes:
        changed = CHANGES[code][0](w)
        if changed is not None:
            w = changed
    return w


# The settings a change may touch, in the order an answer lists what it changed.
CHANGED_FIELDS = ("method", "ref_precomputed", "quant", "offload", "strategy", "gpus", "fused_ce", "batch", "seq_len",
                  "prompt_len", "lora_rank", "lora_targets", "optimizer")


def differences(before: Workload, after: Workload) -> tuple[tuple[str, Msg], ...]:
    """What the changes did, setting by setting: (field, "CPU offload: optimizer states (was: none)")."""
    out = []
    for field in CHANGED_FIELDS:
        old, new = getattr(before, field), getattr(after, field)
        if old != new:
            out.append((field, msg("remedy_was", label=field_label(field), value=render_value(field, new),
                                   was=render_value(field, old))))
    return tuple(out)


def needs_remedy(w: Workload) -> bool:
    """Nothing fits, or only configurations of at least half a node do."""
    fits = fit_configs(w).fits
    return not fits or fits[0].count >= NODE_SIZE // 2


def _rank(f: Fit | None, per_gpu: float, order: int) -> tuple[int, int, int, float]:
    """Fitting first, on the fewest GPUs, then the gentler change (CHANGES order: an expert's order of preference),
    then the least memory."""
    if f is None:
        return 1, 0, order, per_gpu
    return 0, f.count, order, per_gpu


def remedies(w: Workload, limit: int = MAX_REMEDIES) -> list[Remedy]:
    """Up to `limit` changes that help, each re-estimated; the ones that make it fit on the fewest GPUs first, the
    gentler change first among equals.
    Empty when the workload fits comfortably below half a node. A change helps when it makes the workload fit
    where it did not, on fewer GPUs, or (nothing fitting either way) cuts the per-GPU memory by a tenth."""
    report = fit_configs(w)
    if report.fits and report.fits[0].count < NODE_SIZE // 2:
        return []
    base_first = report.fits[0] if report.fits else None
    base_per_gpu = requirement(w).per_gpu_gib(max(1, w.gpus))
    found: list[tuple[tuple[int, int, int, float], Remedy]] = []
    for order, (code, (change, cli)) in enumerate(CHANGES.items()):
        alt = change(w)
        if alt is None:
            continue
        alt_report = fit_configs(alt)
        first = alt_report.fits[0] if alt_report.fits else None
        per_gpu = first.per_gpu_gib if first is not None else requirement(alt).per_gpu_gib(max(1, alt.gpus))
        if base_first is None:
            helps = first is not None or per_gpu <= base_per_gpu * 0.9
        else:
            helps = first is not None and first.count < base_first.count
        if not helps:
            continue
        label = msg(f"remedy_{code}")
        found.append((_rank(first, per_gpu, order), Remedy(code, label, alt, per_gpu, first,
                                                    cli.format(seq=alt.seq_len, gpus=alt.gpus))))
    found.sort(key=lambda x: x[0])
    out: list[Remedy] = []
    for _, r in found:
        if r.code == "offload_all" and any(o.code == "offload_optimizer" for o in out):
            continue  # the lighter offload already does it
        out.append(r)
        if len(out) == limit:
            break
    return out
