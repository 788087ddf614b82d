"""The public peak-memory measurements (`bench/data/measured_public.json`) as workloads for the estimator.

Shared by the accuracy tests and `bench/accuracy_table.py`, so the table in docs/accuracy.md and the tests judge the
same thing.

How each point is read (and why):
- Conditions the file states are used as stated (model, method, rank, targets, batch, sequence, checkpointing,
  quantisation, precision, optimizer, GPU count and strategy).
- Framework facts the file leaves implicit are filled from the framework named in `source`: torchtune and litgpt
  train in pure bf16 (`bf16-true`: no fp32 master copy, optimizer states in bf16); the torchtune README runs
  (Llama 3.1, late 2024) use torchtune's chunked cross-entropy (`fused_ce`), the older torchtune tutorial and
  litgpt runs compute the plain loss; torchtune's NF4 (torchao) double-quantises its scales. Inference points
  use bf16 weights unless quantised.
- `seq_len: null` means the sequence length is unknown: such a point gets `ASSUMED_TRAIN_SEQ` (Alpaca's longest
  sample in the Llama-2 tokenizer, 1304 tokens, which litgpt reports for the same dataset: unpacked batches pad to
  the longest sample, so the peak is set by it) or `ASSUMED_INFER_SEQ` (litgpt's generate: a one-line prompt and
  50 new tokens), and is marked `assumed_seq` — it is reported but kept out of the accuracy targets.
- `UNMODELLED` names runs with a stated condition the workload cannot express (torchtune's optimizer-in-backward
  full fine-tune): they stay in the accuracy targets and the table says why they are off.
- The RTX A6000 LoRA run is the same configuration as the 4090 one; its reserved peak reflects the caching
  allocator on a larger card (`allocator_artefact`), not the workload's need.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from itertools import pairwise
from pathlib import Path
from typing import Any

from core.estimator import KV_BYTES, estimate_memory, kv_cache_bytes
from core.gpus import GPU, find_gpu
from core.models import find_model
from core.workload import Attention, Method, Offload, Optimizer, Precision, Quant, Strategy, Workload

REPO_ROOT = Path(__file__).resolve().parent.parent
# Copies of the public measurements, with their sources (the product and its tests need nothing outside the repo):
# measured_public.json is the steering repo's reference file as given (bench/data/SOURCE.md);
# measured_architectures.json adds current architectures (MoE, small dense models, FP8 checkpoints) from the
# sources each point names.
MEASURED_PATH = REPO_ROOT / "bench" / "data" / "measured_public.json"
ARCH_PATH = REPO_ROOT / "bench" / "data" / "measured_architectures.json"
# measured_components.json: one component (KV cache, weights in memory) of MoE / MLA / sliding-window models as an
# engine allocated it (start-up logs quoted in public issues), judged against the matching breakdown term.
COMPONENTS_PATH = REPO_ROOT / "bench" / "data" / "measured_components.json"
# measured_dense.json: dense models of every size (0.5B-72B) at short and long inputs, BF16 and quantised, from the
# Qwen2.5 and Qwen3 speed benchmarks (each point names its table).
DENSE_PATH = REPO_ROOT / "bench" / "data" / "measured_dense.json"

ASSUMED_TRAIN_SEQ = 1304
ASSUMED_INFER_SEQ = 128
GB_PER_GIB = 2**30 / 1e9

_QUANTS = {"nf4": Quant.NF4, "nf4 double-quant": Quant.NF4_DQ, "bf16": Quant.NONE, "gptq-int4": Quant.GPTQ_INT4,
           "awq": Quant.AWQ, "int8": Quant.INT8, "fp8": Quant.FP8, "gptq-int8": Quant.GPTQ_INT8,
           "mxfp4": Quant.MXFP4}
# MB as torch reports it: max_memory_allocated/2^20
_UNIT_DIVISOR = {"GB": GB_PER_GIB, "MiB": 1024.0, "MB": 1024.0, "GiB": 1.0}
_ALLOCATOR_ARTEFACTS = {"tt-8b-lora-a6000"}
# Known conditions the workload model cannot express: still judged (they count in the median), and said so.
UNMODELLED: dict[str, str] = {
    "tt-8b-full-4090": "optimizer step fused into backward (gradients freed layer by layer) and paged states",
}


@dataclass(frozen=True)
class Point:
    id: str
    workload: Workload
    gpu: GPU | None
    measured_gib: float | None  # None: the run ran out of memory
    outcome: str | None
    assumed_seq: bool
    allocator_artefact: bool
    raw: dict[str, Any]
    inconsistent: bool = False  # disagrees with its own table's longer input (`flag_inconsistent`)
    # its benchmark's long-input peaks mostly fall below a single-pass prefill's floor (`mark_prefill_unmeasured`)
    prefill_unmeasured: bool = False
    below_floor: bool = False  # below `single_pass_floor_gib`

    @property
    def unmodelled(self) -> str | None:
        """What of this run's known conditions the workload model does not express (None: everything)."""
        return UNMODELLED.get(self.id)

    @property
    def is_oom(self) -> bool:
        return self.measured_gib is None

    @property
    def is_training(self) -> bool:
        return self.workload.is_training

    @property
    def known_conditions(self) -> bool:
        return not self.assumed_seq and not self.allocator_artefact and not self.is_oom and not self.inconsistent

    @property
    def input_tokens(self) -> int | None:
        """The prompt length a benchmark states (None: not stated)."""
        n = self.raw.get("input_tokens")
        return int(n) if n else None



