"""Preference objectives (DPO, IPO, ORPO, SimPO, CPO, KTO): read from phrases and options, sized as what TRL's
trainers run (`core.objectives`), and online reinforcement tuning still refused with why."""

from __future__ import annotations

from typing import Any

import pytest

from core.estimator import Breakdown, estimate_memory
from core.fit import fit_configs
from core.gpus import get_gpu
from core.objectives import OBJECTIVES
from core.parser import ParseError, parse_workload
from core.speed import training_speed
from core.timecost import estimate_time, flops_per_token, trained_tokens
from core.workload import Method, Objective, Strategy
from tests.core.test_estimator import wl
from texts.i18n import render


def breakdown(**kw: Any) -> Breakdown:
    return estimate_memory(wl(**kw)).breakdown


def forward(w: Any) -> float:
    a = w.arch
    return 2.0 * a.active_params_b * 1e9 + 2.0 * a.layers * a.q_dim * w.seq_len


# --- memory ---------------------------------------------------------------------------------------------------------

def logits_bytes(b: Breakdown) -> float:
    return b.logits * 2**30


@pytest.mark.parametrize("method", ["full", "lora", "qlora"])
@pytest.mark.parametrize("objective", [Objective.ORPO, Objective.SIMPO, Objective.CPO])
def test_a_reference_free_pair_is_twice_the_batch_with_its_own_loss(method: str, objective: Objective) -> None:
    """Chosen and rejected run as one batch and nothing else runs: the fine-tune's weights, states and activations
    at twice the batch; the loss holds the 16-bit logits, their log-softmax and the chosen half's NLL (5 bytes)."""
    pair, sft = breakdown(method=method, objective=objective, batch=2), breakdown(method=method, batch=4)
    assert (pair.weights, pair.trainable_states, pair.activations) == (sft.weights, sft.trainable_states,
                                                                       sft.activations)
    w = wl(batch=2)
    assert logits_bytes(pair) == pytest.approx(2 * 2 * w.seq_len * w.arch.vocab * 5.0)
    # a fused loss chunks them as the fine-tune's: then it is exactly the fine-tune at twice the batch
    assert breakdown(method=method, objective=objective, batch=2, fused_ce=True) == breakdown(
        method=method, batch=4, fused_ce=True)


@pytest.mark.parametrize("objective", [Objective.DPO, Objective.IPO, Objective.KTO])
def test_a_reference_is_a_second_copy_only_when_every_weight_trains(objective: Objective) -> None:
    sft_full, full = breakdown(method="full"), breakdown(method="full", objective=objective)
    assert full.weights == pytest.approx(2 * sft_full.weights)  # the frozen reference beside the trained copy
    for method in ("lora", "qlora"):  # the base with the adapter switched off is the reference
        assert breakdown(method=method, objective=objective).weights == breakdown(method=method).weights
    # sharded as the trained copy is
    zero3 = {"method": "full", "gpus": 4, "strategy": Strategy.ZERO3}
    assert breakdown(**zero3, objective=objective).weights == pytest.approx(2 * breakdown(**zero3).weights)


def test_dpo_holds_the_reference_forward_beside_the_pair() -> None:
    """The pair's activations, its loss over the 16-bit logits (logits and log-softmax, 4 bytes), and the reference's
    16-bit logits (2 bytes) and one layer's working set while they wait for the backward; fused losses chunk both."""
    dpo, pair = breakdown(objective=Objective.DPO), breakdown(batch=2)
    assert dpo.activations > pair.activations and dpo.weights == pair.weights
    w = wl(objective=Objective.DPO)
    assert logits_bytes(dpo) == pytest.approx(2 * w.seq_len * w.arch.vocab * (4.0 + 2.0))
    fused = breakdown(objective=Objective.DPO, fused_ce=True)
    assert logits_bytes(fused) == pytest.approx(2 * w.seq_len * w.arch.vocab * (1.0 + 1.0))


