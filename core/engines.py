"""What the software that runs a workload changes about its memory and speed: one profile per engine, each fact
with its source (the engine's own code or documentation, read at the version named).

The estimator (`core.estimator`) and the speed model (`core.speed`) read these profiles; `core.defaults` picks the
engine a phrase leaves open and says so. `Workload.engine = None` is the engine-neutral model the estimator had
before engines were described (kept for callers that build a Workload by hand).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.gpus import GPU, GPUS, get_gpu
from core.msg import Msg, msg
from core.workload import Engine, Method, Precision, Quant, QuantKernel, Strategy, Workload


@dataclass(frozen=True, slots=True)
class EngineProfile:
    engine: Engine
    # --- inference memory ---
    # Fraction of the card the engine claims at start-up and fills with its paged KV pool (vLLM
    # `gpu_memory_utilization`, SGLang `mem_fraction_static`); 0 = allocates what it uses. The workload must fit
    # in that fraction, not in the whole card.
    preallocate: float = 0.0
    # Most prompt tokens one forward pass holds (chunked prefill / physical batch); 0 = the whole batch of
    # prompts at once (a `generate`-style loop prefills every sequence of the batch together).
    prefill_chunk: int = 0
    # CUDA graphs captured at start-up for decode batch sizes: their private memory pool, GiB per GPU.
    cuda_graphs_gib: float = 0.0
    # MLA models (DeepSeek V2/V3, Kimi K2): the cache holds the compressed latent (True) or full K/V heads after
    # the up-projection (False).
    mla_latent: bool = True
    # Sliding-window layers keep only their window (True) or a full-length cache like global layers (False).
    window_only: bool = True
    # Several GPUs split the layers (pipeline / `device_map`): one request computes on one card at a time, each
    # card keeps its own share of the layers, nothing is replicated. False: tensor parallel.
    layer_split: bool = False
    # Prefill GEMMs of 16-bit weights accumulate in FP16 (cuBLAS `CUBLAS_COMPUTE_16F`): on GeForce cards that is
    # twice the FP32-accumulate tensor rate the catalog lists.
    fp16_accumulate: bool = False
    # Decode runs op by op from Python (no CUDA graph): every kernel pays PyTorch's eager launch cost, and the ops
    # are not fused (an RMSNorm is ~6 kernels, RoPE ~10). False: decode replays a CUDA graph of fused kernels.
    eager_decode: bool = False
    # --- training ---
    # PEFT `prepare_model_for_kbit_training` casts every parameter that is not quantised (embeddings, LM head,
    # norms, biases) to fp32 on a bitsandbytes base.
    kbit_upcast: bool = False
    fused_ce: bool = False  # chunked / fused cross-entropy by default
    offload_checkpoints: bool = False  # checkpointed layer inputs go to CPU RAM (Unsloth's "unsloth" mode)
    # Training tokens/s relative to HF Trainer + PEFT + FlashAttention 2 on the same GPU (published benchmarks).
    train_speed: float = 1.0
    # Activation traffic of a training step against fused kernels (1): eager PyTorch runs every elementwise op as
    # its own kernel that reads and writes the whole activation (HF `LlamaRMSNorm` = pow, mean, add, rsqrt, mul,
    # mul: 6 kernels where a fused norm is 1; SiLU x up, RoPE, dropout and bias adds likewise), about 3x the bytes.
    # Fused (1): Unsloth's Triton kernels, torchtune / NeMo with torch.compile or Transformer Engine.
    elementwise_traffic: float = 1.0
    source: str = ""


# Sources, read at the versions named.
_VLLM = ("vLLM `EngineArgs`: gpu_memory_utilization 0.9; chunked prefill on with max_num_batched_tokens 8192 for "
         "the OpenAI server on >= 70 GB cards (2048 below; `get_batch_defaults`, v0.10); CUDA graphs captured for "
         "batch sizes up to 512, the start-up log's 'Graph capturing finished ... took 0.5-1.0 GiB'; MLA cached as "
         "the latent (FlashMLA / TRITON_MLA backends); the hybrid KV-cache manager keeps only the window of "
         "sliding-window layers (v0.10+)")
_SGLANG = ("SGLang `ServerArgs`: mem_fraction_static 0.88 on 80 GB-class cards, chunked_prefill_size 8192, CUDA "
           "graphs up to batch 160; MLA cached as the latent; sliding-window layers get a full-length pool unless "
           "the model has a dedicated SWA pool")
_TRTLLM = ("TensorRT-LLM `KvCacheConfig.free_gpu_memory_fraction` 0.9 of the memory left after the weights; "
           "max_num_tokens 8192; CUDA graphs; MLA latent cache for DeepSeek; a cyclic window cache only when "
           "max_attention_window is set")
_LLAMA_CPP = ("llama.cpp: no preallocation beyond the context asked for (-c); prompts processed in physical "
              "batches of n_ubatch 512 tokens; several GPUs split the layers (--split-mode layer, the default); "
              "F16 matmuls through cublasGemmEx with CUBLAS_COMPUTE_16F (ggml-cuda `ggml_cuda_op_mul_mat_cublas`); "
              "MLA cached as the latent since PR #12801 (2025-04); sliding-window layers keep their window + one "
              "ubatch (swa_full = false, PR #13194)")
_OLLAMA = "Ollama runs llama.cpp's CUDA kernels (num_batch 512, layers split across GPUs): " + _LLAMA_CPP
_TRANSFORMERS = ("Hugging Face transformers `generate`: the whole batch of prompts in one forward pass; "
                 "`device_map='auto'` (accelerate) splits the layers across GPUs; DeepSeek V2/V3 attention caches "
                 "the up-projected full K/V heads (`DeepseekV3Attention`); Gemma 2/3 keep sliding-window layers in "
                 "a window-sized HybridCache; `generate` decodes eagerly, one Python call per op, unless a static "
                 "cache and torch.compile are asked for (transformers docs, 'LLM inference optimization')")
_PEFT = ("PEFT `prepare_model_for_kbit_training` (used by HF QLoRA recipes, Qwen's finetune.py, axolotl): every "
         "fp16/bf16 parameter that is not quantised is cast to fp32 on a bitsandbytes base (GPTQ/AWQ bases are "
         "skipped); plain Hugging Face cross-entropy")
_UNSLOTH = ("Unsloth: fused cross-entropy and RoPE/MLP Triton kernels; use_gradient_checkpointing='unsloth' offloads "
            "the checkpointed layer inputs to CPU RAM; no fp32 upcast of the embeddings; training speed 1.36x (LoRA) "
            "to 1.54x (QLoRA) HF+FA2 on Llama-2-7B, A100 (LLaMA-Factory README benchmark, which runs both)")
_LLAMA_FACTORY = ("LLaMA-Factory: HF Trainer + PEFT; QLoRA bases through PEFT's k-bit preparation (fp32 for what "
                  "is not quantised); plain cross-entropy unless enable_liger_kernel")
_AXOLOTL = "axolotl: HF Trainer + PEFT (" + _PEFT + ")"
_TORCHTUNE = ("torchtune: pure bf16 recipes, chunked cross-entropy (CEWithChunkedOutputLoss), torchao NF4 without "
              "upcasting anything")
_LIGER = ("Liger-Kernel (linkedin/Liger-Kernel README; Hsu et al., 'Liger Kernel: Efficient Triton Kernels for LLM "
          "Training', arXiv:2410.10989): HF Trainer with `use_liger_kernel=True` swaps in fused Triton RMSNorm, "
          "RoPE, SwiGLU and FusedLinearCrossEntropy (the logits are computed chunk by chunk and never "
          "materialised whole); the paper and README report ~20 % more training throughput and ~60 % less GPU "
          "memory than the Hugging Face implementations (LLaMA 3-8B, batch 8, bf16, AdamW, gradient "
          "checkpointing, FSDP on 8 A100s); QLoRA bases still go through " + _PEFT + ")")
_DEEPSPEED = "DeepSpeed with HF Trainer + PEFT: the same model preparation as " + _PEFT

PROFILES: dict[Engine, EngineProfile] = {
    Engine.VLLM: EngineProfile(Engine.VLLM, preallocate=0.9, prefill_chunk=8192, cuda_graphs_gib=0.75,
                               source=_VLLM),
    Engine.SGLANG: EngineProfile(Engine.SGLANG, preallocate=0.88, prefill_chunk=8192, cuda_graphs_gib=0.75,
                                 window_only=False, source=_SGLANG),
    Engine.TENSORRT_LLM: EngineProfile(Engine.TENSORRT_LLM, preallocate=0.9, prefill_chunk=8192,
                                       cuda_graphs_gib=0.5, window_only=False, source=_TRTLLM),
    Engine.LLAMA_CPP: EngineProfile(Engine.LLAMA_CPP, prefill_chunk=512, layer_split=True, fp16_accumulate=True,
                                    source=_LLAMA_CPP),
    Engine.OLLAMA: EngineProfile(Engine.OLLAMA, prefill_chunk=512, layer_split=True, fp16_accumulate=True,
                                 source=_OLLAMA),
    Engine.TRANSFORMERS: EngineProfile(Engine.TRANSFORMERS, mla_latent=False, layer_split=True, eager_decode=True,
                                       source=_TRANSFORMERS),
    Engine.HF_PEFT: EngineProfile(Engine.HF_PEFT, kbit_upcast=True, elementwise_traffic=3.0, source=_PEFT),
    Engine.UNSLOTH: EngineProfile(Engine.UNSLOTH, fused_ce=True, offload_checkpoints=True, train_speed=1.36,
                                  source=_UNSLOTH),
    Engine.LLAMA_FACTORY: EngineProfile(Engine.LLAMA_FACTORY, kbit_upcast=True, elementwise_traffic=3.0,
                                        source=_LLAMA_FACTORY),
    Engine.AXOLOTL: EngineProfile(Engine.AXOLOTL, kbit_upcast=True, elementwise_traffic=3.0, source=_AXOLOTL),
    Engine.TORCHTUNE: EngineProfile(Engine.TORCHTUNE, fused_ce=True, source=_TORCHTUNE),
    Engine.DEEPSPEED: EngineProfile(Engine.DEEPSPEED, kbit_upcast=True, elementwise_traffic=3.0, source=_DEEPSPEED),
    # Liger: the HF Trainer stack with its elementwise ops fused (traffic 1, not HF's 3) and the fused linear
    # cross-entropy; its speed is the published ~1.2x HF Trainer (the fusion alone gives the model only ~6 %).
    Engine.LIGER: EngineProfile(Engine.LIGER, kbit_upcast=True, fused_ce=True, train_speed=1.2, source=_LIGER),
}

# The engine-neutral profile (`Workload.engine is None`): the estimator's behaviour before engines were described.
NEUTRAL = EngineProfile(Engine.TRANSFORMERS, prefill_chunk=-1, source="engine-neutral")


def profile(engine: Engine | None) -> EngineProfile:
    return NEUTRAL if engine is None else PROFILES[engine]


def strategy_said(strategy: Strategy, engine: Engine | None) -> Msg:
    """How the GPUs share the work, as the user reads it: an engine that splits the layers (llama.cpp, Ollama,
    transformers) serves on several GPUs by layers, not by tensor parallelism, though the memory per GPU is sized
    the same way (weights and cache divided by the count)."""
    if strategy is Strategy.TP and profile(engine).layer_split:
        return msg("val_strategy_layers")
    return msg(f"val_strategy_{strategy.value}")


# Unsloth's QLoRA speed-up is larger than its LoRA one (the same LLaMA-Factory table: 3,726 vs 2,415 tokens/s).
UNSLOTH_QLORA_SPEED = 1.54


# --- quantised decode kernels ---------------------------------------------------------------------------------------
# A batch-1 decode step of weight-only quantised weights (W4A16 / W8A16) is a GEMV per linear layer: it streams the
# packed weights plus one scale (and zero point) per group of `group` weights, dequantises them in registers and
# multiplies in 16 bits. How close it comes to streaming at the bandwidth a 16-bit GEMV reaches depends on the kernel
# (its packing, how it hides the dequantisation): `share` is that fraction, applied to the speed model's
# `BANDWIDTH_EFFICIENCY` for the weight bytes (the KV cache is read by the attention kernel as before). Only decode's
# weight streaming: prefill (compute-bound) and large batches are not changed.


@dataclass(frozen=True, slots=True)
class KernelProfile:
    kernel: QuantKernel
    share: float  # achieved weight bandwidth / the 16-bit GEMV's, batch 1
    group_bits: float  # bits of scale + zero point stored per group (0: per-channel scales, no groups)
    group: int  # the format's default group size (weights per scale)
    head_quantised: bool  # the lm_head is quantised too (16-bit otherwise, as GPTQ / AWQ checkpoints keep it)
    source: str


KERNELS: dict[QuantKernel, KernelProfile] = {
    QuantKernel.MARLIN: KernelProfile(
        QuantKernel.MARLIN, 1.0, 20.0, 128, False,
        "IST-DASLab/marlin README and Frantar et al., 'MARLIN: Mixed-Precision Auto-Regressive Parallel Inference on "
        "Large Language Models', arXiv:2408.11743: FP16xINT4 (group 128) 'close to ideal (4x) speedups up to "
        "batchsizes of 16-32 tokens' over FP16 on an A10: its 4-bit weights stream at the 16-bit GEMM's bandwidth"),
    QuantKernel.EXLLAMA_V2: KernelProfile(
        QuantKernel.EXLLAMA_V2, 1.0, 20.0, 128, False,
        "turboderp/exllamav2 README 'Performance': Llama 7B GPTQ group 128 at 195-198 tokens/s on an RTX 4090; the "
        "speed model's 16-bit fraction gives 176 there (1.11x under, as llama.cpp's F16 decode on the same card is "
        "1.12x under, lcpp-l7b-f16-tg-4090): the 16-bit GEMV's fraction"),
    QuantKernel.EXLLAMA: KernelProfile(
        QuantKernel.EXLLAMA, 0.87, 20.0, 128, False,
        "turboderp/exllamav2 README 'Performance': ExLlama V1 173 tokens/s against V2's 195 (Llama 7B GPTQ group "
        "128, RTX 4090): with the speed model's 0.8 ms step floor, 0.87 of V2's weight bandwidth (the model then "
        "gives V1 / V2 = 0.89, as published)"),
    QuantKernel.AWQ_GEMV: KernelProfile(
        QuantKernel.AWQ_GEMV, 1.0, 20.0, 128, False,
        "casper-hansen/AutoAWQ docs/index.md: Vicuna 7B (GEMV kernel) 198.8 tokens/s on an RTX 4090, as ExLlamaV2's "
        "198 for a 7B GPTQ model on the same card: the 16-bit GEMV's fraction"),
    QuantKernel.AWQ_GEMM: KernelProfile(
        QuantKernel.AWQ_GEMM, 0.81, 20.0, 128, False,
        "casper-hansen/AutoAWQ docs/index.md: Mistral 7B at 156.3 tokens/s with the GEMM kernel against 188.9 with "
        "the ExLlamaV2 kernel (RTX 4090, 64 tokens): with the speed model's 0.8 ms step floor, 0.81 of its weight "
        "bandwidth (the model then gives GEMM / ExLlamaV2 = 0.83, as published)"),
    QuantKernel.TINYGEMM: KernelProfile(
        QuantKernel.TINYGEMM, 0.62, 32.0, 128, False,
        "pytorch/ao README 'Benchmarks' (A100, batch 1, Llama-2-7B, the gpt-fast-derived `_models/llama` script): "
        "int4wo-64 (torch `_weight_int4pack_mm`, bf16 scale and zero per group) at 199.86 tokens/s against bf16's "
        "105.14 (746.66 against 1389.35 GB/s); with the speed model's 0.8 ms step floor and group-64 bytes that "
        "1.90x is 0.62 of the 16-bit weight bandwidth"),
    QuantKernel.INT8_WEIGHT_ONLY: KernelProfile(
        QuantKernel.INT8_WEIGHT_ONLY, 0.76, 0.0, 0, False,
        "pytorch/ao README 'Benchmarks' (A100, batch 1, Llama-2-7B): int8wo (per-channel scales, dequantise + mm "
        "under torch.compile, as gpt-fast's WeightOnlyInt8Linear) at 150.18 tokens/s against bf16's 105.14 (994.40 "
        "against 1389.35 GB/s); with the speed model's step floor that 1.43x is 0.76 of the 16-bit weight bandwidth"),
    QuantKernel.GGML: KernelProfile(
        QuantKernel.GGML, 1.0, 0.0, 0, False,
        "llama.cpp's mat-vec kernels (mmvq / dmmv) read GGUF blocks whose scales are in the format's whole-file bits "
        "per weight (`core.estimator.QUANT_BYTES`, the output tensor averaged in; the lm_head is counted at 16 bits "
        "as before); no separate published fraction: the 16-bit GEMV's"),
    QuantKernel.MLC: KernelProfile(
        QuantKernel.MLC, 1.0, 16.0, 32, True,
        "mlc-ai/mlc-llm q4f16_1: 4-bit weights, one fp16 scale per 32, no zero point, the lm_head quantised too "
        "(`GroupQuantize`); no separate published fraction: the 16-bit GEMV's"),
}
# The 4- and 8-bit grouped formats whose bytes follow from the group size; the others keep their catalog width.
_GROUP_BITS: dict[Quant, float] = {Quant.GPTQ_INT4: 4.0, Quant.AWQ: 4.0, Quant.GPTQ_INT8: 8.0}
GGUF_QUANTS = frozenset({Quant.Q2_K, Quant.Q3_K_M, Quant.Q4_0, Quant.Q4_K_S, Quant.Q4_K_M, Quant.Q5_K_S,
                         Quant.Q5_K_M, Quant.Q6_K, Quant.Q8_0})
_MARLIN_FORMATS = frozenset({Quant.GPTQ_INT4, Quant.GPTQ_INT8, Quant.AWQ, Quant.FP8})
# The engines' defaults: vLLM picks gptq_marlin / awq_marlin for GPTQ and AWQ checkpoints on compute capability
# 8.0+ (`GPTQMarlinConfig.override_quantization_method`, `AWQMarlinConfig`), its ExLlamaV2-derived `gptq` and its
# `awq` GEMM kernels below; SGLang runs vLLM's Marlin kernels the same way; transformers runs GPTQ through ExLlama v1
# (GPTQConfig's default `exllama_config` {"version": 1}; transformers docs, "GPTQ": ExLlamaV2 on request) and AWQ
# through AutoAWQ's GEMM kernel (AwqConfig's default version "gemm"); llama.cpp and Ollama their own GGUF kernels.


def quant_kernel(w: Workload, ampere: bool = True) -> QuantKernel | None:
    """The kernel that decodes `w`'s quantised weights: the one the workload states, else its engine's default for
    the format on a card of compute capability 8.0+ (`ampere`) or below; None: the 16-bit GEMV's fraction (no
    quantisation, bitsandbytes, native FP8, TensorRT-LLM, or the engine-neutral model)."""
    if w.quant_kernel is not None:
        return w.quant_kernel
    q, e = w.quant, w.engine
    if q is Quant.NONE or e is None:
        return None
    if q in GGUF_QUANTS:
        return QuantKernel.GGML if e in (Engine.LLAMA_CPP, Engine.OLLAMA) else None
    if e in (Engine.VLLM, Engine.SGLANG) and q in _MARLIN_FORMATS:
        if ampere:
            return QuantKernel.MARLIN if q is not Quant.FP8 else None
        return QuantKernel.AWQ_GEMM if q is Quant.AWQ else QuantKernel.EXLLAMA_V2 if q is not Quant.FP8 else None
    if e is Engine.TRANSFORMERS:
        if q is Quant.AWQ:
            return QuantKernel.AWQ_GEMM
        if q is Quant.GPTQ_INT4:  # ExLlama is 4-bit only: 8-bit GPTQ takes AutoGPTQ's CUDA kernel (no figure)
            return QuantKernel.EXLLAMA
    return None


def kernel_decode(w: Workload, ampere: bool = True) -> tuple[float, float, bool]:
    """(bytes per weight as the decode kernel reads them, its bandwidth share, whether the lm_head is quantised)
    for `w`'s quantised weights; (0, 1, False) when the catalog's width and the 16-bit fraction apply."""
    k = quant_kernel(w, ampere)
    if k is None:
        return 0.0, 1.0, False
    p = KERNELS[k]
    bits = _GROUP_BITS.get(w.quant)
    group = w.quant_group or p.group
    per = (bits + p.group_bits / group) / 8.0 if bits is not None and p.group_bits and group else 0.0
    return per, p.share, p.head_quantised


# --- what a card can run ------------------------------------------------------------------------------------------
# FP8 weights need FP8 tensor cores (compute capability 8.9, Ada / Hopper, or newer) for W8A8. Below that:
# - vLLM falls back to weight-only FP8 through the Marlin kernel on Ampere (capability 8.0+): "Your GPU does not
#   have native support for FP8 computation but FP8 quantization is being used. Weight-only FP8 compression will be
#   used leveraging the Marlin kernel" (`vllm/model_executor/layers/quantization/fp8.py`, v0.5+; Marlin needs sm_80);
# - SGLang does the same (`sglang/srt/layers/quantization/fp8.py`, `use_marlin` when capability < 89);
# - TensorRT-LLM (FP8 GEMMs / QServe) and transformers' FP8 (`FineGrainedFP8` / fbgemm: "requires compute
#   capability >= 8.9") refuse; llama.cpp and Ollama read GGUF, not FP8 checkpoints.
# Volta and Turing (V100, T4, RTX 20: capability 7.x) run no FP8 checkpoint in any of them (Marlin needs sm_80).
_IDS = frozenset(g.id for g in GPUS)
FP8_MARLIN_FALLBACK = frozenset({None, Engine.VLLM, Engine.SGLANG})
_FP8_Q = Quant.FP8


def runs_on(w: Workload, gpu: GPU) -> bool:
    """Whether `w`'s engine can run its precision on `gpu` at all (memory aside)."""
    if w.quant is not _FP8_Q or gpu.runs_fp8:
        return True
    return w.engine in FP8_MARLIN_FALLBACK and gpu.compute_capability >= 8.0


