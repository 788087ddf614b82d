"""The catalog: every family the issue lists is understood under the names people write, with the parameter count
of its model card (the count from the shape, `count_params`, within a few percent) and, for MoE models, the
active size. Card figures below are the model cards' / safetensors indexes' totals."""

from __future__ import annotations

import json
import re

import pytest

from core.models import (
    DATA,
    MODELS,
    Arch,
    count_params,
    did_you_mean,
    family_members,
    find_model,
    get_model,
    typical_member,
)
from core.parser import parse_workload

# (name as people write it, card total B, card active B or None, tolerance of the shape count)
CARDS: list[tuple[str, float, float | None, float]] = [
    ("Llama-2-7B", 6.74, None, 0.03), ("llama 2 13b chat", 13.0, None, 0.03), ("Llama-2-70b-hf", 69.0, None, 0.03),
    ("Meta-Llama-3-8B-Instruct", 8.03, None, 0.03), ("meta-llama/Llama-3.1-8B-Instruct", 8.03, None, 0.03),
    ("Llama-3.1-70B", 70.6, None, 0.03), ("llama 3.1 405b", 405.9, None, 0.03), ("Llama-3.2-1B", 1.24, None, 0.03),
    ("llama 3.2 3b instruct", 3.21, None, 0.03), ("Llama-3.2-11B-Vision", 10.7, None, 0.03),
    ("Llama-3.2-90B-Vision-Instruct", 88.6, None, 0.03), ("llama 3.3 70b instruct", 70.6, None, 0.03),
    ("Llama-4-Scout-17B-16E-Instruct", 109, 17, 0.03), ("Llama 4 Maverick", 400, 17, 0.03),
    ("Qwen1.5-7B-Chat", 7.72, None, 0.03), ("Qwen1.5-72B", 72.3, None, 0.03), ("Qwen1.5-MoE-A2.7B", 14.3, 2.7, 0.03),
    ("Qwen2-7B-Instruct", 7.62, None, 0.03), ("Qwen2-72B", 72.7, None, 0.03), ("Qwen2-57B-A14B", 57.4, 14, 0.03),
    ("Qwen2.5-0.5B-Instruct", 0.49, None, 0.03), ("qwen2.5 7b", 7.61, None, 0.03), ("Qwen2.5-14B", 14.7, None, 0.03),
    ("Qwen2.5-32B-Instruct", 32.8, None, 0.03), ("Qwen2.5-72B", 72.7, None, 0.03),
    ("Qwen2.5-Coder-32B-Instruct", 32.8, None, 0.03), ("Qwen2.5-VL-7B-Instruct", 8.29, None, 0.03),
    ("Qwen/Qwen2.5-VL-72B-Instruct", 73.4, None, 0.03), ("Qwen3-0.6B", 0.6, None, 0.03),
    ("Qwen3-1.7B", 1.7, None, 0.03),
    ("Qwen3-4B", 4.0, None, 0.03), ("qwen3 8b", 8.2, None, 0.03), ("Qwen3-14B", 14.8, None, 0.03),
    ("qwen3 32b", 32.8, None, 0.03), ("Qwen3-30B-A3B", 30.5, 3.3, 0.03),
    ("Qwen3-30B-A3B-Instruct-2507", 30.5, 3.3, 0.03),
    ("Qwen3-235B-A22B", 235, 22, 0.03), ("Qwen3-235B-A22B-Thinking-2507", 235, 22, 0.03),
    ("gemma-2b", 2.51, None, 0.03), ("gemma-7b-it", 8.54, None, 0.03), ("gemma-2-2b-it", 2.61, None, 0.03),
    ("gemma 2 9b", 9.24, None, 0.03), ("gemma-2-27b", 27.2, None, 0.03), ("gemma-3-1b-it", 1.0, None, 0.03),
    ("gemma-3-4b-it", 4.3, None, 0.03), ("gemma-3-12b-it", 12.2, None, 0.03), ("gemma-3-27b-it", 27.4, None, 0.03),
    ("Mistral-7B-Instruct-v0.3", 7.25, None, 0.03), ("mistral 7b", 7.24, None, 0.03),
    ("Mistral-Nemo-Instruct-2407", 12.2, None, 0.03), ("Mistral-Small-24B", 23.6, None, 0.03),
    ("Mistral-Small-3.1-24B-Instruct-2503", 24.0, None, 0.03), ("Mistral-Large-Instruct-2407", 123, None, 0.03),
    ("Mixtral-8x7B-Instruct-v0.1", 46.7, 12.9, 0.03), ("mixtral 8x22b", 141, 39, 0.03),
    ("Phi-3-mini-4k-instruct", 3.82, None, 0.03), ("Phi-3.5-mini-instruct", 3.82, None, 0.03),
    ("Phi-3-medium-4k-instruct", 14.0, None, 0.03), ("phi-4", 14.7, None, 0.03),
    ("Phi-4-mini-instruct", 3.84, None, 0.03),
    ("Phi-3.5-MoE-instruct", 41.9, 6.6, 0.03), ("DeepSeek-V2", 236, 21, 0.03), ("DeepSeek-V2-Lite", 15.7, 2.4, 0.03),
    ("DeepSeek-V3", 671, 37, 0.03), ("deepseek r1", 671, 37, 0.03), ("DeepSeek-R1-Distill-Qwen-32B", 32.8, None, 0.03),
    ("DeepSeek-R1-Distill-Llama-8B", 8.03, None, 0.03), ("DeepSeek-R1-Distill-Qwen-1.5B", 1.78, None, 0.03),
    ("DeepSeek-R1-Distill-Llama-70B", 70.6, None, 0.03), ("gpt-oss-20b", 21, 3.6, 0.03),
    ("gpt-oss-120b", 117, 5.1, 0.03),
    ("Kimi-K2-Instruct", 1000, 32, 0.03), ("glm-4-9b-chat", 9.4, None, 0.03), ("GLM-4.5", 355, 32, 0.03),
    ("GLM-4.5-Air", 106, 12, 0.03), ("Yi-1.5-6B", 6.06, None, 0.03), ("Yi-1.5-9B", 8.83, None, 0.03),
    ("Yi-1.5-34B-Chat", 34.4, None, 0.03), ("c4ai-command-r-v01", 35, None, 0.03), ("command r+", 104, None, 0.03),
    ("falcon-7b", 7.22, None, 0.03), ("falcon-40b", 41.8, None, 0.03), ("Falcon3-7B-Instruct", 7.46, None, 0.03),
    ("SmolLM2-1.7B-Instruct", 1.71, None, 0.03), ("SmolLM3-3B", 3.08, None, 0.03), ("OLMo-2-1124-7B", 7.3, None, 0.03),
    ("OLMo-2-1124-13B", 13.7, None, 0.03), ("OLMo-2-0325-32B", 32.2, None, 0.03),
    ("YandexGPT-5-Lite-8B-instruct", 8.04, None, 0.03), ("T-pro-it-2.0", 32.8, None, 0.03),
    ("T-lite-it-1.0", 7.6, None, 0.03), ("saiga_llama3_8b", 8.03, None, 0.03),
    ("Vikhr-Nemo-12B-Instruct-R-21-09-24", 12.2, None, 0.03),
    # GigaChat: layers, heads, KV heads and experts from its paper, the GQA DeepSeek-MoE layout from llama.cpp; the
    # hidden size, expert width and top-k are derived from the card's counts (tools/model_facts.py says which)
    ("GigaChat-20B-A3B-instruct", 20.9, 3.3, 0.03),
    # StarCoder2: the count from the shape (no card figure is given to the generator) against the cards' 3 / 7B
    ("starcoder2-3b", 3, None, 0.03), ("starcoder2 7b", 7, None, 0.03),
    ("granite-3.1-8b-instruct", 8.1, None, 0.03), ("granite 3.3 8b", 8.17, None, 0.03),
]


