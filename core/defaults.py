"""`WorkloadSpec` (what was said) -> `Workload` (everything the estimator needs) + the assumptions made.

Every field a phrase leaves open gets a default that is sensible for the method, and each one is reported back
in both languages, so the user sees exactly what the estimate assumed. Fields that mean nothing for the method
(a LoRA rank for a full fine-tune, an optimizer for inference) are refused when stated and set to a neutral value
silently when not: saying them back would only be noise. For inference the batch *is* the number of concurrent
sequences: `Workload.batch` stays 1 and `concurrency` carries it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from core.engines import profile, strategy_said
from core.gpus import GPU, GPUS, find_gpu, get_gpu
from core.limits import MAX_CONCURRENCY
from core.models import Arch, did_you_mean, family_members, find_model, model_for_size
from core.msg import Joined, Msg, msg
from core.objectives import facts, holds_reference_copy
from core.parser import (
    ParseError,
    check_range,
    describe,
    family_choice,
    field_label,
    normalise_targets,
    rate_said,
    render_value,
)
from core.workload import (
    ADAPTER_METHODS,
    INFERENCE_ENGINES,
    TRAINING_METHODS,
    Attention,
    Engine,
    Method,
    Objective,
    Offload,
    Optimizer,
    Precision,
    Quant,
    Strategy,
    Workload,
    WorkloadSpec,
)


class Assumption(BaseModel):
    """One default the phrase left open. `key` is the Workload field it fills; `msg` says it (the text catalog
    renders it in the user's language)."""

    model_config = ConfigDict(frozen=True)

    key: str
    msg: Msg | Joined


SEQ_TRAINING = 2048
SEQ_INFERENCE = 4096
LORA_RANK = 16
LORA_TARGETS = "all-linear"
TOKENS_PER_EXAMPLE = 512
EPOCHS = 1.0
# A request rate or a total speed without an answer speed: each answer at MLPerf Inference's interactive target,
# 40 ms per output token (mlcommons/inference loadgen mlperf.conf, llama2-70b-interactive.Server.tpot_latency = 40;
# the MLPerf rules anchor it in "20-50 tokens a second" reading fluency) -> 25 tokens a second.
ANSWER_TPS = 25.0
# A request rate without an output length (or a prompt, when no context is said either): the request LLMPerf's
# public leaderboard runs every provider with (ray-project/llmperf-leaderboard: --mean-input-tokens 550
# --mean-output-tokens 150). A rate is about many ordinary requests, so not the whole context as the prompt.
RATE_OUTPUT_TOKENS = 150
RATE_PROMPT_TOKENS = 550

# Bytes per cached value; the estimator's KV-cache term multiplies by these.
KV_BYTES: dict[str, float] = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5,
                              "q8_0": 1.0625, "q4_0": 0.5625}  # llama.cpp cache types carry block scales
# The KV cache of an unquantised model is kept in the compute type.
_KV_FOR_PRECISION = {Precision.BF16: "bf16", Precision.BF16_TRUE: "bf16", Precision.FP16: "fp16",
                     Precision.FP32: "fp32"}

# Which base weights each method can train on (docs/reference/estimator.md §2): a full or freeze run updates the weights
# themselves, so they must be unquantised; adapters train on top of bitsandbytes, GPTQ or AWQ bases; QLoRA is
# by definition a bitsandbytes (4-bit, or the 8-bit variant) base; a GGUF file is for llama.cpp inference only.
_QUANTS_FOR: dict[Method, frozenset[Quant]] = {
    Method.INFERENCE: frozenset(Quant),
    Method.FULL: frozenset({Quant.NONE}),
    Method.FREEZE: frozenset({Quant.NONE}),
    Method.LORA: frozenset({Quant.NONE, Quant.NF4, Quant.NF4_DQ, Quant.INT8, Quant.FP8, Quant.GPTQ_INT4,
                            Quant.GPTQ_INT8, Quant.AWQ}),
    # QLoRA on a GPTQ/AWQ base: Qwen's documented Q-LoRA recipe, PEFT's adapters on auto-gptq / autoawq layers.
    Method.QLORA: frozenset({Quant.NF4, Quant.NF4_DQ, Quant.INT8, Quant.GPTQ_INT4, Quant.GPTQ_INT8, Quant.AWQ}),
}
# A model's own published precision (`Arch.native_quant`) is the default base of these methods.
_NATIVE_DEFAULT_FOR: dict[Method, frozenset[Quant]] = {
    Method.INFERENCE: frozenset(Quant),
    Method.LORA: frozenset({Quant.GPTQ_INT4, Quant.GPTQ_INT8, Quant.AWQ, Quant.NF4, Quant.INT8}),
    Method.QLORA: frozenset({Quant.GPTQ_INT4, Quant.GPTQ_INT8, Quant.AWQ, Quant.NF4, Quant.INT8}),
}
_QUANT_VALUES = frozenset(q.value for q in Quant)
# Quantisations only an inference checkpoint comes in: naming one with no method means inference.
_INFERENCE_QUANTS = frozenset({Quant.GPTQ_INT4, Quant.GPTQ_INT8, Quant.AWQ, Quant.MXFP4, Quant.Q2_K, Quant.Q3_K_M,
                               Quant.Q4_0, Quant.Q4_K_S, Quant.Q4_K_M, Quant.Q5_K_S, Quant.Q5_K_M, Quant.Q6_K,
                               Quant.Q8_0})

