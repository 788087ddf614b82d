"""Inference with the prompt stated apart from the context ("input 1k output 2k", issue 9).

The prompt is prefilled at once (its working set), the rest of the context is generated (the cache grows to the
whole context): the inference peak is the larger of the two moments. Unstated, the whole context is the prompt,
the worst case, and the answer says so. Checked end to end: parser (both languages), defaults, estimator (hand
calculation), CLI options and `--json`, and the bot's answer through the real aiogram stack.
"""

from __future__ import annotations

import json

import pytest

from core.defaults import complete
from core.estimator import GIB, PREFILL_ELEMS_H, PREFILL_ELEMS_I, estimate_memory, kv_cache_bytes
from core.parser import ParseError, parse_workload
from core.workload import Method
from gpuradar.cli import main
from tests.bot.test_bot_e2e import app, say, tg  # noqa: F401  (the fixtures of the bot's end-to-end tests)
from tests.core.test_estimator import wl
from texts.i18n import render


@pytest.mark.parametrize(("phrase", "prompt", "output"), [
    ("8B inference input 1k output 2k", 1024, 2048),
    ("8B inference prompt 6k, output 512", 6144, 512),
    ("8B inference 1k in 2k out", 1024, 2048),
    ("8B inference 1k tokens in, 512 out", 1024, 512),
    ("8B inference 1k input tokens, 2k output tokens", 1024, 2048),
    ("8B inference isl 1024 osl 2048", 1024, 2048),
    ("8B inference input_len=3000 max_new_tokens=500", 3000, 500),
    ("инференс 8B, вход 1к, выход 2к", 1024, 2048),
    ("запустить 8B, промпт 1к, ответ 2к", 1024, 2048),
    ("инференс 8B, 1к токенов на входе и 2к на выходе", 1024, 2048),
])
def test_the_phrase_states_input_and_output(phrase: str, prompt: int, output: int) -> None:
    spec = parse_workload(phrase)
    assert (spec.prompt_len, spec.output_len, spec.method) == (prompt, output, Method.INFERENCE)
    w, _ = complete(spec)
    assert (w.prompt_len, w.seq_len) == (prompt, prompt + output)


@pytest.mark.parametrize(("phrase", "seq"), [("13B LoRA 4k in bf16", 4096), ("70B inference 32k in fp8", 32768),
                                          ("qwen 7b 4k context in 4bit", 4096)])
def test_a_lone_in_after_a_length_is_still_the_context(phrase: str, seq: int) -> None:
    spec = parse_workload(phrase)
    assert (spec.seq_len, spec.prompt_len, spec.output_len) == (seq, None, None)


def test_a_stated_context_stays_and_holds_the_prompt() -> None:
    w, notes = complete(parse_workload("qwen3-8b inference ctx 8k input 1k"))
    assert (w.seq_len, w.prompt_len) == (8192, 1024)
    assert "prompt_len" not in {n.key for n in notes}
    w, _ = complete(parse_workload("qwen3-8b inference ctx 8k input 1k output 2k"))
    assert (w.seq_len, w.prompt_len) == (8192, 1024)  # the context the server is configured for


def test_input_or_output_alone_means_inference_and_fills_the_rest() -> None:
    w, notes = complete(parse_workload("qwen3-8b input 1k"))
    assert w.method is Method.INFERENCE and (w.seq_len, w.prompt_len) == (4096, 1024)
    w, notes = complete(parse_workload("qwen3-8b output 1k"))
    assert (w.seq_len, w.prompt_len) == (4096, 3072)
    said = {n.key: render("en", n.msg) for n in notes}
    assert "context less the output" in said["prompt_len"]


def test_unstated_the_whole_context_is_the_prompt_and_the_answer_says_so() -> None:
    w, notes = complete(parse_workload("qwen3-8b inference ctx 8k"))
    assert w.prompt_len == w.seq_len == 8192
    note = next(n for n in notes if n.key == "prompt_len")
    assert "worst case" in render("en", note.msg) and "input 1k output 2k" in render("en", note.msg)
    assert "худший случай" in render("ru", note.msg) and "вход 1к выход 2к" in render("ru", note.msg)
    # training phrases are untouched
    w, notes = complete(parse_workload("8B LoRA ctx 4k"))
    assert w.prompt_len is None and "prompt_len" not in {n.key for n in notes}


@pytest.mark.parametrize(("phrase", "key"), [
    ("8B inference ctx 2k input 1k output 2k", "wl_prompt_output_context"),
    ("8B inference ctx 1k input 2k", "wl_prompt_context"),
    ("8B inference ctx 2k output 2k", "wl_output_context"),
    ("8B LoRA input 1k", "wl_not_for_method"),
])
def test_impossible_lengths_are_refused_politely(phrase: str, key: str) -> None:
    with pytest.raises(ParseError) as err:
        complete(parse_workload(phrase))
    assert err.value.problem is not None and err.value.problem.key == key
    for lang in ("en", "ru"):
        assert "{" not in render(lang, err.value.problem)