def load_raw(path: Path = MEASURED_PATH) -> list[dict[str, Any]]:
    """The file's points. A missing file is an error (FileNotFoundError), never an empty list."""
    return list(json.loads(path.read_text(encoding="utf-8"))["points"])


def _optimizer(raw: dict[str, Any]) -> Optimizer:
    text = str(raw.get("optimizer") or "adamw").lower()
    if "paged" in text:
        return Optimizer.PAGED_ADAMW_8BIT
    if "8bit" in text or "8-bit" in text:
        return Optimizer.ADAMW_8BIT
    return Optimizer.SGD if "sgd" in text else Optimizer.ADAMW


def to_point(raw: dict[str, Any]) -> Point:
    arch = find_model(raw["model"])
    if arch is None:
        raise ValueError(f"measured point {raw['id']}: unknown model {raw['model']!r}")
    method = Method(raw["method"])
    training = method is not Method.INFERENCE
    source = str(raw.get("source", ""))
    assumed = raw.get("seq_len") is None
    seq = int(raw["seq_len"]) if not assumed else (ASSUMED_TRAIN_SEQ if training else ASSUMED_INFER_SEQ)
    quant = _QUANTS[str(raw.get("quant", "nf4" if method is Method.QLORA else "bf16"))]
    if quant is Quant.NF4 and source.startswith("torchtune"):
        quant = Quant.NF4_DQ  # torchao's NF4 quantises its block scales too (double quantisation)
    # torchtune and litgpt train in pure bf16; inference in bf16.
    precision = Precision(raw.get("precision", "bf16-true")) if training else Precision.BF16
    gpus = int(raw.get("gpus") or 1)
    strategy = Strategy(raw["strategy"]) if raw.get("strategy") else (Strategy.FSDP if gpus > 1 else Strategy.SINGLE)
    gpu = find_gpu(raw["gpu"]) if raw.get("gpu") else None
    w = Workload(
        model=arch.id, arch=arch, params_b=arch.params_b, method=method, quant=quant, precision=precision,
        seq_len=seq, batch=int(raw.get("micro_batch") or 1), grad_ckpt=bool(raw.get("grad_ckpt", False)),
        attention=Attention.FLASH,
        lora_rank=int(raw["lora_rank"]) if raw.get("lora_rank") else None,
        lora_targets=raw.get("lora_targets"),
        optimizer=_optimizer(raw) if training else None,
        fused_ce=source.startswith("torchtune README"),
        gpus=gpus, strategy=strategy, offload=Offload.NONE, gpu=gpu.id if gpu else None,
        kv_dtype="bf16", concurrency=1, examples=None, tokens_per_example=None, epochs=None,
        # a benchmark that states its input length prefilled only that much; the rest of seq_len was generated
        prompt_len=int(raw["input_tokens"]) if not training and raw.get("input_tokens") else None,
    )
    measured = raw.get("measured")
    gib = None if measured is None else float(measured) / _UNIT_DIVISOR.get(str(raw.get("unit")), 1.0)
    return Point(id=raw["id"], workload=w, gpu=gpu, measured_gib=gib, outcome=raw.get("outcome"),
                 assumed_seq=assumed, allocator_artefact=raw["id"] in _ALLOCATOR_ARTEFACTS, raw=raw)