def _error(spec: WorkloadSpec, problem: Msg) -> ParseError:
    """A ParseError about the combination: what was said is listed as understood."""
    said = {k: v for k, v in spec.model_dump(exclude_none=True).items()
            if k not in ("arch", "model_source", "gpu_family", "request_rate_unit")}
    items = [f"{k}={getattr(v, 'value', v)}" for k, v in said.items()]
    meanings = [describe(k, v, spec.request_rate_unit) for k, v in said.items()]
    return ParseError(items, problem=problem, meanings=meanings, from_fields=True)


@lru_cache(maxsize=1024, typed=True)
def _assumption(key: str, value: Any, why: Msg | None) -> Assumption:
    """Assumptions are frozen and few: build each once (the bot completes a workload per keystroke)."""
    said = describe(key, value)
    return Assumption(key=key, msg=msg("assume_why", what=said, why=why) if why else said)


class _Filler:
    """Collects the workload's fields and the assumptions behind the ones that were not said."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.notes: list[Assumption] = []

    def assume(self, key: str, value: Any, why: Msg | None = None) -> Any:
        self.notes.append(_assumption(key, value, why))
        self.values[key] = value
        return value

    def take(self, key: str, said: Any, default: Any, why: Msg | None = None) -> Any:
        """The value said, else the default reported as an assumption."""
        if said is not None:
            self.values[key] = said
            return said
        return self.assume(key, default, why)


def complete(spec: WorkloadSpec) -> tuple[Workload, list[Assumption]]:
    """Fill every open field with a default sensible for the method. Raises ParseError (only) when incoherent."""
    try:
        return _complete(spec)
    except ParseError:
        raise
    except ValidationError as exc:  # a combination our checks missed: still a polite error, never a traceback
        raise _error(spec, msg("wl_invalid")) from exc


@lru_cache(maxsize=256)
def _size_said(params_b: float, experts: int | None = None) -> str:
    """A bare size as it is said back ("13B", "8x7B"), the way the parser reads sizes back."""
    size = str(render_value("params_b", params_b))
    return f"{experts}x{size}" if experts else size


def _typical(params_b: float, experts: int | None) -> tuple[Arch, Assumption]:
    """The typical architecture for a bare size, and the assumption that says so (cached: sizes repeat)."""
    arch = model_for_size(params_b, experts)
    size = _size_said(params_b, experts)
    return arch, Assumption(key="arch", msg=msg("assume_typical_arch", size=size, name=arch.name, layers=arch.layers,
                                                hidden=str(arch.hidden), heads=arch.heads, kv_heads=arch.kv_heads,
                                                vocab=str(arch.vocab)))


def _resolve_arch(spec: WorkloadSpec, f: _Filler) -> tuple[Arch, str]:
    """The architecture and where it came from: catalog | hub | config | size (`Workload.model_source`)."""
    if spec.arch is not None:
        return spec.arch, spec.model_source or "config"
    if spec.model:
        arch = find_model(spec.model)
        if arch is None:
            members = family_members(spec.model)
            if len(members) > 1:
                raise _error(spec, msg("wl_model_family", model=spec.model, **family_choice(members)))
            close = [members[0].name] if members else did_you_mean(spec.model)
            raise _error(spec, msg("wl_model_unknown_close", model=spec.model, close=", ".join(close)) if close
                         else msg("wl_model_unknown", model=spec.model))
        if spec.experts and spec.experts != arch.experts:
            raise _error(spec, msg("wl_experts_mismatch", name=arch.name, has=str(arch.experts),
                                   said=str(spec.experts)))
        if spec.params_b and not spec.experts and abs(spec.params_b - arch.params_b) > 0.25 * arch.params_b:
            raise _error(spec, msg("wl_params_mismatch", name=arch.name, has=f"{arch.params_b:g}",
                                   said=f"{spec.params_b:g}"))
        return arch, "catalog"
    if spec.params_b is not None:
        for field, value in (("params_b", spec.params_b), ("experts", spec.experts)):
            reason = check_range(field, value) if value is not None else None
            if reason:
                raise _error(spec, msg("sentence", text=reason))
        arch, note = _typical(spec.params_b, spec.experts)
        if spec.params_min_b is not None:
            f.notes.append(Assumption(key="size_range", msg=msg("assume_size_range", lo=_size_said(spec.params_min_b),
                                                                   hi=_size_said(spec.params_b))))
        f.notes.append(note)
        return arch, "size"
    raise _error(spec, msg("wl_which_model"))



# Enum members and argument-free messages as module constants: an `Enum.MEMBER` lookup costs ~0.1 us and a
# `msg(...)` ~0.35 us, and completing a phrase (once per keystroke) reads dozens of them.
_ATT_FLASH = Attention.FLASH
_MET_INFERENCE = Method.INFERENCE
_OBJ_SFT = Objective.SFT
_MET_QLORA = Method.QLORA
_OFF_ALL = Offload.ALL
_OFF_NONE = Offload.NONE
_OPT_ADAMW = Optimizer.ADAMW
_PRE_BF16 = Precision.BF16
_PRE_BF16_TRUE = Precision.BF16_TRUE
_PRE_FP16 = Precision.FP16
_QUA_NF4 = Quant.NF4
_QUA_NONE = Quant.NONE
# Ollama's library tags without a quantisation ("llama3.1:70b", "qwen2.5:7b") are the Q4_K_M GGUF files
# (ollama.com/library/<model>/tags: "latest" and the bare size tags share the digest of "...-instruct-q4_K_M").
_QUA_Q4_K_M = Quant.Q4_K_M
_STR_DDP = Strategy.DDP
_STR_FSDP = Strategy.FSDP
_STR_SINGLE = Strategy.SINGLE
_STR_TP = Strategy.TP
_STR_ZERO2 = Strategy.ZERO2
_STR_ZERO3 = Strategy.ZERO3
_WHY_CONCURRENCY = msg("why_concurrency")
_WHY_RATE = msg("why_rate")
_WHY_ANSWER_TPS = msg("why_answer_tps")
_WHY_RATE_OUTPUT = msg("why_rate_output")
_WHY_RATE_PROMPT = msg("why_rate_prompt")
_WHY_FSDP_ADAPTERS = msg("why_fsdp_adapters")
_WHY_KV = msg("why_kv")
_WHY_NATIVE_QUANT = msg("why_native_quant")
_WHY_OFFLOAD_ZERO3 = msg("why_offload_zero3")
_WHY_PROMPT_OUTPUT = msg("why_prompt_output")
_WHY_PROMPT_REST = msg("why_prompt_rest")
_WHY_PROMPT_WHOLE = msg("why_prompt_whole")
_WHY_QUANT_INFERENCE = msg("why_quant_inference")
_WHY_SEQ_EXAMPLE = msg("why_seq_example")
_WHY_SEQ_LIMIT = msg("why_seq_limit")
_WHY_TP_INFERENCE = msg("why_tp_inference")
_WHY_TP_SERVE = msg("why_tp_serve")
_WHY_OLLAMA_QUANT = msg("why_ollama_quant")
_WHY_LAYERS_SERVE = msg("why_layers_serve")
_WHY_ZERO3 = msg("why_zero3")
_WHY_ENGINE_SERVE = msg("why_engine_serve")
_WHY_ENGINE_ONE = msg("why_engine_one")
_WHY_ENGINE_TRAIN = msg("why_engine_train")
_WHY_ENGINE_FUSED_CE = msg("why_engine_fused_ce")
_WHY_PACKING = msg("why_packing", waste=50)
_ENG_VLLM, _ENG_TRANSFORMERS, _ENG_HF_PEFT = Engine.VLLM, Engine.TRANSFORMERS, Engine.HF_PEFT
_ENG_OLLAMA = Engine.OLLAMA


def _resolve_engine(spec: WorkloadSpec, training: bool, f: _Filler) -> Engine:
    """The engine said, else the usual one: HF Trainer + PEFT for training, a serving engine (vLLM) for several
    concurrent sequences, Hugging Face transformers for one. An engine of the other kind is refused."""
    engine = spec.engine
    if engine is not None:
        if (engine in INFERENCE_ENGINES) == training:
            raise _error(spec, msg("wl_engine_training" if training else "wl_engine_inference",
                                   engine=engine.value))
        f.values["engine"] = engine
        return engine
    if training:
        return f.assume("engine", _ENG_HF_PEFT, _WHY_ENGINE_TRAIN)
    several = (spec.concurrency or spec.batch or 1) > 1 or _demand_said(spec)
    return f.assume("engine", _ENG_VLLM if several else _ENG_TRANSFORMERS,
                    _WHY_ENGINE_SERVE if several else _WHY_ENGINE_ONE)


def _trains(spec: WorkloadSpec) -> bool:
    """A phrase without a method that is about training: a training word, or what only training has (its data,
    epochs, an adapter's rank, gradient checkpointing, an optimiser, a preference objective)."""
    return bool(spec.training) or any(v is not None for v in (
        spec.objective, spec.examples, spec.dataset_tokens, spec.tokens_per_example, spec.epochs, spec.lora_rank,
        spec.lora_targets, spec.grad_ckpt, spec.optimizer, spec.fused_ce, spec.packing))


def _resolve_method(spec: WorkloadSpec, arch: Arch, source: str, f: _Filler) -> Method:
    if spec.method is not None:
        return spec.method
    if _trains(spec):  # which way to train: LoRA, QLoRA, full or freeze change the memory several times over
        name = _size_said(spec.params_b, spec.experts) if source == "size" and spec.params_b else arch.name
        said: str | Joined = name
        if spec.objective is not None:  # the phrases offered keep it: «7B DPO LoRA»
            said = Joined((name, render_value("objective", spec.objective)), " ")
        raise _error(spec, msg("wl_which_training", name=said))
    hint: Msg | None = None
    if _demand_said(spec) or spec.answer_tps is not None or spec.ttft_s is not None:
        hint = _WHY_RATE
    elif spec.concurrency is not None:
        hint = _WHY_CONCURRENCY
    elif spec.prompt_len is not None or spec.output_len is not None:
        hint = _WHY_PROMPT_OUTPUT
    elif spec.kv_dtype is not None:
        hint = _WHY_KV
    elif spec.quant in _INFERENCE_QUANTS:
        hint = _WHY_QUANT_INFERENCE
    elif spec.strategy == _STR_TP:
        hint = _WHY_TP_INFERENCE
    if hint is None:
        raise _error(spec, msg("wl_which_method"))
    return f.assume("method", _MET_INFERENCE, hint)


def _check_method_fields(spec: WorkloadSpec, method: Method) -> None:
    """Refuse fields that mean nothing for the method instead of silently ignoring them."""
    if method == _MET_INFERENCE:
        stray = {"grad_ckpt": spec.grad_ckpt, "optimizer": spec.optimizer, "fused_ce": spec.fused_ce,
                 "offload": spec.offload if spec.offload != _OFF_NONE else None, "lora_rank": spec.lora_rank,
                 "lora_targets": spec.lora_targets, "examples": spec.examples,
                 "tokens_per_example": spec.tokens_per_example, "dataset_tokens": spec.dataset_tokens,
                 "epochs": spec.epochs, "objective": spec.objective, "ref_precomputed": spec.ref_precomputed}
    else:
        stray = {"concurrency": spec.concurrency, "kv_dtype": spec.kv_dtype, "prompt_len": spec.prompt_len,
                 "output_len": spec.output_len, "request_rate": spec.request_rate, "answer_tps": spec.answer_tps,
                 "total_tps": spec.total_tps, "ttft_s": spec.ttft_s}
        if method not in ADAPTER_METHODS:
            stray |= {"lora_rank": spec.lora_rank, "lora_targets": spec.lora_targets}
    said = [k for k, v in stray.items() if v is not None]
    if said:
        raise _error(spec, msg("wl_not_for_method", method=msg(f"val_method_{method.value}"),
                               labels=Joined(tuple(describe(k, getattr(spec, k), spec.request_rate_unit)
                                                   for k in said))))


def _memory_class(spec: WorkloadSpec, f: _Filler) -> WorkloadSpec:
    """A card named by its memory ("24GB", "2 × 80 ГБ") is every catalog card of that size, as a family is its
    variants; with a card named too, those of its variants ("A100 (80GB)"). The cards are said back; a bf16 card
    represents them (the precision's default), the fits list each."""
    memory = spec.gpu_memory_gb
    if memory is None:
        return spec
    named = (spec.gpu_family or (spec.gpu,)) if spec.gpu is not None else tuple(g.id for g in GPUS)
    cards = [g for g in map(get_gpu, named) if abs(g.memory_gb - memory) <= 0.5]
    gb = f"{memory:g}"
    if not cards:
        if spec.gpu is not None:
            card = get_gpu(spec.gpu)
            raise _error(spec, msg("wl_card_memory_named", gpu=card.family or card.name, gb=gb))
        sizes = sorted({g.memory_gb for g in GPUS})
        raise _error(spec, msg("wl_card_memory_none", gb=gb, sizes=", ".join(f"{s:g}" for s in sizes)))
    if spec.gpu is None:
        f.notes.append(Assumption(key="gpu", msg=msg("assume_card_memory", gb=gb,
                                                     cards=", ".join(g.name for g in cards))))
    lead = next((g for g in cards if g.bf16), cards[0])
    return spec.model_copy(update={"gpu": lead.id, "gpu_family": tuple(g.id for g in cards) if len(cards) > 1
                                   else None})


def _resolve_gpu(spec: WorkloadSpec) -> GPU | None:
    if spec.gpu is None:
        return None
    gpu = find_gpu(spec.gpu)
    if gpu is None:
        raise _error(spec, msg("wl_gpu_unknown", gpu=spec.gpu))
    return gpu


def _check_tp(spec: WorkloadSpec, arch: Arch, gpus: int) -> None:
    # vLLM / TGI split attention heads across GPUs; KV heads are split or replicated (docs/reference/estimator.md §3)
    kv = arch.kv_heads
    if gpus > 1 and (arch.heads % gpus or (kv % gpus and gpus % kv)):
        raise _error(spec, msg("wl_tp_heads", gpus=str(gpus), name=arch.name, heads=arch.heads, kv=kv))


def _take_prompt(spec: WorkloadSpec, limit: int, f: _Filler) -> None:
    """Inference: the context (seq_len) and the prompt within it (prompt_len), from what was said.

    The prompt is prefilled at once and the rest of the context generated, so the two are sized apart. Input and
    output make the context when it is not given; an unstated prompt is the whole context (the worst case for the
    prefill), or the context less the stated output. An unstated context is at most `limit` (`_within`).
    """
    prompt, output, context = spec.prompt_len, spec.output_len, spec.seq_len
    if prompt is not None and output is not None:
        if context is not None and context < prompt + output:
            raise _error(spec, msg("wl_prompt_output_context", prompt=prompt, output=output, context=context))
        f.values["seq_len"] = context if context is not None else prompt + output
        f.values["prompt_len"] = prompt
    elif prompt is not None:
        if context is not None and context < prompt:
            raise _error(spec, msg("wl_prompt_context", prompt=prompt, context=context))
        f.take("seq_len", context, *_within(max(SEQ_INFERENCE, prompt), limit, floor=prompt))
        f.values["prompt_len"] = prompt
    elif output is not None:
        seq = f.take("seq_len", context, *_within(max(SEQ_INFERENCE, output + 1), limit, floor=output + 1))
        if seq <= output:
            raise _error(spec, msg("wl_output_context", output=output, context=seq))
        f.assume("prompt_len", seq - output, _WHY_PROMPT_REST)
    else:
        seq = f.take("seq_len", context, *_within(SEQ_INFERENCE, limit))
        f.assume("prompt_len", seq, _WHY_PROMPT_WHOLE)


# `Workload(**values)` without the keyword round trip: pydantic's public TypeAdapter, the same checks.
_new_workload: Callable[[dict[str, Any]], Workload] = TypeAdapter(Workload).validate_python


def _resolve_precision(spec: WorkloadSpec, gpu: GPU | None, f: _Filler) -> Precision:
    """bf16 unless the named card has none (T4, V100), then fp16."""
    if gpu is not None and not gpu.bf16:
        if spec.precision in (_PRE_BF16, _PRE_BF16_TRUE):
            raise _error(spec, msg("wl_no_bf16", gpu=gpu.name))
        return f.take("precision", spec.precision, _PRE_FP16, msg("why_no_bf16", gpu=gpu.name))
    return f.take("precision", spec.precision, _PRE_BF16)


def _resolve_quant(spec: WorkloadSpec, arch: Arch, method: Method, engine: Engine, f: _Filler) -> Quant:
    """The model's own published precision where the method runs on it (gpt-oss MXFP4, DeepSeek V3 FP8, a GPTQ/AWQ
    repository), else what the engine pulls by default (Ollama: Q4_K_M), else NF4 for QLoRA and 16-bit weights for
    everything else; refused when the method cannot run on it."""
    native = Quant(arch.native_quant) if arch.native_quant in _QUANT_VALUES else None
    if spec.quant is None and native is not None and native in _NATIVE_DEFAULT_FOR.get(method, ()):
        quant = f.assume("quant", native, _WHY_NATIVE_QUANT)
    elif spec.quant is None and spec.precision is None and engine is _ENG_OLLAMA:  # "fp16": the 16-bit file
        quant = f.assume("quant", _QUA_Q4_K_M, _WHY_OLLAMA_QUANT)
    else:
        quant = f.take("quant", spec.quant, _QUA_NF4 if method == _MET_QLORA else _QUA_NONE)
    if quant not in _QUANTS_FOR[method]:
        allowed = ", ".join(q.value for q in Quant if q in _QUANTS_FOR[method])
        raise _error(spec, msg("wl_quant_method", method=msg(f"val_method_{method.value}"), quant=quant.value,
                               allowed=allowed))
    return quant


def _resolve_strategy(spec: WorkloadSpec, arch: Arch, method: Method, training: bool, gpus: int, engine: Engine,
                      f: _Filler) -> Strategy:
    """How the GPUs share the work: the stated strategy checked against the method, the count and the offload, else
    the one that fits the case (ZeRO-3 with offload, FSDP for adapters, tensor parallel to serve)."""
    offload = spec.offload or _OFF_NONE
    if spec.strategy is not None:
        strategy = spec.strategy
        if strategy == _STR_TP and training:
            raise _error(spec, msg("wl_tp_training"))
        if not training and strategy not in (_STR_TP, _STR_SINGLE):
            raise _error(spec, msg("wl_inference_strategy"))
        if strategy == _STR_SINGLE and gpus > 1:
            raise _error(spec, msg("wl_single_many", gpus=str(gpus)))
        if offload != _OFF_NONE and strategy in (_STR_SINGLE, _STR_DDP, _STR_TP):
            raise _error(spec, msg("wl_offload_strategy"))
        if offload == _OFF_ALL and strategy == _STR_ZERO2:
            raise _error(spec, msg("wl_offload_zero2"))
        f.values["strategy"] = strategy
    elif offload != _OFF_NONE:
        strategy = f.assume("strategy", _STR_ZERO3, _WHY_OFFLOAD_ZERO3)
    elif gpus == 1:
        strategy = f.assume("strategy", _STR_SINGLE)
    elif not training and profile(engine).layer_split:
        strategy = f.values["strategy"] = _STR_TP
        f.notes.append(Assumption(key="strategy", msg=msg("assume_why", what=msg(
            "field_is", label=field_label("strategy"), value=strategy_said(strategy, engine)),
            why=_WHY_LAYERS_SERVE)))
    elif not training:
        strategy = f.assume("strategy", _STR_TP, _WHY_TP_SERVE)
    elif method in ADAPTER_METHODS:
        strategy = f.assume("strategy", _STR_FSDP, _WHY_FSDP_ADAPTERS)
    else:
        strategy = f.assume("strategy", _STR_ZERO3, _WHY_ZERO3)
    if strategy == _STR_TP and not profile(engine).layer_split:  # llama.cpp, Ollama: layers, not heads, are split
        _check_tp(spec, arch, gpus)
    return strategy


def _fill_training(spec: WorkloadSpec, method: Method, engine: Engine, kv_default: str, limit: int,
                   f: _Filler) -> None:
    """A training run's fields: sequence, batch, checkpointing, optimizer, fused CE, offload, adapters, dataset."""
    tpe_said = spec.tokens_per_example
    seq_why: Msg | None = None
    seq_default = SEQ_TRAINING
    if tpe_said and tpe_said > SEQ_TRAINING and spec.seq_len is None:
        seq_default = tpe_said
        seq_why = _WHY_SEQ_EXAMPLE
    if seq_why is None:
        seq_default, seq_why = _within(seq_default, limit)
    seq_len = f.take("seq_len", spec.seq_len, seq_default, seq_why)
    f.take("batch", spec.batch, 1)
    f.take("grad_ckpt", spec.grad_ckpt, True)
    f.take("optimizer", spec.optimizer, _OPT_ADAMW)
    if spec.fused_ce is None and profile(engine).fused_ce:
        f.assume("fused_ce", True, _WHY_ENGINE_FUSED_CE)
    else:
        f.take("fused_ce", spec.fused_ce, False)
    f.take("offload", spec.offload, _OFF_NONE)
    f.values |= {"kv_dtype": kv_default, "concurrency": 1}
    if spec.packing is not None:
        f.values["packing"] = spec.packing
    if method in ADAPTER_METHODS:
        f.take("lora_rank", spec.lora_rank, LORA_RANK)
        targets = normalise_targets(spec.lora_targets) if spec.lora_targets else None
        f.take("lora_targets", targets, LORA_TARGETS)
    else:
        f.values |= {"lora_rank": None, "lora_targets": None}
    dataset = spec.dataset_tokens
    if spec.examples is not None or tpe_said is not None or spec.epochs is not None or dataset is not None:
        examples = spec.examples
        if dataset is not None and examples is not None and tpe_said is not None:
            raise _error(spec, msg("wl_dataset_three"))
        if dataset is not None and examples is not None:  # "5k examples, 20M tokens": each example is their ratio
            f.assume("tokens_per_example", max(1, round(dataset / examples)),
                     msg("why_tpe_from_dataset", tokens=msg("val_tokens", n=dataset), examples=examples))
        else:
            tpe = f.take("tokens_per_example", tpe_said, min(TOKENS_PER_EXAMPLE, seq_len))
            if dataset is not None:  # the time counts tokens: as many examples as make the dataset's
                examples = f.assume("examples", max(1, math.ceil(dataset / tpe)),
                                    msg("why_examples_from_dataset", tokens=msg("val_tokens", n=dataset),
                                        per=msg("val_tokens", n=tpe)))
        f.values["examples"] = examples
        f.take("epochs", spec.epochs, EPOCHS)
        if spec.packing is None:  # the time to train counts real tokens: say what the dataset's tokens cost
            f.assume("packing", True, _WHY_PACKING)
    else:
        f.values |= {"examples": None, "tokens_per_example": None, "epochs": None}


def _demand_said(spec: WorkloadSpec) -> bool:
    """A rate or a total speed: what the server must produce in all, which sets how many answers run at once."""
    return spec.request_rate is not None or spec.total_tps is not None


def _take_targets(spec: WorkloadSpec, concurrency: int | None, f: _Filler) -> int | None:
    """Serving targets: the answer speed each user sees (said, or assumed where a rate needs one) and the answer
    tokens a second in all. Unless said, the concurrency is what Little's law makes of them: answers in flight =
    tokens a second in all / tokens a second each (`core.answer` then says which configurations keep up).
    Returns the concurrency (None: not said and no rate to derive it from)."""
    rate, total = spec.request_rate, spec.total_tps
    if spec.answer_tps is not None:
        f.values["answer_tps"] = spec.answer_tps
    if spec.ttft_s is not None:
        f.values["ttft_s"] = spec.ttft_s
    if rate is None and total is None:
        return concurrency
    if rate is not None and total is not None:
        raise _error(spec, msg("wl_rate_total"))
    speed = spec.answer_tps if spec.answer_tps is not None else f.assume("answer_tps", ANSWER_TPS, _WHY_ANSWER_TPS)
    # the answer's length: said (or assumed) as such, else what the context leaves after the prompt
    output = spec.output_len or max(1, f.values["seq_len"] - f.values["prompt_len"])
    demand = rate * output if rate is not None else float(total or 0.0)
    f.values |= {"demand_tps": demand, "request_rate": rate, "request_rate_unit": spec.request_rate_unit}
    if concurrency is not None:  # said: the answer says whether that many at once keep up
        return concurrency
    n = max(1, math.ceil(demand / speed - 1e-9))
    demand_said, speed_said = render_value("total_tps", demand), render_value("answer_tps", speed)
    if n > MAX_CONCURRENCY:
        raise _error(spec, msg("wl_rate_too_many", n=n, max=MAX_CONCURRENCY, demand=demand_said, speed=speed_said))
    why = (msg("why_concurrency_rate", rate=rate_said(rate, spec.request_rate_unit),
               output=render_value("output_len", output), demand=demand_said, speed=speed_said) if rate is not None
           else msg("why_concurrency_total", demand=demand_said, speed=speed_said))
    return int(f.assume("concurrency", n, why))


def _fill_inference(spec: WorkloadSpec, kv_default: str, limit: int, f: _Filler) -> None:
    """Serving's fields: prompt and context, concurrent sequences (a stated batch is the same thing, a rate or a
    total speed sets it when neither is said), KV dtype, the serving targets; the training-only fields neutral."""
    derived = spec.seq_len is not None and spec.prompt_len is not None  # the answer is the context's rest
    if spec.request_rate is not None and spec.output_len is None and not derived:  # a rate's work: its answers
        f.notes.append(_assumption("output_len", RATE_OUTPUT_TOKENS, _WHY_RATE_OUTPUT))  # said, not a field
        spec = spec.model_copy(update={"output_len": RATE_OUTPUT_TOKENS})
    if spec.request_rate is not None and spec.prompt_len is None and spec.seq_len is None:
        f.notes.append(_assumption("prompt_len", RATE_PROMPT_TOKENS, _WHY_RATE_PROMPT))
        spec = spec.model_copy(update={"prompt_len": RATE_PROMPT_TOKENS})
    _take_prompt(spec, limit, f)
    concurrency = spec.concurrency
    if spec.batch is not None:
        if concurrency is not None and concurrency != spec.batch:
            raise _error(spec, msg("wl_batch_concurrency"))
        concurrency = spec.batch
    concurrency = _take_targets(spec, concurrency, f)
    f.take("concurrency", concurrency, 1)
    f.take("kv_dtype", spec.kv_dtype, kv_default)
    f.values |= {"batch": 1, "grad_ckpt": False, "optimizer": None, "fused_ce": False, "offload": _OFF_NONE,
                 "lora_rank": None, "lora_targets": None, "examples": None, "tokens_per_example": None,
                 "epochs": None}


def _add_images(spec: WorkloadSpec, arch: Arch, images: int, f: _Filler) -> None:
    """Images are tokens of the sequence: the context (inference) or each example (training) grows by them."""
    if not arch.image_tokens:
        raise _error(spec, msg("wl_no_vision", name=arch.name))
    extra = images * arch.image_tokens
    f.values["seq_len"] = f.values["seq_len"] + extra
    if f.values.get("prompt_len") is not None:  # an image is read with the prompt
        f.values["prompt_len"] = f.values["prompt_len"] + extra
    f.values["images"] = images
    f.notes.append(Assumption(key="images", msg=msg("assume_image_tokens", images=images,
                                                     per=arch.image_tokens, total=extra)))


def _context_limit(spec: WorkloadSpec, arch: Arch) -> int:
    """The longest context a workload may have, 0 for no limit: a named model (catalog, Hub or config.json) cannot
    attend past its context; a bare size ("13B") stands for a typical architecture and is not held to that stand-in's
    limit."""
    return arch.max_context if (spec.model or spec.arch is not None) else 0


def _within(default: int, limit: int, *, floor: int = 0) -> tuple[int, Msg | None]:
    """An unstated context: the method's default, or the model's whole context where that is shorter (phi-2 or a
    Pythia read 2,048 tokens: asked without a context they are sized at 2,048, not refused for the 4,096 no one
    said), never under `floor` (what was said of the prompt or output: past the limit, that is what is refused)."""
    if limit and default > limit:
        return max(limit, floor), _WHY_SEQ_LIMIT
    return default, None


@lru_cache(maxsize=64)
def _objective_note(objective: Objective, method: Method, precomputed: bool) -> Assumption:
    """What a preference objective runs beyond the fine-tune (`core.objectives`), said with the estimate: the
    sequences of each example trained together, and the reference it forwards without gradients."""
    o, name = facts(objective), render_value("objective", objective)
    parts: list[Msg] = [msg("assume_objective_pairs", name=name) if o.graded > 1 else
                        msg("assume_objective_unpaired", name=name, forwards=o.nograd_forwards)]
    if o.reference and precomputed:
        parts.append(msg("assume_objective_precomputed"))
    elif o.reference:
        copy = holds_reference_copy(objective, method, precomputed)
        parts.append(msg("assume_objective_copy" if copy else "assume_objective_adapter_off"))
    else:
        parts.append(msg("assume_objective_no_reference"))
    return Assumption(key="objective", msg=Joined(tuple(parts), "; "))


def _check_context(spec: WorkloadSpec, arch: Arch, f: _Filler) -> None:
    """Past `_context_limit` a context is refused (one said, or a default that images made longer)."""
    limit = _context_limit(spec, arch)
    seq = f.values.get("seq_len")
    if limit and seq is not None and seq > limit:
        raise _error(spec, msg("wl_context_too_long", name=arch.name, limit=limit, said=seq))


def _complete(spec: WorkloadSpec) -> tuple[Workload, list[Assumption]]:
    """The steps in the order their assumptions are reported: model, method, engine, card, precision, quantisation,
    GPUs and strategy, attention, then the method's own fields, images, the context limit."""
    f = _Filler()
    arch, source = _resolve_arch(spec, f)
    method = _resolve_method(spec, arch, source, f)
    training = method in TRAINING_METHODS
    _check_method_fields(spec, method)
    engine = _resolve_engine(spec, training, f)
    spec = _memory_class(spec, f)
    gpu = _resolve_gpu(spec)
    precision = _resolve_precision(spec, gpu, f)
    quant = _resolve_quant(spec, arch, method, engine, f)
    gpus = f.take("gpus", spec.gpus, 1)
    strategy = _resolve_strategy(spec, arch, method, training, gpus, engine, f)
    attention = f.take("attention", spec.attention, _ATT_FLASH)
    kv_default = _KV_FOR_PRECISION[precision]
    if spec.kv_dtype is not None and spec.kv_dtype not in KV_BYTES:
        raise _error(spec, msg("wl_kv_unknown", kv=spec.kv_dtype, allowed=", ".join(KV_BYTES)))
    limit = _context_limit(spec, arch)
    if training:
        _fill_training(spec, method, engine, kv_default, limit, f)
        objective = spec.objective or _OBJ_SFT
        if spec.ref_precomputed and not facts(objective).reference:
            raise _error(spec, msg("wl_no_reference"))
        f.values["ref_precomputed"] = bool(spec.ref_precomputed)
        if objective is not _OBJ_SFT:
            f.notes.append(_objective_note(objective, method, bool(spec.ref_precomputed)))
    else:
        _fill_inference(spec, kv_default, limit, f)
    if spec.images:
        _add_images(spec, arch, spec.images, f)
    _check_context(spec, arch, f)

    values = f.values  # the fields filled above; the ones decided here too
    values.update(model=spec.model if spec.arch is not None and spec.model else arch.id, arch=arch,
                  params_b=arch.params_b, model_source=source, method=method, quant=quant, precision=precision,
                  objective=spec.objective or _OBJ_SFT,
                  attention=attention, gpus=gpus, gpus_stated=spec.gpus is not None, strategy=strategy,
                  gpu=gpu.id if gpu else None, gpu_family=tuple(spec.gpu_family or ()) if gpu else (),
                  gpu_memory_gb=spec.gpu_memory_gb if gpu else None)
    workload = _new_workload(values)
    return workload, f.notes


__all__ = ["EPOCHS", "KV_BYTES", "LORA_RANK", "LORA_TARGETS", "SEQ_INFERENCE", "SEQ_TRAINING",
           "TOKENS_PER_EXAMPLE", "Assumption", "complete"]
