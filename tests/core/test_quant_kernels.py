"""Quantised decode kernels (issue 21): a batch-1 decode of weight-only quantised weights streams the packed weights
plus a scale (and zero) per group at its kernel's share of the 16-bit bandwidth (`core.engines.KERNELS`); the engine
picks the kernel, a measured point names its own."""

from __future__ import annotations

import pytest

from core import speed
from core.engines import KERNELS, engine_notes, kernel_decode, quant_kernel
from core.gpus import get_gpu
from core.speed import inference_speed
from core.workload import Engine, Method, Quant, QuantKernel
from testkit.throughput_points import load_cases
from tests.core.test_estimator import wl
from texts.i18n import render


def test_every_kernel_has_a_source_a_share_and_a_packing() -> None:
    assert set(KERNELS) == set(QuantKernel)
    for k, p in KERNELS.items():
        assert p.kernel is k and p.source and 0.3 <= p.share <= 1.0, k
        assert (p.group_bits == 0) == (p.group == 0), k  # grouped formats say their default group


@pytest.mark.parametrize(("engine", "quant", "gpu_id", "kernel"), [
    (Engine.VLLM, Quant.GPTQ_INT4, "a100-80gb", QuantKernel.MARLIN),
    (Engine.VLLM, Quant.AWQ, "rtx-4090", QuantKernel.MARLIN),
    (Engine.SGLANG, Quant.AWQ, "h100-sxm", QuantKernel.MARLIN),
    (Engine.VLLM, Quant.GPTQ_INT4, "t4", QuantKernel.EXLLAMA_V2),
    (Engine.VLLM, Quant.AWQ, "t4", QuantKernel.AWQ_GEMM),
    (Engine.TRANSFORMERS, Quant.GPTQ_INT4, "a100-80gb", QuantKernel.EXLLAMA),
    (Engine.TRANSFORMERS, Quant.AWQ, "a100-80gb", QuantKernel.AWQ_GEMM),
    (Engine.LLAMA_CPP, Quant.Q4_K_M, "rtx-3090", QuantKernel.GGML),
    (Engine.TENSORRT_LLM, Quant.AWQ, "h100-sxm", None),  # its own kernels: no separate figure, the 16-bit share
    (Engine.VLLM, Quant.FP8, "h100-sxm", None),  # native FP8: not a weight-only GEMV
    (None, Quant.AWQ, "a100-80gb", None),  # the engine-neutral model: as before
])
def test_the_engine_picks_the_kernel(engine: Engine | None, quant: Quant, gpu_id: str,
                                     kernel: QuantKernel | None) -> None:
    w = wl(model="llama-2-7b", method=Method.INFERENCE, seq_len=256, quant=quant, engine=engine)
    assert quant_kernel(w, ampere=get_gpu(gpu_id).compute_capability >= 8.0) is kernel


def test_a_stated_kernel_and_group_win_and_the_group_sets_the_bytes() -> None:
    w = wl(model="llama-2-7b", method=Method.INFERENCE, seq_len=256, quant=Quant.GPTQ_INT4, engine=Engine.VLLM,
           quant_kernel=QuantKernel.TINYGEMM, quant_group=32)
    assert quant_kernel(w) is QuantKernel.TINYGEMM
    # 4 bits + a bf16 scale and a bf16 zero per 32 weights = 5 bits
    assert kernel_decode(w) == (pytest.approx(5 / 8), 0.62, False)
    # GPTQ's own packing: an fp16 scale and a 4-bit zero per 128 = 4.16 bits, the catalog's width
    marlin = w.with_(quant_kernel=QuantKernel.MARLIN, quant_group=None)
    assert kernel_decode(marlin)[0] == pytest.approx((4 + 20 / 128) / 8)


def test_batch_one_decode_is_the_packed_weights_at_the_kernels_share() -> None:
    """gpt-fast int4 (tinygemm, group 32) on an A100: every dense weight at 5 bits, the lm_head in 16 bits, both at
    the kernel's share of the 16-bit bandwidth; the KV cache at the 16-bit fraction; the step floor."""
    gpu = get_gpu("a100-80gb")
    w = wl(model="llama-2-7b", method=Method.INFERENCE, seq_len=256, quant=Quant.GPTQ_INT4,
           quant_kernel=QuantKernel.TINYGEMM, quant_group=32)
    bw = gpu.bandwidth_gbs * 1e9 * speed.BANDWIDTH_EFFICIENCY
    dense = 6.74e9 - 2 * 32000 * 4096
    weights = dense * 5 / 8 + 32000 * 4096 * 2
    kv = 256 * 2 * 32 * 32 * 128 * 2
    step = weights / (bw * KERNELS[QuantKernel.TINYGEMM].share) + kv / bw + speed.DECODE_STEP_OVERHEAD_S
    assert inference_speed(w, gpu, 1).decode_tokens_per_s == pytest.approx(1 / step, rel=1e-3)


