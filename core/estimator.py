"""Per-GPU peak memory of a workload: inference, full fine-tuning, freeze, LoRA and QLoRA.

The model follows `shared/reference/estimator.md` §2–§5 term by term, so each number in the breakdown can be argued
about on its own:

  weights           what the GPU holds of the model itself (16-bit, fp32 or a quantised base; sharded by ZeRO-3/TP)
  trainable_states  gradients, fp32 master copies and optimizer states of what is trained (sharded by ZeRO-2/3)
  activations       what the forward pass keeps for the backward one (training) or the prefill working set (inference)
  logits            the vocabulary-wide logits and loss: the term most estimators forget
  kv_cache          inference only: 2 * L * kv_heads * head_dim * bytes per token, times context and sequences
  overhead          allocator fragmentation, dequantisation buffers, gradient buckets, gathered FSDP layers

`per_gpu_gib` is the peak PyTorch reports (max memory reserved/allocated): that is what every public measurement
gives, so it is what we predict and test. Memory outside PyTorch's allocator (the CUDA context, NCCL buffers) is
`runtime_gib`; `core.fit` adds it before comparing with a card's usable memory.

Every constant below either comes from the reference (cited) or was calibrated on the measured points of
`measured_public.json` (said so); the README's "Estimator accuracy" table shows what that buys.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from core.models import Arch
from core.workload import (
    ADAPTER_METHODS,
    Attention,
    Method,
    Offload,
    Optimizer,
    Precision,
    Quant,
    Strategy,
    Workload,
)

GIB = float(2**30)

# Bytes per parameter of a base weight, including block scales (reference §2 and §4).
QUANT_BYTES: dict[Quant, float] = {
    Quant.NF4: 0.5625,  # 4 bits + one fp32 absmax per 64 weights
    Quant.NF4_DQ: 0.516,  # absmax itself quantised to 8 bits (double quantisation)
    Quant.INT8: 1.0,  # LLM.int8 row-wise int8
    Quant.FP8: 1.0,
    Quant.GPTQ_INT4: 0.52,  # 4 bits + fp16 scale and packed zero per group of 128 (4.16 bits)
    Quant.GPTQ_INT8: 1.02,
    Quant.AWQ: 0.52,
    # GGUF: whole-file bits per parameter (llama.cpp sizes; embeddings are quantised too).
    Quant.Q4_K_M: 4.89 / 8,
    Quant.Q5_K_M: 5.69 / 8,
    Quant.Q6_K: 6.56 / 8,
    Quant.Q8_0: 8.5 / 8,
}
GGUF = frozenset({Quant.Q4_K_M, Quant.Q5_K_M, Quant.Q6_K, Quant.Q8_0})
# bitsandbytes bases: dequantised on the fly, layer by layer (QLoRA, LLM.int8).
BNB = frozenset({Quant.NF4, Quant.NF4_DQ, Quant.INT8})
KV_BYTES: dict[str, float] = {"bf16": 2, "fp16": 2, "fp32": 4, "fp8": 1, "int8": 1, "int4": 0.5, "q8_0": 1.0625,
                              "q4_0": 0.5625}

ALL_LINEAR = ("q", "k", "v", "o", "gate", "up", "down")
_TARGET_ALIASES = {
    "all-linear": ALL_LINEAR, "all": ALL_LINEAR, "all_linear": ALL_LINEAR, "linear": ALL_LINEAR,
    "attn": ("q", "k", "v", "o"), "attention": ("q", "k", "v", "o"), "qkvo": ("q", "k", "v", "o"),
    "mlp": ("gate", "up", "down"), "ffn": ("gate", "up", "down"), "qkv": ("q", "k", "v"), "qv": ("q", "v"),
    "o": ("o",), "output": ("o",), "out": ("o",), "output_proj": ("o",), "o_proj": ("o",), "out_proj": ("o",),
    "w1": ("gate",), "w3": ("up",), "w2": ("down",), "gate": ("gate",), "up": ("up",), "down": ("down",),
    "q": ("q",), "k": ("k",), "v": ("v",),
}

# Freeze tuning trains the last layers only (LLaMA-Factory's default `freeze_trainable_layers: 2`).
FREEZE_TRAINABLE_LAYERS = 2

# Logits and loss, bytes per (token x vocabulary entry). Plain Hugging Face cross-entropy: bf16 logits 2 + fp32
# upcast 4 + log-softmax 4 + fp32 gradient 4 + bf16 gradient 2 = 16 (reference §2, the 2.47 MB/token check).
# Fused / chunked CE never holds more than a chunk in fp32: one eighth of the sequence with its gradient, 8 B.
LOGIT_BYTES_PLAIN = 16.0
LOGIT_BYTES_FUSED = 1.0

# Prefill working set of inference, elements per prompt token: three 16-bit tensors of the MLP width (gate, up,
# their product) and two of the hidden width alive at once. Calibrated on the Qwen2.5-7B/14B HF-transformers points
# (1 -> 30,720 prompt tokens); the whole context is counted as prompt, the worst case.
PREFILL_ELEMS_I = 3
PREFILL_ELEMS_H = 2

# Allocator overhead. Training: fragmentation of the short-lived activation/logit blocks (reference §2: 5–10 %)
# plus a fixed workspace. Inference: a workspace proportional to the weights. Calibrated on the measured points.
TRAIN_FRAGMENTATION = 0.05
TRAIN_WORKSPACE_GIB = 0.25
INFER_WORKSPACE_FRACTION = 0.005
INFER_WORKSPACE_GIB = 0.02
# bitsandbytes dequantises a weight through a 16-bit copy and an fp32 intermediate: the largest such matrix.
DEQUANT_BYTES_PER_PARAM = 6.0

# Outside PyTorch's allocator: CUDA context + kernels (reference §2: 0.3–2 GiB) and NCCL buffers between GPUs.
CUDA_CONTEXT_GIB = 0.5
NCCL_GIB = 0.75
# Pinned host buffers when states are offloaded to CPU RAM (reference §3: "x1.5 buffer").
CPU_OFFLOAD_BUFFER = 1.5

# Stated safety margins (fractions added on top of the predicted peak for the recommended figure).
MARGIN_TRAINING = 0.10
MARGIN_INFERENCE = 0.05
MARGIN_MULTI_GPU = 0.05  # NCCL and sharding buckets vary by framework
MARGIN_GENERIC_ARCH = 0.05  # the architecture was scaled from a bare size, not read from a config


class Breakdown(BaseModel):
    """GiB per GPU of each memory term; they add up to `MemoryEstimate.per_gpu_gib`."""

    model_config = ConfigDict(frozen=True)

    weights: float
    trainable_states: float
    activations: float
    logits: float
    kv_cache: float
    overhead: float

    @property
    def total(self) -> float:
        return self.weights + self.trainable_states + self.activations + self.logits + self.kv_cache + self.overhead


class MemoryEstimate(BaseModel):
    """The memory a workload needs on each GPU of its configuration (`w.gpus` GPUs with `w.strategy`)."""

    model_config = ConfigDict(frozen=True)

    per_gpu_gib: float  # predicted peak as PyTorch reports it, no margin
    recommended_per_gpu_gib: float  # per_gpu_gib * (1 + safety_margin)
    safety_margin: float
    runtime_gib: float  # CUDA context + NCCL, outside PyTorch's allocator: the fit adds it
    cpu_ram_gib: float  # host RAM for offloaded or paged states (0 when nothing is offloaded)
    breakdown: Breakdown
    trainable_params_b: float  # billions of parameters that get gradients (0 for inference)
    gpus: int
    strategy: Strategy

    @property
    def need_gib(self) -> float:
        """Usable memory a GPU must report for this to run: the peak plus what lives outside PyTorch."""
        return self.per_gpu_gib + self.runtime_gib


@lru_cache(maxsize=256)
def parse_targets(targets: str | None) -> tuple[str, ...]:
    """LoRA target modules as canonical names ('q,v' -> ('q', 'v'); 'all-linear' -> all seven)."""
    if not targets:
        return ALL_LINEAR
    out: list[str] = []
    for raw in targets.lower().replace(" ", ",").split(","):
        name = raw.strip().removesuffix("_proj")
        for t in _TARGET_ALIASES.get(raw.strip(), _TARGET_ALIASES.get(name, ())):
            if t not in out:
                out.append(t)
    # Unknown names cannot be sized; the parser validates them, so fall back to the widest (safe) choice.
    return tuple(out) if out else ALL_LINEAR


@dataclass(frozen=True, slots=True)
class _Dims:
    """Numbers of an architecture the formulas use, computed once."""

    params: float  # total parameters
    embed: float  # embed_tokens + lm_head parameters (one matrix when tied)
    layer_params: float  # parameters of one transformer block (all experts)
    largest_matrix: float  # the largest single linear weight (parameters)
    active_i: int  # MLP width a token passes through (x active experts for MoE)


@lru_cache(maxsize=256)
def _dims(arch: Arch) -> _Dims:
    embed = arch.embedding_params_b * 1e9
    params = arch.params_b * 1e9
    shapes = arch.linear_shapes()
    layer = sum(d_in * d_out * n for d_in, d_out, n in shapes.values())
    largest = max(d_in * d_out for d_in, d_out, _ in shapes.values())
    return _Dims(params=params, embed=embed, layer_params=max(layer, (params - embed) / arch.layers),
                 largest_matrix=float(largest), active_i=arch.intermediate * max(1, arch.experts_active))


@lru_cache(maxsize=1024)
def adapter_params(arch: Arch, rank: int, targets: str | None) -> float:
    """LoRA parameters: r * sum over targeted linears of (d_in + d_out), every expert and layer (reference §2)."""
    shapes = arch.linear_shapes()
    per_layer = sum((shapes[t][0] + shapes[t][1]) * shapes[t][2] for t in parse_targets(targets))
    return float(rank * per_layer * arch.layers)


def kv_bytes_per_token(arch: Arch, kv_dtype: str = "bf16") -> float:
    """KV cache per token over all layers: 2 (K and V) * L * kv_heads * head_dim * bytes (reference §4)."""
    return 2.0 * arch.layers * arch.kv_heads * arch.head_dim * KV_BYTES.get(kv_dtype.lower(), 2.0)


def _w16(precision: Precision) -> float:
    """Bytes of one weight/gradient/activation element in this precision."""
    return 4.0 if precision is Precision.FP32 else 2.0


def _optimizer_bytes(opt: Optimizer | None, fp32_states: bool) -> float:
    """Optimizer state bytes per trained parameter (reference §2)."""
    if opt in (Optimizer.ADAMW_8BIT, Optimizer.PAGED_ADAMW_8BIT):
        return 2.0
    if opt is Optimizer.SGD:
        return 4.0 if fp32_states else 2.0  # momentum
    return 8.0 if fp32_states else 4.0  # AdamW m and v


def _base_bytes(w: Workload) -> float:
    """Bytes per frozen base parameter: the quantisation of a LoRA/QLoRA/inference base, else 16-bit."""
    quant = w.quant
    if w.method is Method.QLORA and quant is Quant.NONE:
        quant = Quant.NF4  # QLoRA means a quantised base
    if w.method in (Method.FULL, Method.FREEZE) or quant is Quant.NONE:
        return _w16(w.precision)
    return QUANT_BYTES[quant]


def _effective_quant(w: Workload) -> Quant:
    if w.method is Method.QLORA and w.quant is Quant.NONE:
        return Quant.NF4
    return Quant.NONE if w.method in (Method.FULL, Method.FREEZE) else w.quant


@dataclass(frozen=True, slots=True)
class _Cfg:
    """Where the workload runs: GPU count, strategy and attention kernel (what `core.fit` varies per card)."""

    gpus: int
    strategy: Strategy
    attention: Attention


def _margin(w: Workload, cfg: _Cfg) -> float:
    m = MARGIN_TRAINING if w.is_training else MARGIN_INFERENCE
    if cfg.gpus > 1:
        m += MARGIN_MULTI_GPU
    if w.arch.id.startswith(("generic-", "moe-")):
        m += MARGIN_GENERIC_ARCH
    return round(m, 4)


def _effective_strategy(cfg: _Cfg) -> Strategy:
    return Strategy.SINGLE if cfg.gpus <= 1 else cfg.strategy


def _weights_bytes(w: Workload, d: _Dims) -> float:
    """The whole model's weights in the bytes they are held in (before any sharding)."""
    quant = _effective_quant(w)
    if quant is Quant.NONE:
        return d.params * _w16(w.precision)
    if quant in GGUF:
        return d.params * QUANT_BYTES[quant]
    # Embeddings and lm_head stay 16-bit when a base is quantised (reference §2).
    return (d.params - d.embed) * QUANT_BYTES[quant] + d.embed * 2.0


