"""Per-GPU peak memory of a workload: inference, full fine-tuning, freeze, LoRA and QLoRA (supervised, or with a
preference objective: `core.objectives`).

The model follows `docs/reference/estimator.md` §2–§5 term by term ("reference §N" below), so each number in the
breakdown can be argued about on its own:

  weights           what the GPU holds of the model itself (16-bit, fp32 or a quantised base; sharded by ZeRO-3/TP)
  trainable_states  gradients, fp32 master copies and optimizer states of what is trained (sharded by ZeRO-2/3)
  activations       what the forward pass keeps for the backward one (training); inference: the prefill working set
                    of the prompt beyond the cache that generation adds after it (the peak is the prefill or the end
                    of generation, whichever is higher)
  logits            the vocabulary-wide logits and loss: the term most estimators forget
  kv_cache          inference only: 2 * L * kv_heads * head_dim * bytes per token, times context and sequences
  overhead          allocator fragmentation, dequantisation buffers, gradient buckets, gathered FSDP layers

`per_gpu_gib` is the peak as the public measurements of its kind give it, so it is what we predict and test: for
training the caching allocator's peak *reserved* memory (`torch.cuda.max_memory_reserved`, torchtune's tables:
fragmentation of the short-lived activation and logit blocks included), for inference the peak *allocated* tensors
(`max_memory_allocated`, Qwen's speed tables). `MemoryEstimate.basis` says which; `allocated_gib` and `reserved_gib`
give both, `device_gib` what `nvidia-smi` shows (reserved + the CUDA context and NCCL buffers outside PyTorch's
allocator, `runtime_gib`). An out-of-memory error is decided by the reserved figure plus the runtime against the
card's usable memory: that is `need_gib`, what `core.fit` compares; the safety margin is kept apart from it
(`recommended_need_gib`).

Every constant below either comes from the reference (cited) or was calibrated on the measured points of
`measured_public.json` (said so); docs/accuracy.md's "Estimator accuracy" table shows what that buys.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter

from core.engines import EngineProfile, profile
from core.models import Arch
from core.objectives import facts, holds_reference_copy, training_nograd_forwards
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
    # OCP MX: 32 FP4 values share one 8-bit scale (4.25 bits); only the routed experts (gpt-oss model card).
    Quant.MXFP4: 4.25 / 8,
    # GGUF: whole-file bits per parameter (llama.cpp `quantize` table for Llama-3-8B: file GiB * 8 / 8.03e9;
    # embeddings are quantised too, the mixes keep some tensors at higher precision).
    Quant.Q2_K: 3.17 / 8,
    Quant.Q3_K_M: 4.00 / 8,
    Quant.Q4_0: 4.64 / 8,
    Quant.Q4_K_S: 4.67 / 8,
    Quant.Q4_K_M: 4.89 / 8,
    Quant.Q5_K_S: 5.57 / 8,
    Quant.Q5_K_M: 5.69 / 8,
    Quant.Q6_K: 6.56 / 8,
    Quant.Q8_0: 8.5 / 8,
}
GGUF = frozenset({Quant.Q2_K, Quant.Q3_K_M, Quant.Q4_0, Quant.Q4_K_S, Quant.Q4_K_M, Quant.Q5_K_S, Quant.Q5_K_M,
                  Quant.Q6_K, Quant.Q8_0})
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
# A reference forward without gradients (DPO, KTO: `core.objectives`) returns its logits in the model's 16-bit type
# and reduces them to each token's log-probability row by row (TRL `selective_log_softmax`): 2 bytes per (token x
# vocabulary entry) held at once, beside the trained forward's logits; with fused / chunked losses (Liger, TRL's
# `use_liger_kernel`) the reference's head is chunked like the trained one.
LOGIT_BYTES_NO_GRAD = 2.0

# Prefill working set of inference, elements per prompt token, at the moment a layer's MLP runs over the whole
# prompt: three 16-bit tensors of the MLP width (SiLU(gate), up, their product) and four of the hidden width (the
# embedding output and the layer's input, both still referenced by the model's forward, the residual and the
# normed MLP input). Checked on the Qwen2.5 speed benchmark (HF transformers 4.46, 0.5B to 72B, 6k-30k prompt
# tokens, bench/data/measured_dense.json): a least-squares fit over six sizes gives 2.9 x MLP + 4.2 x hidden
# elements per token beyond weights and cache. Only the prompt is prefilled at once: a workload that states its
# prompt ("input 1k output 2k") is sized on it; one that does not counts the whole context as prompt (worst case).
# The inference peak is the larger of two moments (`_Inference.terms`): the prefill (cache at the prompt + this
# working set) and the end of generation (cache at the full context).
PREFILL_ELEMS_I = 3
PREFILL_ELEMS_H = 4

# Allocator overhead. Training: fragmentation of the short-lived activation/logit blocks (reference §2: 5–10 %)
# plus a fixed workspace. Inference: a workspace proportional to the weights. Calibrated on the measured points.
TRAIN_FRAGMENTATION = 0.05
# Inference: the share of the short-lived prefill blocks (working set, logits) that stays reserved above the allocated
# peak once freed (PyTorch "CUDA semantics: memory management": freed blocks stay cached). The measured inference
# tables report allocated memory and none of them gives reserved beside it, so nothing calibrates this share: it is
# 0 (reserved = allocated), kept as its own term so that a measured reserved figure can set it without touching the
# allocated model. The fit adds it (an OOM is decided by reserved), `per_gpu_gib` does not.
INFER_FRAGMENTATION = 0.0
TRAIN_WORKSPACE_GIB = 0.25
INFER_WORKSPACE_FRACTION = 0.005
INFER_WORKSPACE_GIB = 0.02
# bitsandbytes dequantises a weight through a 16-bit copy and an fp32 intermediate: the largest such matrix.
DEQUANT_BYTES_PER_PARAM = 6.0
# GPTQ kernels (ExLlamaV2 in AutoGPTQ/GPTQModel) keep one 16-bit scratch buffer the size of the largest weight they
# dequantise into for long inputs, allocated at load time (Qwen2.5-7B GPTQ-Int4: +0.13 GiB over its AWQ twin).
GPTQ_SCRATCH_BYTES_PER_PARAM = 2.0
_GPTQ = frozenset({Quant.GPTQ_INT4, Quant.GPTQ_INT8})

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
    # Share of the card the engine lets the workload use (vLLM `gpu_memory_utilization` 0.9; 1 for engines that
    # allocate what they use): the engine claims that share at start-up, fills what the workload does not need
    # with KV pages, and refuses to start when the workload does not fit in it.
    claim: float = 1.0
    # What `per_gpu_gib` is: "reserved" (training: the allocator's reserved peak) or "allocated" (inference).
    basis: str = "reserved"
    # The caching allocator's reserved-but-free blocks at the peak (fragmentation of the short-lived blocks):
    # inside `per_gpu_gib` when the basis is "reserved", on top of it when "allocated".
    fragmentation_gib: float = 0.0

    @property
    def reserved_gib(self) -> float:
        """Peak memory the caching allocator holds (`torch.cuda.max_memory_reserved`): what an OOM is decided by."""
        return self.per_gpu_gib if self.basis == "reserved" else self.per_gpu_gib + self.fragmentation_gib

    @property
    def allocated_gib(self) -> float:
        """Peak memory held by live tensors (`torch.cuda.max_memory_allocated`)."""
        return self.per_gpu_gib - self.fragmentation_gib if self.basis == "reserved" else self.per_gpu_gib

    @property
    def device_gib(self) -> float:
        """What `nvidia-smi` shows for the process: reserved + the CUDA context and NCCL buffers."""
        return self.reserved_gib + self.runtime_gib

    @property
    def _above_peak(self) -> float:
        """Reserved minus `per_gpu_gib`: the free cached blocks above an allocated peak (0 for a reserved one)."""
        return 0.0 if self.basis == "reserved" else self.fragmentation_gib

    @property
    def need_gib(self) -> float:
        """Usable memory a GPU must report for this to run: the reserved peak plus what lives outside PyTorch, over
        the share of the card the engine lets it use (`core.estimator.need`, the same operations)."""
        return (self.per_gpu_gib + self._above_peak + self.runtime_gib) / self.claim

    @property
    def recommended_need_gib(self) -> float:
        """`need_gib` with the safety margin on the peak: what a card must report to hold it comfortably."""
        return (self.recommended_per_gpu_gib + self._above_peak + self.runtime_gib) / self.claim


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
    """Numbers of an architecture the formulas use, computed once per architecture (see `_dims`)."""

    params: float  # total parameters
    embed: float  # embed_tokens + lm_head parameters (one matrix when tied)
    layer_params: float  # parameters of one transformer block (all experts)
    largest_matrix: float  # the largest single linear weight (parameters)
    experts: float  # parameters of the routed experts (what MXFP4 quantises)
    tied_embed: float  # vocab x hidden when the embedding doubles as lm_head, else 0
    active_i: int  # MLP width a token passes through (x active experts for MoE)
    act_elems: int  # `_layer_act_elems` of a Llama-style block before any adapter term
    bnb_elems: int  # what bitsandbytes' matmuls add to it (see `_layer_act_elems`)
    generic: bool  # scaled from a bare size rather than read from a config (`MARGIN_GENERIC_ARCH`)
    # Parameters every tensor-parallel rank holds whole (vLLM/SGLang replicate them rather than split them): MLA's
    # down-projections into its latents (q_a, kv_a) and MoE routers. DeepSeek-R1 FP8 on 8 devices: +0.85 GiB each.
    tp_replicated_proj: float
    tp_replicated_router: float
    shapes: dict[str, tuple[int, int, int]]  # `Arch.linear_shapes()`: read-only
    # LoRA targets string -> (adapter parameters per layer, adapter dropout elements per token-layer)
    adapters: dict[str | None, tuple[int, int]]

    def adapter(self, targets: str | None, experts_active: int) -> tuple[int, int]:
        """Per layer: adapter parameters (`adapter_params` / rank / layers) and the dropout copies' elements."""
        hit = self.adapters.get(targets)
        if hit is None:
            shapes = self.shapes
            # a GELU MLP (GPT-NeoX, Falcon, Phi-2) has no gate: "all-linear" adapts the matrices the model has
            names = [t for t in parse_targets(targets) if t in shapes]
            params = sum((shapes[t][0] + shapes[t][1]) * shapes[t][2] for t in names)
            # Adapter dropout keeps its own copy of each adapted layer's input (PEFT/litgpt default dropout 0.05).
            drop = 0
            for t in names:
                d_in, _, copies = shapes[t]
                drop += d_in * (min(copies, experts_active) if copies > 1 else 1)
            if len(self.adapters) < 256:
                self.adapters[targets] = (params, drop)
            hit = (params, drop)
        return hit