def test_group_size_and_kernel_order_the_speeds() -> None:
    gpu = get_gpu("a100-80gb")
    base = wl(model="llama-3.1-8b", method=Method.INFERENCE, seq_len=2048, quant=Quant.GPTQ_INT4)

    def tps(**kw: object) -> float:
        return inference_speed(base.with_(**kw), gpu, 1).decode_tokens_per_s

    tiny = [tps(quant_kernel=QuantKernel.TINYGEMM, quant_group=g) for g in (32, 64, 128)]
    assert tiny == sorted(tiny)  # fewer scales per weight, fewer bytes
    marlin, exllama, gemm = (tps(quant_kernel=k) for k in (QuantKernel.MARLIN, QuantKernel.EXLLAMA,
                                                            QuantKernel.AWQ_GEMM))
    assert marlin > exllama > gemm > tiny[-1]
    assert marlin == pytest.approx(tps(), rel=1e-3)  # Marlin at the 16-bit share: the catalog figure (4.16 bits)
    # still faster than 16-bit weights
    assert tiny[0] > inference_speed(base.with_(quant=Quant.NONE), gpu, 1).decode_tokens_per_s


def test_the_kernel_share_is_decode_only() -> None:
    """Prefill is compute-bound: two kernels with the same packing prefill alike however they decode."""
    gpu = get_gpu("a100-80gb")
    base = wl(model="llama-3.1-8b", method=Method.INFERENCE, seq_len=2048, quant=Quant.AWQ)
    m = inference_speed(base.with_(quant_kernel=QuantKernel.MARLIN), gpu, 1)
    g = inference_speed(base.with_(quant_kernel=QuantKernel.AWQ_GEMM), gpu, 1)
    assert m.prefill_tokens_per_s == pytest.approx(g.prefill_tokens_per_s)
    assert m.decode_tokens_per_s > g.decode_tokens_per_s


def test_below_ampere_the_engine_falls_back_to_its_older_kernel() -> None:
    """vLLM runs AWQ through Marlin on 8.0+ and its AWQ GEMM kernel on a T4: the T4 decodes at that share."""
    t4 = get_gpu("t4")
    w = wl(model="llama-2-7b", method=Method.INFERENCE, seq_len=256, quant=Quant.AWQ, engine=Engine.VLLM)
    stated = w.with_(quant_kernel=QuantKernel.AWQ_GEMM)
    assert inference_speed(w, t4, 1).decode_tokens_per_s == pytest.approx(
        inference_speed(stated, t4, 1).decode_tokens_per_s, rel=1e-3)


def test_the_answer_states_the_kernel_it_assumed() -> None:
    w = wl(model="llama-2-7b", method=Method.INFERENCE, seq_len=256, quant=Quant.AWQ, engine=Engine.TRANSFORMERS)
    notes = [n for n in engine_notes(w) if n.key == "engine_note_quant_kernel"]
    assert len(notes) == 1
    en, ru = render("en", notes[0]), render("ru", notes[0])
    assert "awq-gemm" in en and "81" in en and "awq-gemm" in ru and "ядром" in ru
    assert not [n for n in engine_notes(w.with_(quant=Quant.NONE)) if n.key == "engine_note_quant_kernel"]


def test_gpt_fast_and_mlc_points_are_told_apart_and_within_target() -> None:
    cases = {c.id: c for c in load_cases()}
    assert cases["gf-l2-7b-int4-a100"].workload.quant_kernel is QuantKernel.TINYGEMM
    assert cases["gf-l2-7b-int4-a100"].workload.quant_group == 32
    assert cases["mlc-l2-7b-q4-4090"].workload.quant_kernel is QuantKernel.MLC
    for pid in ("gf-l2-7b-int4-a100", "gf-l2-7b-int8-a100"):
        assert abs(cases[pid].error()) <= 0.15, (pid, cases[pid].error())


def test_the_note_names_the_fallback_kernel_on_a_named_older_card() -> None:
    w = wl(model="llama-2-7b", method=Method.INFERENCE, seq_len=256, quant=Quant.GPTQ_INT4, engine=Engine.VLLM)
    kernels = {n.get("kernel") for n in engine_notes(w.with_(gpu="t4")) if n.key == "engine_note_quant_kernel"}
    assert kernels == {"exllamav2"}
    kernels = {n.get("kernel") for n in engine_notes(w.with_(gpu="a100-80gb")) if n.key == "engine_note_quant_kernel"}
    assert kernels == {"marlin"}