def test_kto_trains_one_sequence_and_forwards_the_rest_without_gradients() -> None:
    kto, sft = breakdown(objective=Objective.KTO), breakdown()
    assert sft.activations < kto.activations < breakdown(batch=2).activations
    w = wl(objective=Objective.KTO)
    assert logits_bytes(kto) == pytest.approx(w.seq_len * w.arch.vocab * (4.0 + 2.0))


# --- compute and time -------------------------------------------------------------------------------------------

def test_flops_add_the_forwards_without_gradients() -> None:
    sft = wl(method="lora")
    for objective, extra in ((Objective.DPO, 1), (Objective.KTO, 3), (Objective.ORPO, 0), (Objective.SIMPO, 0)):
        w = wl(method="lora", objective=objective)
        assert flops_per_token(w) == pytest.approx(flops_per_token(sft) + extra * forward(w)), objective


def test_a_pair_trains_both_answers_and_takes_longer() -> None:
    data = {"examples": 10_000, "tokens_per_example": 512, "epochs": 1.0}
    sft, dpo = wl(method="lora", **data), wl(method="lora", objective=Objective.DPO, **data)
    assert trained_tokens(dpo) == 2 * trained_tokens(sft) == 2 * 10_000 * 512
    assert trained_tokens(wl(method="lora", objective=Objective.KTO, **data)) == trained_tokens(sft)
    h100 = get_gpu("h100-sxm")
    # per trained token DPO is slower (the reference's forward), never faster
    assert training_speed(dpo, h100, 1).tokens_per_second < training_speed(sft, h100, 1).tokens_per_second
    t_sft = estimate_time(sft, fit_configs(sft).fits, extra=(("h100-sxm", 1),))
    t_dpo = estimate_time(dpo, fit_configs(dpo).fits, extra=(("h100-sxm", 1),))
    assert t_sft is not None and t_dpo is not None
    hours = {(c.gpu, c.count): c.hours for c in t_sft.per_config}
    assert all(c.hours > 2 * hours[(c.gpu, c.count)] for c in t_dpo.per_config if (c.gpu, c.count) in hours)


def test_every_objective_has_its_source() -> None:
    assert set(OBJECTIVES) == set(Objective)
    assert all(f.source for f in OBJECTIVES.values())
    assert all(f.graded >= 1 and (f.nograd_forwards == 0) == (f.nograd_sequences == 0) for f in OBJECTIVES.values())


# --- phrases ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("phrase", "method", "objective"), [
    ("7B LoRA DPO", Method.LORA, Objective.DPO),
    ("dpo qlora llama 3 8b", Method.QLORA, Objective.DPO),
    ("llama 3 8b dpo lora", Method.LORA, Objective.DPO),  # spaced after the name: the objective, not a checkpoint
    ("mistral 7b dpo full", Method.FULL, Objective.DPO),
    ("qwen2.5 7b orpo lora", Method.LORA, Objective.ORPO),
    ("8B full SimPO", Method.FULL, Objective.SIMPO),
    ("13b kto лора", Method.LORA, Objective.KTO),
    ("7B IPO QLoRA", Method.QLORA, Objective.IPO),
    ("лама 3 8b дпо кулора", Method.QLORA, Objective.DPO),
])
def test_a_preference_objective_is_read(phrase: str, method: Method, objective: Objective) -> None:
    spec = parse_workload(phrase)
    assert (spec.method, spec.objective) == (method, objective)


def test_a_checkpoint_named_for_its_tuning_keeps_its_name() -> None:
    spec = parse_workload("llama-3-8b-dpo lora")
    assert spec.model == "llama-3-8b" and spec.objective is None


def test_an_objective_without_a_method_asks_which_way_and_keeps_it() -> None:
    with pytest.raises(ParseError) as info:
        from core.defaults import complete
        complete(parse_workload("7B DPO"))
    assert "«7B DPO LoRA»" in render("en", info.value.explain())
    assert "«7B DPO QLoRA»" in render("ru", info.value.explain())