# Architectures are frozen dataclasses whose hash walks every field (aliases included): a keystroke would pay it
# several times. The catalog hands out the same objects, so they are remembered by identity; the entry keeps its
# Arch alive, so an id is never reused while it is here.
_DIMS: dict[int, tuple[Arch, _Dims]] = {}


def _dims(arch: Arch) -> _Dims:
    hit = _DIMS.get(id(arch))
    if hit is not None and hit[0] is arch:
        return hit[1]
    embed = arch.embedding_params_b * 1e9
    params = arch.params_b * 1e9
    shapes = arch.linear_shapes()
    layer = sum(d_in * d_out * n for d_in, d_out, n in shapes.values())
    largest = max(d_in * d_out for d_in, d_out, _ in shapes.values())
    active_i = arch.intermediate * max(1, arch.experts_active) + arch.shared_intermediate
    mla_down = arch.q_lora_rank + arch.kv_lora_rank + arch.rope_head_dim  # q_a and kv_a output widths
    d = _Dims(params=params, embed=embed, layer_params=max(layer, (params - embed) / arch.layers),
              largest_matrix=float(largest), experts=min(arch.expert_params_b * 1e9, params - embed),
              tied_embed=float(arch.vocab * arch.hidden) if arch.tied_embeddings else 0.0,
              active_i=active_i,
              act_elems=4 * arch.hidden + 2 * arch.q_dim + 2 * arch.kv_dim + (arch.mlp_matrices + 1) * active_i,
              bnb_elems=3 * arch.hidden + arch.q_dim + 2 * arch.hidden * arch.experts_active,
              generic=arch.id.startswith(("generic-", "moe-")),
              tp_replicated_proj=float(arch.layers * arch.hidden * mla_down) if arch.kv_lora_rank else 0.0,
              tp_replicated_router=float(arch.hidden * arch.experts * arch.n_moe_layers) if arch.experts > 1 else 0.0,
              shapes=shapes, adapters={})
    if len(_DIMS) >= 1024:  # configs read from config.json are new objects each time: keep this bounded
        _DIMS.clear()
    _DIMS[id(arch)] = (arch, d)
    return d


