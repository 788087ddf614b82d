"""How fast a workload runs on a configuration: a roofline per GPU, the same physics for every card.

Every card is described by its own datasheet figures (`core.gpus`: dense tensor TFLOPS, memory bandwidth,
interconnect, host PCIe generation, base and boost clocks). Datasheet TFLOPS are counted at the boost clock; long
dense matmuls are the most power-hungry load a card sees, so it holds a clock between its base clock (what it
guarantees at its board power) and its boost: `SUSTAINED_CLOCK_SHARE` of the way up, the same share for every card.
A card whose board power cannot feed its boost clock (L40S, L40, RTX 6000 Ada, L4: base 0.3-0.45 of boost) thus
sustains much less of its datasheet peak than one with headroom (A100 SXM, RTX 4090, H100 SXM: base 0.8-0.9).
A step takes its arithmetic at `MFU` of that sustained peak and its memory traffic at `BANDWIDTH_EFFICIENCY` of the
memory bandwidth, overlapped by `MEMORY_OVERLAP` (norms, activations, elementwise and adapter kernels run between
the matmuls, not under them, so a bandwidth-poor card pays for part of them); several GPUs add the traffic between
them over their interconnect; CPU offload adds the traffic over the host PCIe link. These fractions are the only fitted
constants and they are the same for every card (calibrated on `core/data/throughput_points.json`, shown against
every point in the "Speed model accuracy" table of docs/accuracy.md by `bench/speed_table.py`).

Training (per optimizer step, gradient accumulation 1, which is the slower end):
  compute   tokens x FLOPs per token (`flops_per_token`: 2 x active params + attention, x3 for full
            fine-tuning, x2 for adapters, + a forward with gradient checkpointing) / (peak x MFU)
  memory    the weights read once per pass (a quantised base is also dequantised to a 16-bit copy each pass) plus
            the activations written and read back
  optimizer the trained parameters' states read and written once per step (memory-bound)
  network   ZeRO-3 / FSDP all-gathers the weights in forward and backward and reduce-scatters gradients; ZeRO-2
            and DDP exchange gradients; overlapped with compute, so a step takes the longer of the two
  offload   optimizer on CPU: gradients down and parameters up over PCIe, plus the CPU Adam step; all of it: the
            weights streamed over PCIe on every pass as well
Inference (vLLM-style continuous batching):
  prefill   compute-bound: 2 x active params + attention FLOPs per prompt token, floored by one read of the weights
  decode    per step every sequence reads the weights once together (MoE: only the experts the batch routes to,
            quantised weights at their own width: the decode kernel's packing, scales per group, at its share of
            the 16-bit bandwidth, `core.engines.KERNELS`) and its own KV cache (`core.estimator.kv_bytes_per_token`);
            bound by bandwidth until the batch's arithmetic catches up; tensor parallel adds two all-reduces per
            layer over the interconnect. Each layer's kernels take a floor however little they read; a MoE layer's
            fused experts (`fused_moe_s`) and a block-wise FP8 checkpoint's GEMMs have their own, larger floors,
            from the engines' kernel benchmarks (`bench/data/moe_kernels.json`).
Several GPUs are laid out as the fastest mix of model-parallel groups and replicas that holds the model, so more
GPUs are never slower in aggregate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from core.engines import PROFILES, kernel_decode, profile, train_speed
from core.estimator import FREEZE_TRAINABLE_LAYERS, QUANT_BYTES, adapter_params, kv_bytes_per_token
from core.fit import Fit, Requirement, default_strategy, requirement
from core.gpus import GPU, PCIE_GBS, GPUClass, Interconnect, get_gpu
from core.models import Arch
from core.objectives import facts
from core.workload import (
    ADAPTER_METHODS,
    Attention,
    Engine,
    Method,
    Offload,
    Optimizer,
    Precision,
    Quant,
    Strategy,
    Workload,
)

# --- the achievable fractions: one set for every card ---------------------------------------------------------------
# Where between base and boost clock the tensor cores run long dense matmuls (0 = base, 1 = boost): the midpoint.
SUSTAINED_CLOCK_SHARE = 0.5
# Fraction of the dense tensor peak at the sustained clock that the matmuls of fine-tuning reach (FlashAttention,
# bf16, no FP8).
MFU = 0.67
# FP8 tensor cores double the peak, but the attention, norms and casts around the GEMMs do not speed up: the same
# steps reach a smaller fraction of the FP8 peak (NeMo's published FP8 runs: ~1.3-1.5x their BF16 speed).
MFU_FP8 = 0.44
# Fraction of the peak reached by prefill (large, regular GEMMs) and by the arithmetic of a decode step.
MFU_PREFILL = 0.55
# Share of a training step's memory-bound work (activations written and read back, norms, elementwise, adapters)
# hidden under its matmuls: the rest runs between them. 1 would be a pure roofline (the longer of the two), 0
# fully serial; measured kernel timelines (PyTorch profiler traces of fine-tuning) show both.
MEMORY_OVERLAP = 0.5
# Fraction of the datasheet memory bandwidth a decode step or an optimizer step streams at.
BANDWIDTH_EFFICIENCY = 0.75
# Fixed cost of one decode step outside the GPU's streaming work, seconds, for a 32-layer dense model (Llama-2-7B,
# the shape the decode points calibrate it on): the scheduler and sampling (`DECODE_STEP_BASE_S`) plus the kernels of
# every layer, each of which takes a minimum time however little it reads (launch, ramp-up, tail).
DECODE_STEP_OVERHEAD_S = 0.0008
DECODE_STEP_BASE_S = 0.0002
# Kernels one decoder layer runs per decode step with fused kernels replayed from a CUDA graph (vLLM, SGLang,
# TensorRT-LLM, llama.cpp, gpt-fast): two norms, QKV GEMM, RoPE, cache write, attention, output GEMM, two residual
# adds, gate/up GEMM, activation, down GEMM. MLA (DeepSeek V2/V3, Kimi K2) adds the query and KV down/up
# projections, their norms and the absorbed-weight BMMs (vLLM `MLACommonImpl`, ~8 more); a MoE MLP adds the router
# GEMM, top-k softmax, token sort/align, two grouped GEMMs, activation, weighted sum and the shared expert's GEMMs
# (vLLM `fused_moe`, ~10 more: counted at the eager per-op cost only; graphed engines pay `MOE_LAYER_FLOOR_S`).
KERNELS_PER_LAYER = 12
MLA_KERNELS = 8
MOE_KERNELS = 10
# One MoE layer's routed experts as the engines' Triton `fused_experts` runs them (router top-k, token align, the
# gate/up and down grouped GEMMs, activation, weighted sum), replayed from a CUDA graph: a fixed time per layer plus
# the experts the tokens route to, streamed at their own share of the memory bandwidth. Fitted on the kernel times
# that vLLM's `benchmarks/kernels/benchmark_moe.py` and SGLang's `tuning_fused_moe_triton.py` print (each a CUDA
# graph of 10 calls) for Mixtral BF16 and Qwen3-30B-A3B FP8 on an H100 and Qwen3-235B-A22B FP8 at TP8 on an H200,
# 1-64 tokens (`bench/data/moe_kernels.json`, its "MoE kernels" table in docs/accuracy.md): the floor is twice the
# ten small kernels' `KERNEL_FLOOR_S` (each grouped GEMM ramps up and drains per expert tile), and whole experts'
# weight matrices stream closer to peak than a decode step's mix of small reads.
MOE_LAYER_FLOOR_S = 30e-6
MOE_BANDWIDTH_EFFICIENCY = 0.85
# Block-wise FP8 checkpoints (DeepSeek V3 / R1, Kimi K2: 128 x 128 weight scales, activations quantised per token
# group of 128 before each GEMM) run their linear layers through W8A8 block-FP8 GEMMs (Triton
# `w8a8_block_fp8_matmul`, CUTLASS or DeepGEMM), which at decode batch sizes take a near-constant time per GEMM
# whatever its bytes: a few CTAs walk K in 128-wide blocks, each block waiting on its scales. Published per-GEMM times
# at 1-64 tokens on Hopper, DeepSeek V3's own shapes: SGLang PR #5820 ("cutlass 3.9 supported to improve
# fp8_blockwise_gemm", 2025-04-28; batch 1): N=3072 K=1536 (q_b at TP8) 14.3 us SGLang Triton / 14.5 us vLLM,
# N=512 K=7168 31.6 / 20.6 us; vLLM PR #23280 (H100, 2025-09-10): N=2112 K=7168 (fused q_a + kv_a) 1.30 TFLOP/s
# Triton at batch 1, 23.3 us. The median, 20.6 us, is each block-FP8 GEMM's floor: attention's projections (MLA: fused
# q_a + kv_a, q_b, o_proj; the absorbed kv_b runs as a 16-bit BMM; else qkv and o) and the dense / shared-expert MLP's
# gate_up and down, on top of the kernel floor already counted for each.
BLOCK_FP8_GEMM_FLOOR_S = 20.6e-6
# The floor per kernel that makes a 32-layer dense model's step overhead `DECODE_STEP_OVERHEAD_S` (~1.6 us: CUDA
# graph replay of a small kernel on A100 / H100, NVIDIA "CUDA Graphs" blog: 2-3 us per launched kernel without).
KERNEL_FLOOR_S = (DECODE_STEP_OVERHEAD_S - DECODE_STEP_BASE_S) / (32 * KERNELS_PER_LAYER)
# Eager decode (transformers `generate` without torch.compile): every op is a Python call dispatched by PyTorch,
# ~10 us each on a fast CPU (PyTorch's per-op dispatch overhead, gpt-fast's blog "Accelerating Generative AI with
# PyTorch II": eager Llama-7B decode is CPU-bound at ~25 tok/s on A100 before CUDA graphs), and the ops are not
# fused: ~2.5x as many kernels per layer.
EAGER_KERNEL_S = 10e-6
EAGER_KERNEL_FACTOR = 2.5
# Latency of one small all-reduce between two GPUs, seconds (nccl-tests, 8-byte messages): NVLink/NVSwitch ~10 us,
# PCIe peer-to-peer ~20 us, through host memory (GeForce, no P2P: device -> host -> device copies and a host
# synchronisation per step) ~40 us. A group of n GPUs needs log2(n) such steps (NCCL's tree / recursive-doubling
# latency model, `src/graph/tuning.cc`), so the latency floor grows with the group while the bandwidth term shrinks.
ALLREDUCE_LATENCY_S: dict[Interconnect, float] = {Interconnect.SXM: 10e-6, Interconnect.NVLINK: 12e-6,
                                                   Interconnect.PCIE: 20e-6, Interconnect.PCIE_NO_P2P: 40e-6}
# A MoE layer spread over several GPUs exchanges its routed tokens (expert-parallel dispatch + combine, or the
# gather / scatter around the tensor-parallel grouped GEMMs): DeepEP's low-latency kernels take 77 us to dispatch and
# 114 us to combine a decode batch across 8 GPUs (deepseek-ai/DeepEP README, "Low-latency kernels", EP 8, H800),
# i.e. ~190 us per MoE layer per step at 8 GPUs, scaled here by log2(n) / 3 for smaller groups and by the
# interconnect's latency against NVLink's. Routing is latency-bound: it does not shrink with more GPUs.
MOE_EXCHANGE_8_S = 191e-6
# One request through layers split across GPUs (llama.cpp, Ollama, accelerate `device_map`) hands its activations
# from card to card once per boundary: a small copy, ~ one all-reduce latency of the link.
# Without P2P every transfer crosses the host twice (GPU -> RAM -> GPU): half the PCIe bandwidth.
NO_P2P_FACTOR = 0.5
# DeepSpeed's CPU Adam streams each state through host memory: ~10 GB/s per training process (DeepSpeed's
# ZeRO-Offload paper reports 1 billion parameters' Adam step in ~1.5 s with 12-16 bytes per parameter).
CPU_ADAM_GBS = 10.0
# Eager attention (no FlashAttention: T4, V100, or asked for) writes and reads the score matrix: 2 bytes per
# score, written and read in forward and backward.
EAGER_SCORE_BYTES = 8.0

# Bytes moved per trained parameter by one optimizer step (read + write): fp32 master 8, two Adam moments 16
# (8-bit: 4), gradient read 4, 16-bit copy written 2. Pure bf16 training keeps no master copy and bf16 moments.
_OPT_BYTES: dict[Optimizer | None, float] = {Optimizer.ADAMW: 30.0, Optimizer.ADAMW_8BIT: 18.0,
                                              Optimizer.PAGED_ADAMW_8BIT: 18.0, Optimizer.SGD: 14.0, None: 30.0}
_OPT_BYTES_BF16_TRUE = 14.0


class TrainingSpeed(NamedTuple):
    tokens_per_second: float  # all GPUs together
    step_seconds: float
    bound: str  # "compute" | "memory" | "network" | "offload": what the step waits on
    group: int  # GPUs that share one copy of the model (sharded / tensor parallel)
    replicas: int  # data-parallel copies


class InferenceSpeed(NamedTuple):
    prefill_tokens_per_s: float  # one prompt on one model copy
    decode_tokens_per_s: float  # one sequence, while `concurrency` sequences decode together
    aggregate_decode_tokens_per_s: float  # all sequences together
    bound: str  # "memory" | "compute": what a decode step waits on
    group: int  # tensor-parallel degree
    replicas: int


@lru_cache(maxsize=128)
def _divisors(n: int) -> tuple[int, ...]:
    return tuple(d for d in range(1, n + 1) if n % d == 0)


def sustained_clock_fraction(gpu: GPU) -> float:
    """Share of the boost clock (where datasheet TFLOPS are counted) a card holds through long dense matmuls:
    `SUSTAINED_CLOCK_SHARE` of the way from its base clock to its boost. 1.0 where no clocks are published."""
    if not gpu.base_mhz or not gpu.boost_mhz:
        return 1.0
    return (gpu.base_mhz + SUSTAINED_CLOCK_SHARE * (gpu.boost_mhz - gpu.base_mhz)) / gpu.boost_mhz


def _peak(gpu: GPU, fp8: bool) -> float:
    """FLOP/s the tensor cores give at the sustained clock: FP8 where asked for and available, else BF16/FP16."""
    tflops = gpu.fp8_tflops if fp8 and gpu.fp8_tflops > 0 else gpu.bf16_tflops
    return tflops * 1e12 * sustained_clock_fraction(gpu)


def link_bandwidth(gpu: GPU, group: int) -> float:
    """Bytes/s each GPU sends to its peers inside a group of `group` GPUs."""
    kind = gpu.interconnect
    if kind is Interconnect.SXM or (kind is Interconnect.NVLINK and group <= 2):
        return gpu.link_gbs * 1e9
    pcie = PCIE_GBS[gpu.pcie_gen] * 1e9
    return pcie * NO_P2P_FACTOR if kind is Interconnect.PCIE_NO_P2P else pcie


def _latency(gpu: GPU, group: int) -> float:
    """Seconds of one small all-reduce in a group of `group` GPUs: the link's two-GPU latency x log2(group)."""
    kind = gpu.interconnect
    if kind is Interconnect.NVLINK and group > 2:
        kind = Interconnect.PCIE
    return ALLREDUCE_LATENCY_S[kind] * max(1.0, math.log2(group))


