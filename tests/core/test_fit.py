"""Fit: which catalog GPUs x counts hold a workload, the requirement offers are matched by, and advice."""

from __future__ import annotations

import pytest

from core.fit import DEFAULT_COUNTS, config_for, default_strategy, fit_configs, requirement
from core.gpus import GPUS, get_gpu
from core.workload import Attention, Method, Strategy
from tests.core.test_estimator import wl
from texts.i18n import render


def test_fits_are_real_and_sorted_fewest_gpus_then_comfortable_then_smallest() -> None:
    report = fit_configs(wl(method="qlora", model="llama-3.1-8b"))
    assert report.fits and not report.advice
    keys = [(f.count, f.tight, f.usable_gib * f.count) for f in report.fits]
    assert keys == sorted(keys)
    for f in report.fits:
        gpu = get_gpu(f.gpu)
        assert f.usable_gib == gpu.usable_gib  # usable, never the label
        assert f.need_gib <= f.usable_gib and f.utilization <= 1
        assert f.count in DEFAULT_COUNTS
    # A 16 GB card holds an 8B QLoRA at 2k; the single smallest fitting config comes first.
    assert report.fits[0].count == 1


def test_everything_that_fits_is_listed_and_nothing_else() -> None:
    w = wl(method="lora", model="llama-2-13b")
    req = requirement(w)
    listed = {(f.gpu, f.count) for f in fit_configs(w).fits}
    expected = {(g.id, c) for g in GPUS for c in DEFAULT_COUNTS if req.fits(g, c)}
    assert listed == expected
    assert ("rtx-4090", 1) not in listed  # 13B LoRA needs > 24 GB on one card
    assert ("a100-80gb", 1) in listed


def test_requirement_uses_usable_memory_and_default_strategies() -> None:
    w = wl(method="full", model="llama-3.1-70b")
    req = requirement(w)
    assert requirement(w) is req  # memoised
    assert set(req.min_gib_by_count) == {1, 2, 4, 8}
    mins = req.min_gib_by_count
    assert mins[1] > mins[2] > mins[4] > mins[8]  # ZeRO-3 is the default for full fine-tuning
    assert config_for(w, 8).strategy is Strategy.ZERO3
    assert default_strategy(Method.LORA) is Strategy.FSDP and default_strategy(Method.INFERENCE) is Strategy.TP
    for g in GPUS:
        assert req.fits(g, 8) == (mins[8] <= g.usable_gib) or not g.bf16


def test_a_card_fits_by_usable_memory_not_label() -> None:
    # A workload whose need falls between a 4090's usable memory (23.58 GiB) and the 24 it says on the box.
    rtx = get_gpu("rtx-4090")
    for seq in range(16384, 131072, 16):
        w = wl(method="inference", model="llama-3.1-8b", seq_len=seq)
        need = requirement(w).need_gib(1)
        if rtx.usable_gib < need <= rtx.memory_gb:
            assert not requirement(w).fits(rtx, 1)
            break
    else:
        pytest.fail("no sequence length landed between usable and label")


def test_cards_without_bf16_lose_flash_attention() -> None:
    w = wl(method="lora", model="llama-3.2-1b", seq_len=8192, grad_ckpt=False)
    req = requirement(w)
    t4 = get_gpu("t4")
    assert not t4.bf16
    assert req.need_gib(1, eager=True) > req.need_gib(1)
    assert config_for(w, 1, eager=True).attention is Attention.EAGER
    fit = next((f for f in fit_configs(w).fits if f.gpu == "v100-32gb"), None)
    if fit is not None:
        assert fit.per_gpu_gib == pytest.approx(req.estimate(1, eager=True).per_gpu_gib, rel=1e-3)


def test_named_gpu_and_count_answer_for_that_configuration() -> None:
    w = wl(method="full", model="llama-3.1-70b", gpu="h100-sxm", gpus=8, strategy=Strategy.ZERO3)
    report = fit_configs(w)
    assert report.gpu == "h100-sxm" and report.counts == (8,)
    assert [(f.gpu, f.count) for f in report.fits] in ([("h100-sxm", 8)], [])
    # 70B full AdamW on 8x 80 GB: ~16 x 70.6e9 / 8 = 131 GiB of states per GPU: it does not fit; advice says what does.
    assert not report.fits
    codes = {a.code for a in report.advice}
    assert codes & {"more_gpus", "bigger_gpu"}
    for a in report.advice:
        assert render("en", a.msg) != render("ru", a.msg)


def test_count_alone_restricts_the_counts() -> None:
    report = fit_configs(wl(method="qlora", model="llama-3.1-405b", gpus=8, strategy=Strategy.FSDP))
    assert report.counts == (8,)
    assert report.fits and all(f.count == 8 for f in report.fits)


def test_a_count_alone_that_nothing_holds_says_the_smallest_configuration_that_would() -> None:
    """"70B full on 1 GPU": no card holds it at one; the advice names the configuration with the least memory in
    all that does, at any count, and it is one that fits."""
    w = wl(method="full", model="llama-3.1-70b", gpus=1, gpus_stated=True)
    report = fit_configs(w)
    assert report.counts == (1,) and not report.fits
    first = report.advice[0]
    assert first.code == "bigger_gpu", report.advice
    where = render("en", first.msg).removeprefix("The smallest configuration that fits: ").rstrip(".")
    count, name = where.split("x ", 1)
    gpu = next(g for g in GPUS if g.name == name)
    assert int(count) > 1 and any(f.gpu == gpu.id for f in fit_configs(w.with_(gpus=int(count))).fits), where


def test_nothing_fits_gives_advice() -> None:
    report = fit_configs(wl(method="full", model="llama-3.1-405b"))
    assert not report.fits
    codes = [a.code for a in report.advice]
    assert "qlora" in codes and "more_nodes" in codes and "offload" in codes
    nodes = next(a for a in report.advice if a.code == "more_nodes")
    assert "nodes" in render("en", nodes.msg) and "узл" in render("ru", nodes.msg)


def test_tensor_parallel_must_divide_heads() -> None:
    w = wl(method="inference", model="qwen2.5-7b")  # 28 heads: TP 8 does not divide them
    req = requirement(w)
    assert req.runnable(4) and not req.runnable(8)
    assert req.min_gib_by_count[8] == float("inf")
    assert all(f.count != 8 for f in fit_configs(w).fits)