def warm_up(archs: tuple[Arch, ...]) -> None:
    """The per-architecture numbers of every architecture in `archs` (the catalog), and each one's adapter shapes
    for the default targets, now rather than on the first phrase that names it: ~10 us each."""
    for arch in archs[:512]:  # well under `_DIMS`'s bound, which clears it
        _dims(arch).adapter("all-linear", arch.experts_active)


@lru_cache(maxsize=1024)
def adapter_params(arch: Arch, rank: int, targets: str | None) -> float:
    """LoRA parameters: r * sum over targeted linears of (d_in + d_out), every expert and layer (reference §2)."""
    shapes = arch.linear_shapes()
    per_layer = sum((shapes[t][0] + shapes[t][1]) * shapes[t][2] for t in parse_targets(targets) if t in shapes)
    return float(rank * per_layer * arch.layers)


def kv_cache_bytes(arch: Arch, context: int, kv_dtype: str = "bf16") -> float:
    """KV cache of one sequence of `context` tokens, all layers, in bytes (reference §4, per architecture):

    standard / GQA   2 (K and V) * kv_heads * head_dim per token and layer
    MLA              the compressed latent + the decoupled rope key (kv_lora_rank + rope_head_dim), not full heads
    sliding / hybrid local layers hold at most `window` tokens; only global layers grow with the context
    cross-attention  layers that attend to image tokens only (Llama 3.2 Vision) hold none of the text
    """
    per = arch.kv_elements_per_token_layer() * KV_BYTES.get(kv_dtype.lower(), 2.0)
    return per * arch.kv_cached_tokens(context)


def engine_kv_cache_bytes(arch: Arch, context: int, kv_dtype: str, prof: EngineProfile) -> float:
    """`kv_cache_bytes` as a given engine lays the cache out (`core.engines`): an engine that caches MLA's full
    K/V heads after the up-projection (Hugging Face transformers) holds heads x (qk head + v head) values per token
    and layer instead of the 576-value latent; one that gives sliding-window layers a full-length pool holds the
    whole context in every layer."""
    width = KV_BYTES.get(kv_dtype.lower(), 2.0)
    if arch.kv_lora_rank and not prof.mla_latent:
        return arch.heads * (arch.head_dim + (arch.v_head_dim or arch.head_dim)) * width * arch.kv_layers \
            * float(context)
    if arch.window and arch.local_layers and not prof.window_only:
        return arch.kv_elements_per_token_layer() * width * arch.kv_layers * float(context)
    return kv_cache_bytes(arch, context, kv_dtype)


