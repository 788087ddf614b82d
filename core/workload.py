"""What the user wants to run, in two stages.

`WorkloadSpec` is what was said (text or command-line options): every field optional. `Workload` is the complete,
typed description the estimator takes, with the defaults a phrase left open filled in (`core.defaults.complete`),
each of them reported back as an assumption.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from core.models import Arch


class Method(StrEnum):
    INFERENCE = "inference"
    FULL = "full"
    FREEZE = "freeze"
    LORA = "lora"
    QLORA = "qlora"


class Objective(StrEnum):
    """What a training run optimises (`core.objectives` holds what each one costs, with sources): next-token
    prediction, or a preference objective over pairs or labelled answers."""

    SFT = "sft"
    DPO = "dpo"
    IPO = "ipo"  # DPOTrainer with `loss_type="ipo"`
    ORPO = "orpo"
    SIMPO = "simpo"
    CPO = "cpo"
    KTO = "kto"


class Quant(StrEnum):
    NONE = "none"  # 16-bit weights (or the precision's width)
    NF4 = "nf4"  # bitsandbytes 4-bit (QLoRA)
    NF4_DQ = "nf4-dq"  # NF4 with double quantisation
    INT8 = "int8"  # bitsandbytes LLM.int8 / 8-bit base
    FP8 = "fp8"
    GPTQ_INT4 = "gptq-int4"
    GPTQ_INT8 = "gptq-int8"
    AWQ = "awq"
    MXFP4 = "mxfp4"  # OCP microscaling FP4: gpt-oss ships its routed experts so
    Q2_K = "q2_k"
    Q3_K_M = "q3_k_m"
    Q4_0 = "q4_0"
    Q4_K_S = "q4_k_s"
    Q4_K_M = "q4_k_m"
    Q5_K_S = "q5_k_s"
    Q5_K_M = "q5_k_m"
    Q6_K = "q6_k"
    Q8_0 = "q8_0"


class QuantKernel(StrEnum):
    """The kernel that multiplies weight-only quantised weights in a decode step (`core.engines.KERNELS` holds each
    one's packing and achieved bandwidth, with sources). None on a workload: the engine's default for its format."""

    MARLIN = "marlin"  # IST-DASLab Marlin (vLLM / SGLang gptq_marlin, awq_marlin, fp8 W8A16)
    EXLLAMA = "exllama"  # ExLlama (v1) GPTQ kernel: transformers' GPTQConfig default (`exllama_config` version 1)
    EXLLAMA_V2 = "exllamav2"  # ExLlamaV2's GPTQ kernel (AutoGPTQ / GPTQModel, vLLM's `gptq` below Ampere)
    AWQ_GEMV = "awq-gemv"  # AutoAWQ / llm-awq TinyChat GEMV
    AWQ_GEMM = "awq-gemm"  # AutoAWQ GEMM (transformers' `AwqConfig(version="gemm")` default)
    TINYGEMM = "tinygemm"  # torch `_weight_int4pack_mm`: gpt-fast int4, torchao int4_weight_only
    INT8_WEIGHT_ONLY = "int8-weight-only"  # gpt-fast / torchao int8 weight-only: dequantise + mm under torch.compile
    GGML = "ggml"  # llama.cpp's dequantising mat-vec kernels (GGUF)
    MLC = "mlc"  # MLC LLM's TVM-generated kernels (q4f16_1)


class Precision(StrEnum):
    BF16 = "bf16"  # mixed precision: bf16 compute, fp32 master weights for trained params
    FP16 = "fp16"
    FP32 = "fp32"
    BF16_TRUE = "bf16-true"  # pure bf16: no fp32 master copy, bf16 optimizer states


class Optimizer(StrEnum):
    ADAMW = "adamw"
    ADAMW_8BIT = "adamw8bit"
    PAGED_ADAMW_8BIT = "paged_adamw8bit"
    SGD = "sgd"


class Strategy(StrEnum):
    SINGLE = "single"
    DDP = "ddp"
    ZERO2 = "zero2"
    ZERO3 = "zero3"
    FSDP = "fsdp"  # full shard: same memory model as ZeRO-3
    TP = "tp"  # tensor parallel (inference)


class Offload(StrEnum):
    NONE = "none"
    OPTIMIZER = "optimizer"
    ALL = "all"


class Attention(StrEnum):
    FLASH = "flash"  # FlashAttention / SDPA: no s^2 score matrix kept
    EAGER = "eager"


class Engine(StrEnum):
    """The software that runs the workload (`core.engines` holds what each one changes, with sources)."""

    # inference
    VLLM = "vllm"
    SGLANG = "sglang"
    LLAMA_CPP = "llama.cpp"
    TRANSFORMERS = "transformers"
    TENSORRT_LLM = "tensorrt-llm"
    OLLAMA = "ollama"
    # training
    HF_PEFT = "hf-trainer/peft"
    UNSLOTH = "unsloth"
    LLAMA_FACTORY = "llama-factory"
    AXOLOTL = "axolotl"
    TORCHTUNE = "torchtune"
    DEEPSPEED = "deepspeed"
    LIGER = "liger"  # HF Trainer with Liger-Kernel's fused Triton kernels (`use_liger_kernel=True`)


INFERENCE_ENGINES = frozenset({Engine.VLLM, Engine.SGLANG, Engine.LLAMA_CPP, Engine.TRANSFORMERS,
                               Engine.TENSORRT_LLM, Engine.OLLAMA})
TRAINING_ENGINES = frozenset({Engine.HF_PEFT, Engine.UNSLOTH, Engine.LLAMA_FACTORY, Engine.AXOLOTL, Engine.TORCHTUNE,
                              Engine.DEEPSPEED, Engine.LIGER})

TRAINING_METHODS = frozenset({Method.FULL, Method.FREEZE, Method.LORA, Method.QLORA})
ADAPTER_METHODS = frozenset({Method.LORA, Method.QLORA})


class WorkloadSpec(BaseModel):
    """What a phrase or the options said. None = not said."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    model: str | None = None  # catalog id or free name
    arch: Arch | None = None  # resolved architecture (catalog, size or config.json)
    model_source: str | None = None  # "hub" | "config" when `arch` was read from a config.json
    images: int | None = Field(default=None, ge=1)  # images per sequence (a vision model)
    params_b: float | None = None
    # a range of sizes ("30-70B", "от 7 до 13B"): its smallest; `params_b` holds the largest, the one sized for
    params_min_b: float | None = None
    experts: int | None = None  # "8x7B" -> 8
    method: Method | None = None
    # a training word without a method ("fine-tune 7B", "дообучить на 10k примерах"): the question that follows
    # offers the ways to train, not inference
    training: bool | None = None
    objective: Objective | None = None  # a preference objective said ("DPO", "ORPO"); None: supervised (SFT)
    ref_precomputed: bool | None = None  # the reference's log-probs computed before training (TRL's option)
    quant: Quant | None = None
    precision: Precision | None = None
    seq_len: int | None = Field(default=None, ge=1)
    # inference: tokens of the prompt (prefilled at once) and tokens generated after it ("input 1k output 2k")
    prompt_len: int | None = Field(default=None, ge=1)
    output_len: int | None = Field(default=None, ge=1)
    batch: int | None = Field(default=None, ge=1)
    grad_ckpt: bool | None = None
    attention: Attention | None = None
    lora_rank: int | None = Field(default=None, ge=1)
    lora_targets: str | None = None  # "q,v" | "all-linear" | "q,k,v,o" ...
    optimizer: Optimizer | None = None
    fused_ce: bool | None = None
    packing: bool | None = None  # training: examples packed into full sequences (True) or padded (False)
    gpus: int | None = Field(default=None, ge=1)
    strategy: Strategy | None = None
    offload: Offload | None = None
    gpu: str | None = None  # catalog GPU id when the user named one
    # every variant a family name covers ("H100" = SXM, PCIe, NVL), and every card said as an alternative ("5090 or
    # 4090": core.parser); None for one named card (issue 10)
    gpu_family: tuple[str, ...] | None = None
    # a card named by its memory ("on a 24GB GPU", "2 × 80 ГБ"): every catalog card of that size (core.defaults)
    gpu_memory_gb: float | None = Field(default=None, gt=0)
    kv_dtype: str | None = None  # "bf16" | "fp16" | "fp8" | "int8" | "int4"
    concurrency: int | None = Field(default=None, ge=1)
    # serving targets ("1000 requests per minute", "30 tok/s per user", "2000 tok/s in total"): requests a second,
    # answer tokens a second each user sees, answer tokens a second in all (`core.defaults` turns a rate or a total
    # into the concurrent sequences it takes; `core.answer` says which configurations keep up)
    request_rate: float | None = Field(default=None, gt=0)
    request_rate_unit: float | None = Field(default=None, gt=0)  # the seconds of the unit it was said in (60: a minute)
    answer_tps: float | None = Field(default=None, gt=0)
    total_tps: float | None = Field(default=None, gt=0)
    ttft_s: float | None = Field(default=None, gt=0)  # "TTFT < 1 s": the prompt's prefill within that time
    examples: int | None = Field(default=None, ge=1)
    tokens_per_example: int | None = Field(default=None, ge=1)
    # the training data's size in tokens ("dataset 20M tokens"): completed into examples x tokens per example
    dataset_tokens: int | None = Field(default=None, ge=1)
    epochs: float | None = Field(default=None, gt=0)
    engine: Engine | None = None  # vllm | llama.cpp | unsloth ... (`core.engines`)

    def merged(self, override: WorkloadSpec) -> WorkloadSpec:
        """This spec with every field the override states replacing ours (command-line options beat text)."""
        data = self.model_dump(exclude_none=True)
        data.update(override.model_dump(exclude_none=True))
        if override.gpu is not None:  # a card named in the options replaces the text's card and its family
            data.pop("gpu_family", None)
            if override.gpu_family is not None:
                data["gpu_family"] = override.gpu_family
        if override.arch is not None or self.arch is not None:
            data["arch"] = override.arch or self.arch
        return WorkloadSpec(**data)


class Workload(BaseModel):
    """A complete workload: every field set. Build it with `core.defaults.complete`."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    model: str
    arch: Arch = Field(exclude=True)
    params_b: float
    model_source: str = "catalog"  # catalog | hub | config | size: where the architecture came from
    method: Method
    quant: Quant
    precision: Precision
    # training: what it optimises; a preference objective runs more sequences per example and may hold a reference
    objective: Objective = Objective.SFT
    # the reference's log-probs computed before training (TRL `precompute_ref_log_probs=True`): no reference model in
    # memory and no reference forward while training; the same compute in all
    ref_precomputed: bool = False
    seq_len: int
    batch: int
    grad_ckpt: bool
    attention: Attention
    lora_rank: int | None
    lora_targets: str | None
    optimizer: Optimizer | None
    fused_ce: bool
    gpus: int
    strategy: Strategy
    offload: Offload
    gpu: str | None  # the named card (a family's representative variant: JSON readers of one id keep working)
    kv_dtype: str
    concurrency: int
    # inference targets (`WorkloadSpec`): the answer speed each user must see (said, or assumed for a rate), and the
    # answer tokens a second the server must produce in all (a total said, or requests a second x output tokens)
    answer_tps: float | None = None
    demand_tps: float | None = None
    request_rate: float | None = None  # requests a second, as said (the demand's source, said back)
    request_rate_unit: float | None = None  # the unit it was said in, in seconds: said back in it
    ttft_s: float | None = None  # the first token within this many seconds: the prompt's prefill at most that
    examples: int | None
    tokens_per_example: int | None
    epochs: float | None
    images: int = 0  # images per sequence; their tokens are in seq_len
    # inference: the prompt's tokens within seq_len (prefilled at once; the rest is generated). None: the whole
    # context is counted as prompt, the worst case for the prefill working set.
    prompt_len: int | None = None
    # every variant a family name covers ("H100") and every card said as an alternative ("5090 or 4090"); empty for
    # one named card
    gpu_family: tuple[str, ...] = ()
    gpu_memory_gb: float | None = None  # the cards were named by their memory ("24 GB"): the family is that class
    # the user said how many GPUs ("--gpus 1", "on one A100"): the answer is about that count only, not 1/2/4/8
    gpus_stated: bool = False
    # the software that runs it (`core.engines`); None: the estimator's engine-neutral model (tests, old callers)
    engine: Engine | None = None
    # training: examples packed into full sequences (True: every computed token is a real one) or padded to the
    # longest of each batch (False: `core.speed.PADDING_WASTE` of the computed tokens are pads when batch > 1)
    packing: bool = True
    # inference: the kernel that decodes quantised weights and their group size (weights per scale); None: the
    # engine's default kernel and the format's default group (`core.engines.quant_kernel`)
    quant_kernel: QuantKernel | None = None
    quant_group: int | None = None

    @property
    def memory_class_gb(self) -> float | None:
        """The memory the cards were named by, when that named a class of several models ("24 GB"); else None."""
        return self.gpu_memory_gb if self.gpu_memory_gb is not None and len(self.gpu_ids) > 1 else None

    @property
    def gpu_ids(self) -> tuple[str, ...]:
        """The cards the workload was named on: a family's variants, the alternatives said, the one card, or none
        (any card)."""
        if not self.gpu:
            return ()
        return (self.gpu, *(g for g in self.gpu_family if g != self.gpu))  # the representative first

    @property
    def count_asked(self) -> int | None:
        """The GPU count the answer is about: the one said ("on one A100", "2x 4090") or estimated at (> 1), or None
        when none was, and every count that holds the workload is one for it."""
        return self.gpus if self.gpus > 1 or self.gpus_stated else None

    @property
    def active_params_b(self) -> float:
        """Parameters touched per token (the active experts of a MoE model; `params_b` for a dense one)."""
        if self.arch.experts <= 1:
            return self.params_b
        return self.arch.active_params_b * self.params_b / self.arch.params_b if self.arch.params_b else 0.0

    @property
    def has_target(self) -> bool:
        """Whether a serving target was said (a rate, an answer speed, a total speed, a first-token deadline)."""
        return self.answer_tps is not None or self.demand_tps is not None or self.ttft_s is not None

    @property
    def is_training(self) -> bool:
        return self.method in TRAINING_METHODS

    def with_(self, **changes: Any) -> Workload:
        """A copy with some fields changed (e.g. the same workload on another GPU count)."""
        return self.model_copy(update=changes)