@pytest.mark.parametrize(("name", "card", "active", "tol"), CARDS, ids=[c[0] for c in CARDS])
def test_every_family_has_its_model_card_size(name: str, card: float, active: float | None, tol: float) -> None:
    arch = find_model(name)
    assert arch is not None, name
    total, _ = count_params(arch)
    assert total == pytest.approx(card, rel=tol), (arch.id, total)  # the shape, counted
    assert arch.params_b == pytest.approx(card, rel=0.03)  # what memory follows
    if active is None:
        assert arch.experts == 1 and arch.active_params_b == arch.params_b
    else:
        assert arch.experts > 1 and arch.active_params_b == pytest.approx(active, rel=0.05)
    assert parse_workload(f"{name} lora").model == arch.id  # the phrase reads it too


def test_catalog_is_generated_data_with_sources() -> None:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    assert "gen_models.py" in data["about"]
    assert len(data["models"]) == len(MODELS) >= 200
    for entry in data["models"]:
        assert entry["source"].startswith(("litgpt ", "https://huggingface.co/", "https://arxiv.org/")), entry["id"]
    assert len({m.id for m in MODELS}) == len(MODELS)
    # one entry per published model: a Hub repository is the alias of exactly one architecture (litgpt's configs and
    # the config.json facts both carried DeepSeek's Llama distills once, as two entries)
    repos = [a.lower() for m in MODELS for a in m.aliases if "/" in a]
    assert len(repos) == len(set(repos))