def decode_floor_s(a: Arch, eager: bool = False, block_fp8: bool = False) -> float:
    """Seconds of one decode step that do not shrink with more GPUs or fewer bytes: the step's base cost, every
    layer's kernels at their floor (`KERNEL_FLOOR_S`, or the eager per-op cost), each MoE layer's fused experts
    (`MOE_LAYER_FLOOR_S`) and, for block-wise FP8 weights, each block-FP8 GEMM's (`BLOCK_FP8_GEMM_FLOOR_S`)."""
    moe_layers = a.n_moe_layers if a.experts > 1 else 0
    kernels = a.layers * (KERNELS_PER_LAYER + (MLA_KERNELS if a.kv_lora_rank else 0))
    if eager:
        per_kernel = EAGER_KERNEL_S * EAGER_KERNEL_FACTOR
        return DECODE_STEP_BASE_S + (kernels + moe_layers * MOE_KERNELS) * per_kernel
    floor = DECODE_STEP_BASE_S + kernels * KERNEL_FLOOR_S + moe_layers * MOE_LAYER_FLOOR_S
    if block_fp8:
        mlp_layers = a.layers - moe_layers + (moe_layers if a.shared_intermediate else 0)
        gemms = a.layers * (3 if a.kv_lora_rank else 2) + 2 * mlp_layers
        floor += gemms * (BLOCK_FP8_GEMM_FLOOR_S - KERNEL_FLOOR_S)
    return floor


