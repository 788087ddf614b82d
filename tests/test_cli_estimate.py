"""`gpuradar estimate` end to end, as a user runs it: a subprocess, its stdout/stderr and exit status."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.estimator import estimate_memory
from core.fit import config_for
from core.models import get_model
from core.workload import Optimizer
from tests.test_estimator import wl

REPO = Path(__file__).resolve().parent.parent


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpuradar.cli", "estimate", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=60, check=False)


def as_json(*args: str) -> dict:
    proc = run(*args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # exactly one JSON object: json.loads fails on anything extra


def test_json_has_the_issue_keys() -> None:
    out = as_json("llama-3.1-8b qlora")
    w = out["workload"]
    for key in ("model", "params_b", "method", "seq_len", "batch", "grad_ckpt", "lora_rank", "lora_targets", "quant",
                "optimizer", "gpus", "strategy", "concurrency", "examples", "tokens_per_example", "epochs",
                "precision", "attention", "fused_ce", "offload", "gpu", "kv_dtype"):
        assert key in w, key
    assert (w["model"], w["method"], w["quant"], w["lora_rank"]) == ("llama-3.1-8b", "qlora", "nf4", 16)
    mem = out["memory"]
    assert set(mem["breakdown_gib"]) == {"weights", "trainable_states", "activations", "logits", "kv_cache",
                                         "overhead"}
    assert mem["recommended_per_gpu_gib"] > mem["per_gpu_gib"] > 0
    assert mem["per_gpu_gib"] == pytest.approx(sum(mem["breakdown_gib"].values()), abs=0.05)
    assert out["fits"] and {"gpu", "count", "per_gpu_gib", "usable_gib", "utilization"} <= set(out["fits"][0])
    assert out["time"] is None and isinstance(out["assumptions"], list) and out["assumptions"]


def test_options_override_the_text() -> None:
    out = as_json("13B LoRA", "--model", "llama-3.1-8b", "--seq", "4096", "--batch", "2", "--lora-rank", "64",
                  "--lora-targets", "q_proj,v_proj", "--optimizer", "adamw8bit", "--no-grad-ckpt", "--fused-ce")
    w = out["workload"]
    assert (w["model"], w["seq_len"], w["batch"], w["lora_rank"], w["lora_targets"]) == (
        "llama-3.1-8b", 4096, 2, 64, "q,v")
    assert w["optimizer"] == "adamw8bit" and w["grad_ckpt"] is False and w["fused_ce"] is True
    # The numbers are the estimator's for exactly that workload.
    expected = estimate_memory(config_for(wl(seq_len=4096, batch=2, lora_rank=64, lora_targets="q,v",
                                             optimizer=Optimizer.ADAMW_8BIT, grad_ckpt=False, fused_ce=True), 1))
    assert out["memory"]["per_gpu_gib"] == pytest.approx(expected.per_gpu_gib, abs=0.01)


def test_named_gpu_and_count() -> None:
    out = as_json("70B full fine-tune zero3 on 8 H100")
    assert out["workload"]["gpus"] == 8 and out["workload"]["strategy"] == "zero3"
    assert out["memory"]["gpus"] == 8
    assert out["fits"] == [] and {a["code"] for a in out["advice"]} & {"more_gpus", "bigger_gpu"}
    ok = as_json("8B QLoRA", "--gpu", "RTX 4090")
    assert [f["gpu_id"] for f in ok["fits"]] and {f["gpu_id"] for f in ok["fits"]} == {"rtx-4090"}


def test_time_with_a_dataset() -> None:
    out = as_json("7B LoRA, 5k examples x 3 epochs", "--tokens-per-example", "400")
    assert out["time"]["tokens"] == 5000 * 400 * 3
    per = out["time"]["per_config"]
    assert per and all(c["hours"] > 0 and c["tokens_per_second"] > 0 for c in per)
    assert len(per) == len(out["fits"])


def test_config_json(tmp_path: Path) -> None:
    cfg = {"hidden_size": 2048, "num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 4,
           "intermediate_size": 5632, "vocab_size": 32000, "tie_word_embeddings": False}
    path = tmp_path / "tiny" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(cfg))
    out = as_json("lora", "--config", str(path))
    assert out["workload"]["arch"]["hidden"] == 2048 and out["workload"]["arch"]["layers"] == 24
    assert 1.0 < out["workload"]["params_b"] < 2.0


def test_human_table_in_both_languages() -> None:
    en = run("70b qlora", "--examples", "1000")
    ru = run("70b qlora", "--examples", "1000", "--lang", "ru")
    assert en.returncode == ru.returncode == 0
    assert "Memory per GPU" in en.stdout and "Fits on" in en.stdout and "Time" in en.stdout
    assert "Память на один GPU" in ru.stdout and "Помещается на" in ru.stdout and "Время" in ru.stdout
    assert "Traceback" not in en.stderr + ru.stderr


def test_nothing_fits_says_so() -> None:
    en = run("405B full fine-tune")
    assert en.returncode == 0 and "Nothing up to one 8-GPU node fits" in en.stdout and "QLoRA" in en.stdout
    ru = run("405B full fine-tune", "--lang", "ru")
    assert "Ни одна конфигурация" in ru.stdout


@pytest.mark.parametrize(("args", "en_bit", "ru_bit"), [
    (["blah blah"], "could not read", "понял не всё"),
    (["13B LoRA", "--method", "dance"], "--method", "--method"),
    (["13B LoRA", "--gpu", "GTX 9999 Ultra"], "not in the catalog", "нет в каталоге"),
    (["13B LoRA", "--seq", "0"], "positive", "положительным"),
    (["13B LoRA", "--lora-targets", "banana"], "banana", "banana"),
    (["13B LoRA", "--config", "/nonexistent/config.json"], "Cannot read", "Не удаётся"),
    (["--params", "13Q"], "13Q", "13Q"),
    ([], "model", "модел"),
])
def test_bad_input_exits_2_with_a_polite_message(args: list[str], en_bit: str, ru_bit: str) -> None:
    en, ru = run(*args), run(*args, "--lang", "ru")
    for proc, bit in ((en, en_bit), (ru, ru_bit)):
        assert proc.returncode == 2, proc.stderr
        assert bit in proc.stderr and "Traceback" not in proc.stderr and proc.stdout == ""


def test_bad_json_config(tmp_path: Path) -> None:
    bad = tmp_path / "config.json"
    bad.write_text("{not json")
    proc = run("lora", "--config", str(bad), "--lang", "ru")
    assert proc.returncode == 2 and "JSON" in proc.stderr and "Traceback" not in proc.stderr
    bad.write_text(json.dumps({"hidden_size": 10}))
    proc = run("lora", "--config", str(bad))
    assert proc.returncode == 2 and "hidden_size" in proc.stderr


def test_mixtral_uses_total_params_for_memory() -> None:
    out = as_json("mixtral inference")
    assert out["memory"]["breakdown_gib"]["weights"] == pytest.approx(
        get_model("mixtral-8x7b").params_b * 1e9 * 2 / 2**30, rel=0.01)
