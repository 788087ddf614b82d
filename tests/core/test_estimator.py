"""The estimator's physics: each modelled effect moves memory the way it must, and the formulas give the reference's
worked numbers. (Accuracy against measurements: tests/core/test_estimator_accuracy.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from core.estimator import (
    GIB,
    adapter_params,
    estimate_memory,
    kv_bytes_per_token,
    parse_targets,
)
from core.models import get_model
from core.workload import Attention, Method, Offload, Optimizer, Precision, Quant, Strategy, Workload

KIB = 1024


def wl(model: str = "llama-3.1-8b", **kw: Any) -> Workload:
    """A complete workload with explicit, method-appropriate defaults (every Workload field is required)."""
    arch = get_model(model)
    method = Method(kw.pop("method", Method.LORA))
    training = method is not Method.INFERENCE
    adapters = method in (Method.LORA, Method.QLORA)
    base: dict[str, Any] = dict(
        model=arch.id, arch=arch, params_b=arch.params_b, method=method,
        quant=Quant.NF4 if method is Method.QLORA else Quant.NONE, precision=Precision.BF16,
        seq_len=2048, batch=1, grad_ckpt=training, attention=Attention.FLASH,
        lora_rank=16 if adapters else None, lora_targets="all-linear" if adapters else None,
        optimizer=Optimizer.ADAMW if training else None, fused_ce=False, gpus=1, strategy=Strategy.SINGLE,
        offload=Offload.NONE, gpu=None, kv_dtype="bf16", concurrency=1, examples=None, tokens_per_example=None,
        epochs=None,
    )
    base.update(kw)
    return Workload(**base)


def peak(**kw: Any) -> float:
    return estimate_memory(wl(**kw)).per_gpu_gib


# --- KV cache ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("model", "kib"), [("llama-3.1-8b", 128), ("llama-2-7b", 512), ("llama-3.1-70b", 320)])
def test_kv_cache_per_token_matches_the_formula(model: str, kib: int) -> None:
    arch = get_model(model)
    assert kv_bytes_per_token(arch) == 2 * arch.layers * arch.kv_heads * arch.head_dim * 2 == kib * KIB


def test_kv_cache_scales_with_context_concurrency_and_dtype() -> None:
    arch = get_model("llama-3.1-70b")
    one = estimate_memory(wl("llama-3.1-70b", method="inference", seq_len=8192)).breakdown.kv_cache
    assert one == pytest.approx(320 * KIB * 8192 / GIB)
    eight = estimate_memory(wl("llama-3.1-70b", method="inference", seq_len=8192, concurrency=8)).breakdown.kv_cache
    assert eight == pytest.approx(8 * one)
    fp8 = estimate_memory(wl("llama-3.1-70b", method="inference", seq_len=8192, kv_dtype="fp8")).breakdown.kv_cache
    assert fp8 == pytest.approx(one / 2)
    assert kv_bytes_per_token(arch, "int4") == kv_bytes_per_token(arch) / 4


# --- monotonicity ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["inference", "full", "freeze", "lora", "qlora"])
@pytest.mark.parametrize("ckpt", [True, False])
def test_more_tokens_never_need_less_memory(method: str, ckpt: bool) -> None:
    last = 0.0
    for seq in (128, 512, 2048, 8192, 32768):
        for batch in (1, 2, 8):
            kw = dict(method=method, seq_len=seq, batch=batch, grad_ckpt=ckpt and method != "inference")
            if method == "inference":
                kw["concurrency"] = batch
            now = peak(**kw)
            assert now >= peak(**{**kw, "seq_len": max(1, seq // 2)})
            assert now >= peak(**{**kw, "batch": 1, "concurrency": 1})
            last = max(last, now)
    assert last > peak(method=method, seq_len=128, batch=1)


@pytest.mark.parametrize("model", ["llama-2-7b", "llama-3.1-8b", "qwen2.5-14b", "llama-3.1-70b", "mixtral-8x7b"])
def test_qlora_below_lora_below_full(model: str) -> None:
    q, lo, full = (peak(model=model, method=m) for m in ("qlora", "lora", "full"))
    assert q < lo < full
    assert peak(model=model, method="inference") < lo


@pytest.mark.parametrize("method", ["full", "lora", "qlora"])
def test_zero3_on_more_gpus_needs_less_per_gpu(method: str) -> None:
    per = [peak(model="llama-3.1-70b", method=method, gpus=n, strategy=Strategy.ZERO3) for n in (2, 4, 8)]
    assert per[0] > per[1] > per[2]
    # Sharding divides model states, never activations: the 8-GPU figure stays above the activations alone.
    est = estimate_memory(wl("llama-3.1-70b", method=method, gpus=8, strategy=Strategy.ZERO3))
    assert est.per_gpu_gib > est.breakdown.activations


def test_strategies_order_for_full_fine_tuning() -> None:
    kw = dict(model="llama-3.1-8b", method="full", gpus=8)
    ddp, z2, z3 = (peak(**kw, strategy=s) for s in (Strategy.DDP, Strategy.ZERO2, Strategy.ZERO3))
    assert ddp > z2 > z3
    # DDP replicates everything: as much per GPU as one GPU alone (plus gradient buckets).
    assert ddp >= peak(model="llama-3.1-8b", method="full")


def test_tensor_parallel_inference_divides_weights_and_kv() -> None:
    one = estimate_memory(wl("llama-3.1-70b", method="inference", seq_len=8192))
    four = estimate_memory(wl("llama-3.1-70b", method="inference", seq_len=8192, gpus=4, strategy=Strategy.TP))
    assert four.breakdown.weights == pytest.approx(one.breakdown.weights / 4)
    assert four.breakdown.kv_cache == pytest.approx(one.breakdown.kv_cache / 4)
    # 8 KV heads on 16 GPUs: each GPU keeps one head, so KV stops shrinking at 8.
    eight = estimate_memory(wl("llama-3.1-70b", method="inference", seq_len=8192, gpus=8, strategy=Strategy.TP))
    sixteen = estimate_memory(wl("llama-3.1-70b", method="inference", seq_len=8192, gpus=16, strategy=Strategy.TP))
    assert sixteen.breakdown.kv_cache == pytest.approx(eight.breakdown.kv_cache)
    assert four.runtime_gib > one.runtime_gib  # NCCL on top of the CUDA context


# --- individual effects ---------------------------------------------------------------------------------------------

def test_flash_attention_removes_the_quadratic_term() -> None:
    flash = [peak(method="lora", grad_ckpt=False, seq_len=s, attention=Attention.FLASH) for s in (2048, 4096)]
    eager = [peak(method="lora", grad_ckpt=False, seq_len=s, attention=Attention.EAGER) for s in (2048, 4096)]
    assert eager[0] > flash[0]
    # Flash grows linearly in s; eager's excess grows like s^2 (4x for twice the length).
    assert (eager[1] - flash[1]) == pytest.approx(4 * (eager[0] - flash[0]), rel=0.01)


def test_gradient_checkpointing_cuts_activations() -> None:
    on = estimate_memory(wl(method="lora", grad_ckpt=True, seq_len=4096)).breakdown.activations
    off = estimate_memory(wl(method="lora", grad_ckpt=False, seq_len=4096)).breakdown.activations
    assert off > 5 * on


def test_fused_cross_entropy_shrinks_the_logits() -> None:
    plain = estimate_memory(wl(method="qlora", seq_len=8192)).breakdown.logits
    fused = estimate_memory(wl(method="qlora", seq_len=8192, fused_ce=True)).breakdown.logits
    # Llama-3 vocabulary, 8k tokens, 16 bytes per logit: the term that dominates long-context QLoRA.
    assert plain == pytest.approx(8192 * 128256 * 16 / GIB)
    assert fused < plain / 10


def test_lora_rank_and_targets() -> None:
    arch = get_model("llama-3.1-8b")
    # Reference §2: Llama-3-8B all-linear, r = 16 -> 16 * 81,920 * 32 = 42 M parameters.
    assert adapter_params(arch, 16, "all-linear") == 16 * 81920 * 32
    assert adapter_params(arch, 16, "q,v") < adapter_params(arch, 16, "all-linear")
    assert peak(lora_rank=64) > peak(lora_rank=8)
    assert peak(lora_targets="all-linear") > peak(lora_targets="q,v")
    assert parse_targets("q_proj,v_proj") == ("q", "v")
    assert parse_targets("q,v,o,mlp") == ("q", "v", "o", "gate", "up", "down")


def test_quantised_bases_keep_embeddings_16_bit() -> None:
    arch = get_model("llama-3.1-8b")
    w = estimate_memory(wl(method="qlora")).breakdown.weights * GIB
    embed = 2 * 128256 * 4096 * 2
    assert w == pytest.approx((arch.params_b * 1e9 - 2 * 128256 * 4096) * 0.5625 + embed)
    dq = estimate_memory(wl(method="qlora", quant=Quant.NF4_DQ)).breakdown.weights * GIB
    int8 = estimate_memory(wl(method="lora", quant=Quant.INT8)).breakdown.weights * GIB
    assert dq < w < int8 < arch.params_b * 1e9 * 2


@pytest.mark.parametrize(("quant", "gib"), [(Quant.NONE, 14.96), (Quant.Q8_0, 7.95), (Quant.Q4_K_M, 4.58)])
def test_inference_weights_match_llama_cpp_file_sizes(quant: Quant, gib: float) -> None:
    w = estimate_memory(wl(method="inference", quant=quant)).breakdown.weights
    assert w == pytest.approx(gib, rel=0.01)


def test_optimizers() -> None:
    adamw, eight, paged, sgd = (
        estimate_memory(wl(method="full", optimizer=o))
        for o in (Optimizer.ADAMW, Optimizer.ADAMW_8BIT, Optimizer.PAGED_ADAMW_8BIT, Optimizer.SGD))
    p = get_model("llama-3.1-8b").params_b * 1e9
    # Mixed precision AdamW: bf16 weights 2 + master 4 + grads 2 + m, v 8 = 16 bytes per parameter.
    assert (adamw.breakdown.weights + adamw.breakdown.trainable_states) * GIB == pytest.approx(16 * p)
    assert adamw.per_gpu_gib > sgd.per_gpu_gib > eight.per_gpu_gib > paged.per_gpu_gib
    assert paged.cpu_ram_gib == pytest.approx(2 * p / GIB)  # paged states live in CPU RAM
    assert adamw.cpu_ram_gib == 0
    pure = estimate_memory(wl(method="full", precision=Precision.BF16_TRUE))
    assert (pure.breakdown.weights + pure.breakdown.trainable_states) * GIB == pytest.approx(8 * p)


def test_cpu_offload_moves_states_to_host_ram() -> None:
    kw = dict(model="llama-3.1-70b", method="full", gpus=8, strategy=Strategy.ZERO3)
    none, opt, full = (estimate_memory(wl(**kw, offload=o)) for o in (Offload.NONE, Offload.OPTIMIZER, Offload.ALL))
    assert none.per_gpu_gib > opt.per_gpu_gib > full.per_gpu_gib
    assert none.cpu_ram_gib == 0 < opt.cpu_ram_gib < full.cpu_ram_gib
    p = get_model("llama-3.1-70b").params_b * 1e9
    # Reference §3: CPU holds about 16-18 P bytes (x 1.5 buffer) when everything is offloaded.
    assert 16 * p * 1.5 / GIB <= full.cpu_ram_gib <= 18 * p * 1.5 / GIB
    # ZeRO-3 with optimizer offload keeps 2P/N of parameters on each GPU.
    assert opt.breakdown.weights == pytest.approx(2 * p / 8 / GIB)


def test_moe_memory_follows_total_parameters() -> None:
    moe = estimate_memory(wl("mixtral-8x7b", method="inference"))
    assert moe.breakdown.weights == pytest.approx(46.7e9 * 2 / GIB, rel=1e-3)


def test_freeze_sits_between_lora_and_full() -> None:
    assert peak(method="lora") < peak(method="freeze") < peak(method="full")


def test_recommended_adds_the_stated_margin() -> None:
    for kw in (dict(method="lora"), dict(method="inference"), dict(method="full", gpus=8, strategy=Strategy.ZERO3)):
        est = estimate_memory(wl(**kw))
        assert 0 < est.safety_margin <= 0.25
        assert est.recommended_per_gpu_gib == pytest.approx(est.per_gpu_gib * (1 + est.safety_margin))
        assert est.per_gpu_gib == pytest.approx(est.breakdown.total)
    assert estimate_memory(wl(method="inference")).safety_margin < estimate_memory(wl(method="lora")).safety_margin