def fused_moe_s(experts: int, active: int, expert_bytes: float, tokens: int, gpu: GPU) -> float:
    """Seconds of one MoE layer's routed experts for `tokens` tokens on one GPU (`expert_bytes`: one expert's weights
    held by that GPU): the layer's floor plus the experts the tokens route to, in expectation E x (1 - (1 - k/E)^n),
    at the experts' bandwidth share. The same terms `decode_floor_s` and a decode step's weight bytes use."""
    streamed = gpu.bandwidth_gbs * 1e9 * MOE_BANDWIDTH_EFFICIENCY
    return MOE_LAYER_FLOOR_S + _routed_to(experts, active, tokens) * expert_bytes / streamed


def _routed_to(experts: int, active: int, tokens: int) -> float:
    """Experts `tokens` tokens route to, in expectation, each choosing `active` of `experts`."""
    return experts * (1.0 - (1.0 - active / experts) ** tokens)


def moe_exchange_s(a: Arch, gpu: GPU, group: int) -> float:
    """Seconds per decode step that a MoE model spread over `group` GPUs spends routing tokens between them."""
    if a.experts <= 1 or group <= 1:
        return 0.0
    # log2(group) / 3 of the 8-GPU figure, at this link's latency against NVLink's (`_latency` carries the log2)
    per_layer = MOE_EXCHANGE_8_S / 3.0 * _latency(gpu, group) / ALLREDUCE_LATENCY_S[Interconnect.SXM]
    return a.n_moe_layers * per_layer


