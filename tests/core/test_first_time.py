"""What makes a first-time estimate cheap changes no answer.

A running bot warms up at start-up (`bot.estimates.warm_up` -> `core.answer.warm_up`: the parser's scanners, the
model and card indexes, every architecture's numbers, the fit plans of every card and family); fit plans of named
cards are kept by card ids; a report's advice is worked out when first read; the smallest fit of an alternative is
found from each count's first fitting pair instead of building every fit. Each is checked here against the
straightforward computation over many generated workloads, and the whole answer (JSON and the bot's text, both
languages) of a process that warmed up against one that did not.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.defaults import complete
from core.fit import (
    DEFAULT_COUNTS,
    WARM_COUNTS,
    _advice,
    _fits_in_plan_order,
    _named_gpus,
    _plan,
    _plan_for,
    _smallest_fit,
    fit_configs,
    requirement,
)
from core.gpus import GPUS, families
from core.models import MODELS, TYPICAL_FOR_SIZE
from core.parser import ParseError, parse_workload
from core.workload import Workload
from tests.core.test_estimate_equivalence import _reference_fits

ROOT = Path(__file__).resolve().parents[2]

_METHODS = ("inference", "LoRA", "QLoRA", "full fine-tune", "инференс", "полное дообучение", "freeze")
_EXTRAS = ("", "ctx 8k", "контекст 16к", "seq 1024", "bs 4", "батч 8", "8 users", "16 пользователей", "int4", "awq",
           "fp8", "q4_k_m", "on vllm", "on llama.cpp", "на ollama", "with unsloth", "через axolotl", "zero3",
           "offload all", "10k examples x 3 epochs", "fused ce")
_GPUS = ("", "on 4090", "on 2x 4090", "on H100", "on 8x H100", "на 4x A100", "on A100 80GB", "on T4", "on 2x V100",
         "on L40S", "на 8 H200", "on 3x A6000", "on 16 B200", "on MI300X", "on 8 GPU", "on 3 GPUs")


def _names() -> list[str]:
    return [f"{k}B" for k in TYPICAL_FOR_SIZE] + [a.id for a in MODELS]


phrases = st.builds(lambda m, meth, a, b, g: " ".join(x for x in (m, meth, a, b, g) if x),
                    st.sampled_from(_names()), st.sampled_from(_METHODS), st.sampled_from(_EXTRAS),
                    st.sampled_from(_EXTRAS), st.sampled_from(_GPUS))


def _workload(phrase: str) -> Workload | None:
    try:
        return complete(parse_workload(phrase))[0]
    except ParseError:
        return None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(phrases)
def test_fits_of_named_cards_and_counts_equal_the_reference(phrase: str) -> None:
    """Plans of named cards found by their ids give the fits the plain every-card-every-count computation gives."""
    w = _workload(phrase)
    if w is None:
        return
    fit_configs.cache_clear()
    report = fit_configs(w)
    named = _named_gpus(w)
    counts = (w.gpus,) if w.gpus > 1 or w.gpus_stated else DEFAULT_COUNTS
    assert report.fits == _reference_fits(w, named or GPUS, counts)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(phrases)
def test_smallest_fit_is_the_least_memory_of_every_fit(phrase: str) -> None:
    w = _workload(phrase)
    if w is None:
        return
    alt = w.with_(gpu=None, gpu_family=(), gpus=1)
    every = _fits_in_plan_order(requirement(alt), GPUS, DEFAULT_COUNTS)
    expected = min(every, key=lambda f: (f.usable_gib * f.count, f.count)) if every else None
    assert _smallest_fit(alt) == expected


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(phrases)
def test_advice_read_later_is_the_advice_worked_out_at_once(phrase: str) -> None:
    w = _workload(phrase)
    if w is None:
        return
    fit_configs.cache_clear()
    report = fit_configs(w)
    named = _named_gpus(w)
    roomiest = max(named, key=lambda g: g.usable_gib) if named else None
    expected = [] if report.fits else _advice(w, requirement(w), roomiest)
    assert report.advice == expected
    assert report.advice is report.advice  # worked out once


def test_every_warmed_plan_is_the_plan_built_afresh() -> None:
    named = [(g,) for g in GPUS] + [f for f in families() if len(f) > 1]
    for counts in WARM_COUNTS:
        assert _plan_for(GPUS, counts) == _plan.__wrapped__(GPUS, counts)
        for gpus in named:
            assert _plan_for(gpus, counts) == _plan.__wrapped__(gpus, counts)


# --- the whole answer, with and without the start-up warm-up, each in a fresh process ---------------------------

_ANSWERS = """
import json, sys
from bot import estimates
from bot.views import render_estimate
from gpuradar.estimate_view import to_json
if sys.argv[1] == "warm":
    estimates.warm_up()
out = []
for phrase in json.loads(sys.argv[2]):
    est = estimates.Estimator().get(phrase)
    if not isinstance(est, estimates.Estimate):
        out.append([phrase, type(est).__name__, est.message("en"), est.message("ru")])
        continue
    out.append([phrase, to_json(est.answer, "en"), to_json(est.answer, "ru"),
                render_estimate(est, [], "en", "USD"), render_estimate(est, [], "ru", "RUB", assumptions=False)])
print(json.dumps(out, ensure_ascii=False, sort_keys=True))
"""


def _generated(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    names = _names()
    out: dict[str, None] = {}
    while len(out) < n:
        words = [rng.choice(names), rng.choice(_METHODS), rng.choice(_EXTRAS), rng.choice(_GPUS)]
        out.setdefault(" ".join(x for x in words if x), None)
    return list(out)


def _answers(mode: str, phrases: list[str]) -> list[object]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    run = subprocess.run([sys.executable, "-c", _ANSWERS, mode, json.dumps(phrases)], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=True, timeout=600)
    got: list[object] = json.loads(run.stdout)
    return got


def test_a_warmed_up_process_answers_exactly_like_a_cold_one() -> None:
    phrases = _generated(120, seed=21)
    cold, warm = _answers("cold", phrases), _answers("warm", phrases)
    assert len(cold) == len(phrases)
    assert sum(1 for row in cold if isinstance(row, list) and isinstance(row[1], dict)) > 60  # mostly answers
    assert warm == cold


def test_every_warm_up_phrase_is_an_answer() -> None:
    """`bot.estimates.warm_up` walks the answer path with these: a phrase the parser stopped reading would warm
    nothing."""
    from bot.estimates import WARM_PHRASES, Estimate, Estimator

    for phrase in WARM_PHRASES:
        assert isinstance(Estimator().get(phrase), Estimate), phrase