def test_an_objective_is_no_inference() -> None:
    from core.defaults import complete
    with pytest.raises(ParseError) as info:
        complete(parse_workload("7B DPO inference"))
    assert "does not apply to inference" in render("en", info.value.explain())
    assert "DPO" in render("ru", info.value.explain())


@pytest.mark.parametrize(("phrase", "named"), [
    ("grpo qwen2.5 7b", "grpo"), ("70B QLoRA then PPO", "PPO"), ("rlhf 13b lora", "rlhf"), ("8b lora rloo", "rloo"),
    ("7b online dpo lora", "online dpo"),
])
def test_online_reinforcement_tuning_is_refused_with_why(phrase: str, named: str) -> None:
    """Sampling answers while training (a generation engine, groups, reward models) is not guessed: said as not
    sized yet, never estimated as the fine-tune or the offline objective it resembles."""
    with pytest.raises(ParseError) as info:
        parse_workload(phrase)
    assert named in info.value.not_understood and info.value.choices == ()
    assert "reinforcement tuning" in render("en", info.value.explain())
    assert "с подкреплением" in render("ru", info.value.explain())


# --- the reference's log-probs computed before training ------------------------------------------------------------

def test_a_precomputed_reference_leaves_memory_while_training() -> None:
    """TRL's `precompute_ref_log_probs`: no reference copy and no reference forward while training, the same
    compute in all; KTO keeps the policy's own forward on its KL answers."""
    full = breakdown(method="full", objective=Objective.DPO, ref_precomputed=True)
    assert full.weights == breakdown(method="full").weights
    lora = breakdown(objective=Objective.DPO, ref_precomputed=True)
    assert lora.activations == breakdown(batch=2).activations  # no reference forward's working set
    w = wl(objective=Objective.DPO)
    assert logits_bytes(lora) == pytest.approx(2 * w.seq_len * w.arch.vocab * 4.0)  # nor its logits
    # KTO's own forward on the KL answers stays: one forward without gradients at a time, as before
    assert breakdown(objective=Objective.KTO, ref_precomputed=True) == breakdown(objective=Objective.KTO)
    kto_full = breakdown(method="full", objective=Objective.KTO, ref_precomputed=True)
    assert kto_full.weights == breakdown(method="full").weights
    dpo = wl(objective=Objective.DPO)
    assert flops_per_token(dpo.with_(ref_precomputed=True)) == flops_per_token(dpo)


def test_precomputing_is_read_said_and_offered_as_a_remedy() -> None:
    from core.defaults import complete
    from core.remedies import CHANGES, apply, split_changes

    for phrase in ("8b full dpo precompute_ref_log_probs=True", "8b full dpo, precomputed reference log probs",
                   "8b полное дообучение dpo, предвычисленные опорные логвероятности"):
        w, notes = complete(parse_workload(phrase))
        assert w.ref_precomputed and w.objective is Objective.DPO
        said = render("en", next(n.msg for n in notes if n.key == "objective"))
        assert "computed before training" in said
    with pytest.raises(ParseError) as info:
        complete(parse_workload("8b lora precomputed reference"))
    assert "DPO, IPO, KTO" in render("en", info.value.explain())
    w = wl(method="full", objective=Objective.DPO)
    change = CHANGES["precompute_ref"][0]
    assert change(w) == w.with_(ref_precomputed=True) and change(w.with_(ref_precomputed=True)) is None
    assert change(wl(method="full", objective=Objective.ORPO)) is None and change(wl(method="full")) is None
    text, codes = split_changes("8b full dpo [+precompute_ref]")
    assert apply(complete(parse_workload(text))[0], codes).ref_precomputed


@pytest.mark.parametrize(("phrase", "examples"), [
    ("8b lora dpo 5k preference pairs", 5000), ("8b lora orpo 20k chosen/rejected pairs", 20000),
    ("8b lora dpo 10к пар", 10000), ("8b lora kto 10k labeled samples", 10000),
])
def test_a_preference_dataset_is_counted_in_its_pairs(phrase: str, examples: int) -> None:
    assert parse_workload(phrase).examples == examples