def weight_bytes_per_param(w: Workload) -> float:
    """Bytes of one base weight as the GPU reads it (quantised bases at their own width, 4 for fp32)."""
    if w.quant is not Quant.NONE:
        return QUANT_BYTES[w.quant]
    return 4.0 if w.precision is Precision.FP32 else 2.0


def _embed_params(a: Arch) -> float:
    return a.embedding_params_b * 1e9


def _expert_params(a: Arch) -> float:
    """Parameters of all routed experts' MLPs together, in the MoE layers only (0 for a dense model)."""
    return a.expert_params_b * 1e9 if a.experts > 1 else 0.0


# --- training --------------------------------------------------------------------------------------------------------

# Padded batches (each padded to its longest example, HF `DataCollatorWithPadding` / TRL's default packing=False)
# compute the pads too: on mixed-length instruction data (FLAN) packing without padding gave up to 2x the
# throughput of padded batches, so about half of the computed tokens were pads (Kundu et al., "Enhancing Training
# Efficiency Using Packing with Flash Attention", arXiv:2407.09105, and the Hugging Face blog "Improving Hugging Face
# Training Efficiency Through Packing with Flash Attention 2", 2024; "more modest" on uniform-length OrcaMath). The
# speed model counts real tokens: padded training runs at (1 - PADDING_WASTE) of the packed rate. Batch 1 has no
# pads (the one example is its own longest). The dataset's own length spread is not known, so this is the default.
PADDING_WASTE = 0.5


def padding_waste(w: Workload) -> float:
    """Share of the computed tokens that are pads (0 when packed or one example per batch)."""
    return 0.0 if w.packing or w.batch <= 1 or not w.is_training else PADDING_WASTE


def _forward_flops(w: Workload) -> float:
    """FLOPs of one forward pass per token (docs/reference/estimator.md §6; MoE counts active parameters)."""
    a = w.arch
    return 2.0 * a.active_params_b * 1e9 + 2.0 * a.layers * a.q_dim * w.seq_len


def _nograd_share(w: Workload) -> float:
    """Sequences a preference objective forwards without gradients per sequence it trains (`core.objectives`); a
    reference whose log-probs are precomputed still runs its forward, before training: the same compute."""
    o = facts(w.objective)
    return o.nograd_forwards * o.nograd_sequences / o.graded


def flops_per_token(w: Workload) -> float:
    """Training FLOPs per trained token (docs/reference/estimator.md §6; MoE counts active parameters), with the
    forwards without gradients a preference objective adds (a DPO reference's, `core.objectives`)."""
    a = w.arch
    forward = _forward_flops(w)
    if w.method is Method.FULL:
        backward = 2.0 * forward
    elif w.method in ADAPTER_METHODS:
        backward = forward  # input gradients only
    else:  # freeze: gradients flow through the trained top layers only
        backward = 2.0 * forward * min(FREEZE_TRAINABLE_LAYERS, a.layers) / a.layers
    recompute = forward if w.grad_ckpt else 0.0
    nograd = _nograd_share(w)
    if nograd:
        return forward + backward + recompute + nograd * forward
    return forward + backward + recompute


def _trainable_params(w: Workload) -> float:
    a = w.arch
    if w.method in ADAPTER_METHODS:
        return adapter_params(a, w.lora_rank or 16, w.lora_targets)
    if w.method is Method.FREEZE:
        return (a.params_b * 1e9 - _embed_params(a)) * min(FREEZE_TRAINABLE_LAYERS, a.layers) / a.layers
    return a.params_b * 1e9


class _Train(NamedTuple):
    """What every configuration's step time of one training workload uses, computed once per workload (each value
    the same product, in the same order, as `_train_step` would evaluate it)."""

    flops: float  # FLOPs per token (`flops_per_token`)
    trained: float  # trained parameters
    passes: int  # forward, backward (and the recomputed forward)
    tokens_flops: float  # tokens per GPU x FLOPs per token
    params: float
    base: float  # bytes of one base weight as read
    per_pass: float  # params x base: one read of the weights (and what ZeRO-3 / FSDP gathers)
    pass_bytes: float  # passes x per_pass
    act_bytes: float  # activations written and read back, all passes
    eager_bytes: float  # the score matrix of eager attention, all passes
    eager: bool  # eager attention asked for
    dequant: float  # a quantised base's 16-bit copies, all passes (0 when not quantised)
    opt_bytes: float  # optimizer bytes per trained parameter and step
    tp_bytes: float  # tensor parallel's activations exchanged per step, before the group share
    stream: float  # passes x params x base: the weights over PCIe when everything is offloaded


# Per workload. Workloads are frozen; an answer asks for a dozen configurations of one workload, and hashing a
# pydantic model per question would cost more than the arithmetic, so the last few are remembered by identity (the
# entry keeps its workload alive: an id is not reused meanwhile).
_TRAIN_CONSTANTS: dict[int, tuple[Workload, _Train]] = {}


