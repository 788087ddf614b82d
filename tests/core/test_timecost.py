"""Time and cost: FLOPs per token (docs/reference/estimator.md §6) and the calibration against torchtune's
throughputs."""

from __future__ import annotations

import pytest

from core.fit import fit_configs
from core.timecost import estimate_time, flops_per_token, tokens_per_second
from core.workload import Method, Precision, Strategy
from tests.core.test_estimator import wl


def test_throughput_comes_from_the_speed_model_with_the_smallest_group() -> None:
    """8B LoRA fits one card: eight cards run as eight replicas, eight times one card's rate at most."""
    w = wl(model="llama-3.1-8b", method=Method.LORA, seq_len=2048, batch=2, precision=Precision.BF16_TRUE)
    one = tokens_per_second(w, "h100-sxm", 1)
    eight = tokens_per_second(w.with_(gpus=8, strategy=Strategy.FSDP), "h100-sxm", 8)
    assert 7 * one < eight <= 8 * one * 1.01  # sharding the (small) adapter optimizer step saves a little


def test_flops_follow_the_reference() -> None:
    p = 8.03e9
    attn = 2 * 32 * 4096 * 2048
    assert flops_per_token(wl(method="full", grad_ckpt=False)) == pytest.approx(3 * (2 * p + attn))  # ~6P
    assert flops_per_token(wl(method="full", grad_ckpt=True)) == pytest.approx(4 * (2 * p + attn))  # ~8P
    assert flops_per_token(wl(method="lora", grad_ckpt=False)) == pytest.approx(2 * (2 * p + attn))  # ~4P
    # MoE compute follows active parameters.
    moe = flops_per_token(wl(model="mixtral-8x7b", method="lora", grad_ckpt=False))
    assert moe < 4 * 20e9 and moe > 4 * 12e9


def test_time_needs_a_dataset() -> None:
    w = wl(method="lora")
    assert estimate_time(w, fit_configs(w).fits) is None
    assert estimate_time(wl(method="inference", examples=100), []) is None


def test_time_and_cost_per_config() -> None:
    w = wl(method="lora", model="llama-3.1-8b", examples=5000, tokens_per_example=512, epochs=3)
    fits = fit_configs(w).fits
    t = estimate_time(w, fits)
    assert t is not None and t.tokens == 5000 * 512 * 3 and not t.assumed
    assert len(t.per_config) == len(fits)
    by = {(c.gpu, c.count): c for c in t.per_config}
    h100, rtx = by[("h100-sxm", 1)], by[("rtx-4090", 1)]
    assert h100.hours < rtx.hours  # faster card, same work
    assert h100.hours == pytest.approx(t.tokens / h100.tokens_per_second / 3600, rel=1e-3)
    if ("h100-sxm", 2) in by:
        assert by[("h100-sxm", 2)].hours < h100.hours
    assert t.cost(3.0, "h100-sxm", 1) == pytest.approx(h100.hours * 3.0)
    assert by.get(("h100-sxm", 2)) is None or by[("h100-sxm", 2)].cost(3.0) == pytest.approx(
        by[("h100-sxm", 2)].hours * 2 * 3.0)
    # Seed 000: 7B LoRA, 5k x 3 epochs on a 4090 takes 4-8 h; we must be in the same order of magnitude.
    assert 0.3 < rtx.hours < 8


def test_defaults_are_stated() -> None:
    w = wl(method="lora", examples=1000)
    t = estimate_time(w, fit_configs(w).fits)
    assert t is not None and set(t.assumed) == {"tokens_per_example", "epochs"} and t.tokens == 1000 * 512
