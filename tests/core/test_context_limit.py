"""A context above a model's maximum is refused with the limit, in both languages; the limit is a fact of each
catalog entry (`max_context` in core/data/models.json), of a config.json and of a Hub repository's config."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from core.models import MODELS, arch_from_config, find_model
from gpuradar.cli import main
from tests.support.hub_server import HubServer

REPO = Path(__file__).resolve().parents[2]
NEEDLE = {"en": "reads at most", "ru": "читает не больше"}
LLAMA_LIKE = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
              "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
              "intermediate_size": 14336, "vocab_size": 128256, "max_position_embeddings": 16384}


def _digits(text: str) -> str:
    return re.sub(r"\s|,", "", text)  # "131,072" and "131 072" (narrow no-break space) both read 131072


def _estimate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(["estimate", *args])
    out, err = capsys.readouterr()
    return rc, out, err


# the model cards / config.json max_position_embeddings of each family
@pytest.mark.parametrize(("model", "limit"), [
    ("llama-2-7b", 4096), ("Llama-3.1-8B", 131072), ("llama-3.1-70b", 131072), ("qwen2.5-7b", 131072),
    ("qwen2.5-0.5b", 32768), ("gemma-2-9b", 8192), ("mistral-7b", 32768), ("phi-3-mini", 4096),
    ("pythia-1b", 2048), ("DeepSeek-V3", 163840), ("deepseek-r1", 163840), ("qwen3-8b", 40960),
    ("gpt-oss-20b", 131072),
])
def test_a_context_over_the_limit_is_refused_with_it(capsys: pytest.CaptureFixture[str], model: str,
                                                     limit: int) -> None:
    arch = find_model(model)
    assert arch is not None and arch.max_context == limit
    over = str(limit * 2)
    for lang in ("en", "ru"):
        rc, out, err = _estimate(capsys, f"{model} inference ctx {over}", "--lang", lang)
        assert rc == 2 and out == "" and NEEDLE[lang] in err, err
        assert str(limit) in _digits(err) and "GiB" not in err and "Traceback" not in err
    rc, out, err = _estimate(capsys, f"{model} inference ctx {limit}", "--lang", "en")
    assert rc == 0 and NEEDLE["en"] not in err and str(limit) in out, err


@pytest.mark.parametrize("method", ["inference", "lora", "qlora", "full fine-tune"])
def test_an_unstated_context_is_at_most_the_models(method: str) -> None:
    """Asked without a context, a model that reads less than the method's default is sized at its whole context
    (said back as an assumption), never refused for a length no one asked for; longer models keep the default."""
    from core.defaults import SEQ_INFERENCE, SEQ_TRAINING, complete
    from core.parser import parse_workload

    default = SEQ_INFERENCE if method == "inference" else SEQ_TRAINING
    short = [m for m in MODELS if m.max_context and m.max_context < default]
    assert short  # the catalog has such models (Pythia, phi-2, Falcon: 2,048)
    for arch in short:
        workload, notes = complete(parse_workload(f"{arch.id} {method}"))
        assert workload.seq_len == arch.max_context, arch.id
        assert any(n.key == "seq_len" and "why_seq_limit" in str(n.msg) for n in notes), arch.id
    long = next(m for m in MODELS if m.max_context >= 4 * default)
    assert complete(parse_workload(f"{long.id} {method}"))[0].seq_len == default


def test_a_said_prompt_past_the_limit_is_refused_as_said(capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = _estimate(capsys, "phi-2 inference input 3000", "--lang", "en")
    assert rc == 2 and NEEDLE["en"] in err and "3000" in _digits(err)
    rc, out, err = _estimate(capsys, "phi-2 inference input 1000", "--lang", "en")
    assert rc == 0 and NEEDLE["en"] not in err and "2048" in _digits(out), err


def test_training_sequences_are_held_to_the_limit_too(capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = _estimate(capsys, "llama-2-13b lora seq 8192", "--lang", "en")
    assert rc == 2 and "4,096" in err


def test_a_bare_size_is_not_held_to_its_stand_ins_limit(capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = _estimate(capsys, "13B inference ctx 200k", "--lang", "en")
    assert rc == 0 and NEEDLE["en"] not in err


def test_the_catalog_states_a_limit_for_its_models() -> None:
    limited = [m for m in MODELS if m.max_context]
    assert len(limited) >= 0.95 * len(MODELS)
    for m in limited:
        assert 512 <= m.max_context <= 10_485_760, m.id
        assert not m.window or m.window <= m.max_context or m.id.startswith("phi-"), m.id


def test_a_config_json_brings_its_own_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert arch_from_config(LLAMA_LIKE).max_context == 16384
    yarn = {**LLAMA_LIKE, "max_position_embeddings": 32768,
            "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}
    assert arch_from_config(yarn).max_context == 131072  # Qwen2.5's card: YaRN x4
    llama31 = {**LLAMA_LIKE, "max_position_embeddings": 131072,
               "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}}
    assert arch_from_config(llama31).max_context == 131072
    unknown = {k: v for k, v in LLAMA_LIKE.items() if k != "max_position_embeddings"}
    assert arch_from_config(unknown).max_context == 0
    path = tmp_path / "config.json"
    path.write_text(json.dumps(LLAMA_LIKE), encoding="utf-8")
    rc, _, err = _estimate(capsys, "inference ctx 20000", "--config", str(path), "--lang", "ru")
    assert rc == 2 and NEEDLE["ru"] in err and "16384" in _digits(err)
    rc, _, _ = _estimate(capsys, "inference ctx 16384", "--config", str(path), "--lang", "en")
    assert rc == 0
    rc, _, _ = _estimate(capsys, "inference ctx 200k", "--config", str(tmp_path / "none.json"), "--lang", "en")
    assert rc == 2  # unreadable file: the existing error, not a limit


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run([sys.executable, "-m", "gpuradar.cli", "estimate", *args], capture_output=True, text=True,
                          cwd=REPO, timeout=120, env={**os.environ, **env})


async def test_a_hub_repository_brings_its_limit(hub_server: HubServer, tmp_path: Path) -> None:
    hub_server.add("acme/long-llama", LLAMA_LIKE, params=8.03e9)
    # The stand-in always answers: the timeout is only there so a loaded machine never reads as offline.
    env = {"HF_ENDPOINT": hub_server.url, "HF_HUB_LOOKUP_TIMEOUT": "30",
           "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}"}
    for lang in ("en", "ru"):
        over = await asyncio.to_thread(_cli, "acme/long-llama inference ctx 32k", "--lang", lang, env=env)
        assert over.returncode == 2 and NEEDLE[lang] in over.stderr and "16384" in _digits(over.stderr), over.stderr
    at = await asyncio.to_thread(_cli, "acme/long-llama inference ctx 16384", "--json", env=env)
    assert at.returncode == 0, at.stderr
    assert json.loads(at.stdout)["workload"]["seq_len"] == 16384