def load_points(path: Path = MEASURED_PATH) -> list[Point]:
    return mark_prefill_unmeasured(flag_inconsistent([to_point(r) for r in load_raw(path)]))


def arch_kind(p: Point) -> str:
    """How an inference point with a stated input length is judged (docs/accuracy.md, "Estimator accuracy"; the issue's
    target for inference is 5 %):
    moe: within 5 %; short (an input of at most 2048 tokens): within 5 %, every size and quantisation; long (6k-30k
    input): within 5 %; prefill-unmeasured (`mark_prefill_unmeasured`): never more than 5 % under, over-estimates
    reported, not judged against the target."""
    if p.workload.arch.experts > 1:
        return "moe"
    if (p.input_tokens or 0) <= 2048:
        return "short"
    return "prefill-unmeasured" if p.prefill_unmeasured else "long"


def load_arch_points(path: Path = ARCH_PATH) -> list[Point]:
    return mark_prefill_unmeasured(flag_inconsistent([to_point(r) for r in load_raw(path)]))


def flag_inconsistent(points: list[Point]) -> list[Point]:
    """Mark a run that used more memory than the next-longer input of the same table, model and quantisation
    minus the cache those extra tokens add: a longer prompt can only add memory, so one of the two rows measured
    something else (Qwen2.5's AWQ 0.5B-3B rows at input 1 are 0.09-0.35 GiB heavier than that bound). Such a
    point is shown in the table but not judged."""
    series: dict[tuple[str, str, str, str], list[Point]] = {}
    for p in points:
        if p.input_tokens is not None and p.measured_gib is not None and not p.is_training:
            key = (str(p.raw["model"]), str(p.raw.get("quant")), str(p.raw.get("gpu")), str(p.raw.get("source")))
            series.setdefault(key, []).append(p)
    bad: set[str] = set()
    for runs in series.values():
        runs.sort(key=lambda p: p.workload.seq_len)
        for short, long in pairwise(runs):
            w = short.workload
            added = (kv_cache_bytes(w.arch, long.workload.seq_len, w.kv_dtype)
                     - kv_cache_bytes(w.arch, w.seq_len, w.kv_dtype)) / 2**30
            assert short.measured_gib is not None and long.measured_gib is not None
            if short.measured_gib > long.measured_gib - added + 0.01:  # 0.01 GiB: the tables' rounding
                bad.add(short.id)
    return [replace(p, inconsistent=True) if p.id in bad else p for p in points]


def load_dense_points(path: Path = DENSE_PATH) -> list[Point]:
    return mark_prefill_unmeasured(flag_inconsistent([to_point(r) for r in load_raw(path)]))


def benchmark(p: Point) -> str:
    """The document a point was measured by: its source up to the first space after the path (the repository and
    file, e.g. `QwenLM/Qwen3 docs/source/getting_started/speed_benchmark.md`): one script, one engine version."""
    words = str(p.raw.get("source", "")).split()
    return " ".join(words[:2])


def single_pass_floor_gib(one_token: Point, p: Point) -> float:
    """The least memory a single forward pass over `p`'s prompt can hold, from the same table's 1-token run of the
    same model and quantisation: everything that run held besides its cache (weights, buffers, workspace), plus the
    cache of the prompt, plus, for every prompt token, the residual stream and its normalised copy (two
    hidden-width tensors) and the gate and up projections of the gated MLP, both alive when they are multiplied
    (two MLP-width tensors), in 16-bit activations. Fewer bytes mean the run did not prefill its prompt in one pass
    (a chunked prefill) or measured something else."""
    a, w = p.workload.arch, one_token.workload
    assert one_token.measured_gib is not None and p.input_tokens is not None
    held = one_token.measured_gib - kv_cache_bytes(a, w.seq_len, w.kv_dtype) / 2**30
    working = p.input_tokens * (2 * a.hidden + 2 * a.intermediate) * 2 / 2**30
    return held + kv_cache_bytes(a, p.input_tokens, p.workload.kv_dtype) / 2**30 + working