def _layer_act_elems(w: Workload, d: _Dims, targets: tuple[str, ...]) -> float:
    """16-bit elements one transformer block keeps per token for its backward pass (FlashAttention).

    Saved tensors of a Llama-style block: both norm inputs and outputs (4h), Q and the attention output (2 q_dim),
    K and V (2 kv_dim), gate, up, SiLU(gate) and their product (4 i, x active experts for MoE).
    """
    a = w.arch
    elems = 4 * a.hidden + 2 * a.q_dim + 2 * a.kv_dim + 4 * d.active_i
    if w.method in ADAPTER_METHODS:
        shapes = a.linear_shapes()
        # Adapter dropout keeps its own copy of each adapted layer's input (PEFT/litgpt default dropout 0.05).
        for t in targets:
            d_in, _, copies = shapes[t]
            elems += d_in * (min(copies, a.experts_active) if copies > 1 else 1)
        if _effective_quant(w) in BNB:
            # bitsandbytes' 4/8-bit matmul keeps a private copy of its input for every projection fed by the
            # hidden state (q, k, v, o, gate, up). Fitted on litgpt's QLoRA vs LoRA runs: +6h per token-layer.
            elems += 3 * a.hidden + a.q_dim + 2 * a.hidden * a.experts_active
    return float(elems)


