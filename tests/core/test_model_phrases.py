"""The phrases of issue 9 as a new user types them, the parser's rules for names (tokens stay in the name, a rank
needs its own word), the inference verbs of both languages, the CLI's --json additions and its Hub path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.defaults import complete
from core.parser import ParseError, parse_workload
from core.workload import Method, Quant
from tests.core.test_hub import LLAMA_LIKE
from tests.support.hub_server import HubServer

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("phrase", "model", "method", "params", "active"), [
    ("Qwen3-30B-A3B LoRA", "qwen3-30b-a3b", Method.LORA, 30.5, 3.3),
    ("qwen3 32b lora", "qwen3-32b", Method.LORA, 32.8, None),
    ("gemma-3-27b inference 128k", "gemma-3-27b", Method.INFERENCE, 27.4, None),
    ("phi-4 lora", "phi-4", Method.LORA, 14.7, None),
    ("DeepSeek-V3 inference", "deepseek-v3", Method.INFERENCE, 671, 37),
    ("deepseek r1 inference", "deepseek-r1", Method.INFERENCE, 671, 37),
    ("Llama-3.2-11B-Vision LoRA", "llama-3.2-11b-vision", Method.LORA, 10.7, None),
    ("Mistral-Small-24B lora", "mistral-small-24b-2501", Method.LORA, 23.6, None),
    ("DeepSeek-R1-Distill-Qwen-32B QLoRA", "deepseek-r1-distill-qwen-32b", Method.QLORA, 32.8, None),
    ("запустить 32B модель, 16к контекст", "qwen2.5-32b", Method.INFERENCE, 32.8, None),
    ("seed oss 36b qlora", "seed-oss-36b", Method.QLORA, 36.15, None),
    ("ByteDance-Seed/Seed-OSS-36B-Instruct inference 32k", "seed-oss-36b", Method.INFERENCE, 36.15, None),
])
def test_issue_phrases(phrase: str, model: str, method: Method, params: float, active: float | None) -> None:
    w, _ = complete(parse_workload(phrase))
    assert (w.model, w.method) == (model, method)
    assert w.params_b == pytest.approx(params, rel=0.03)
    assert w.active_params_b == pytest.approx(active if active else params, rel=0.05)


def test_r1_is_part_of_the_name_and_a_rank_needs_its_own_word() -> None:
    spec = parse_workload("DeepSeek-R1-Distill-Qwen-32B QLoRA")
    assert spec.lora_rank is None and spec.model == "deepseek-r1-distill-qwen-32b"
    for phrase, rank in (("qwen3 8b lora r16", 16), ("qwen3 8b lora rank 16", 16), ("qwen3 8b lora ранг 8", 8),
                         ("llama-3.1-8b lora r1", 1)):
        assert parse_workload(phrase).lora_rank == rank, phrase
    for phrase in ("Qwen3-235B-A22B-Instruct-2507 inference", "Phi-3.5-mini lora", "Mixtral-8x22B inference",
                   "DeepSeek-V3 inference", "kimi k2 0905 inference"):
        spec = parse_workload(phrase)
        assert spec.lora_rank is None and spec.params_b is None and spec.experts is None, phrase


@pytest.mark.parametrize("verb", ["запустить", "развернуть", "поднять", "инференс", "сервинг", "serve", "deploy",
                                  "run", "host"])
def test_inference_verbs(verb: str) -> None:
    assert parse_workload(f"{verb} qwen3 8b").method is Method.INFERENCE
    assert parse_workload(f"{verb} 7B ctx 8k").method is Method.INFERENCE


def test_run_with_a_training_method_is_training() -> None:
    assert parse_workload("run a qwen3 8b lora").method is Method.LORA
    assert parse_workload("запустить qlora 70B").method is Method.QLORA


def test_a_name_then_other_words() -> None:
    spec = parse_workload("llama-3.1-8b 4096 tokens lora")  # the number after the name is not part of it
    assert spec.model == "llama-3.1-8b" and spec.seq_len == 4096
    with pytest.raises(ParseError) as info:
        complete(parse_workload("llama-3.1-8b 70B lora"))  # the model and the size contradict
    from texts.i18n import render
    assert "70" in render("en", info.value.explain())


def test_unknown_name_says_did_you_mean() -> None:
    with pytest.raises(ParseError) as info:
        parse_workload("qwen3 33b lora")
    from texts.i18n import render
    for lang in ("en", "ru"):
        assert "Qwen3-32B" in render(lang, info.value.explain())


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "gpuradar.cli", "estimate", *args], capture_output=True, text=True,
                          cwd=REPO, timeout=120, env=full_env)


def test_json_additions() -> None:
    out = _cli("Qwen3-30B-A3B LoRA", "--json")
    assert out.returncode == 0, out.stderr
    wl = json.loads(out.stdout)["workload"]
    assert wl["model_source"] == "catalog"
    assert wl["active_params_b"] == pytest.approx(3.35, rel=0.02) and wl["params_b"] == pytest.approx(30.5, rel=0.01)
    arch = wl["arch"]
    assert (arch["experts"], arch["experts_per_token"], arch["attention"], arch["window"], arch["head_dim"]) == \
        (128, 8, "gqa", None, 128)
    gemma = json.loads(_cli("gemma-3-27b inference 128k", "--json").stdout)["workload"]
    assert gemma["arch"]["attention"] == "hybrid" and gemma["arch"]["window"] == 1024
    assert gemma["active_params_b"] == gemma["params_b"]
    v3 = json.loads(_cli("DeepSeek-V3 inference", "--json").stdout)["workload"]
    assert v3["arch"]["attention"] == "mla" and v3["quant"] == "fp8"
    size = json.loads(_cli("13B LoRA", "--json").stdout)["workload"]
    assert size["model_source"] == "size"


async def test_cli_looks_a_repository_up_on_the_hub(hub_server: HubServer, tmp_path: Path) -> None:
    import asyncio

    hub_server.add("acme/llama-ft", LLAMA_LIKE, params=8.03e9)
    # The stand-in always answers: the timeout is only there so a loaded machine never reads as offline.
    env = {"HF_ENDPOINT": hub_server.url, "HF_HUB_LOOKUP_TIMEOUT": "30",
           "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}"}
    out = await asyncio.to_thread(_cli, "acme/llama-ft lora", "--json", env=env)
    assert out.returncode == 0, out.stderr
    wl = json.loads(out.stdout)["workload"]
    assert wl["model"] == "acme/llama-ft" and wl["model_source"] == "hub" and wl["params_b"] == pytest.approx(8.03)
    by_option = await asyncio.to_thread(_cli, "lora", "--model", "acme/llama-ft", "--json", env=env)
    assert by_option.returncode == 0 and json.loads(by_option.stdout)["workload"]["model_source"] == "hub"
    for lang, needle in (("en", "There is no model"), ("ru", "нет модели")):
        bad = await asyncio.to_thread(_cli, "acme/nothing lora", "--lang", lang, env=env)
        assert bad.returncode == 2 and needle in bad.stderr and "Traceback" not in bad.stderr
    gated_env = {**env, "HF_TOKEN": ""}
    hub_server.add("acme/locked", LLAMA_LIKE, gated_token="hf_ok")
    gated = await asyncio.to_thread(_cli, "acme/locked inference", "--lang", "ru", env=gated_env)
    assert gated.returncode == 2 and "HF_TOKEN" in gated.stderr
    offline = await asyncio.to_thread(_cli, "acme/other inference", env={**env, "HF_ENDPOINT": "http://127.0.0.1:9"})
    assert offline.returncode == 2 and "did not answer" in offline.stderr


def test_quant_named_in_a_repository_name() -> None:
    assert parse_workload("Qwen/Qwen2.5-72B-Instruct-AWQ inference").quant is Quant.AWQ
    assert parse_workload("unsloth/Llama-3.3-70B-Instruct-bnb-4bit qlora").quant is Quant.NF4


@pytest.mark.parametrize(("phrase", "model", "method"), [
    ("инференс квен3 32b 32k", "qwen3-32b", Method.INFERENCE),  # the Cyrillic family keeps its version
    ("дообучить ламу 3.1 8b лорой", "llama-3.1-8b", Method.LORA),  # Russian case endings of LoRA
    ("квен 2.5 7b кулорой", "qwen2.5-7b", Method.QLORA),
    ("Mistral Large 2 inference", "mistral-large-2407", Method.INFERENCE),
    ("поднять deepseek r1 на 8 H200", "deepseek-r1", Method.INFERENCE),
    ("serve llama 3.3 70b on 2 H100", "llama-3.3-70b", Method.INFERENCE),
    ("smollm2 135m inference", "smollm2-135m", Method.INFERENCE),  # a size in millions, spaced like "32b"
    ("SmolLM2 360M lora", "smollm2-360m", Method.LORA),
    ("gemma 3 270m inference", "gemma-3-270m", Method.INFERENCE),
    # a fine-tune named after its base, each word in Russian ("сайга ллама3": Saiga on Llama 3); a Cyrillic "р1"
    ("сайга ллама3 8b лора", "saiga_llama3_8b", Method.LORA), ("сайга мистраль 7b lora", "saiga_mistral_7b_lora",
                                                               Method.LORA),
    ("дипсик р1 инференс", "deepseek-r1", Method.INFERENCE),
])
def test_more_ways_of_saying_it(phrase: str, model: str, method: Method) -> None:
    spec = parse_workload(phrase)
    assert (spec.model, spec.method) == (model, method)


def test_a_training_seed_is_no_model() -> None:
    """"seed 42" is the run's seed, a word that changes nothing, not the start of Seed-OSS's name."""
    said = parse_workload("7b lora seed 42").model_dump(exclude_none=True)
    assert said == {"params_b": 7.0, "method": Method.LORA}