def kv_bytes_per_token(arch: Arch, kv_dtype: str = "bf16", context: int | None = None) -> float:
    """KV-cache bytes per token of context for this architecture and cache type.

    With `context`, the average over a sequence of that length (sliding-window layers stop growing past their
    window, so long contexts cost less per token); without, the cost of a token when every layer keeps it (the
    upper bound, exact for full-attention models). MLA counts the latent, not full heads.
    """
    if context is None:
        return arch.kv_elements_per_token_layer() * arch.kv_layers * KV_BYTES.get(kv_dtype.lower(), 2.0)
    return kv_cache_bytes(arch, context, kv_dtype) / max(1, context)


# Enum members as module constants: `Precision.FP32` is a metaclass attribute lookup (~0.1 us) and `x in (A, B)`
# compares strings; the per-keystroke path below tests dozens of them.
_INFERENCE, _FULL, _FREEZE, _QLORA = Method.INFERENCE, Method.FULL, Method.FREEZE, Method.QLORA
_QNONE, _NF4, _MXFP4, _FP8 = Quant.NONE, Quant.NF4, Quant.MXFP4, Quant.FP8
_FP32, _BF16_TRUE = Precision.FP32, Precision.BF16_TRUE
_MIXED = frozenset({Precision.BF16, Precision.FP16})
_ADAMW_8BIT, _PAGED_8BIT, _SGD = Optimizer.ADAMW_8BIT, Optimizer.PAGED_ADAMW_8BIT, Optimizer.SGD
_OFF_NONE, _OFF_OPT, _OFF_ALL = Offload.NONE, Offload.OPTIMIZER, Offload.ALL
_SINGLE, _ZERO2, _TP = Strategy.SINGLE, Strategy.ZERO2, Strategy.TP
_SHARDED = frozenset({Strategy.ZERO3, Strategy.FSDP})
_BUCKETED = frozenset({Strategy.DDP, Strategy.ZERO2})
_EAGER = Attention.EAGER
_FULL_OR_FREEZE = frozenset({Method.FULL, Method.FREEZE})


def _w16(precision: Precision) -> float:
    """Bytes of one weight/gradient/activation element in this precision."""
    return 4.0 if precision is _FP32 else 2.0


def _optimizer_bytes(opt: Optimizer | None, fp32_states: bool) -> float:
    """Optimizer state bytes per trained parameter (reference §2)."""
    if opt is _ADAMW_8BIT or opt is _PAGED_8BIT:
        return 2.0
    if opt is _SGD:
        return 4.0 if fp32_states else 2.0  # momentum
    return 8.0 if fp32_states else 4.0  # AdamW m and v


def _effective_quant(w: Workload) -> Quant:
    """The base's quantisation as held in memory: QLoRA means a quantised base (NF4 when unsaid); a full or freeze
    run trains the 16-bit weights themselves."""
    method = w.method
    if method is _QLORA and w.quant is _QNONE:
        return _NF4
    return _QNONE if method in _FULL_OR_FREEZE else w.quant


def _margin_pair(training: bool, generic: bool) -> tuple[float, float]:
    m1 = mn = MARGIN_TRAINING if training else MARGIN_INFERENCE
    mn += MARGIN_MULTI_GPU
    if generic:
        m1 += MARGIN_GENERIC_ARCH
        mn += MARGIN_GENERIC_ARCH
    return round(m1, 4), round(mn, 4)


# (training, generic architecture) -> safety margin on one GPU, on several
_MARGINS = {(t, g): _margin_pair(t, g) for t in (False, True) for g in (False, True)}


def _weights_bytes(w: Workload, d: _Dims, quant: Quant | None = None) -> float:
    """The whole model's weights in the bytes they are held in (before any sharding)."""
    if quant is None:
        quant = _effective_quant(w)
    if quant is _QNONE:
        return d.params * _w16(w.precision)
    if quant in GGUF:
        return d.params * QUANT_BYTES[quant]
    if quant is _MXFP4:
        # MXFP4 covers the routed experts only; attention, shared parts and embeddings stay 16-bit.
        experts = d.experts
        return experts * QUANT_BYTES[quant] + (d.params - experts) * 2.0
    # Embeddings and lm_head stay 16-bit when a base is quantised (reference §2). FP8 checkpoints of tied-embedding
    # models store the lm_head as its own 16-bit matrix (Qwen3-0.6B/1.7B/4B-FP8: measured +0.3-0.6 GiB over the tied
    # count, bench/data/measured_architectures.json).
    untied = d.tied_embed if quant is _FP8 else 0.0
    return (d.params - d.embed) * QUANT_BYTES[quant] + (d.embed + untied) * 2.0


def _tp_replicated_bytes(w: Workload, d: _Dims, quant: Quant) -> float:
    """Bytes of the weights tensor parallelism leaves whole on every rank (`_Dims.tp_replicated_proj/_router`): the
    MLA projections in the base's format (FP8 in DeepSeek V3/R1's checkpoint), the routers in 16-bit."""
    w16 = _w16(w.precision)
    proj_bytes = w16 if quant is _QNONE or quant is _MXFP4 else QUANT_BYTES[quant]
    return d.tp_replicated_proj * proj_bytes + d.tp_replicated_router * w16


