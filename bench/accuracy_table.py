"""Print docs/accuracy.md's "Estimator accuracy" section: our prediction vs every public measurement, beside what the
LLaMA-Factory and Unsloth per-size tables (docs/reference/estimator.md §9) would have said for the same point.

Run: python bench/accuracy_table.py   (that section is this script's output, pasted as is)
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.estimator import estimate_memory
from core.workload import Method, Precision, Quant
from testkit.measured_points import (
    ASSUMED_INFER_SEQ,
    ASSUMED_TRAIN_SEQ,
    GB_PER_GIB,
    Point,
    arch_kind,
    load_arch_points,
    load_component_points,
    load_dense_points,
    load_points,
    window_only_gib,
)

# Reference §9, GB for the whole job (all GPUs), by model size bucket.
LLAMA_FACTORY: dict[str, dict[int, float]] = {
    "full-amp": {7: 120, 13: 240, 30: 600, 70: 1200}, "full-bf16": {7: 60, 13: 120, 30: 300, 70: 600},
    "freeze": {7: 20, 13: 40, 30: 80, 70: 200}, "lora": {7: 16, 13: 32, 30: 64, 70: 160},
    "qlora-8bit": {7: 10, 13: 20, 30: 40, 70: 80}, "qlora-4bit": {7: 6, 13: 12, 30: 24, 70: 48},
}
UNSLOTH: dict[str, dict[int, float]] = {"qlora": {7: 5, 8: 6, 14: 8.5, 32: 26, 70: 41},
                                        "lora": {7: 19, 8: 22, 14: 33, 32: 76, 70: 164}}


def _bucket(table: dict[int, float], params_b: float) -> float | None:
    """The table's figure for the nearest size (None when the nearest bucket is more than 50 % away)."""
    size = min(table, key=lambda s: abs(s - params_b) / s)
    return table[size] if abs(size - params_b) / size <= 0.5 else None


def llama_factory_gib(p: Point) -> float | None:
    w = p.workload
    if w.method is Method.FULL:
        key = "full-bf16" if w.precision is Precision.BF16_TRUE else "full-amp"
    elif w.method is Method.QLORA:
        key = "qlora-8bit" if w.quant is Quant.INT8 else "qlora-4bit"
    elif w.method in (Method.LORA, Method.FREEZE):
        key = w.method.value
    else:
        return None
    gb = _bucket(LLAMA_FACTORY[key], w.params_b)
    return None if gb is None else gb / GB_PER_GIB / w.gpus  # per GPU, as measured


def unsloth_gib(p: Point) -> float | None:
    w = p.workload
    if w.method not in (Method.LORA, Method.QLORA):
        return None
    gb = _bucket(UNSLOTH[w.method.value], w.params_b)
    return None if gb is None else gb / GB_PER_GIB / w.gpus


def _pct(pred: float | None, meas: float | None) -> str:
    if pred is None or meas is None:
        return "—"
    return f"{pred:.1f} ({(pred / meas - 1) * 100:+.0f} %)"


def _conditions(p: Point) -> str:
    w = p.workload
    parts = [w.method.value]
    if w.quant is not Quant.NONE:
        parts.append(w.quant.value)
    if w.is_training:
        if w.lora_rank:
            parts.append(f"r{w.lora_rank} {w.lora_targets}")
        parts.append(f"s{w.seq_len}{'?' if p.assumed_seq else ''} x b{w.batch}")
        parts.append("ckpt" if w.grad_ckpt else "no ckpt")
        if w.fused_ce:
            parts.append("chunked CE")
        if w.optimizer and w.optimizer.value != "adamw":
            parts.append(w.optimizer.value)
    else:
        if w.prompt_len is not None and w.prompt_len < w.seq_len:
            parts.append(f"input {w.prompt_len} + output {w.seq_len - w.prompt_len}")
        else:
            parts.append(f"ctx {w.seq_len}{'?' if p.assumed_seq else ''}")
    if w.gpus > 1:
        parts.append(f"{w.gpus} GPU {w.strategy.value}")
    return ", ".join(parts)