def _training(w: Workload, cfg: _Cfg) -> MemoryEstimate:
    a, d = w.arch, _dims(w.arch)
    n = max(1, cfg.gpus)
    strategy = _effective_strategy(cfg)
    act_b = _w16(w.precision)
    mixed = w.precision in (Precision.BF16, Precision.FP16)
    fp32_states = w.precision is not Precision.BF16_TRUE
    targets = parse_targets(w.lora_targets) if w.method in ADAPTER_METHODS else ()

    # --- model states (whole model, before sharding) ---
    weights = _weights_bytes(w, d)
    if w.method in ADAPTER_METHODS:
        trainable = adapter_params(a, w.lora_rank or 16, w.lora_targets)
        # PEFT keeps adapters in fp32 under mixed precision: weight 4 + grad 4 (+ optimizer); pure bf16: 2 + 2.
        aw = 4.0 if fp32_states else 2.0
        grads, master = trainable * aw, 0.0
        states_w = trainable * aw  # the adapter weights themselves
    else:
        if w.method is Method.FREEZE:
            trainable = (d.params - d.embed) * min(FREEZE_TRAINABLE_LAYERS, a.layers) / a.layers
        else:
            trainable = d.params
        grads = trainable * _w16(w.precision)
        master = trainable * 4.0 if mixed else 0.0  # fp32 master copy of what is trained
        states_w = 0.0
    opt = trainable * _optimizer_bytes(w.optimizer, fp32_states)

    cpu = 0.0
    if w.optimizer is Optimizer.PAGED_ADAMW_8BIT:
        # Paged states live in unified memory and are evicted to CPU RAM under pressure: the GPU need excludes them.
        cpu += opt
        opt = 0.0
    gather = 0.0
    if w.offload is Offload.OPTIMIZER:
        # ZeRO-Offload: gradients, master copies and optimizer states go to the CPU (reference §3: "2P" on GPU).
        cpu += (grads + master + opt) * CPU_OFFLOAD_BUFFER
        grads = master = opt = 0.0
    elif w.offload is Offload.ALL:
        # ZeRO-Infinity: parameters too; only the layers being computed are on the GPU.
        cpu += (weights + grads + master + opt + states_w) * CPU_OFFLOAD_BUFFER
        gather = 2 * d.layer_params * _base_bytes(w) + d.embed / (1 if a.tied_embeddings else 2) * 2.0
        weights = grads = master = opt = states_w = 0.0

    states = states_w + grads + master + opt
    if strategy in (Strategy.ZERO2,):
        states /= n
    elif strategy in (Strategy.ZERO3, Strategy.FSDP):
        states /= n
        if weights:
            weights /= n
            # Two blocks gathered at once (current + prefetch): reference §3's "4 x largest layer" bytes.
            gather = 2 * d.layer_params * _base_bytes(w)
    elif strategy is Strategy.TP:
        states /= n
        weights /= n

    # --- activations (per GPU: each data-parallel rank runs its own micro-batch) ---
    tokens = float(w.seq_len * w.batch)
    layers_kept = min(FREEZE_TRAINABLE_LAYERS, a.layers) if w.method is Method.FREEZE else a.layers
    per_layer = _layer_act_elems(w, d, targets) * act_b * tokens
    if cfg.attention is Attention.EAGER:
        # The a*s^2*b score matrix FlashAttention never materialises (Korthikanti et al.: 5 bytes per element).
        per_layer += 5.0 * a.heads * w.seq_len * tokens
    # Checkpointing keeps only each layer's input; one layer's working set is rebuilt during backward.
    acts = act_b * a.hidden * tokens * layers_kept + per_layer if w.grad_ckpt else per_layer * layers_kept
    logits = tokens * a.vocab * (LOGIT_BYTES_FUSED if w.fused_ce else LOGIT_BYTES_PLAIN)
    if strategy is Strategy.TP:
        acts /= n
        logits /= n

    overhead = TRAIN_FRAGMENTATION * (acts + logits) + TRAIN_WORKSPACE_GIB * GIB + gather
    if _effective_quant(w) in BNB:
        overhead += DEQUANT_BYTES_PER_PARAM * d.largest_matrix
    if n > 1 and strategy in (Strategy.DDP, Strategy.ZERO2) and grads:
        overhead += 2 * 25e6 * 4  # two fp32 gradient buckets of 25 M elements (DDP / DeepSpeed defaults)

    bd = Breakdown(weights=weights / GIB, trainable_states=states / GIB, activations=acts / GIB,
                   logits=logits / GIB, kv_cache=0.0, overhead=overhead / GIB)
    return _finish(w, cfg, bd, cpu, trainable)