def _layer_act_elems(w: Workload, d: _Dims, quant: Quant) -> float:
    """16-bit elements one transformer block keeps per token for its backward pass (FlashAttention).

    Saved tensors of a Llama-style block: both norm inputs and outputs (4h), Q and the attention output (2 q_dim),
    K and V (2 kv_dim), gate, up, SiLU(gate) and their product (4 i, x active experts for MoE) (`_Dims.act_elems`).
    Adapters add the dropout copy of each adapted layer's input (`_Dims.adapter`); bitsandbytes' 4/8-bit matmul
    keeps a private copy of its input for every projection fed by the hidden state (q, k, v, o, gate, up): fitted
    on litgpt's QLoRA vs LoRA runs, +6h per token-layer (`_Dims.bnb_elems`).
    """
    elems = d.act_elems
    if w.method in ADAPTER_METHODS:
        elems += d.adapter(w.lora_targets, w.arch.experts_active)[1]
        if quant in BNB:
            elems += d.bnb_elems
    return float(elems)


# What a configuration's memory comes to: the six Breakdown terms in GiB (weights, trainable_states, activations,
# logits, kv_cache, overhead), then the CPU RAM in bytes and the trained parameters. Plain floats: `core.fit`
# compares several configurations per keystroke and only the ones asked for become pydantic models.
_Terms = tuple[float, float, float, float, float, float, float, float]

_BUCKETS_BYTES = 2 * 25e6 * 4  # two fp32 gradient buckets of 25 M elements (DDP / DeepSpeed defaults)
_TRAIN_FIXED = TRAIN_WORKSPACE_GIB * GIB
_INFER_FIXED = INFER_WORKSPACE_GIB * GIB