def _train_constants(w: Workload) -> _Train:
    hit = _TRAIN_CONSTANTS.get(id(w))
    if hit is not None and hit[0] is w:
        return hit[1]
    a = w.arch
    objective = facts(w.objective)
    flops, trained = flops_per_token(w), _trainable_params(w)
    # trained tokens per GPU and step: a preference pair's chosen and rejected both (`core.objectives`)
    tokens = w.batch * w.seq_len * objective.graded
    # weight reads per step: forward, backward (and the recomputed forward), then any forwards without gradients
    passes = (3 if w.grad_ckpt else 2) + objective.nograd_forwards
    act_passes = (3 if w.grad_ckpt else 2) + _nograd_share(w)  # passes over each trained token's activations
    params = a.params_b * 1e9
    base = weight_bytes_per_param(w)
    per_pass = params * base
    # A quantised base is dequantised to a 16-bit copy before each matmul, in its own kernel (bitsandbytes, GPTQ
    # and torchao alike): the copy is written and read back, and the matmul waits for it.
    dequant = passes * (params - _embed_params(a)) * 4.0 if w.quant is not Quant.NONE else 0.0
    act = 2.0 * (4 * a.hidden + 2 * a.q_dim + 2 * a.kv_dim + 4 * a.intermediate * max(1, a.experts_active))
    opt_bytes = _OPT_BYTES_BF16_TRUE if w.precision is Precision.BF16_TRUE else _OPT_BYTES.get(w.optimizer, 30.0)
    prof = profile(w.engine)
    # Eager PyTorch: every elementwise op is its own pass over memory. A framework whose speed is published relative
    # to HF Trainer + PEFT (Unsloth: `core.engines.train_speed`) is modelled as that baseline times its speed-up.
    unfused = prof.elementwise_traffic if prof.train_speed == 1.0 else HF_BASELINE.elementwise_traffic
    out = _Train(flops=flops, trained=trained, passes=passes, tokens_flops=tokens * flops, params=params, base=base,
                 per_pass=per_pass, pass_bytes=passes * per_pass,
                 act_bytes=tokens * a.layers * act * 2.0 * act_passes * unfused,
                 eager_bytes=tokens * a.layers * a.heads * w.seq_len * EAGER_SCORE_BYTES * act_passes * unfused,
                 eager=w.attention is Attention.EAGER, dequant=dequant, opt_bytes=opt_bytes,
                 tp_bytes=4 * act_passes * tokens * a.hidden * 2.0 * a.layers * 2, stream=passes * params * base)
    if len(_TRAIN_CONSTANTS) >= 256:
        _TRAIN_CONSTANTS.clear()
    _TRAIN_CONSTANTS[id(w)] = (w, out)
    return out


# Per card (by identity): the training FLOP/s at MFU in BF16 and in FP8 (where the card has FP8), evaluated once.
_TRAIN_RATES: dict[int, tuple[GPU, float, float]] = {}


def _train_rates(gpu: GPU) -> tuple[float, float]:
    hit = _TRAIN_RATES.get(id(gpu))
    if hit is not None and hit[0] is gpu:
        return hit[1], hit[2]
    out = (_peak(gpu, False) * MFU, _peak(gpu, True) * MFU_FP8)
    if len(_TRAIN_RATES) >= 256:
        _TRAIN_RATES.clear()
    _TRAIN_RATES[id(gpu)] = (gpu, *out)
    return out


HF_BASELINE = PROFILES[Engine.HF_PEFT]
_SHARDING = frozenset({Strategy.ZERO2, Strategy.ZERO3, Strategy.FSDP})
_GATHERING = frozenset({Strategy.ZERO3, Strategy.FSDP})
_TP_STRATEGY, _ZERO2_STRATEGY, _NO_OFFLOAD = Strategy.TP, Strategy.ZERO2, Offload.NONE


def _train_step(w: Workload, gpu: GPU, group: int, replicas: int, strategy: Strategy, *, fp8: bool,
                c: _Train) -> tuple[float, str]:
    """Seconds of one step (each GPU processes batch x seq tokens) and what bounds it; `c` holds what depends on
    the workload alone (`_train_constants`)."""
    # Tensor parallel splits the arithmetic of one copy over the group; data parallel and sharding do not.
    tp = group if strategy is _TP_STRATEGY else 1
    fp8 = fp8 and gpu.fp8_tflops > 0
    peak16, peak8 = _train_rates(gpu)
    compute = c.tokens_flops / tp / (peak8 if fp8 else peak16)

    traffic = c.pass_bytes / tp + c.act_bytes / tp
    if c.eager or not gpu.bf16:
        traffic += c.eager_bytes / tp
    bw = _rates(gpu)[0]
    memory = traffic / bw
    work, bound = (compute, "compute") if compute >= memory else (memory, "memory")
    work += (1.0 - MEMORY_OVERLAP) * min(compute, memory)  # the part of the shorter one not hidden

    trained = c.trained
    sharded = strategy in _SHARDING and group > 1
    states = trained / (group if sharded else 1) * c.opt_bytes

    # Traffic between GPUs, bytes each GPU sends per step.
    net = 0.0
    grads = trained * 2.0
    if group > 1:
        share = (group - 1) / group
        if strategy in _GATHERING:
            gathered = c.per_pass  # the weights travel as stored (a quantised base stays quantised)
            net += 2 * gathered * share + grads * share  # all-gather in forward and backward, reduce-scatter grads
        elif strategy is _ZERO2_STRATEGY:
            net += 2 * grads * share
        elif strategy is _TP_STRATEGY:
            net += c.tp_bytes * share
        else:  # DDP inside the group
            net += 2 * grads * share
    if replicas > 1:
        net += 2 * grads / (group if sharded else 1) * (replicas - 1) / replicas
    nodes_link = link_bandwidth(gpu, group * replicas)
    network = net / nodes_link if net else 0.0
    if network > work:
        work, bound = network, "network"

    offloaded = w.offload is not _NO_OFFLOAD
    step = work + c.dequant / tp / bw + (0.0 if offloaded else states / bw)
    if offloaded:
        host = PCIE_GBS[gpu.pcie_gen] * 1e9
        shard = trained / (group if sharded else 1)
        offload = 4.0 * shard / host + shard * c.opt_bytes / (CPU_ADAM_GBS * 1e9)
        if w.offload is Offload.ALL:
            offload += c.stream / group / host
        step += offload
        if offload > work:
            bound = "offload"
    return step, bound