def _inference(w: Workload, cfg: _Cfg) -> MemoryEstimate:
    a, d = w.arch, _dims(w.arch)
    n = max(1, cfg.gpus)
    strategy = _effective_strategy(cfg)
    act_b = _w16(w.precision)
    weights = _weights_bytes(w, d)
    kv = kv_bytes_per_token(a, w.kv_dtype) * w.seq_len * w.concurrency
    # Prefill of one prompt of the full context (engines prefill sequences one chunk at a time, HF all at once).
    prefill_i = PREFILL_ELEMS_I * d.active_i * act_b * w.seq_len
    prefill_h = PREFILL_ELEMS_H * a.hidden * act_b * w.seq_len
    logits = w.concurrency * a.vocab * 4.0 * 2  # last-position logits in fp32 and their softmax
    gather = 0.0
    if strategy is Strategy.TP or (n > 1 and strategy in (Strategy.ZERO3, Strategy.FSDP)):
        weights /= n
        # TP splits KV heads; when there are fewer KV heads than GPUs each GPU keeps (replicates) one.
        kv *= max(1, math.ceil(a.kv_heads / n)) / a.kv_heads if strategy is Strategy.TP else 1.0 / n
        if strategy is Strategy.TP:
            prefill_i /= n
            logits /= n
        else:
            gather = 2 * d.layer_params * _base_bytes(w)
    acts = prefill_i + prefill_h
    if cfg.attention is Attention.EAGER:
        # Without FlashAttention the prefill builds one layer's score matrix and softmax (16-bit) at a time.
        acts += 4.0 * a.heads * float(w.seq_len) ** 2 / (n if strategy is Strategy.TP else 1)
    overhead = INFER_WORKSPACE_FRACTION * weights + INFER_WORKSPACE_GIB * GIB + gather
    if _effective_quant(w) in BNB:
        overhead += DEQUANT_BYTES_PER_PARAM * d.largest_matrix
    cpu = 0.0
    if w.offload is not Offload.NONE:
        # Offloaded inference (accelerate device_map / ZeRO-Inference): weights stream from CPU, two blocks resident.
        cpu = weights * n * CPU_OFFLOAD_BUFFER
        weights = 2 * d.layer_params * _base_bytes(w) + d.embed * 2.0 / (1 if a.tied_embeddings else 2)
    bd = Breakdown(weights=weights / GIB, trainable_states=0.0, activations=acts / GIB,
                   logits=logits / GIB, kv_cache=kv / GIB, overhead=overhead / GIB)
    return _finish(w, cfg, bd, cpu, 0.0)