def fp8_fallback(w: Workload, gpu: GPU) -> bool:
    """FP8 weights on a card without FP8 tensor cores that the engine still runs: weight-only (W8A16, Marlin),
    computing in 16 bits (the speed model takes the card's BF16/FP16 rate)."""
    return w.quant is _FP8_Q and not gpu.runs_fp8 and runs_on(w, gpu)


def capability_notes(w: Workload, gpus: tuple[GPU, ...] = ()) -> list[Msg]:
    """What the cards change about how the workload runs: FP8 weights on a card without FP8 tensor cores (the
    engine's fallback, or that it cannot run them), BF16 training on a card without BF16 (FP16 with loss scaling).
    `gpus`: the cards the answer is about (the named ones, or every fitting one)."""
    out: list[Msg] = []
    if w.quant is _FP8_Q:
        if w.engine in FP8_MARLIN_FALLBACK:
            out.append(msg("capability_fp8_marlin", engine=(w.engine or Engine.VLLM).value))
        else:
            out.append(msg("capability_fp8_native_only", engine=w.engine.value if w.engine else ""))
    if w.is_training and w.precision in (Precision.BF16, Precision.BF16_TRUE) and any(not g.runs_bf16 for g in gpus):
        # PyTorch AMP on Volta/Turing: torch.cuda.is_bf16_supported() is False; HF Trainer's bf16=True fails there,
        # recipes switch to fp16=True with a dynamic loss scaler (torch.cuda.amp.GradScaler): the same memory.
        out.append(msg("capability_bf16_to_fp16"))
    return out


