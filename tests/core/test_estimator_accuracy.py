"""The estimator against every public measurement in bench/data/ (copies with sources: measured_public.json from
the steering repo's reference file, measured_architectures.json for MoE, small dense and FP8 models,
measured_dense.json for dense models of every size at short and long inputs).

How each kind of point is judged is argued in testkit/measured_points.py and docs/accuracy.md:
- training points with known conditions: median |error| <= 10 %, none more than 15 % below its measurement;
- inference points with known conditions: within 5 % (the issue's target), short inputs at every size included;
  the one group that misses (long prompts of the transformers 4.51 benchmark, whose peaks show no prefill) is held
  to never more than 5 % under and reported as missed in docs/accuracy.md;
- out-of-memory points: predicted above the card's usable memory;
- points with an unknown sequence length: the answer must not hinge on the unknown (inference), or the
  measurements' order and rough size must come out (training);
- the allocator artefact: predicted like its twin run, and below what the larger card's allocator reserved.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from core.estimator import estimate_memory
from core.fit import requirement
from core.workload import Quant
from testkit.measured_points import (
    ARCH_PATH,
    COMPONENTS_PATH,
    DENSE_PATH,
    MEASURED_PATH,
    REPO_ROOT,
    ComponentPoint,
    Point,
    arch_kind,
    benchmark,
    flag_inconsistent,
    load_arch_points,
    load_component_points,
    load_dense_points,
    load_points,
    load_raw,
    mark_prefill_unmeasured,
    single_pass_floor_gib,
    to_point,
    window_only_gib,
)


def _error(p: Point) -> float:
    assert p.measured_gib is not None
    return estimate_memory(p.workload).per_gpu_gib / p.measured_gib - 1


@pytest.fixture(scope="module")
def points() -> list[Point]:
    # The file is in the repository (a copy with its sources); a missing file must fail, never skip.
    assert MEASURED_PATH == REPO_ROOT / "bench" / "data" / "measured_public.json"
    assert MEASURED_PATH.is_file(), f"{MEASURED_PATH} is missing"
    pts = load_points()
    assert len(pts) == len(load_raw()) >= 40
    return pts


def test_a_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_points(tmp_path / "measured_public.json")


def test_every_point_is_classified(points: list[Point]) -> None:
    for p in points:
        kinds = [p.known_conditions, p.is_oom, p.assumed_seq, p.allocator_artefact]
        assert any(kinds), p.id
    assert sum(p.known_conditions and p.is_training for p in points) >= 10
    assert sum(p.known_conditions and not p.is_training for p in points) >= 20


def test_training_points_with_known_conditions(points: list[Point]) -> None:
    train = [p for p in points if p.known_conditions and p.is_training]
    errors = {p.id: _error(p) for p in train}
    assert statistics.median(abs(e) for e in errors.values()) <= 0.10, errors
    under = {k: e for k, e in errors.items() if e < -0.15}
    assert not under, f"under-estimated by more than 15 % (an OOM for the user): {under}"


def test_inference_points_with_known_conditions(points: list[Point]) -> None:
    infer = [p for p in points if p.known_conditions and not p.is_training]
    errors = {p.id: _error(p) for p in infer}
    bad = {k: round(e, 4) for k, e in errors.items() if abs(e) > 0.05}
    assert not bad, bad


def test_oom_points_predicted_above_usable_memory(points: list[Point]) -> None:
    oom = [p for p in points if p.is_oom]
    assert len(oom) >= 2
    for p in oom:
        assert p.gpu is not None
        est = estimate_memory(p.workload)
        assert est.per_gpu_gib > p.gpu.usable_gib, p.id
        assert not requirement(p.workload).fits(p.gpu, 1), p.id


def test_measured_runs_fit_the_card_they_ran_on(points: list[Point]) -> None:
    # The flip side of the OOM points: what ran on a card must not be declared impossible there.
    # Except a run the workload cannot describe (it freed gradients inside backward): that one is over-estimated.
    unmodelled = {p.id for p in points if p.unmodelled}
    assert unmodelled == {"tt-8b-full-4090"}
    for p in points:
        if p.known_conditions and p.gpu is not None and not p.unmodelled:
            assert requirement(p.workload).fits(p.gpu, p.workload.gpus), p.id
    for p in points:
        if p.unmodelled:
            assert estimate_memory(p.workload).per_gpu_gib > p.measured_gib  # on the safe side


def test_inference_with_unknown_length_does_not_hinge_on_it(points: list[Point]) -> None:
    pts = [p for p in points if p.assumed_seq and not p.is_training]
    assert pts
    for p in pts:
        for seq in (32, 128, 256):  # litgpt generate: a one-line prompt + 50 tokens
            pred = estimate_memory(p.workload.with_(seq_len=seq)).per_gpu_gib
            assert abs(pred / p.measured_gib - 1) <= 0.05, (p.id, seq)


def test_training_with_unknown_length_keeps_order_and_size(points: list[Point]) -> None:
    pts = {p.id: p for p in points if p.assumed_seq and p.is_training}
    assert len(pts) >= 5
    pred = {k: estimate_memory(p.workload).per_gpu_gib for k, p in pts.items()}
    meas = {k: p.measured_gib for k, p in pts.items()}
    order = [("tt-l2-7b-lora-qv-r8", "tt-l2-7b-lora-all-r8"), ("tt-l2-7b-lora-qv-r8", "tt-l2-7b-lora-qv-r64"),
             ("tt-l2-7b-lora-all-r8", "tt-l2-7b-lora-all-r64"), ("tt-l2-7b-lora-qv-r64", "tt-l2-7b-lora-all-r64"),
             ("tt-l2-7b-qlora", "tt-l2-7b-lora-qv-r8")]
    for small, big in order:
        assert meas[small] < meas[big] and pred[small] < pred[big], (small, big)
    # LoRA runs at the assumed length (Alpaca's longest sample) come within 10 %.
    for k in pts:
        if "lora" in k and "qlora" not in k:
            assert abs(pred[k] / meas[k] - 1) <= 0.10, k
    # The early torchtune NF4 run is heavier than our NF4 model (docs/accuracy.md): some plausible length must still
    # reproduce it, i.e. the model is not structurally unable to reach it.
    q = pts["tt-l2-7b-qlora"]
    assert estimate_memory(q.workload.with_(seq_len=4096)).per_gpu_gib >= q.measured_gib


def test_allocator_artefact_is_predicted_like_its_twin(points: list[Point]) -> None:
    by_id = {p.id: p for p in points}
    a6000, rtx = by_id["tt-8b-lora-a6000"], by_id["tt-8b-lora-4090"]
    assert a6000.allocator_artefact and not rtx.allocator_artefact
    assert a6000.workload.with_(gpu=None) == rtx.workload.with_(gpu=None)
    pred = estimate_memory(a6000.workload).per_gpu_gib
    assert pred == estimate_memory(rtx.workload).per_gpu_gib
    # The larger card's allocator reserved more than the need, never more than the card.
    assert pred < a6000.measured_gib <= a6000.gpu.usable_gib
    # ...and the need itself is close to what the smaller card, where memory was scarce, reported.
    assert abs(pred / rtx.measured_gib - 1) <= 0.15


def test_units_are_converted(points: list[Point]) -> None:
    raw = next(r for r in load_raw() if r["unit"] == "GB" and r["measured"])
    assert to_point(raw).measured_gib == pytest.approx(raw["measured"] * 1e9 / 2**30)


# --- current architectures (bench/data/measured_architectures.json) ---------------------------------------------

@pytest.fixture(scope="module")
def arch_points() -> list[Point]:
    assert ARCH_PATH.is_file()
    pts = load_arch_points()
    assert len(pts) == len(load_raw(ARCH_PATH)) >= 50
    return pts


def _stated_input_points() -> list[Point]:
    """Every inference point with a stated input length, from all three files (the second table of docs/accuracy.md)."""
    return [p for p in load_points() + load_arch_points() + load_dense_points()
            if p.input_tokens is not None and not p.is_training]


@pytest.fixture(scope="module")
def stated() -> list[Point]:
    assert DENSE_PATH.is_file()
    pts = _stated_input_points()
    assert len(load_raw(DENSE_PATH)) >= 90
    return pts


def test_short_inputs_hold_the_inference_target_at_every_size(stated: list[Point]) -> None:
    # The issue: "the targets hold for small models (1-3B) at short sequences too, where fixed costs dominate the
    # peak". 1 token in + 2048 out, 0.5B to 72B, BF16 / FP8 / GPTQ-Int4 / GPTQ-Int8 / AWQ, two benchmarks.
    short = [p for p in stated if arch_kind(p) == "short" and p.known_conditions]
    sizes = {p.workload.arch.params_b for p in short}
    assert min(sizes) < 1 and any(1 <= s <= 3.5 for s in sizes) and max(sizes) > 70
    assert {p.workload.quant for p in short} >= {Quant.NONE, Quant.FP8, Quant.GPTQ_INT4, Quant.GPTQ_INT8, Quant.AWQ}
    errors = {p.id: round(_error(p), 4) for p in short}
    assert len(errors) >= 35
    bad = {k: e for k, e in errors.items() if abs(e) > 0.05}
    assert not bad, bad


def test_long_inputs_hold_the_inference_target_where_the_prefill_shows(stated: list[Point]) -> None:
    # Qwen2.5 0.5B-72B on transformers 4.46, 6k-30k prompt tokens: the prefill working set sets the peak.
    long = [p for p in stated if arch_kind(p) == "long" and p.known_conditions]
    assert len(long) >= 60 and len({p.workload.arch.id for p in long}) >= 6
    errors = {p.id: round(_error(p), 4) for p in long}
    bad = {k: e for k, e in errors.items() if abs(e) > 0.05}
    assert not bad, bad


def test_long_inputs_whose_prefill_was_not_measured_are_never_under_estimated(stated: list[Point]) -> None:
    # Qwen3 on transformers 4.51: most long-input peaks fall below a single pass's floor, so the benchmark's
    # long-input rows are set aside (docs/accuracy.md); the estimate keeps the prefill, so they are over-estimates,
    # never an OOM for the user.
    unmeasured = [p for p in stated if arch_kind(p) == "prefill-unmeasured"]
    assert len(unmeasured) >= 50 and all(benchmark(p).startswith("QwenLM/Qwen3 ") for p in unmeasured)
    assert 2 * sum(p.below_floor for p in unmeasured) > len(unmeasured)
    under = {p.id: round(_error(p), 4) for p in unmeasured if _error(p) < -0.05}
    assert not under, under
    # the transformers 4.46 benchmark (Qwen2.5) clears the floor on every long-input row it is judged on
    long = [p for p in stated if arch_kind(p) == "long"]
    assert long and not any(p.below_floor for p in long)


def test_the_single_pass_floor_by_hand() -> None:
    pts = {p.id: p for p in load_dense_points()}
    one, p = pts["q25-3b-bf16-1"], pts["q25-3b-bf16-30720"]
    a = p.workload.arch  # Qwen2.5-3B: 36 layers, 2 KV heads of 128; hidden 2048, MLP 11008
    per_token_kv = 36 * 2 * 128 * 2 * 2
    held = one.measured_gib - per_token_kv * 2049 / 2**30  # type: ignore[operator]
    by_hand = held + per_token_kv * 30720 / 2**30 + 30720 * (2 * 2048 + 2 * 11008) * 2 / 2**30
    assert (a.hidden, a.intermediate) == (2048, 11008)
    assert single_pass_floor_gib(one, p) == pytest.approx(by_hand, rel=1e-9)
    assert p.measured_gib > by_hand and not p.below_floor


def test_a_benchmark_mostly_below_the_floor_is_set_aside_and_a_lone_row_is_flagged() -> None:
    raw = [r for r in load_raw(DENSE_PATH) if r["model"] == "qwen2.5-3b" and r["quant"] == "bf16"]
    assert len(raw) >= 4 and {r["unit"] for r in raw} == {"GiB"}
    points = flag_inconsistent([to_point(r) for r in raw])
    assert not any(p.prefill_unmeasured or p.inconsistent for p in mark_prefill_unmeasured(points))
    one = next(p for p in points if p.input_tokens == 1)
    floor = {p.id: single_pass_floor_gib(one, p) for p in points if (p.input_tokens or 0) > 2048}
    # one long row lighter than its floor: flagged alone, the benchmark's other rows still judged
    lone = min(floor)
    lowered = [{**r, "measured": round(floor[lone] - 0.05, 2)} if r["id"] == lone else r for r in raw]
    marked = {p.id: p for p in mark_prefill_unmeasured(flag_inconsistent([to_point(r) for r in lowered]))}
    assert marked[lone].inconsistent and marked[lone].below_floor
    assert not any(p.prefill_unmeasured for p in marked.values())
    # most of them lighter than their floor: every long row of the benchmark is set aside, even one that clears it
    keep = max(floor)
    lowered = [{**r, "measured": round(floor[r["id"]] - 0.05, 2)} if r["id"] in floor and r["id"] != keep
               else r for r in raw]
    marked = {p.id: p for p in mark_prefill_unmeasured(flag_inconsistent([to_point(r) for r in lowered]))}
    assert {i for i, p in marked.items() if p.prefill_unmeasured} == set(floor)
    assert not marked[keep].below_floor and not any(p.inconsistent for p in marked.values())


def test_moe_inference_points_within_5_percent(arch_points: list[Point]) -> None:
    moe = [p for p in arch_points if arch_kind(p) == "moe"]
    assert len(moe) >= 8 and all(p.workload.arch.experts > 1 for p in moe)
    errors = {p.id: round(_error(p), 4) for p in moe}
    assert all(abs(e) <= 0.05 for e in errors.values()), errors


def test_a_run_heavier_than_its_own_longer_input_is_flagged_not_judged() -> None:
    flagged = {p.id for p in load_dense_points() if p.inconsistent}
    assert flagged == {"q25-0.5b-awq-1", "q25-1.5b-awq-1", "q25-3b-awq-1"}
    assert not any(p.inconsistent for p in load_points() + load_arch_points())
    # the rule itself: a longer prompt can only add memory (the cache it adds, at least)
    raw = [r for r in load_raw(DENSE_PATH) if r["id"] in ("q25-0.5b-bf16-1", "q25-0.5b-bf16-6144")]
    raw[0] = {**raw[0], "measured": raw[1]["measured"]}  # the 1-token run as heavy as the 6144-token one
    assert [p.inconsistent for p in flag_inconsistent([to_point(r) for r in raw])] == [True, False]


def test_the_stated_input_is_the_prompt_and_the_rest_is_generated(stated: list[Point]) -> None:
    for p in stated:
        w = p.workload
        assert w.prompt_len == p.input_tokens and w.seq_len == p.input_tokens + int(p.raw["generated_tokens"])
    # one input 1 + 2048 generated is lighter than a 2049-token prompt (no prefill working set to speak of)
    p = next(p for p in stated if p.id == "q3-1.7b-bf16-1")
    assert estimate_memory(p.workload).per_gpu_gib < estimate_memory(p.workload.with_(prompt_len=None)).per_gpu_gib


# --- one component of MoE / MLA / sliding-window models (bench/data/measured_components.json) --------------------

@pytest.fixture(scope="module")
def component_points() -> list[ComponentPoint]:
    assert COMPONENTS_PATH.is_file()
    pts = load_component_points()
    assert len(pts) == len(load_raw(COMPONENTS_PATH)) >= 10
    for p in pts:  # every point says where it is from and what the engine printed
        assert p.raw["source"].startswith("https://") and p.raw["quote"] and p.raw["engine"], p.id
    return pts


def test_component_points_within_5_percent(component_points: list[ComponentPoint]) -> None:
    # MLA and hybrid local/global attention, KV caches and natively quantised weights are all represented.
    assert {p.attention for p in component_points} >= {"mla", "hybrid"}
    assert {p.component for p in component_points} == {"kv_cache", "weights"}
    assert any(p.workload.arch.experts > 1 and p.component == "weights" for p in component_points)
    errors = {p.id: round(p.predicted_gib() / p.measured_gib - 1, 4) for p in component_points}
    assert all(abs(e) <= 0.05 for e in errors.values()), errors


def test_sliding_window_layers_keep_window_plus_batch_as_llama_cpp_allocates(
        component_points: list[ComponentPoint]) -> None:
    # Gemma-3-270M: 3 global + 15 sliding layers, one KV head of 256 (K+V f16 = 1024 bytes per token-layer), a
    # 512-token window. llama-server gave each sequence window + n_ubatch (512) cells on the sliding layers, capped
    # by the context; counting the window alone is far under (the table's last column).
    gemma = [p for p in component_points if p.workload.arch.id == "gemma-3-270m"]
    assert len(gemma) >= 5
    for p in gemma:
        ctx, n = p.workload.seq_len, p.workload.concurrency
        by_hand = (3 * ctx + 15 * min(ctx, 512 + 512)) * 1024 * n / 2**30
        assert p.measured_gib == pytest.approx(by_hand, rel=1e-6), p.id
        assert p.predicted_gib() == pytest.approx(by_hand, rel=1e-6), p.id
    window_only = [window_only_gib(p) / p.measured_gib - 1 for p in gemma]  # type: ignore[operator]
    assert min(window_only) < -0.15


def test_mla_cache_is_the_latent_and_rope_key(component_points: list[ComponentPoint]) -> None:
    r1 = next(p for p in component_points if p.id == "dsr1-kv-16k-mla")
    # 61 layers x (kv_lora_rank 512 + rope 64) x 2 bytes x 16384 tokens = 1098 MiB, not 128 heads' K and V
    assert r1.measured_gib * 2**30 == 61 * (512 + 64) * 2 * 16384
    assert r1.predicted_gib() == pytest.approx(r1.measured_gib, rel=1e-9)