def _finish(w: Workload, cfg: _Cfg, bd: Breakdown, cpu_bytes: float, trainable: float) -> MemoryEstimate:
    peak = bd.total
    margin = _margin(w, cfg)
    runtime = CUDA_CONTEXT_GIB + (NCCL_GIB if cfg.gpus > 1 else 0.0)
    return MemoryEstimate(
        per_gpu_gib=peak, recommended_per_gpu_gib=peak * (1 + margin), safety_margin=margin, runtime_gib=runtime,
        cpu_ram_gib=cpu_bytes / GIB, breakdown=bd, trainable_params_b=trainable / 1e9, gpus=cfg.gpus,
        strategy=_effective_strategy(cfg))


@lru_cache(maxsize=8192)
def estimate_on(w: Workload, gpus: int, strategy: Strategy, attention: Attention) -> MemoryEstimate:
    """`w` on `gpus` GPUs with `strategy` and `attention` overriding its own (no Workload copy: a hot path)."""
    cfg = _Cfg(gpus, strategy, attention)
    return _training(w, cfg) if w.is_training else _inference(w, cfg)


def estimate_memory(w: Workload) -> MemoryEstimate:
    """Predicted peak memory per GPU of `w` on `w.gpus` GPUs with `w.strategy` (cached: Workload is frozen)."""
    return estimate_on(w, w.gpus, w.strategy, w.attention)