class _Training:
    """Everything of a training workload's memory that does not depend on where it runs, computed once.

    `terms` then applies a configuration (GPU count, strategy, attention): sharding, tensor-parallel splits and the
    overhead that depends on them. The arithmetic is the term-by-term model of the module docstring, each value
    computed by the same operations in the same order as a straight top-to-bottom evaluation would (floating
    point: `tests/core/test_estimate_equivalence.py` pins the results).
    """

    __slots__ = ("acts_eager", "acts_flash", "base_gather", "buckets", "claim", "cpu", "dequant", "logits",
                 "margin_1", "margin_n", "states", "tp_replicated", "trainable", "weights", "weights_gather")
    reserve = 0.0  # the peak is the reserved one already (fragmentation in the overhead term)
    fragmentation = TRAIN_FRAGMENTATION  # `MemoryEstimate.fragmentation_gib` per GiB of activations and logits
    basis = "reserved"

    def __init__(self, w: Workload) -> None:
        a = w.arch
        d = _dims(a)
        method, precision, offload = w.method, w.precision, w.offload
        act_b = _w16(precision)
        mixed = precision in _MIXED
        fp32_states = precision is not _BF16_TRUE
        quant = _effective_quant(w)
        base_bytes = act_b if quant is _QNONE else QUANT_BYTES[quant]
        layers = a.layers

        # --- model states (whole model, before sharding) ---
        weights = _weights_bytes(w, d, quant)
        objective = facts(w.objective)
        if holds_reference_copy(w.objective, method, w.ref_precomputed):
            # the frozen reference: a second copy of the weights in the dtype they were loaded in, sharded and
            # offloaded as the trained copy is (TRL prepares it with the same DeepSpeed / FSDP configuration)
            weights += d.params * act_b
        prof = profile(w.engine)
        self.claim = 1.0
        if prof.kbit_upcast and quant in BNB:
            # PEFT's k-bit preparation casts what is not quantised (embeddings, LM head, norms) to fp32: +2 bytes
            # each over the 16-bit copy (Qwen2.5-7B: 1.09 B embedding parameters, +2 GiB).
            weights += (d.embed + (2 * layers + 1) * a.hidden) * (4.0 - act_b)
        if method in ADAPTER_METHODS:
            trainable = float((w.lora_rank or 16) * d.adapter(w.lora_targets, a.experts_active)[0] * layers)
            # PEFT keeps adapters in fp32 under mixed precision: weight 4 + grad 4 (+ optimizer); pure bf16: 2 + 2.
            aw = 4.0 if fp32_states else 2.0
            grads, master = trainable * aw, 0.0
            states_w = trainable * aw  # the adapter weights themselves
        else:
            if method is _FREEZE:
                trainable = (d.params - d.embed) * min(FREEZE_TRAINABLE_LAYERS, layers) / layers
            else:
                trainable = d.params
            grads = trainable * act_b
            master = trainable * 4.0 if mixed else 0.0  # fp32 master copy of what is trained
            states_w = 0.0
        opt = trainable * _optimizer_bytes(w.optimizer, fp32_states)

        cpu = 0.0
        if w.optimizer is _PAGED_8BIT:
            # Paged states live in unified memory and are evicted to CPU RAM under pressure: the GPU need excludes
            # them.
            cpu += opt
            opt = 0.0
        gather = 0.0
        if offload is _OFF_OPT:
            # ZeRO-Offload: gradients, master copies and optimizer states go to the CPU (reference §3: "2P" on GPU).
            cpu += (grads + master + opt) * CPU_OFFLOAD_BUFFER
            grads = master = opt = 0.0
        elif offload is _OFF_ALL:
            # ZeRO-Infinity: parameters too; only the layers being computed are on the GPU.
            cpu += (weights + grads + master + opt + states_w) * CPU_OFFLOAD_BUFFER
            gather = 2 * d.layer_params * base_bytes + d.embed / (1 if a.tied_embeddings else 2) * 2.0
            weights = grads = master = opt = states_w = 0.0
        self.weights, self.trainable, self.cpu = weights, trainable, cpu
        self.tp_replicated = _tp_replicated_bytes(w, d, quant) if weights else 0.0
        self.states = states_w + grads + master + opt
        self.base_gather = gather  # before any sharding
        # Two blocks gathered at once under ZeRO-3/FSDP (current + prefetch): reference §3's "4 x largest layer".
        self.weights_gather = 2 * d.layer_params * base_bytes
        self.buckets = bool(grads)

        # --- activations (per GPU: each data-parallel rank runs its own micro-batch) ---
        seq_len = w.seq_len
        tokens = float(seq_len * w.batch * objective.graded)  # a pair's chosen and rejected run as one batch
        layers_kept = min(FREEZE_TRAINABLE_LAYERS, layers) if method is _FREEZE else layers
        flash = _layer_act_elems(w, d, quant) * act_b * tokens
        # The a*s^2*b score matrix FlashAttention never materialises (Korthikanti et al.: 5 bytes per element).
        eager = flash + 5.0 * a.heads * seq_len * tokens
        if w.grad_ckpt:
            # Checkpointing keeps only each layer's input; one layer's working set is rebuilt during backward.
            kept = act_b * a.hidden * tokens * layers_kept
            if prof.offload_checkpoints:  # Unsloth's offloaded checkpoints: the layer inputs wait in CPU RAM
                cpu += kept
                self.cpu = cpu
                kept = act_b * a.hidden * tokens  # the one being moved
            self.acts_flash, self.acts_eager = kept + flash, kept + eager
        else:
            self.acts_flash, self.acts_eager = flash * layers_kept, eager * layers_kept
        self.logits = tokens * a.vocab * (LOGIT_BYTES_FUSED if w.fused_ce else
                                          objective.logit_bytes or LOGIT_BYTES_PLAIN)
        if training_nograd_forwards(w.objective, w.ref_precomputed):
            # a forward without gradients while the trained one's activations wait: its logits, and one layer's
            # working set (the prefill's, `PREFILL_ELEMS_*`)
            nograd = float(seq_len * w.batch * objective.nograd_sequences)
            self.logits += nograd * a.vocab * (LOGIT_BYTES_FUSED if w.fused_ce else LOGIT_BYTES_NO_GRAD)
            working = nograd * (PREFILL_ELEMS_I * d.active_i + PREFILL_ELEMS_H * a.hidden) * act_b
            self.acts_flash += working
            self.acts_eager += working
        # bitsandbytes dequantises a weight through a 16-bit copy and an fp32 intermediate.
        self.dequant = DEQUANT_BYTES_PER_PARAM * d.largest_matrix if quant in BNB else None
        self.margin_1, self.margin_n = _MARGINS[True, d.generic]

    def terms(self, gpus: int, strategy: Strategy, attention: Attention) -> _Terms:
        n = max(1, gpus)
        if gpus <= 1:
            strategy = _SINGLE
        weights, states, gather = self.weights, self.states, self.base_gather
        acts = self.acts_eager if attention is _EAGER else self.acts_flash
        logits = self.logits
        if strategy is _ZERO2:
            states /= n
        elif strategy in _SHARDED:
            states /= n
            if weights:
                weights /= n
                gather = self.weights_gather
        elif strategy is _TP:
            states /= n
            weights = (weights - self.tp_replicated) / n + self.tp_replicated
            acts /= n
            logits /= n
        overhead = TRAIN_FRAGMENTATION * (acts + logits) + _TRAIN_FIXED + gather
        if self.dequant is not None:
            overhead += self.dequant
        if n > 1 and self.buckets and strategy in _BUCKETED:
            overhead += _BUCKETS_BYTES
        return (weights / GIB, states / GIB, acts / GIB, logits / GIB, 0.0, overhead / GIB, self.cpu, self.trainable)


