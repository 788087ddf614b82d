"""The fast path behind an inline answer gives exactly what the plain computation gives.

`core.fit` answers from plain floats (`core.estimator.prepare` / `need`), a catalog order computed once and Fit
objects built without the frozen dataclass's `__init__`; `core.estimator` computes the configuration-independent
part of a workload once. None of that may change a number or an order: the fits are compared, exactly, with a
reference written the obvious way from the public, pydantic-model path (`estimate_memory(config_for(...))` for
every card and count, then a sort), and a few breakdowns are pinned to the values the straightforward
implementation gave before the fast path existed (change them only with a deliberate change of the model).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.defaults import complete
from core.engines import runs_on
from core.estimator import estimate_memory, estimate_on, need, prepare
from core.fit import (
    DEFAULT_COUNTS,
    Fit,
    Requirement,
    _fits_at,
    _named_gpus,
    config_for,
    fit_configs,
    requirement,
)
from core.gpus import GPUS, get_gpu
from core.parser import ParseError, parse_workload
from core.workload import Attention, Engine, Strategy, Workload

# the engines that put whole layers on each GPU (their docs: llama.cpp --split-mode layer, Ollama, accelerate's
# device_map="auto" under transformers)
LAYER_SPLIT = {Engine.LLAMA_CPP, Engine.OLLAMA, Engine.TRANSFORMERS}

PHRASES = [
    "13B LoRA", "70b qlora", "7B full fine-tune", "полное дообучение 7B", "70B QLoRA ctx 8k bs 4",
    "llama-3.1-8b lora r16 seq 4096", "Qwen2.5-72B inference 32k", "инференс 70B int4, контекст 32k, 8 пользователей",
    "mixtral qlora", "405B QLoRA на 8 GPU", "13B LoRA 10k примеров 3 эпохи", "7B LoRA, 5k examples x 3 epochs",
    "70B full fine-tune zero3 on 8 H100", "8B QLoRA on 4090", "32B lora ctx 16k", "7B lora on T4", "13B full on V100",
    "7B inference ctx 128k on T4", "70B inference tp 4", "70B inference 8 users ctx 32k", "8x22B inference awq",
    "7B full fine-tune adamw 8bit 4 GPU ddp", "13B full zero2 2 gpus", "70B full fine-tune offload all",
    "70B full fine-tune cpu offload", "8B inference q4_k_m", "3B lora fused ce eager",
    "0.5B full no gradient checkpointing", "7B freeze paged adam", "14B qlora nf4 dq ctx 32k bs 8",
    "405B inference fp8 kv fp8", "72B lora r64 q,v on 2x A100 80GB",
    "7B full fine-tune on 3 GPU", "7B lora bf16-true on 8x H200", "405B full fine-tune", "8B lora fp32 on 2 L40S",
]


def _workloads() -> list[Workload]:
    return [complete(parse_workload(p))[0] for p in PHRASES]


def _reference_fits(w: Workload, gpus: tuple, counts: tuple[int, ...]) -> list[Fit]:
    """Every card x count through the pydantic MemoryEstimate, kept when it fits, then sorted: the obvious way."""
    out: list[Fit] = []
    for c in counts:
        cfg = config_for(w, c)
        if c > 1 and cfg.strategy is Strategy.TP and w.arch.heads % c and w.engine not in LAYER_SPLIT:
            continue  # tensor parallelism must divide the attention heads; a layer split runs on any count
        for g in gpus:
            if not runs_on(w, g):
                continue  # the engine cannot run the workload's precision there (FP8 weights on a T4)
            est = estimate_memory(config_for(w, c, eager=not g.bf16))
            # a preallocating engine (vLLM: gpu_memory_utilization) lets the workload use `claim` of the card
            # an OOM is decided by the reserved peak (inference: allocated + the allocator's free cached blocks)
            extra = est.fragmentation_gib if est.basis == "allocated" else 0.0
            need_gib = (est.per_gpu_gib + extra + est.runtime_gib) / est.claim if est.claim != 1.0 else \
                est.per_gpu_gib + extra + est.runtime_gib
            if need_gib <= g.usable_gib:
                rec = (est.recommended_per_gpu_gib + extra + est.runtime_gib) / est.claim if est.claim != 1.0 else \
                    est.recommended_per_gpu_gib + extra + est.runtime_gib
                out.append(Fit(g.id, g.name, c, est.per_gpu_gib, g.usable_gib, need_gib / g.usable_gib, est.strategy,
                               need_gib, rec, rec > g.usable_gib))
    out.sort(key=lambda f: (f.count, f.tight, f.usable_gib * f.count, f.utilization))
    return out


@pytest.mark.parametrize("phrase", PHRASES)
def test_fit_configs_equal_the_reference_exactly(phrase: str) -> None:
    w, _ = complete(parse_workload(phrase))
    fit_configs.cache_clear()
    report = fit_configs(w)
    named = _named_gpus(w)  # a family name: each of its variants
    counts = (w.gpus,) if w.gpus > 1 else DEFAULT_COUNTS
    expected = _reference_fits(w, named or GPUS, counts)
    assert report.fits == expected  # dataclass equality: every float bit for bit, and the order
    assert all(type(f) is Fit for f in report.fits)
    assert bool(report.advice) == (not expected)


def test_requirement_numbers_equal_the_memory_estimates() -> None:
    for w in _workloads():
        req = Requirement(w)
        for count in (*DEFAULT_COUNTS, 3, 16, 64):
            for eager in (False, True):
                est = req.estimate(count, eager=eager)
                assert req.need_gib(count, eager=eager) == est.need_gib
                assert req._numbers(count, eager) == (est.per_gpu_gib, est.need_gib,
                                                      est.recommended_need_gib, est.strategy)
            assert req.per_gpu_gib(count) == req.estimate(count).per_gpu_gib
        assert req.min_gib_by_count == {c: (req.estimate(c).need_gib if req.runnable(c) else float("inf"))
                                        for c in DEFAULT_COUNTS}


def test_prepared_workload_answers_like_estimate_on() -> None:
    for w in _workloads():
        p = prepare(w)
        for gpus in (1, 2, 8):
            for strategy in Strategy:
                for attention in Attention:
                    est = estimate_on(w, gpus, strategy, attention)
                    peak, need_gib, rec, eff = need(p, gpus, strategy, attention)
                    assert (peak, need_gib, rec, eff) == (est.per_gpu_gib, est.need_gib,
                                                         est.recommended_need_gib, est.strategy)


# (phrase, gpus, strategy, attention) -> breakdown GiB (weights, states, activations, logits, kv, overhead), peak,
# recommended, CPU RAM: what the straightforward implementation computed before the fast path.
# Re-pinned when the catalog became generated data (parameter counts to the unit of a config, not two decimals),
# and for the two inference cases when the prefill working set counted four hidden-width tensors (not two) and GPTQ
# its ExLlama scratch buffer (issue 9: bench/data/measured_dense.json).
PINNED = [
    (('llama-3.1-8b qlora', 1, 'single', 'flash'),
     (5.6132838651537895, 0.625, 1.0625, 3.9140625, 0.0, 0.826953125),
     12.041799490153789, 13.245979439169169, 0.0),
    (('70B full fine-tune', 8, 'zero3', 'flash'),
     (16.427133232355118, 114.98993262648582, 3.1328125, 3.9140625, 0.0, 3.789918833971024),
     142.25385969281197, 163.59193864673375, 0.0),
    (('13B lora fp32 eager', 2, 'ddp', 'eager'),
     (48.48837852478027, 0.9326171875, 3.41796875, 0.9765625, 0.0, 0.6559910774230957),
     54.47151803970337, 62.64224574565887, 0.0),
    (('Qwen2.5-72B inference 32k 8 users', 4, 'tp', 'flash'),
     (33.85636955499649, 0.0, 3.353515625, 0.00226593017578125, 20.0, 0.18928184777498244),
     57.40143295794726, 63.14157625374199, 0.0),
    (('70B full fine-tune offload all', 2, 'zero3', 'eager'),
     (0.0, 0.0, 4.3828125, 3.9140625, 0.0, 5.809450083971024),
     14.106325083971024, 16.222273846566676, 1577.0047903060913),
    (('8x7B inference int4 ctx 16k', 1, 'single', 'eager'),
     (22.97901839017868, 0.0, 35.125, 0.0002384185791015625, 2.0, 0.24427009195089341),
     60.34852690070868, 63.365953245744116, 0.0),
    (('7B freeze paged adam', 2, 'zero2', 'flash'),
     (14.185905456542969, 1.302389144897461, 0.40234375, 4.640625, 0.0, 0.6884129524230957),
     21.219676303863526, 24.402627749443052, 0.8682594299316406),
]


@pytest.mark.parametrize(("case", "terms", "peak", "recommended", "cpu"), PINNED, ids=[c[0][0] for c in PINNED])
def test_pinned_breakdowns(case: tuple[str, int, str, str], terms: tuple[float, ...], peak: float,
                           recommended: float, cpu: float) -> None:
    phrase, gpus, strategy, attention = case
    # the engine-neutral model these were pinned on (engines' own terms: core/engines.py)
    w = complete(parse_workload(phrase))[0].with_(engine=None)
    est = estimate_on(w, gpus, Strategy(strategy), Attention(attention))
    b = est.breakdown
    got = (b.weights, b.trainable_states, b.activations, b.logits, b.kv_cache, b.overhead)
    assert got == pytest.approx(terms, rel=1e-12, abs=1e-12)
    assert est.per_gpu_gib == pytest.approx(peak, rel=1e-12)
    assert est.recommended_per_gpu_gib == pytest.approx(recommended, rel=1e-12)
    assert est.cpu_ram_gib == pytest.approx(cpu, rel=1e-12, abs=1e-12)
    assert need(prepare(w), gpus, Strategy(strategy), Attention(attention))[0] == est.per_gpu_gib


def test_a_fit_is_immutable() -> None:
    fit = Fit("h100-sxm", "H100 SXM", 2, 41.5, 79.22, 0.53, Strategy.FSDP, 42.0, 46.0, False)
    assert fit.total_memory_gib == pytest.approx(2 * 79.22)
    with pytest.raises(AttributeError):
        fit.count = 4  # type: ignore[misc]


def test_ties_mixing_bf16_and_non_bf16_cards_still_sort_by_utilization() -> None:
    """Cards with the same usable memory but different attention kernels tie on (total memory, count): the fast
    path must fall back to the full sort there (the catalog has no such tie today; a card added later might)."""
    t4 = get_gpu("t4")
    twin = replace(get_gpu("rtx-4080"), id="twin", name="Twin", usable_gib=t4.usable_gib)  # BF16, same memory
    gpus = (t4, twin, *GPUS[2:6])
    for w in _workloads():
        counts = (1, 2)
        got = _fits_at(requirement(w), gpus, counts)
        assert got == _reference_fits(w, gpus, counts)


@pytest.mark.parametrize("suffix", ["lora", "inference 32k", "qlora ctx 8k bs 2", "full fine-tune",
                                    "inference 4 users"])
def test_fits_of_the_whole_catalog_equal_the_reference(suffix: str) -> None:
    """Every model of the catalog, one workload each: the fits as built (settled by bisection where no card without
    BF16 holds the workload, by filtering where one does; each Fit made when read) equal the obvious computation,
    and reading a prefix first gives the same fits as reading the whole list."""
    from core.models import MODELS

    for arch in MODELS[::3]:
        try:
            w, _ = complete(parse_workload(f"{arch.id} {suffix}"))
        except ParseError:  # a context longer than the model's own
            continue
        expected = _reference_fits(w, GPUS, DEFAULT_COUNTS)
        fits = _fits_at(Requirement(w), GPUS, DEFAULT_COUNTS)
        assert len(fits) == len(expected), arch.id
        assert fits[:4] == expected[:4] and fits[-1:] == expected[-1:], arch.id
        assert fits == expected and list(fits) == expected, arch.id


def test_fits_read_like_a_list() -> None:
    """`FitReport.fits` builds each Fit when first read: indexing (negative too), slices, iteration, length and
    equality behave as the list they stand for, whichever part is read first."""
    w, _ = complete(parse_workload("13B LoRA"))
    expected = _reference_fits(w, GPUS, DEFAULT_COUNTS)
    n = len(expected)
    assert n > 20
    for first in (lambda f: f[0], lambda f: f[-1], lambda f: f[3:7], lambda f: f[::-1], lambda f: f[-5:],
                  lambda f: list(f), lambda f: len(f)):
        fits = _fits_at(Requirement(w), GPUS, DEFAULT_COUNTS)
        first(fits)
        assert len(fits) == n and bool(fits)
        assert fits[0] == expected[0] and fits[-1] == expected[-1] and fits[n // 2] == expected[n // 2]
        assert fits[2:9] == expected[2:9] and fits[::-3] == expected[::-3] and fits[-4:] == expected[-4:]
        assert list(fits) == expected and fits == expected and expected == fits
        assert fits == _fits_at(Requirement(w), GPUS, DEFAULT_COUNTS)
        assert expected[5] in fits and fits.index(expected[5]) == 5
    fits = _fits_at(Requirement(w), GPUS, DEFAULT_COUNTS)
    for bad in (n, -n - 1):
        with pytest.raises(IndexError):
            fits[bad]
    assert fits != expected[:-1] and fits != tuple(expected)
    assert not _fits_at(Requirement(complete(parse_workload("405B full fine-tune"))[0]), GPUS, DEFAULT_COUNTS)