def engine_notes(w: Workload) -> list[Msg]:
    """What the workload's engine changes about this answer, in the user's words (empty for the neutral model)."""
    if w.engine is None:
        return []
    p = PROFILES[w.engine]
    a = w.arch
    named = tuple(get_gpu(g) for g in w.gpu_ids if g in _IDS)
    out: list[Msg] = capability_notes(w, named)
    if w.is_training:
        quant = w.quant if w.method is not Method.QLORA or w.quant is not Quant.NONE else Quant.NF4
        if p.kbit_upcast and quant in (Quant.NF4, Quant.NF4_DQ, Quant.INT8):
            upcast = (a.embedding_params_b * 1e9 + (2 * a.layers + 1) * a.hidden) * 2.0 / 2**30
            out.append(msg("engine_note_upcast", gib=round(upcast, 1)))
        if p.fused_ce and w.fused_ce:
            out.append(msg("engine_note_fused_ce"))
        if p.offload_checkpoints and w.grad_ckpt:
            out.append(msg("engine_note_offload_ckpt"))
        if p.train_speed != 1.0:
            out.append(msg("engine_note_speed", x=train_speed(w)))
        return out
    if p.preallocate:
        out.append(msg("engine_note_claim", share=round(p.preallocate * 100)))
    if p.prefill_chunk > 0:
        out.append(msg("engine_note_chunk", tokens=p.prefill_chunk))
    elif w.concurrency > 1:
        out.append(msg("engine_note_batched", n=w.concurrency))
    if p.cuda_graphs_gib:
        out.append(msg("engine_note_graphs", gib=p.cuda_graphs_gib))
    if p.layer_split and w.gpus > 1:
        out.append(msg("engine_note_layer_split"))
    if a.kv_lora_rank and not p.mla_latent:
        out.append(msg("engine_note_mla_full"))
    if a.window and a.local_layers and not p.window_only:
        out.append(msg("engine_note_window_full"))
    if p.fp16_accumulate and w.quant is Quant.NONE:
        out.append(msg("engine_note_fp16_acc"))
    # the kernel on the named card (its own fallback below compute capability 8.0), else on Ampere or newer
    kernel = quant_kernel(w, ampere=not named or named[0].compute_capability >= 8.0)
    if kernel is not None and kernel is not QuantKernel.GGML:
        out.append(msg("engine_note_quant_kernel", kernel=kernel.value, share=round(KERNELS[kernel].share * 100)))
    return out


def train_speed(w: Workload) -> float:
    """Training tokens/s of `w`'s framework relative to HF Trainer + PEFT (1 for the neutral model)."""
    if w.engine is None:
        return 1.0
    p = PROFILES[w.engine]
    if w.engine is Engine.UNSLOTH and w.method is Method.QLORA:
        return UNSLOTH_QLORA_SPEED
    return p.train_speed