class _Inference:
    """The configuration-independent part of an inference workload's memory (see `_Training`)."""

    __slots__ = ("claim", "dequant", "eager_scores", "gather", "graphs", "kv", "kv_heads", "kv_prompt", "logits",
                 "margin_1", "margin_n", "offload", "offload_weights", "prefill_h", "prefill_i", "tp_replicated",
                 "weights")
    reserve = INFER_FRAGMENTATION  # the peak is the allocated one: the fit adds the reserved-but-free blocks
    fragmentation = INFER_FRAGMENTATION
    basis = "allocated"

    def __init__(self, w: Workload) -> None:
        a = w.arch
        d = _dims(a)
        act_b = _w16(w.precision)
        quant = _effective_quant(w)
        base_bytes = act_b if quant is _QNONE else QUANT_BYTES[quant]
        seq_len = w.seq_len
        # The prompt is what is prefilled at once; unstated, the whole context (the worst case).
        prompt = seq_len if w.prompt_len is None else min(seq_len, w.prompt_len)
        prof = profile(w.engine)
        self.weights = _weights_bytes(w, d, quant)
        self.tp_replicated = _tp_replicated_bytes(w, d, quant)
        neutral = w.engine is None
        one_kv = kv_cache_bytes(a, seq_len, w.kv_dtype) if neutral else \
            engine_kv_cache_bytes(a, seq_len, w.kv_dtype, prof)
        self.kv = one_kv * w.concurrency
        # MLA's latent is one "head" shared by all query heads: tensor parallel replicates it on every GPU; full
        # heads split like any other.
        self.kv_heads = 1 if a.is_mla and prof.mla_latent else a.kv_heads if not a.is_mla else a.heads
        # Tokens one forward pass holds while prefilling (`core.engines`): engines with chunked prefill or a
        # physical batch size size their working set on that many tokens at start-up, whatever the prompt, and
        # hold the whole cache beside it (it is allocated up front); a `generate` loop prefills the prompts of
        # all `concurrency` sequences in one pass, while its cache grows from the prompts to the full context.
        chunk = prof.prefill_chunk
        if chunk > 0:
            tokens = float(chunk)
            self.kv_prompt = self.kv
        else:
            tokens = float(prompt * (w.concurrency if chunk == 0 else 1))
            # What the cache holds while the prompts are prefilled (all of it when the prompt is the whole context).
            self.kv_prompt = self.kv if prompt == seq_len else (
                kv_cache_bytes(a, prompt, w.kv_dtype) if neutral else
                engine_kv_cache_bytes(a, prompt, w.kv_dtype, prof)) * w.concurrency
        self.prefill_i = PREFILL_ELEMS_I * d.active_i * act_b * tokens
        self.prefill_h = PREFILL_ELEMS_H * a.hidden * act_b * tokens
        # CUDA graphs' private pool (vLLM, SGLang, TensorRT-LLM) and the share of the card the engine claims.
        self.graphs = prof.cuda_graphs_gib * GIB
        self.claim = prof.preallocate or 1.0
        self.logits = w.concurrency * a.vocab * 4.0 * 2  # last-position logits in fp32 and their softmax
        self.gather = 2 * d.layer_params * base_bytes
        # Without FlashAttention the prefill builds one layer's score matrix and softmax (16-bit) at a time.
        self.eager_scores = 4.0 * a.heads * float(prompt) ** 2
        self.dequant = DEQUANT_BYTES_PER_PARAM * d.largest_matrix if quant in BNB else \
            GPTQ_SCRATCH_BYTES_PER_PARAM * d.largest_matrix if quant in _GPTQ else None
        # Offloaded inference (accelerate device_map / ZeRO-Inference): weights stream from CPU, two blocks resident.
        self.offload = w.offload is not _OFF_NONE
        self.offload_weights = self.gather + d.embed * 2.0 / (1 if a.tied_embeddings else 2)
        self.margin_1, self.margin_n = _MARGINS[False, d.generic]

    def terms(self, gpus: int, strategy: Strategy, attention: Attention) -> _Terms:
        n = max(1, gpus)
        if gpus <= 1:
            strategy = _SINGLE
        weights, kv, kv_prompt, prefill_i, logits = self.weights, self.kv, self.kv_prompt, self.prefill_i, self.logits
        gather = 0.0
        tp = strategy is _TP
        if tp or (n > 1 and strategy in _SHARDED):
            weights = (weights - self.tp_replicated) / n + self.tp_replicated if tp else weights / n
            # TP splits KV heads; when there are fewer KV heads than GPUs each GPU keeps (replicates) one.
            share = max(1, math.ceil(self.kv_heads / n)) / self.kv_heads if tp else 1.0 / n
            kv *= share
            kv_prompt *= share
            if tp:
                prefill_i /= n
                logits /= n
            else:
                gather = self.gather
        acts = prefill_i + self.prefill_h
        if attention is _EAGER:
            acts += self.eager_scores / (n if tp else 1)
        if kv_prompt != kv:
            # The peak is the prefill (cache at the prompt + working set) or the end of generation (cache full),
            # whichever is higher: the working set counts only where it exceeds the cache the generation adds.
            acts = max(0.0, acts - (kv - kv_prompt))
        overhead = INFER_WORKSPACE_FRACTION * weights + _INFER_FIXED + gather
        if self.dequant is not None:
            overhead += self.dequant
        if self.graphs:
            overhead += self.graphs
        cpu = 0.0
        if self.offload:
            cpu = weights * n * CPU_OFFLOAD_BUFFER
            weights = self.offload_weights
        return (weights / GIB, 0.0, acts / GIB, logits / GIB, kv / GIB, overhead / GIB, cpu, 0.0)