def test_shared_architectures_of_fine_tunes_and_distills() -> None:
    assert find_model("DeepSeek-R1-Distill-Qwen-32B").hidden == get_model("qwen2.5-32b").hidden
    assert find_model("T-pro-it-2.0").layers == get_model("qwen3-32b").layers
    assert find_model("IlyaGusev/saiga_yandexgpt_8b").vocab == get_model("yandexgpt-5-lite-8b").vocab
    # a community fine-tune the catalog has never heard of resolves through its base's name
    assert find_model("saiga_gemma2_9b").id == "gemma-2-9b"
    assert find_model("Vikhr-Qwen-2.5-7B-Instruct").id == "qwen2.5-7b"


@pytest.mark.parametrize(("written", "model"), [
    ("qwen3 32b", "qwen3-32b"), ("Qwen3-32B", "qwen3-32b"), ("QWEN3_32B", "qwen3-32b"), ("qwen 3 32b", "qwen3-32b"),
    ("llama 3.3 70b instruct", "llama-3.3-70b"), ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),
    ("Llama 3.1 8B", "llama-3.1-8b"), ("llama3.1-8b", "llama-3.1-8b"), ("llama 70b", "llama-3.1-70b"),
    ("mistral 7b", "mistral-7b"), ("Qwen/Qwen3-30B-A3B-Instruct-2507", "qwen3-30b-a3b-2507"),
    ("kimi k2", "kimi-k2"), ("glm 4.5 air", "glm-4.5-air"), ("deepseek v3", "deepseek-v3"),
    ("gpt oss 120b", "gpt-oss-120b"), ("command r+", "c4ai-command-r-plus"),
    ("nemotron 70b", "llama-3.1-nemotron-70b-hf"), ("Llama-3.1-Nemotron-Nano-8B-v1", "llama-3.1-nemotron-nano-8b-v1"),
    ("granite 3.1 2b", "granite-3.1-2b"), ("ibm-granite/granite-3.3-8b-instruct", "granite-3.3-8b"),
    ("starcoder2 15b", "starcoder2-15b"),
    # DeepSeek's distills as litgpt and people shorten them, and the names the bot itself says back
    ("R1-Distill-Qwen-32B", "deepseek-r1-distill-qwen-32b"), ("r1 distill llama 8b", "r1-distill-llama-8b"),
    ("DeepSeek-R1-Distill-Llama-70B", "r1-distill-llama-70b"), ("r1 70b", "r1-distill-llama-70b"),
    ("r1 671b", "deepseek-r1"),
])
def test_aliases_as_people_write_them(written: str, model: str) -> None:
    arch = find_model(written)
    assert arch is not None and arch.id == model


def test_every_model_is_read_back_by_the_name_it_is_shown_under() -> None:
    # the same entry, or a twin with every number the same (an SFT / DPO release under its base's name): never a
    # model with another context limit (an alias "qwen3-coder-30b-a3b" once gave the 40K Qwen3-30B-A3B)
    def shape(a: Arch) -> tuple[object, ...]:
        return (a.hidden, a.layers, a.heads, a.kv_heads, a.intermediate, a.vocab, a.experts, a.max_context,
                a.params_b, a.native_quant)

    for arch in MODELS:
        found = find_model(arch.name)
        assert found is not None and shape(found) == shape(arch), arch.name
    assert find_model("Qwen3-Coder-30B-A3B").max_context == 262144
    assert find_model("QwQ-32B-Preview").max_context == 32768