def mark_prefill_unmeasured(points: list[Point]) -> list[Point]:
    """Judge each long-input inference row (dense models) against `single_pass_floor_gib`. A row below its floor is
    not a measurement of what it states. When most of a benchmark's long-input rows are below it, the benchmark's
    way of measuring did not capture the prefill at all: every long-input row of it is `prefill_unmeasured`
    (shown, held to never more than 5 % under, kept out of the 5 % target), including the rows that clear the
    floor only because their working set is smaller than the cache the generated tokens add. Otherwise a lone
    row below the floor is `inconsistent` (shown, not judged)."""
    series: dict[tuple[str, str, str, str], list[Point]] = {}
    for p in points:
        if p.input_tokens is not None and p.measured_gib is not None and not p.is_training \
                and p.workload.arch.experts <= 1:
            key = (str(p.raw["model"]), str(p.raw.get("quant")), str(p.raw.get("gpu")), str(p.raw.get("source")))
            series.setdefault(key, []).append(p)
    below: dict[str, set[str]] = {}
    rows: dict[str, set[str]] = {}
    for runs in series.values():
        one = next((r for r in runs if r.input_tokens == 1 and not r.inconsistent), None)
        for p in runs:
            if one is None or (p.input_tokens or 0) <= 2048:
                continue
            assert p.measured_gib is not None
            rows.setdefault(benchmark(p), set()).add(p.id)
            if p.measured_gib < single_pass_floor_gib(one, p):
                below.setdefault(benchmark(p), set()).add(p.id)
    unmeasured = {i for b, ids in rows.items() if 2 * len(below.get(b, ())) > len(ids) for i in ids}
    lone = {i for ids in below.values() for i in ids} - unmeasured
    under = {i for ids in below.values() for i in ids}
    return [replace(p, prefill_unmeasured=p.id in unmeasured, inconsistent=p.inconsistent or p.id in lone,
                    below_floor=p.id in under) for p in points]


# --- one component of the memory (bench/data/measured_components.json) -------------------------------------------

COMPONENTS = ("kv_cache", "weights")


@dataclass(frozen=True)
class ComponentPoint:
    """A measured KV cache or weights-in-memory figure, with the workload whose breakdown term it checks."""

    id: str
    component: str  # "kv_cache" | "weights": the `Breakdown` field it is judged against
    workload: Workload
    measured_gib: float
    raw: dict[str, Any]

    @property
    def attention(self) -> str:
        return self.workload.arch.attention

    def predicted_gib(self) -> float:
        """The estimator's term for this component, GiB per GPU (what the engine's log reports per device)."""
        return float(getattr(estimate_memory(self.workload).breakdown, self.component))


def to_component_point(raw: dict[str, Any]) -> ComponentPoint:
    arch = find_model(raw["model"])
    if arch is None:
        raise ValueError(f"component point {raw['id']}: unknown model {raw['model']!r}")
    component = str(raw["component"])
    if component not in COMPONENTS:
        raise ValueError(f"component point {raw['id']}: unknown component {component!r}")
    gpus = int(raw.get("gpus") or 1)
    w = Workload(
        model=arch.id, arch=arch, params_b=arch.params_b, method=Method.INFERENCE, quant=_QUANTS[str(raw["quant"])],
        precision=Precision.BF16, seq_len=int(raw["seq_len"]), batch=1, grad_ckpt=False, attention=Attention.FLASH,
        lora_rank=None, lora_targets=None, optimizer=None, fused_ce=False, gpus=gpus,
        strategy=Strategy(raw["strategy"]) if raw.get("strategy") else Strategy.SINGLE, offload=Offload.NONE,
        gpu=None, kv_dtype=str(raw.get("kv_dtype") or "bf16"), concurrency=int(raw.get("concurrency") or 1),
        examples=None, tokens_per_example=None, epochs=None,
    )
    gib = float(raw["measured"]) / _UNIT_DIVISOR[str(raw["unit"])]
    return ComponentPoint(id=raw["id"], component=component, workload=w, measured_gib=gib, raw=raw)


def load_component_points(path: Path = COMPONENTS_PATH) -> list[ComponentPoint]:
    return [to_component_point(r) for r in load_raw(path)]


def window_only_gib(p: ComponentPoint) -> float | None:
    """A sliding-window model's KV cache if local layers kept only their window (the rule before the batch term):
    what the table shows beside the prediction. None for other points."""
    a, w = p.workload.arch, p.workload
    if p.component != "kv_cache" or not (a.window and a.local_layers) or a.kv_lora_rank:
        return None
    local = min(a.local_layers, a.kv_layers)
    tokens = (a.kv_layers - local) * w.seq_len + local * min(w.seq_len, a.window)
    per = a.kv_elements_per_token_layer() * KV_BYTES.get(w.kv_dtype.lower(), 2.0)
    return per * tokens * w.concurrency / 2**30