def prepare(w: Workload) -> _Training | _Inference:
    """The configuration-independent part of `w`'s memory, for asking about many configurations (`core.fit` keeps
    one per workload): `.terms(gpus, strategy, attention)` and `need(prepared, gpus, strategy, attention)`."""
    return _Inference(w) if w.method is _INFERENCE else _Training(w)


_RUNTIME_1 = CUDA_CONTEXT_GIB + 0.0
_RUNTIME_N = CUDA_CONTEXT_GIB + NCCL_GIB


def need(p: _Training | _Inference, gpus: int, strategy: Strategy, attention: Attention
         ) -> tuple[float, float, float, Strategy]:
    """What `core.fit` compares, without building a MemoryEstimate: (per_gpu_gib, need_gib, recommended_per_gpu_gib
    + runtime_gib, strategy) of `estimate_on(w, gpus, strategy, attention)`, bit for bit, for `p = prepare(w)`."""
    t = p.terms(gpus, strategy, attention)
    peak = t[0] + t[1] + t[2] + t[3] + t[4] + t[5]  # `Breakdown.total`'s sum, in its order
    claim = p.claim
    # the reserved-but-free blocks above an allocated peak (inference; training's peak is the reserved one)
    extra = p.reserve * (t[2] + t[3])
    runtime = _RUNTIME_N if gpus > 1 else _RUNTIME_1
    margin = p.margin_n if gpus > 1 else p.margin_1
    out = strategy if gpus > 1 else _SINGLE
    if claim != 1.0:  # a preallocating engine: the workload must fit in its share of the card
        return (peak, (peak + extra + runtime) / claim, (peak * (1 + margin) + extra + runtime) / claim, out)
    return peak, peak + extra + runtime, peak * (1 + margin) + extra + runtime, out


def _peak(t: _Terms) -> float:
    # The same sum, in the same order, as `Breakdown.total` (floating point: the order is part of the result).
    return t[0] + t[1] + t[2] + t[3] + t[4] + t[5]


# Validated from a dict through pydantic's public TypeAdapter: the same checks as `MemoryEstimate(**values)` at well
# under the cost of going through `BaseModel.__init__` (every answer builds one).
_new_breakdown: Callable[[dict[str, float]], Breakdown] = TypeAdapter(Breakdown).validate_python
_new_estimate: Callable[[dict[str, Any]], MemoryEstimate] = TypeAdapter(MemoryEstimate).validate_python


def _finish(p: _Training | _Inference, gpus: int, strategy: Strategy, t: _Terms) -> MemoryEstimate:
    """The MemoryEstimate of terms `t` of `p = prepare(w)` on `gpus` GPUs: the margins, fragmentation rate and basis
    are the prepared workload's (`_MARGINS` of its method and architecture), so no configuration object is
    built and nothing of the workload is read again."""
    peak = _peak(t)
    frag = p.fragmentation * (t[2] + t[3])
    several = gpus > 1
    margin = p.margin_n if several else p.margin_1
    bd = _new_breakdown({"weights": t[0], "trainable_states": t[1], "activations": t[2], "logits": t[3],
                         "kv_cache": t[4], "overhead": t[5]})
    return _new_estimate({
        "per_gpu_gib": peak, "recommended_per_gpu_gib": peak * (1 + margin), "safety_margin": margin,
        "runtime_gib": _RUNTIME_N if several else _RUNTIME_1, "cpu_ram_gib": t[6] / GIB, "breakdown": bd,
        "trainable_params_b": t[7] / 1e9, "gpus": gpus, "strategy": strategy if several else _SINGLE,
        "claim": p.claim, "basis": p.basis, "fragmentation_gib": frag})


# Bounded by what it holds: ~5 KB an entry (a MemoryEstimate with its Breakdown, keyed by the Workload), so 1,024
# entries are ~5 MB (8,192 were ~40 MB after 10,000 distinct inline phrases: bench/memory.py). Repeats of a phrase
# are answered from the bot's Estimator and `core.fit.requirement`'s per-count memo, not from here.
@lru_cache(maxsize=1024)
def estimate_on(w: Workload, gpus: int, strategy: Strategy, attention: Attention) -> MemoryEstimate:
    """`w` on `gpus` GPUs with `strategy` and `attention` overriding its own (no Workload copy: a hot path)."""
    p = prepare(w)
    return _finish(p, gpus, strategy, p.terms(gpus, strategy, attention))


def estimate_prepared(w: Workload, p: _Training | _Inference, gpus: int, strategy: Strategy, attention: Attention
                      ) -> MemoryEstimate:
    """`estimate_on(w, gpus, strategy, attention)` from `p = prepare(w)`, not memoised: for a caller that already
    keeps `p` and its answers per workload (`core.fit.Requirement`), so the workload is neither hashed nor prepared
    again."""
    return _finish(p, gpus, strategy, p.terms(gpus, strategy, attention))


def estimate_memory(w: Workload) -> MemoryEstimate:
    """Predicted peak memory per GPU of `w` on `w.gpus` GPUs with `w.strategy` (cached: Workload is frozen)."""
    return estimate_on(w, w.gpus, w.strategy, w.attention)