def test_near_miss_gets_did_you_mean() -> None:
    assert find_model("qwen3 33b") is None
    assert "Qwen3-32B" in did_you_mean("qwen3 33b")
    assert find_model("lamma 3.1 8b") is None and "Llama-3.1-8B" in did_you_mean("lamma 3.1 8b")
    assert did_you_mean("zzzz") == []


def _first_word_family(name: str) -> str:
    """"Qwen3-8B" -> "Qwen3", "Llama-3.1-8B" -> "Llama-3.1": a catalog name without its size and what follows."""
    words = re.split(r"[\-_ ]", name)
    size = next((i for i, w in enumerate(words) if re.fullmatch(r"(?:\d+x)?\d+(?:\.\d+)?[BbMm]", w)), None)
    return "-".join(words[:size]) if size else ""


def test_a_family_named_without_a_size_stands_for_its_models() -> None:
    # Every catalog name "<family>-<size>…" is among the models its family words stand for, each member's name
    # begins with those words, and a family that is one catalog name by itself is not a family question.
    checked = 0
    for arch in MODELS:
        family = _first_word_family(arch.name)
        if not family or find_model(family, loose=False) is not None:
            continue
        members = family_members(family)
        assert arch in members, (family, arch.name)
        want = family.lower().replace("-", "").replace(".", "")
        for other in members:
            assert other.name.lower().replace("-", "").replace(".", "").replace("_", "").startswith(want), other.name
        checked += 1
    assert checked > 100
    assert family_members("qwen3 32b") == () and family_members("zzzz") == ()


def test_a_release_number_takes_its_point_releases_only_when_it_has_no_models_of_its_own() -> None:
    llama3 = {a.name for a in family_members("llama 3")}
    assert llama3 and all(re.match(r"Llama-3-\d", n) for n in llama3)
    assert {a.name for a in family_members("llama3")} == llama3
    releases = {re.match(r"Llama-(\d(?:\.\d)?)-", a.name).group(1) for a in family_members("llama")  # type: ignore[union-attr]
                if a.name.startswith("Llama-")}
    assert {"3", "3.1", "3.3"} <= releases
    newest_first = [_llama_version(a.name) for a in family_members("llama") if a.name.startswith("Llama-")]
    assert newest_first == sorted(newest_first, reverse=True)


def _llama_version(name: str) -> float:
    return float(re.match(r"Llama-(\d(?:\.\d)?)", name).group(1))  # type: ignore[union-attr]


def test_a_family_example_is_one_of_its_everyday_models() -> None:
    for family in ("llama", "qwen3", "gemma", "deepseek", "gpt-oss"):
        members = family_members(family)
        assert typical_member(members) in members


def test_config_facts_generate_the_catalog_entries() -> None:
    # The generator's second source, re-read now: every Hub-config entry of models.json is what arch_from_config
    # makes of tools/model_facts.py (the litgpt part needs the downloaded wheel and is checked by the counts above).
    import sys
    from pathlib import Path

    tools = str(Path(__file__).resolve().parents[2] / "tools")
    sys.path.insert(0, tools)
    try:
        import gen_models
        from model_facts import FACTS
    finally:
        sys.path.remove(tools)
    by_id = {m.id: m for m in MODELS}
    stored = {e["id"]: e for e in json.loads(DATA.read_text(encoding="utf-8"))["models"]}
    checked = 0
    for fact in FACTS:
        if "config" not in fact:
            continue
        arch = gen_models._from_fact(fact, by_id)
        entry = gen_models._entry(arch)
        mine = {k: v for k, v in stored[arch.id].items() if k != "aliases"}
        assert {k: v for k, v in entry.items() if k != "aliases"} == mine, arch.id
        checked += 1
    assert checked >= 60


def test_starcoder2_is_a_plain_gelu_mlp_with_a_sliding_window_on_every_layer() -> None:
    big, small = find_model("starcoder2-15b"), find_model("starcoder2-3b")
    assert big is not None and small is not None
    assert (big.mlp_matrices, big.window, big.local_layers, big.tied_embeddings) == (2, 4096, 40, False)
    assert (small.mlp_matrices, small.tied_embeddings, small.max_context) == (2, True, 16384)
    assert 15 <= big.params_b < 16.5  # "a 15B parameter model" (its card); the shape counts 15.96B