def training_speed(w: Workload, gpu: GPU, count: int, *, min_group: int = 1, fp8: bool = False) -> TrainingSpeed:
    """Training throughput of `w` on `count` x `gpu`: the fastest layout whose groups hold at least `min_group`
    GPUs (the fewest that hold the model on this card; `core.fit` knows it)."""
    best: TrainingSpeed | None = None
    min_group = max(1, min(min_group, count))
    c = _train_constants(w)
    graded = facts(w.objective).graded  # trained tokens: both sides of a preference pair
    framework = train_speed(w)  # the framework's published speed-up over HF Trainer + PEFT (1 for the rest)
    for group in _divisors(count):
        if group < min_group:
            continue
        replicas = count // group
        if group == 1:
            strategy = Strategy.SINGLE
        elif w.strategy not in (Strategy.SINGLE, Strategy.DDP):
            strategy = w.strategy
        else:
            strategy = default_strategy(w.method) if w.strategy is Strategy.SINGLE else Strategy.DDP
        step, bound = _train_step(w, gpu, group, replicas, strategy, fp8=fp8, c=c)
        step /= framework
        tps = count * w.batch * w.seq_len * graded / step * (1.0 - padding_waste(w))
        if best is None or tps > best.tokens_per_second:
            best = TrainingSpeed(tps, step, bound, group, replicas)
    assert best is not None
    return best


# --- inference -------------------------------------------------------------------------------------------------------

class _Serving(NamedTuple):
    """What every configuration's speed of one inference workload uses, computed once per workload."""

    fixed: float  # bytes a decode step reads whatever the batch (dense weights, lm_head)
    experts: float  # bytes of all routed experts (0 for a dense model)
    e: int  # routed experts
    k: int  # active experts per token
    token_flops: float  # 2 x active parameters: the matmul FLOPs of one token
    decode_attn: float  # attention FLOPs of one decoded token per token of context (4 x layers x q_dim)
    prefill_attn: float  # the same for a causal prefill (half the square: 2 x layers x q_dim)
    fp8: bool  # FP8 weights: the FP8 tensor peak
    kv_per_token: float  # KV bytes per token at the workload's own context (sliding windows averaged in)
    context: int  # that context
    floor: float  # `decode_floor_s`: the step's base cost and every layer's kernels at their floor
    layer_split: bool  # the engine splits layers across GPUs (one card computes at a time), not tensor parallel
    fp16_acc: bool  # 16-bit prefill GEMMs accumulate in FP16 (twice the FP32-accumulate rate on GeForce)
    dequant: float  # bytes a prefill moves per physical batch to dequantise GGUF weights to FP16 (0: none)
    chunk: int  # tokens of one physical prefill batch (the engine's ubatch / chunk; 0: the whole prompt)
    # 1 / the quantised decode kernel's bandwidth share (`core.engines.KERNELS`) on compute capability 8.0+ cards
    # and below (the engine may pick another kernel there): decode's weight bytes stream that much slower
    qinv: float = 1.0
    qinv_old: float = 1.0


# Per workload, remembered by identity like `_TRAIN_CONSTANTS`.
_SERVING: dict[int, tuple[Workload, _Serving]] = {}
_FP8 = Quant.FP8
_CONSUMER = GPUClass.CONSUMER
_GGUF = frozenset({Quant.Q2_K, Quant.Q3_K_M, Quant.Q4_0, Quant.Q4_K_S, Quant.Q4_K_M, Quant.Q5_K_S, Quant.Q5_K_M,
                   Quant.Q6_K, Quant.Q8_0})


def _serving(w: Workload) -> _Serving:
    hit = _SERVING.get(id(w))
    if hit is not None and hit[0] is w:
        return hit[1]
    a = w.arch
    prof = profile(w.engine)
    per = weight_bytes_per_param(w)
    # llama.cpp's prompt processing of GGUF weights (batches > 32 tokens, the cuBLAS path of
    # `ggml_cuda_op_mul_mat_cublas`, Jan 2024 builds): each weight is dequantised to an FP16 copy (read the quantised
    # bytes, write and read back 2 + 2) once per physical batch of n_ubatch tokens, then multiplied by cuBLAS with
    # CUBLAS_COMPUTE_16F: the FP16-accumulate rate, plus that copy's traffic.
    gguf = w.quant in _GGUF
    experts = _expert_params(a)
    dense = a.params_b * 1e9 - _embed_params(a) - experts
    # Only the lm_head matrix is read from the embeddings (one row of the input table); kept 16-bit by quantisers.
    head = a.vocab * a.hidden * (2.0 if w.precision is not Precision.FP32 else 4.0)
    qinv = qinv_old = 1.0
    if w.quant is not Quant.NONE:
        # the decode kernel's packing (scales per group) and bandwidth share, `core.engines.KERNELS`
        kper, share, head_q = kernel_decode(w)
        if kper:
            per = kper
        if head_q:
            head *= per / 2.0
        qinv, qinv_old = 1.0 / share, 1.0 / kernel_decode(w, ampere=False)[1]
    ctx = max(1, w.seq_len)
    block_fp8 = w.quant is _FP8 and a.native_quant == "fp8"  # the publisher's 128 x 128 block-scaled FP8
    # The routed experts stream at their own share of the bandwidth (`MOE_BANDWIDTH_EFFICIENCY`): their bytes are
    # scaled so that one bandwidth figure times every byte of the step.
    out = _Serving(fixed=dense * per + head, experts=experts * per * BANDWIDTH_EFFICIENCY / MOE_BANDWIDTH_EFFICIENCY,
                   e=a.experts, k=max(1, a.experts_active),
                   token_flops=2.0 * a.active_params_b * 1e9, decode_attn=4.0 * a.layers * a.q_dim,
                   prefill_attn=2.0 * a.layers * a.q_dim, fp8=w.quant is _FP8,
                   kv_per_token=kv_bytes_per_token(a, w.kv_dtype, ctx), context=ctx,
                   floor=decode_floor_s(a, prof.eager_decode, block_fp8), layer_split=prof.layer_split,
                   fp16_acc=prof.fp16_accumulate and (w.quant is Quant.NONE or gguf)
                   and w.precision is not Precision.FP32,
                   dequant=(a.params_b * 1e9 - _embed_params(a)) * (per + 4.0) if prof.fp16_accumulate and gguf
                   else 0.0, chunk=max(0, prof.prefill_chunk), qinv=qinv, qinv_old=qinv_old)
    if len(_SERVING) >= 256:
        _SERVING.clear()
    _SERVING[id(w)] = (w, out)
    return out


