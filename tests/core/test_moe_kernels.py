"""MoE and block-FP8 kernel costs (issue 21): one MoE layer's fused experts cost a fixed time plus the experts the
tokens route to at their own bandwidth share, fitted on the engines' own kernel benchmarks
(`bench/data/moe_kernels.json`); block-wise FP8 checkpoints pay a near-constant time per GEMM at decode batch sizes.
A decode step of a MoE model pays both through the same constants."""

from __future__ import annotations

import statistics

import pytest

from core import speed
from core.gpus import get_gpu
from core.models import get_model
from core.speed import decode_floor_s, fused_moe_s, inference_speed
from core.workload import Method, Quant
from testkit.moe_kernels import (
    block_fp8_gemm_floor_us,
    block_fp8_gemm_times_us,
    excluded_series,
    load_moe_points,
    series_sources,
)
from tests.core.test_estimator import wl


def test_every_series_and_gemm_time_has_a_source() -> None:
    sources = series_sources()
    assert len(sources) >= 3 and all(s.startswith("github:") for s in sources.values())
    assert all(excluded_series().values())
    assert len(block_fp8_gemm_times_us()) >= 5


def test_the_fused_experts_term_predicts_the_published_kernel_times() -> None:
    points = load_moe_points()
    errors = [abs(p.error()) for p in points]
    assert len(points) >= 20
    assert statistics.median(errors) <= 0.10  # 9.2 % (the ten small kernels at the dense floor: 21 %)
    assert max(errors) <= 0.30, [(p.series, p.tokens, round(p.error(), 2)) for p in points if abs(p.error()) > 0.3]
    # both ends of each series hold: the floor at one token, the bandwidth once most experts are touched
    for series in {p.series for p in points}:
        ends = [p for p in points if p.series == series]
        assert abs(ends[0].error()) <= 0.15 and abs(ends[-1].error()) <= 0.30


def test_one_token_of_small_experts_is_the_layer_floor_and_many_tokens_the_bandwidth() -> None:
    h100 = get_gpu("h100-sxm")
    a = get_model("qwen3-30b-a3b")
    expert = a.mlp_matrices * a.hidden * a.intermediate * 1.0
    one = fused_moe_s(a.experts, a.experts_active, expert, 1, h100)
    assert speed.MOE_LAYER_FLOOR_S < one < 2 * speed.MOE_LAYER_FLOOR_S
    every = fused_moe_s(a.experts, a.experts_active, expert, 4096, h100)
    all_experts = a.experts * expert / (h100.bandwidth_gbs * 1e9 * speed.MOE_BANDWIDTH_EFFICIENCY)
    assert every == pytest.approx(speed.MOE_LAYER_FLOOR_S + all_experts, rel=1e-6)


def test_the_block_fp8_floor_is_the_median_of_its_published_times() -> None:
    assert abs(speed.BLOCK_FP8_GEMM_FLOOR_S * 1e6 - block_fp8_gemm_floor_us()) < 0.05


def test_the_decode_floor_counts_each_moe_layer_and_each_block_fp8_gemm() -> None:
    dsv3 = get_model("deepseek-v3")
    dense = get_model("llama-2-70b")
    moe_part = decode_floor_s(dsv3) - (speed.DECODE_STEP_BASE_S + dsv3.layers * (
        speed.KERNELS_PER_LAYER + speed.MLA_KERNELS) * speed.KERNEL_FLOOR_S)
    assert moe_part == pytest.approx(dsv3.n_moe_layers * speed.MOE_LAYER_FLOOR_S)
    # block FP8: MLA's three projections on every layer, the MLP's two on the dense layers and the shared experts
    gemms = dsv3.layers * 3 + 2 * dsv3.layers
    extra = decode_floor_s(dsv3, block_fp8=True) - decode_floor_s(dsv3)
    assert extra == pytest.approx(gemms * (speed.BLOCK_FP8_GEMM_FLOOR_S - speed.KERNEL_FLOOR_S))
    assert decode_floor_s(dense, block_fp8=True) - decode_floor_s(dense) == pytest.approx(
        dense.layers * 4 * (speed.BLOCK_FP8_GEMM_FLOOR_S - speed.KERNEL_FLOOR_S))


def test_only_a_block_wise_fp8_checkpoint_pays_the_block_fp8_floor() -> None:
    h200 = get_gpu("h200")
    native = wl(model="deepseek-v3", method=Method.INFERENCE, quant=Quant.FP8, seq_len=384)
    assert native.arch.native_quant == "fp8"
    assert speed._serving(native).floor == decode_floor_s(native.arch, block_fp8=True)
    step = 1 / inference_speed(native, h200, 8, min_group=8, concurrency=1).decode_tokens_per_s
    assert step > decode_floor_s(native.arch, block_fp8=True)
    # an FP8 model quantised per tensor (Llama 3.1 70B FP8: CUTLASS scaled_mm) keeps the dense kernel floor
    per_tensor = wl(model="llama-3.1-70b", method=Method.INFERENCE, quant=Quant.FP8, seq_len=2048)
    assert per_tensor.arch.native_quant != "fp8"
    assert speed._serving(per_tensor).floor == decode_floor_s(per_tensor.arch)
    # and so does DeepSeek V3 served at 16 bits
    bf16 = wl(model="deepseek-v3", method=Method.INFERENCE, seq_len=384)
    assert speed._serving(bf16).floor == decode_floor_s(bf16.arch)


def test_routed_experts_of_a_moe_model_are_counted_in_its_moe_layers_only() -> None:
    """DeepSeek V3 has 3 dense layers of 61: its routed experts are 58 layers' worth, and the rest of its weights
    (attention, dense and shared MLPs) are still read by every decode step."""
    h200 = get_gpu("h200")
    w = wl(model="deepseek-v3", method=Method.INFERENCE, quant=Quant.FP8, seq_len=384)
    c = speed._serving(w)
    assert c.fixed > 10e9  # ~15B non-expert parameters at one byte (negative before the fix)
    assert c.experts == pytest.approx(w.arch.expert_params_b * 1e9 * speed.BANDWIDTH_EFFICIENCY
                                      / speed.MOE_BANDWIDTH_EFFICIENCY, rel=0.01)
    assert inference_speed(w, h200, 8, min_group=8, concurrency=1).decode_tokens_per_s < 45