def _kind(p: Point) -> str:
    if p.is_oom:
        return f"OOM: {p.outcome}"
    if p.allocator_artefact:
        return "allocator artefact"
    if p.assumed_seq:
        return "length unknown"
    if p.unmodelled:
        return f"not modelled: {p.unmodelled}"
    return "known"


def main() -> None:
    points = load_points()
    rows = []
    ours_train: list[float] = []
    ours_infer: list[float] = []
    lf_err: list[float] = []
    un_err: list[float] = []
    for p in points:
        pred = estimate_memory(p.workload).per_gpu_gib
        lf, un = llama_factory_gib(p), unsloth_gib(p)
        meas = p.measured_gib
        gpu = f"{p.workload.gpus}x {p.gpu.name}" if p.gpu else "—"
        if p.is_oom:
            assert p.gpu is not None  # an out-of-memory run names its card
            ours = f"{pred:.1f} (> {p.gpu.usable_gib:.1f} usable: {'OOM ✓' if pred > p.gpu.usable_gib else 'miss'})"
        else:
            ours = _pct(pred, meas)
        rows.append(f"| {p.id} | {p.workload.arch.name} | {_conditions(p)} | {gpu} | "
                    f"{'OOM' if meas is None else f'{meas:.2f}'} | {ours} | {_pct(lf, meas)} | {_pct(un, meas)} | "
                    f"{_kind(p)} |")
        if p.known_conditions:
            assert meas is not None  # known conditions: not an out-of-memory run
            (ours_train if p.is_training else ours_infer).append(abs(pred / meas - 1))
            if p.is_training:
                if lf is not None:
                    lf_err.append(abs(lf / meas - 1))
                if un is not None:
                    un_err.append(abs(un / meas - 1))
    known_train = [p for p in points if p.known_conditions and p.is_training]
    worst_under = min(estimate_memory(p.workload).per_gpu_gib / p.measured_gib - 1
                      for p in known_train if p.measured_gib is not None)

    def med(xs: list[float]) -> str:
        return f"{statistics.median(xs) * 100:.1f} %" if xs else "—"

    print("## Estimator accuracy")
    print()
    print("Generated by `python bench/accuracy_table.py` from `bench/data/measured_public.json` (a copy of "
          "the steering repository's reference file, with its sources), "
          "`bench/data/measured_architectures.json`, "
          "`bench/data/measured_dense.json` and `bench/data/measured_components.json`; the same "
          "judgement runs in `tests/core/test_estimator_accuracy.py`. GiB per GPU; the prediction is the peak PyTorch "
          "reports (no safety margin, no CUDA context), the figure the measurements give. LLaMA-Factory and Unsloth "
          "columns: their per-size tables (docs/reference/estimator.md §9) at the nearest size, divided by the "
          "GPU count; "
          "error in brackets is against the measurement.")
    print()
    print(f"- Training points with known conditions ({len(known_train)}): median |error| **{med(ours_train)}** "
          f"(LLaMA-Factory {med(lf_err)}, Unsloth {med(un_err)} where they give a figure); lowest signed error "
          f"{worst_under * 100:+.1f} % (target: nothing under -15 %, an under-estimate is an OOM for the user).")
    print(f"- Inference points with known conditions ({len(ours_infer)}): max |error| "
          f"**{max(ours_infer) * 100:.1f} %** (target 5 %).")
    print("- Out-of-memory runs are predicted above the card's usable memory.")
    print()
    print("How the special points are treated:")
    print(f"- *length unknown* (`seq_len: null`): torchtune's Llama-2-7B tutorial runs (Alpaca, unpacked) are "
          f"evaluated at {ASSUMED_TRAIN_SEQ} tokens, Alpaca's longest sample (reported by litgpt for the same "
          "dataset; padded batches peak at the longest one); litgpt's inference runs at "
          f"{ASSUMED_INFER_SEQ} tokens (a one-line prompt + 50 new tokens). They are shown but kept out of the "
          "targets; the tests check that their order comes out right, that LoRA runs land within 10 %, and that the "
          "inference ones stay within 5 % for any short prompt. The early torchtune QLoRA run is 28 % under at the "
          "assumed length and we do not know why (a longer padded batch than its LoRA twins', or the NF4 code of "
          "the time); the test only checks that a plausible length (4096) reaches it. Do not read the 1304-token "
          "figure as a bound.")
    print("- *allocator artefact*: the RTX A6000 LoRA run is the 4090 configuration; PyTorch's caching allocator "
          "reserved 30.3 GiB on the 48 GB card vs 16.2 on the 24 GB one. We predict the need (the same for both) "
          "and test that it equals the twin's, stays below the A6000's reserve, and is within 15 % of the 4090's.")
    print("- *not modelled*: torchtune's low-memory full fine-tune fuses the optimizer step into backward (gradients "
          "freed layer by layer) and pages 8-bit states to CPU; the workload has no field for the first, so the "
          "estimate stays above the measurement (safe) and still counts in the median.")
    print("- Framework facts the file leaves implicit (pure bf16 for torchtune/litgpt, chunked CE for the torchtune "
          "README runs, torchao's double-quantised NF4) are read from each point's source "
          "(`testkit/measured_points.py`).")
    print()
    print("| point | model | conditions | GPU | measured | ours | LLaMA-Factory | Unsloth | kind |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(r)
    print()
    _architectures()


TARGET_INFERENCE = 0.05  # the target for inference: within 5 %

# What each kind of inference point is, in docs/accuracy.md's words (kinds: `testkit.measured_points.arch_kind`).
_KIND_TEXT = {
    "short": "Short input (1 token + 2048 generated), every size 0.5B-72B, BF16, FP8, GPTQ, AWQ",
    "long": "Long input (6k-30k tokens + 2048 generated), transformers 4.46 (Qwen2.5 0.5B-72B)",
    "prefill-unmeasured": "Long input (6k-30k tokens + 2048 generated), transformers 4.51 (Qwen3 0.6B-32B), a "
                          "benchmark whose peaks mostly fall below a single-pass prefill's floor",
    "moe": "MoE (Qwen3-30B-A3B, memory = all 128 experts)",
}


def _verdict(kind: str, errs: list[float]) -> str:
    worst = max(abs(e) for e in errs)
    if kind == "prefill-unmeasured":
        under = sum(e < -TARGET_INFERENCE for e in errs)
        return (f"not judged against the 5 % target (below); {under} more than 5 % under "
                "(the estimate keeps the prefill, so these are over-estimates)")
    if worst <= TARGET_INFERENCE:
        return f"max |error| **{worst * 100:.1f} %**: target 5 % met"
    over = sum(abs(e) > TARGET_INFERENCE for e in errs)
    text = f"max |error| **{worst * 100:.1f} %**: target 5 % **missed** by {over} of {len(errs)} points"
    return text


def _judged_rows(points: list[Point], kinds: dict[str, list[float]]) -> list[str]:
    rows = []
    for p in points:
        pred = estimate_memory(p.workload).per_gpu_gib
        assert p.measured_gib is not None
        err = pred / p.measured_gib - 1
        kind = arch_kind(p)
        if p.known_conditions:
            kinds.setdefault(kind, []).append(err)
        else:
            kind = ("not judged: below the single-pass floor" if p.below_floor else
                    "not judged: heavier than its own longer-input row minus that row's extra cache")
        a = p.workload.arch
        size = f"{a.params_b:.3g}B" + (f" / {a.active_params_b:.3g}B active" if a.experts > 1 else "")
        rows.append(f"| {p.id} | {a.name} ({size}) | {_conditions(p)} | {p.gpu.name if p.gpu else '—'} | "
                    f"{p.measured_gib:.2f} | {pred:.2f} ({err * 100:+.1f} %) | {kind} |")
    return rows


def _architectures() -> None:
    """The second part: every inference point with a stated input length (current architectures, dense models of
    every size), judged against the issue's 5 %."""
    arch, dense = load_arch_points(), load_dense_points()
    kinds: dict[str, list[float]] = {}
    arch_rows, dense_rows = _judged_rows(arch, kinds), _judged_rows(dense, kinds)
    qwen25 = [p for p in load_points() if p.known_conditions and p.input_tokens is not None]
    for p in qwen25:  # the Qwen2.5-7B/14B rows of measured_public.json, judged above, belong to the same groups
        assert p.measured_gib is not None
        kinds.setdefault(arch_kind(p), []).append(estimate_memory(p.workload).per_gpu_gib / p.measured_gib - 1)

    def span(xs: list[float]) -> str:
        return f"{min(xs) * 100:+.1f} % .. {max(xs) * 100:+.1f} %, median |error| " \
               f"{statistics.median(abs(x) for x in xs) * 100:.1f} %"

    print("### Inference at stated input lengths: every size, short and long")
    print()
    print("The Qwen2.5 and Qwen3 speed benchmarks (the same script: Hugging Face transformers, batch 1, 2048 tokens "
          "generated after an input of 1 to 30,720 tokens; peak = `torch.cuda.max_memory_allocated`), copied with "
          "the source of each point into `bench/data/measured_dense.json` (Qwen2.5 0.5B-72B on an A100 80GB with "
          "transformers 4.46; Qwen3 GPTQ/AWQ on an H20), `bench/data/measured_architectures.json` (Qwen3 BF16/FP8 "
          "and the 30B-A3B MoE, transformers 4.51) and `bench/data/measured_public.json` (Qwen2.5-7B/14B). The "
          "workload states the input as the prompt (`input 6k output 2k`), so the prefill is sized on the prompt "
          "and the cache on the whole context; the peak is the larger of the two moments. Rows measured across "
          "several GPUs (`device_map='auto'` splits the layers) are left out.")
    print()
    for kind in ("short", "long", "prefill-unmeasured", "moe"):
        errs = kinds.get(kind)
        if errs:
            print(f"- {_KIND_TEXT[kind]} ({len(errs)} points): {span(errs)}; {_verdict(kind, errs)}.")
    unmeasured = [p for p in arch + dense if p.prefill_unmeasured]
    print(f"- Why the transformers 4.51 long-input rows are not judged: {sum(p.below_floor for p in unmeasured)} of "
          f"their {len(unmeasured)} peaks are below the least a single forward pass over the prompt can hold "
          "(`single_pass_floor_gib` in `testkit/measured_points.py`: what the same table's 1-token run held besides "
          "its cache, plus the prompt's cache, plus per prompt token the residual stream and its normalised copy "
          "and the gated MLP's gate and up projections, which are alive together). In every Qwen3 table the peak "
          "is weights + the final cache + about 32 MiB at every prompt length: no prefill working set at all, "
          "which a single pass cannot produce (Qwen3-8B, 30,720 tokens: one MLP-width tensor is 720 MiB, more than "
          "the 288 MiB the 2048 generated tokens add to the cache). The rows that clear the floor do so only where "
          "the working set is smaller than that cache growth (short prompts, small models); they are the same "
          "measurement, so the rule (`mark_prefill_unmeasured`) sets the benchmark's long-input rows aside as a "
          "whole when most of them fall below the floor, and a lone row below it otherwise. The same script on "
          "transformers 4.46 (Qwen2.5) clears the floor on every row and shows three MLP-width and four "
          "hidden-width tensors per prompt token on all six sizes; the estimate keeps that working set (an "
          "under-estimate is an out-of-memory error for the user), and the test holds these rows to never more "
          "than 5 % under.")
    print("- Three Qwen2.5 AWQ rows at input 1 (0.5B, 1.5B, 3B) used more memory than the same model's 6144-token "
          "row minus the cache those tokens add, which no prompt can cause; they are shown, not judged "
          "(`flag_inconsistent` in `testkit/measured_points.py`).")
    print("- Left out: the Qwen2 tables (transformers 4.38) compute logits for every prompt token in fp32 (+5 GiB at "
          "6144 tokens on the 0.5B), a condition the workload does not describe; their 1-token rows are also "
          "0.2-0.5 GiB above the Qwen2.5 rows of the same shapes, unexplained.")
    print("- MLA (DeepSeek V2/V3, Kimi K2) and sliding-window (Gemma 2/3, gpt-oss) models: no public peak-memory "
          "measurement with its conditions stated was found; the components those architectures change (KV cache, "
          "natively quantised weights) are judged against engines' own allocations below, and the KV cache against "
          "hand calculations (`tests/core/test_architectures.py`).")
    print()
    print("| point | model | conditions | GPU | measured | ours | kind |")
    print("|---|---|---|---|---|---|---|")
    for r in arch_rows + dense_rows:
        print(r)
    print()
    _components()


def _components() -> None:
    """The third table: one memory component of MoE / MLA / sliding-window models, as an engine allocated it."""
    points = load_component_points()
    rows, errors = [], []
    for p in points:
        pred = p.predicted_gib()
        err = pred / p.measured_gib - 1
        errors.append(err)
        w, a = p.workload, p.workload.arch
        old = window_only_gib(p)
        before = "—" if old is None else f"{old:.3f} ({(old / p.measured_gib - 1) * 100:+.1f} %)"
        cond = f"{w.quant.value if w.quant.value != 'none' else 'bf16'}, "
        cond += f"{w.concurrency} x {w.seq_len} tokens, KV {w.kv_dtype}" if p.component == "kv_cache" else \
            f"{w.gpus} device(s) {w.strategy.value if w.gpus > 1 else ''}".strip()
        rows.append(f"| {p.id} | {a.name} ({a.attention}) | {p.component} | {cond} | {p.raw['engine']} | "
                    f"{p.measured_gib:.3f} | {pred:.3f} ({err * 100:+.1f} %) | {before} |")
    kinds = sorted({p.attention for p in points})
    print("### Components of MoE, MLA and sliding-window models")
    print()
    print("No public peak-memory run of these architectures states its conditions, but inference engines print what "
          "they allocate for each component at start-up. `bench/data/measured_components.json` copies such lines "
          "from public issues (quote, engine, conditions, link per point); each is judged against the estimator's "
          "matching term (`kv_cache` or `weights`, GiB per device), not the whole peak.")
    print()
    worst = max(abs(e) for e in errors) * 100
    print(f"- {len(points)} component points ({', '.join(kinds)}): max |error| **{worst:.1f} %** (target 5 %).")
    print("- Sliding-window layers keep their window plus the batch being evaluated (llama.cpp's n_ubatch, 512 by "
          "default; `core.models.SWA_BATCH_TOKENS`). The last column is what counting the window alone gave: 19-42 % "
          "under at 1k-8k tokens per sequence, which is how the rule was found.")
    print("- MLA caches the latent plus the rope key per token and layer (576 values for DeepSeek V2/V3), which "
          "ik_llama.cpp and vLLM allocate to the MiB; gpt-oss keeps MXFP4 experts beside 16-bit attention and "
          "embeddings. Under tensor parallelism MLA's down-projections (q_a, kv_a) and the MoE routers stay whole "
          "on every rank (`_Dims.tp_replicated_*` in `core/estimator.py`): splitting everything 8 ways had "
          "DeepSeek-R1's FP8 weights 1.4 % under Gaudi's figure, 0.2 % with them.")
    print()
    print("| point | model (attention) | component | conditions | engine | measured GiB | ours | window only |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(r)


if __name__ == "__main__":
    main()