# Per card (by identity, like the workloads): (bytes/s a decode step streams, FLOP/s of prefill and decode
# arithmetic in BF16, the same in FP8). The same products `_peak(gpu, fp8) * MFU_PREFILL` and bandwidth x
# efficiency, evaluated once.
_RATES: dict[int, tuple[GPU, float, float, float]] = {}


def _rates(gpu: GPU) -> tuple[float, float, float]:
    hit = _RATES.get(id(gpu))
    if hit is not None and hit[0] is gpu:
        return hit[1], hit[2], hit[3]
    out = (gpu.bandwidth_gbs * 1e9 * BANDWIDTH_EFFICIENCY, _peak(gpu, False) * MFU_PREFILL,
           _peak(gpu, True) * MFU_PREFILL)
    if len(_RATES) >= 256:
        _RATES.clear()
    _RATES[id(gpu)] = (gpu, *out)
    return out


def _weight_bytes(c: _Serving, batch: int) -> float:
    if not c.experts:
        return c.fixed
    return c.fixed + c.experts * _routed_to(c.e, c.k, batch) / c.e


def _decode(w: Workload, c: _Serving, gpu: GPU, rates: tuple[float, float, float], group: int, batch: int,
            context: int, kv_per_token: float) -> tuple[float, str]:
    """Seconds of one decode step of `batch` sequences on a group of `group` GPUs, and what bounds it."""
    bw, peak16, peak8 = rates
    kv = batch * context * kv_per_token
    weights = _weight_bytes(c, batch)
    if c.qinv != 1.0 or c.qinv_old != 1.0:  # a quantised GEMV kernel below the 16-bit fraction
        weights *= c.qinv if gpu.compute_capability >= 8.0 else c.qinv_old
    memory = (weights + kv) / group / bw
    flops = batch * (c.token_flops + c.decode_attn * context)
    compute = flops / group / (peak8 if c.fp8 else peak16)
    step, bound = (memory, "memory") if memory >= compute else (compute, "compute")
    if group > 1:
        a = w.arch
        share = 2.0 * (group - 1) / group
        comm_bytes = 2 * a.layers * batch * a.hidden * 2.0 * share
        step += 2 * a.layers * _latency(gpu, group) + comm_bytes / link_bandwidth(gpu, group)
        step += moe_exchange_s(a, gpu, group)
    return step + c.floor, bound


def _decode_split(w: Workload, c: _Serving, gpu: GPU, rates: tuple[float, float, float], count: int, batch: int,
                  context: int, kv_per_token: float) -> tuple[float, str]:
    """One decode step with the layers split over `count` GPUs: each card streams its own layers in turn, so the
    step is one card's time for the whole model, plus a hand-over per boundary."""
    step, bound = _decode(w, c, gpu, rates, 1, batch, context, kv_per_token)
    return step + (count - 1) * _latency(gpu, 2), bound


def _prefill_rate(w: Workload, gpu: GPU, group: int, prompt: int) -> float:
    return _prefill(_serving(w), _rates(gpu), group, prompt)


def _prefill(c: _Serving, rates: tuple[float, float, float], group: int, prompt: int) -> float:
    """Prompt tokens per second of one prefill on a group of `group` GPUs (the arithmetic alone: the exchange
    between them is `_prefill_exchange_s`)."""
    bw, peak16, peak8 = rates
    flops = c.token_flops + c.prefill_attn * prompt  # causal: half the square
    compute = prompt * flops / group / (peak8 if c.fp8 else peak16)
    weights = _weight_bytes(c, prompt) / group / bw
    dequant = c.dequant * math.ceil(prompt / c.chunk) / group / bw if c.dequant and c.chunk else 0.0
    return prompt / (max(compute, weights) + dequant)


def _prefill_exchange_s(a: Arch, gpu: GPU, group: int, prompt: int) -> float:
    """Seconds a tensor-parallel prefill of `prompt` tokens spends in its two all-reduces per layer (attention
    output and MLP output, prompt x hidden in 16 bits each, Megatron-LM's TP layout), not overlapped with the GEMMs
    (vLLM's and SGLang's default). Over PCIe without P2P every one is a device -> host -> device round trip
    (`link_bandwidth` halves the bandwidth, `_latency` doubles the latency): prefill stops scaling with cards."""
    if group <= 1:
        return 0.0
    share = 2.0 * (group - 1) / group
    per_allreduce = prompt * a.hidden * 2.0 * share / link_bandwidth(gpu, group) + _latency(gpu, group)
    return 2 * a.layers * per_allreduce


def served_output_tokens_per_s(speed: InferenceSpeed, concurrency: int, prompt: int, output: int) -> float:
    """Output tokens/s of a server answering `concurrency` requests at a time, each a `prompt`-token prefill and
    `output` decode steps (what serving benchmarks measure: their clock runs through the prefills too)."""
    per_request = output / speed.decode_tokens_per_s + concurrency * prompt / (speed.prefill_tokens_per_s
                                                                               * speed.replicas)
    return concurrency * output / per_request


def keeps_up(w: Workload, s: InferenceSpeed) -> bool | None:
    """Whether a configuration serving at speed `s` meets the workload's serving targets (None: it has none): each
    answer at least `answer_tps`, the prompt prefilled within `ttft_s` (its own prefill, before any queueing), and
    `demand_tps` answer tokens a second in all. For a request rate the server's clock runs through every request's
    prefill too (`served_output_tokens_per_s`), so a long prompt counts."""
    if not w.has_target:
        return None
    speed, demand, ttft = w.answer_tps, w.demand_tps, w.ttft_s
    if speed is not None and s.decode_tokens_per_s < speed * (1 - 1e-9):
        return False
    if ttft is not None and (w.prompt_len or w.seq_len) / s.prefill_tokens_per_s > ttft * (1 + 1e-9):
        return False  # the prompt's own prefill already takes longer than the first token may
    if demand is not None:
        if w.request_rate is not None and w.prompt_len is not None:
            served = served_output_tokens_per_s(s, w.concurrency, w.prompt_len, max(1, w.seq_len - w.prompt_len))
        else:
            served = s.aggregate_decode_tokens_per_s
        if served < demand * (1 - 1e-9):
            return False
    return True


