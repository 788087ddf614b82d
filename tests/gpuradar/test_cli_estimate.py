"""`gpuradar estimate` end to end, as a user runs it: the command line's `main` with its stdout/stderr and exit status
(in this process, through capsys), plus a few real subprocesses for what only a subprocess shows (the exit status
the shell sees, no traceback on bad input)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from core.estimator import estimate_memory
from core.fit import config_for
from core.models import get_model
from core.workload import Optimizer
from gpuradar.cli import main
from tests.core.test_estimator import wl

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


def subprocess_run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpuradar.cli", "estimate", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=60, check=False)


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Callable[..., Done]:
    """`gpuradar estimate ARGS` in this process: the same parser and handler as the console script, without an
    interpreter start-up per call. An exception escaping `main` fails the test (a user would see a traceback)."""

    def call(*args: str) -> Done:
        capsys.readouterr()
        try:
            rc = main(["estimate", *args])
        except SystemExit as exc:  # argparse's own errors exit 2, as they do in the console script
            rc = exc.code if isinstance(exc.code, int) else 1
        out, err = capsys.readouterr()
        return Done(rc, out, err)

    return call


@pytest.fixture
def as_json(run: Callable[..., Done]) -> Callable[..., dict[str, Any]]:
    def call(*args: str) -> dict[str, Any]:
        done = run(*args, "--json")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)  # exactly one JSON object: json.loads fails on anything extra

    return call


def test_json_has_the_issue_keys(as_json: Callable[..., dict[str, Any]]) -> None:
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


def test_options_override_the_text(as_json: Callable[..., dict[str, Any]]) -> None:
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


def test_named_gpu_and_count(as_json: Callable[..., dict[str, Any]]) -> None:
    out = as_json("70B full fine-tune zero3 on 8 H100")
    assert out["workload"]["gpus"] == 8 and out["workload"]["strategy"] == "zero3"
    assert out["memory"]["gpus"] == 8
    assert out["fits"] == [] and {a["code"] for a in out["advice"]} & {"more_gpus", "bigger_gpu"}
    ok = as_json("8B QLoRA", "--gpu", "RTX 4090")
    assert [f["gpu_id"] for f in ok["fits"]] and {f["gpu_id"] for f in ok["fits"]} == {"rtx-4090"}


def test_time_with_a_dataset(as_json: Callable[..., dict[str, Any]]) -> None:
    out = as_json("7B LoRA, 5k examples x 3 epochs", "--tokens-per-example", "400")
    assert out["time"]["tokens"] == 5000 * 400 * 3
    per = out["time"]["per_config"]
    assert per and all(c["hours"] > 0 and c["tokens_per_second"] > 0 for c in per)
    assert len(per) == len(out["fits"])


def test_config_json(tmp_path: Path, as_json: Callable[..., dict[str, Any]]) -> None:
    cfg = {"hidden_size": 2048, "num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 4,
           "intermediate_size": 5632, "vocab_size": 32000, "tie_word_embeddings": False}
    path = tmp_path / "tiny" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(cfg))
    out = as_json("lora", "--config", str(path))
    assert out["workload"]["arch"]["hidden"] == 2048 and out["workload"]["arch"]["layers"] == 24
    assert 1.0 < out["workload"]["params_b"] < 2.0


def test_human_table_in_both_languages(run: Callable[..., Done]) -> None:
    en = run("70b qlora", "--examples", "1000")
    ru = run("70b qlora", "--examples", "1000", "--lang", "ru")
    assert en.returncode == ru.returncode == 0
    assert "Memory per GPU" in en.stdout and "Fits on" in en.stdout and "Time" in en.stdout
    assert "Память на один GPU" in ru.stdout and "Помещается на" in ru.stdout and "Время" in ru.stdout
    assert en.stderr == ru.stderr == ""


def test_nothing_fits_says_so(run: Callable[..., Done]) -> None:
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
def test_bad_input_exits_2_with_a_polite_message(run: Callable[..., Done], args: list[str], en_bit: str,
                                                 ru_bit: str) -> None:
    en, ru = run(*args), run(*args, "--lang", "ru")
    for proc, bit in ((en, en_bit), (ru, ru_bit)):
        assert proc.returncode == 2, proc.stderr
        assert bit in proc.stderr and proc.stdout == ""
    assert en.stderr != ru.stderr  # each in its own language


def test_bad_json_config(tmp_path: Path, run: Callable[..., Done]) -> None:
    bad = tmp_path / "config.json"
    bad.write_text("{not json")
    proc = run("lora", "--config", str(bad), "--lang", "ru")
    assert proc.returncode == 2 and "JSON" in proc.stderr and proc.stdout == ""
    bad.write_text(json.dumps({"hidden_size": 10}))
    proc = run("lora", "--config", str(bad))
    assert proc.returncode == 2 and "hidden_size" in proc.stderr


# -- real subprocesses: what the shell sees --------------------------------------------------------------------------
def test_subprocess_prints_the_table_and_exits_0() -> None:
    proc = subprocess_run("70b qlora", "--examples", "1000", "--lang", "ru")
    assert proc.returncode == 0, proc.stderr
    assert "Память на один GPU" in proc.stdout and "Помещается на" in proc.stdout and "Время" in proc.stdout
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(("args", "bit"), [
    (["blah blah", "--lang", "ru"], "понял не всё"),  # the parser's own message
    (["--params", "13Q"], "13Q"),
    (["13B LoRA", "--config", "{config}"], "JSON"),  # a broken file
    (["13B LoRA", "--seq", "lots"], "--seq"),  # argparse's error: also 2, also no traceback
])
def test_subprocess_bad_input_exits_2_without_a_traceback(tmp_path: Path, args: list[str], bit: str) -> None:
    bad = tmp_path / "config.json"
    bad.write_text("{not json")
    proc = subprocess_run(*(a.format(config=bad) for a in args))
    assert proc.returncode == 2, proc.stderr
    assert bit in proc.stderr and "Traceback" not in proc.stderr and proc.stdout == ""


def test_mixtral_uses_total_params_for_memory(as_json: Callable[..., dict[str, Any]]) -> None:
    out = as_json("mixtral inference")
    assert out["memory"]["breakdown_gib"]["weights"] == pytest.approx(
        get_model("mixtral-8x7b").params_b * 1e9 * 2 / 2**30, rel=0.01)


def test_building_the_command_line_imports_no_heavy_module() -> None:
    """Every `gpuradar` command registers every subcommand first; what a handler needs is imported in the handler,
    so that `gpuradar estimate` (or `--help`) does not wait for Alembic, the offer store or the scrapers."""
    probe = ("import sys; from gpuradar.cli import build_parser; build_parser(); "
             "print(' '.join(m for m in ('alembic', 'storage.queries', 'storage.ingest', 'scrapers.scheduler', "
             "'scrapers.fx', 'httpx', 'aiogram', 'core.parser', 'gpuradar.estimate_view') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == []



def test_an_estimate_without_a_store_imports_no_database_layer(tmp_path: Path) -> None:
    """No offer store (a laptop, CI): the answer is the estimate alone, and `gpuradar estimate` does not wait for
    SQLAlchemy and the storage layer to be imported only to find there is nothing to read (bench/memory.py's
    start-up figure)."""
    probe = ("import sys; from gpuradar.cli import main; code = main(['estimate', '13B LoRA']); "
             "print('MODULES', ' '.join(m for m in ('sqlalchemy', 'storage.db', 'storage.queries', "
             "'storage.subscriptions') if m in sys.modules)); sys.exit(code)")
    env = {**os.environ, "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'none.sqlite3'}"}
    proc = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60,
                          check=False, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "13B" in proc.stdout
    assert proc.stdout.split("MODULES")[-1].split() == []
    assert not (tmp_path / "none.sqlite3").exists()  # and it created no store



def test_an_estimate_imports_no_provider_and_parses_only_the_texts_it_shows(tmp_path: Path) -> None:
    """`gpuradar estimate` reads where the store is without the whole settings (those import every provider
    module, `scrapers.registry`), and parses only the catalog files holding the texts it formats (each once)."""
    probe = ("import sys; from gpuradar.cli import main; code = main(['estimate', '13B LoRA']); "
             "from texts import i18n; "
             "print('MODULES', ' '.join(m for m in ('scrapers.registry', 'scrapers.provider', 'gpuradar.settings') "
             "if m in sys.modules)); "
             "print('PARSED', i18n._resource.cache_info().currsize, len(i18n._files('en'))); sys.exit(code)")
    env = {**os.environ, "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'none.sqlite3'}"}
    proc = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60,
                          check=False, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "13B" in proc.stdout
    modules, parsed = proc.stdout.split("MODULES")[-1].split("PARSED")
    assert modules.split() == []
    files, catalog = map(int, parsed.split())
    assert 0 < files < catalog

# --- time, speed and the cheapest offer per configuration (issue: speed, cost and the best offer) -----------------

def test_json_time_per_config_lists_the_named_configuration(as_json: Callable[..., dict[str, Any]]) -> None:
    data = as_json("7B LoRA 50000 examples 2 epochs 1024 tokens", "--gpu", "RTX A4000", "--gpus", "1")
    rows = data["time"]["per_config"]
    assert all({"gpu", "gpu_id", "count", "fits", "tokens_per_second", "hours"} <= set(r) for r in rows)
    named = [r for r in rows if r["gpu_id"] == "rtx-a4000" and r["count"] == 1]
    assert len(named) == 1 and named[0]["hours"] > 0
    assert named[0]["fits"] == any(f["gpu_id"] == "rtx-a4000" and f["count"] == 1 for f in data["fits"])
    assert data["speed"] is None


def test_a_family_gpu_lists_each_variant(as_json: Callable[..., dict[str, Any]]) -> None:
    """Issue 10: `--gpu H100 --gpus 1` is SXM, PCIe and NVL, each fitted on its own memory; a variant is one card."""
    data = as_json("70B QLoRA 2000 examples", "--gpu", "H100", "--gpus", "1")
    assert data["workload"]["gpu"] == "h100-sxm"  # the representative id JSON readers already know
    assert set(data["workload"]["gpu_family"]) == {"h100-sxm", "h100-pcie", "h100-nvl"}
    rows = data["time"]["per_config"]
    assert {r["gpu_id"] for r in rows} == {"h100-sxm", "h100-pcie", "h100-nvl"}  # no other family
    assert {r["gpu_id"] for r in rows if r["count"] == 1 and r["hours"] > 0} == {"h100-sxm", "h100-pcie", "h100-nvl"}
    assert {f["gpu_id"] for f in data["fits"] if f["count"] == 1} == {"h100-sxm", "h100-pcie", "h100-nvl"}
    usable = {f["gpu_id"]: f["usable_gib"] for f in data["fits"] if f["count"] == 1}
    assert usable["h100-nvl"] > usable["h100-pcie"]  # 94 GB against 80 GB: each on its own memory
    # each variant on its own memory: a 34B fp16 model (~68 GB of weights) fits one A100 80GB, not one 40GB
    big = as_json("34B inference", "--gpu", "A100", "--gpus", "1")
    one_card = {r["gpu_id"]: r["fits"] for r in big["speed"]["per_config"] if r["count"] == 1}
    assert one_card == {"a100-80gb": True, "a100-40gb": False}
    one = as_json("70B QLoRA", "--gpu", "H100 PCIe", "--gpus", "1")
    assert {f["gpu_id"] for f in one["fits"]} == {"h100-pcie"} and one["workload"]["gpu_family"] == []


def test_json_speed_block_for_inference(as_json: Callable[..., dict[str, Any]]) -> None:
    data = as_json("70B inference 8 users", "--gpu", "RTX 4090", "--gpus", "2")
    assert data["time"] is None
    rows = data["speed"]["per_config"]
    named = next(r for r in rows if r["gpu_id"] == "rtx-4090" and r["count"] == 2)
    assert named["fits"] is False  # 70B does not fit two 24 GB cards, and is still answered
    for r in rows:
        assert r["prefill_tokens_per_s"] > r["decode_tokens_per_s"] > 0
        assert r["aggregate_decode_tokens_per_s"] == pytest.approx(8 * r["decode_tokens_per_s"], rel=0.01)
    assert data["speed"]["concurrency"] == 8


async def test_json_cheapest_offer_per_configuration(migrated_database_url: str, monkeypatch: pytest.MonkeyPatch,
                                                     run: Callable[..., Done]) -> None:
    from datetime import UTC, datetime

    from core.offers import Offer, Rates
    from core.polls import PollResult, PollStatus
    from storage.db import make_engine, make_sessionmaker
    from storage.ingest import record_poll

    at = datetime(2025, 3, 1, tzinfo=UTC)
    offers = [Offer(provider="runpod", sku=s, gpu="h100-sxm", gpu_name="H100", gpu_count=1, price=p, currency="USD",
                    in_stock=True) for s, p in (("a", 3.0), ("b", 2.5))]
    engine = make_engine(migrated_database_url)
    await record_poll(make_sessionmaker(engine), PollResult(provider="runpod", status=PollStatus.OK, offers=offers,
                                                            started_at=at, finished_at=at),
                      rates=Rates(rub_per={"USD": 80.0}))
    await engine.dispose()
    monkeypatch.setenv("DATABASE_URL", migrated_database_url)
    import asyncio

    done = await asyncio.to_thread(run, "8B LoRA 10000 examples", "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["time"]["per_config"]
    h100 = next(r for r in rows if r["gpu_id"] == "h100-sxm" and r["count"] == 1)
    best = h100["cheapest_offer"]
    assert best["provider"] == "runpod" and best["price_per_hour_usd"] == pytest.approx(2.5)
    assert best["price_per_hour_rub"] == pytest.approx(200.0)
    assert best["job_cost_usd"] == pytest.approx(2.5 * h100["hours"], abs=0.01)  # both rounded in the JSON
    assert all("cheapest_offer" not in r for r in rows if r["gpu_id"] != "h100-sxm")


def test_a_stated_gpu_count_is_the_only_count_answered(as_json: Callable[..., dict[str, Any]],
                                                        run: Callable[..., Done]) -> None:
    # `--gpus 1` (or "on one A100") asks about one card: 2/4/8-card configurations are not what was asked
    one = as_json("7B LoRA", "--gpu", "A100", "--gpus", "1")
    assert one["fits"] and {f["count"] for f in one["fits"]} == {1}
    assert {f["gpu"] for f in one["fits"]} == {"A100 40GB", "A100 80GB"}
    said = as_json("70B QLoRA on one A100 80GB")
    assert {(f["gpu"], f["count"]) for f in said["fits"]} == {("A100 80GB", 1)}
    # without a count the usual 1/2/4/8 are offered
    assert {f["count"] for f in as_json("13B LoRA", "--gpu", "RTX 4090")["fits"]} == {2, 4, 8}
    # a stated count that does not hold the job says so, and says what count would
    done = run("13B LoRA", "--gpu", "RTX 4090", "--gpus", "1")
    assert done.returncode == 0
    assert "1x RTX 4090" in done.stdout and "2x RTX 4090" in done.stdout
    assert "Fits on" not in done.stdout


def test_a_serving_target_is_said_and_each_configuration_marked(run: Callable[..., Done],
                                                                as_json: Callable[..., dict[str, Any]]) -> None:
    phrase = "llama 3.1 8b 1000 requests per minute input 1k"
    for lang, target, column in (("en", "Target: 1,000 requests a minute", "keeps up"),
                                 ("ru", "Цель: 1\xa0000 запросов в минуту", "успевает")):
        done = run(phrase, "--lang", lang)
        assert done.returncode == 0, done.stderr
        assert target in done.stdout and column in done.stdout
    data = as_json(phrase)
    speed = data["speed"]
    assert speed["target"] == {"answer_tokens_per_s": 25.0, "tokens_per_s_in_all": 2500.0,
                               "requests_per_s": pytest.approx(1000 / 60), "first_token_s": None}
    marks = [row["keeps_up"] for row in speed["per_config"]]
    assert True in marks and False in marks
    assert speed["concurrency"] == 100
    fit_marks = [row["keeps_up"] for row in data["fits"]]
    assert fit_marks[0] and not fit_marks[-1] and fit_marks == sorted(fit_marks, reverse=True)  # keeping up first
    plain = as_json("llama 3.1 8b inference 20 users")["speed"]
    assert "target" not in plain and all("keeps_up" not in row for row in plain["per_config"])
    assert all("keeps_up" not in row for row in as_json("llama 3.1 8b inference 20 users")["fits"])