def test_the_peak_is_the_prefill_or_the_end_of_generation_by_hand() -> None:
    a = wl("qwen3-8b", method="inference").arch
    ctx = 32768

    def activations(prompt: int) -> float:
        w = wl("qwen3-8b", method="inference", seq_len=ctx, prompt_len=prompt)
        return estimate_memory(w).breakdown.activations * GIB

    # the whole context as prompt: the prefill working set of 32,768 tokens
    ws = (PREFILL_ELEMS_I * a.intermediate + PREFILL_ELEMS_H * a.hidden) * 2.0
    assert activations(ctx) == pytest.approx(ws * ctx)
    # a 30,720-token prompt: the working set beyond what the last 2048 generated tokens add to the cache
    grown = kv_cache_bytes(a, ctx) - kv_cache_bytes(a, 30720)
    assert activations(30720) == pytest.approx(ws * 30720 - grown)
    # a 1-token prompt: generation's end sets the peak, the prefill adds nothing
    assert activations(1) == 0.0
    # the cache is the whole context either way
    full = wl("qwen3-8b", method="inference", seq_len=ctx, prompt_len=1)
    assert estimate_memory(full).breakdown.kv_cache * GIB == pytest.approx(kv_cache_bytes(a, ctx))
    # and a shorter prompt never needs more memory
    peaks = [estimate_memory(wl("qwen3-8b", method="inference", seq_len=ctx, prompt_len=p)).per_gpu_gib
             for p in (1, 1024, 8192, 30720, ctx)]
    assert peaks == sorted(peaks) and peaks[0] < peaks[-1]


def test_tensor_parallel_splits_the_prefill_and_the_cache_alike() -> None:
    w = wl("qwen2.5-72b", method="inference", seq_len=32768, prompt_len=1024, gpus=4, strategy="tp")
    one = wl("qwen2.5-72b", method="inference", seq_len=32768, prompt_len=1024)
    assert estimate_memory(w).breakdown.kv_cache == pytest.approx(estimate_memory(one).breakdown.kv_cache / 4)
    assert estimate_memory(w).per_gpu_gib < estimate_memory(one).per_gpu_gib / 3


def test_cli_options_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "qwen3-8b inference", "--input", "1024", "--output", "2048", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["workload"]["prompt_len"], out["workload"]["seq_len"]) == (1024, 3072)
    assert main(["estimate", "qwen3-8b inference ctx 32k", "--json"]) == 0
    worst = json.loads(capsys.readouterr().out)
    assert worst["workload"]["prompt_len"] == worst["workload"]["seq_len"] == 32768
    assert main(["estimate", "qwen3-8b inference ctx 32k", "--prompt", "1024", "--json"]) == 0
    short = json.loads(capsys.readouterr().out)
    assert short["memory"]["per_gpu_gib"] < worst["memory"]["per_gpu_gib"]
    assert main(["estimate", "qwen3-8b inference", "--output", "0"]) == 2
    assert "--output" in capsys.readouterr().err
    assert main(["estimate", "qwen3-8b вход 1к выход 2к", "--lang", "ru"]) == 0
    assert "контекст 3\u00a0072 (вход 1\u00a0024 + выход 2\u00a0048)" in capsys.readouterr().out


async def test_the_bot_shows_input_and_output(tg, app):  # noqa: F811
    text = await say(tg, "/estimate qwen3-8b inference input 1k output 2k")
    assert "ctx 3,072 (input 1,024 + output 2,048)" in text
    text = await say(tg, "/estimate qwen3-8b инференс вход 1к выход 2к", lang="ru")
    assert "контекст 3\u00a0072 (вход 1\u00a0024 + выход 2\u00a0048)" in text
    text = await say(tg, "/estimate qwen3-8b inference ctx 8k")
    assert "worst case" not in text  # an assumption: one tap away, behind the Assumptions button
    call = tg.calls_of("sendMessage")[-1]
    tg.press(call, "Assumptions")
    assert "worst case" in (await tg.wait_for("editMessageText", chat_id=call.chat_id)).text


def test_the_prefill_speed_is_that_of_the_stated_prompt() -> None:
    from core.gpus import find_gpu
    from core.speed import _prefill_rate, inference_speed

    gpu = find_gpu("H100 SXM")
    assert gpu is not None
    long = wl("qwen3-8b", method="inference", seq_len=32768, prompt_len=None)
    short = long.with_(prompt_len=1024)
    assert inference_speed(short, gpu, 1).prefill_tokens_per_s == _prefill_rate(short, gpu, 1, 1024)
    assert inference_speed(long, gpu, 1).prefill_tokens_per_s == _prefill_rate(long, gpu, 1, 32768)
    # attention over a shorter prompt costs less per token; the decode step still reads the whole context's cache
    assert inference_speed(short, gpu, 1).prefill_tokens_per_s > inference_speed(long, gpu, 1).prefill_tokens_per_s
    assert inference_speed(short, gpu, 1).decode_tokens_per_s == inference_speed(long, gpu, 1).decode_tokens_per_s


def test_the_help_examples_show_input_and_output_and_are_understood() -> None:
    from texts import examples

    EXAMPLES, EXAMPLES_RU = examples("en"), examples("ru")
    for example in (*EXAMPLES, *EXAMPLES_RU):
        complete(parse_workload(example))  # every example the bot offers is understood
    assert any(complete(parse_workload(e))[0].prompt_len == 1024 for e in EXAMPLES)
    assert any(complete(parse_workload(e))[0].prompt_len == 1024 for e in EXAMPLES_RU)