def inference_speed(w: Workload, gpu: GPU, count: int, *, min_group: int = 1, concurrency: int | None = None,
                    context: int | None = None, prompt: int | None = None) -> InferenceSpeed:
    """Prefill and decode speed of `w` on `count` x `gpu` with `concurrency` sequences (the workload's by
    default) each holding `context` tokens of KV cache (its context length by default)."""
    total = max(1, concurrency or w.concurrency)
    ctx = max(1, context or w.seq_len)
    serving, rates = _serving(w), _rates(gpu)
    # sliding windows cap local layers
    kv_per_token = serving.kv_per_token if ctx == serving.context else kv_bytes_per_token(w.arch, w.kv_dtype, ctx)
    if prompt is None and context is None:
        prompt = w.prompt_len  # the stated prompt ("input 1k output 2k"); unstated, the whole context
    if serving.fp16_acc and gpu.gpu_class is _CONSUMER:
        # GeForce tensor cores run FP16-accumulate GEMMs at twice the FP32-accumulate rate `bf16_tflops` lists
        # (NVIDIA Ampere GA102 / Ada whitepapers, Appendix A), and the engine's F16 GEMMs accumulate in FP16
        rates = (rates[0], rates[1] * 2.0, rates[2])
    tokens = prompt or ctx
    prefill_one = _prefill(serving, rates, 1, tokens)  # a group of g GPUs splits the same work g ways
    if serving.layer_split and count > 1:
        # Layers split across the cards: one request computes on one card at a time (memory spread, the throughput
        # of one card), every sequence of the batch through every card in turn.
        step, bound = _decode_split(w, serving, gpu, rates, count, total, ctx, kv_per_token)
        prefill = tokens / (tokens / prefill_one + (count - 1) * _latency(gpu, 2))
        return InferenceSpeed(prefill, 1.0 / step, total / step, bound, count, 1)
    best: InferenceSpeed | None = None
    best_aggregate = 0.0
    min_group = max(1, min(min_group, count))
    for group in _divisors(count):
        if group < min_group:
            continue
        replicas = count // group
        per_copy = math.ceil(total / replicas)
        step, bound = _decode(w, serving, gpu, rates, group, per_copy, ctx, kv_per_token)
        aggregate = total / step
        if best is None or aggregate > best_aggregate * (1 + 1e-9):
            prefill = tokens / (tokens / (prefill_one * group) + _prefill_exchange_s(w.arch, gpu, group, tokens))
            best = InferenceSpeed(prefill, 1.0 / step, aggregate, bound, group, replicas)
            best_aggregate = aggregate
    assert best is not None
    return best


# --- per configuration, for answers ---------------------------------------------------------------------------

def smallest_group(w: Workload, gpu_id: str, count: int, req: Requirement | None = None) -> int:
    """The fewest of `count` GPUs (a divisor of it) that hold the workload on this card: the model-parallel group
    the speed model may replicate over the rest. `count` itself when nothing smaller holds it. `req`: the
    workload's `core.fit.requirement`, when the caller has it (saves hashing the workload)."""
    if count <= 1:
        return count
    req = req or requirement(w)
    gpu = get_gpu(gpu_id)
    for d in range(1, count):
        if count % d == 0 and req.fits(gpu, d):
            return d
    return count


class ConfigSpeed(BaseModel):
    """Inference speed on one configuration."""

    model_config = ConfigDict(frozen=True)

    gpu: str  # catalog id
    gpu_name: str
    count: int
    fits: bool
    prefill_tokens_per_s: float
    decode_tokens_per_s: float  # one sequence, at the workload's concurrency
    aggregate_decode_tokens_per_s: float
    bound: str
    meets: bool | None = None  # the workload's serving targets kept (`keeps_up`); None: no target was said


class SpeedEstimate(BaseModel):
    model_config = ConfigDict(frozen=True)

    concurrency: int
    context: int
    per_config: list[ConfigSpeed]
    # the serving targets the rows' `meets` is about (`core.workload.Workload`); None where not said
    answer_tps: float | None = None
    demand_tps: float | None = None
    request_rate: float | None = None
    request_rate_unit: float | None = None  # the unit the rate was said in, in seconds
    ttft_s: float | None = None

    def for_config(self, gpu: str, count: int) -> ConfigSpeed | None:
        return next((c for c in self.per_config if c.gpu == gpu and c.count == count), None)


def estimate_speed(w: Workload, fits: Sequence[Fit], extra: tuple[tuple[str, int], ...] = ()) -> SpeedEstimate | None:
    """Prefill and decode speed of an inference workload on each fitting configuration (and on the `extra` pairs
    asked for by name, `fits=False` when they do not hold it); None for training."""
    if w.is_training:
        return None
    pairs = [(f.gpu, f.count, True) for f in fits]
    have = {(g, c) for g, c, _ in pairs}
    pairs += [(g, c, False) for g, c in extra if (g, c) not in have]
    out: list[ConfigSpeed] = []
    for gpu_id, count, fits_ in pairs:
        gpu = get_gpu(gpu_id)
        s = inference_speed(w, gpu, count, min_group=smallest_group(w, gpu_id, count))
        out.append(ConfigSpeed(gpu=gpu_id, gpu_name=gpu.name, count=count, fits=fits_,
                               prefill_tokens_per_s=s.prefill_tokens_per_s, decode_tokens_per_s=s.decode_tokens_per_s,
                               aggregate_decode_tokens_per_s=s.aggregate_decode_tokens_per_s, bound=s.bound,
                               meets=keeps_up(w, s)))
    return SpeedEstimate(concurrency=w.concurrency, context=w.seq_len, per_config=out, answer_tps=w.answer_tps,
                         demand_tps=w.demand_tps, request_rate=w.request_rate,
                         request_rate_unit=w.request_rate_unit, ttft_s=w.ttft_s)
