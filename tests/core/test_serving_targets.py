"""Serving targets: a request rate ("1000 requests per minute"), an answer speed ("30 tok/s per user") or a total
speed ("2000 tok/s in total") are read as what they are, turned into the answers in flight by Little's law, and
checked on every configuration; offer lists and subscriptions keep only the configurations that keep up."""

from __future__ import annotations

import math

import pytest

from core.answer import answer, target_said
from core.defaults import ANSWER_TPS, RATE_OUTPUT_TOKENS, RATE_PROMPT_TOKENS, complete
from core.fit import DEFAULT_COUNTS
from core.gpus import GPUS
from core.parser import ParseError, parse_workload
from core.speed import inference_speed, served_output_tokens_per_s, smallest_group
from texts.i18n import render


@pytest.mark.parametrize(("phrase", "per_second"), [
    ("llama 3.1 8b serve 1000 requests per minute", 1000 / 60),
    ("mistral 7b 10 rps", 10.0),
    ("qwen2.5 7b 5 req/s", 5.0),
    ("8b 500 запросов в час", 500 / 3600),
    ("8b 3 запроса в секунду", 3.0),
    ("8b 1k queries a day", 1000 / 86400),
    ("llama 8b 120 rpm", 2.0),
    ("8b 100 запросов/мин", 100 / 60),
    ("8b 2000 запросов в день", 2000 / 86400),
    ("8b 30 requests per hour", 30 / 3600),
])
def test_a_rate_is_requests_a_second_in_any_unit(phrase: str, per_second: float) -> None:
    spec = parse_workload(phrase)
    assert spec.request_rate == pytest.approx(per_second)
    assert spec.concurrency is None  # not "1000 at once", the reading this replaced


@pytest.mark.parametrize(("phrase", "en", "ru"), [
    ("llama 3.1 8b 120 requests per minute", "120 requests a minute", "120 запросов в минуту"),
    ("8b 3 rps", "3 requests a second", "3 запроса в секунду"),
    ("8b 7200 запросов в час", "7,200 requests an hour", "7 200 запросов в час"),
    ("8b 86400 requests a day", "86,400 requests a day", "86 400 запросов в сутки"),
    ("8b 90 rpm", "90 requests a minute", "90 запросов в минуту"),
    ("8b 1 запрос в минуту", "1 request a minute", "1 запрос в минуту"),
])
def test_a_rate_is_said_back_in_the_unit_it_was_said_in(phrase: str, en: str, ru: str) -> None:
    """"120 a minute" is 2 a second, but the user said a minute: the target and the assumption behind the
    concurrency say it so, in both languages (with the number's plural)."""
    w, notes = _complete(phrase)
    target = target_said(w)
    assert target is not None
    why = next(n.msg for n in notes if n.key == "concurrency")
    for lang, rate in (("en", en), ("ru", ru)):
        assert rate in render(lang, target).replace("\u00a0", " ").replace("\u202f", " ")
        assert rate in render(lang, why).replace("\u00a0", " ").replace("\u202f", " ")


def test_a_count_of_requests_without_a_time_is_still_how_many_at_once() -> None:
    spec = parse_workload("8b inference 64 requests")
    assert spec.concurrency == 64 and spec.request_rate is None


@pytest.mark.parametrize(("phrase", "each", "total"), [
    ("70B awq 200 tok/s", 200.0, None),
    ("qwen2.5 32b инференс 50 токенов в секунду на пользователя", 50.0, None),
    ("70b 20 users at least 30 tok/s each", 30.0, None),
    ("13b инференс не меньше 20 токенов/с", 20.0, None),
    ("8b speed 40 t/s", 40.0, None),
    ("8B 2000 tok/s total", None, 2000.0),
    ("8b суммарно 2000 токенов в секунду", None, 2000.0),
    ("8b throughput 5000 tokens per second", None, 5000.0),
    ("llama 8b 20 users tpot 40 ms", 25.0, None),  # a time per output token is the speed it allows
    ("8b 20 users itl < 50ms", 20.0, None),
    ("8b 10 пользователей 20 мс на токен", 50.0, None),
    ("70b time per output token 100ms", 10.0, None),
    ("8b 2k tok/s in total", None, 2000.0),
    ("8b 40 т/с на пользователя", 40.0, None),
])
def test_a_speed_is_each_answer_unless_said_to_be_the_total(phrase: str, each: float | None,
                                                          total: float | None) -> None:
    spec = parse_workload(phrase)
    assert (spec.answer_tps, spec.total_tps) == (pytest.approx(each) if each else None, total)
    assert spec.seq_len is None  # "50 tokens" of a speed is no context length


def _complete(phrase: str):  # type: ignore[no-untyped-def]
    return complete(parse_workload(phrase))


def test_a_rate_sets_the_answers_in_flight_by_littles_law_and_says_so() -> None:
    w, notes = _complete("llama 3.1 8b 1000 requests per minute")
    assert w.method.value == "inference" and w.engine is not None and w.engine.value == "vllm"
    output = w.seq_len - (w.prompt_len or 0)
    assert output == RATE_OUTPUT_TOKENS and w.prompt_len == RATE_PROMPT_TOKENS and w.answer_tps == ANSWER_TPS
    assert w.demand_tps == pytest.approx(1000 / 60 * RATE_OUTPUT_TOKENS)
    assert w.concurrency == math.ceil(1000 / 60 * RATE_OUTPUT_TOKENS / ANSWER_TPS)
    keys = [n.key for n in notes]
    assert {"output_len", "prompt_len", "answer_tps", "concurrency"} <= set(keys)
    said = render("en", next(n.msg for n in notes if n.key == "concurrency"))
    assert "1,000 requests a minute × 150 tokens" in said and "Little's law" in said
    ru = render("ru", next(n.msg for n in notes if n.key == "concurrency"))
    assert "1\xa0000 запросов в минуту" in ru and "закону Литтла" in ru


def test_a_context_said_keeps_its_prompt() -> None:
    w, _ = _complete("llama 3.1 8b 1000 requests per minute ctx 8k")  # the prompt is the context less the answer
    assert (w.seq_len, w.prompt_len) == (8192, 8192 - RATE_OUTPUT_TOKENS)
    w, _ = _complete("llama 3.1 8b 1000 requests per minute input 2k")
    assert (w.prompt_len, w.seq_len) == (2048, 2048 + RATE_OUTPUT_TOKENS)


def test_the_answer_length_is_the_one_said_or_the_contexts_rest() -> None:
    w, notes = _complete("llama 3.1 8b 5 rps ctx 8k input 1k output 500")  # a context longer than both
    assert w.demand_tps == pytest.approx(5 * 500) and w.concurrency == math.ceil(5 * 500 / ANSWER_TPS)
    w, notes = _complete("llama 3.1 8b 5 rps ctx 8k input 6k")  # the answer is what the context leaves
    assert w.demand_tps == pytest.approx(5 * 2048) and "output_len" not in [n.key for n in notes]


def test_said_values_replace_the_assumed_ones() -> None:
    w, notes = _complete("8b 2 rps output 400 at least 40 tok/s per user")
    assert w.concurrency == math.ceil(2 * 400 / 40) and w.answer_tps == 40
    assert "answer_tps" not in [n.key for n in notes]
    said, _ = _complete("8b 2 rps 8 users")  # a concurrency said is kept: the answer checks whether it keeps up
    assert said.concurrency == 8 and said.demand_tps == pytest.approx(2 * RATE_OUTPUT_TOKENS)


@pytest.mark.parametrize(("phrase", "key"), [
    ("8b 10 rps 2000 tok/s total", "wl_rate_total"),
    ("8b LoRA 10 rps", "wl_not_for_method"),
    ("8b 1000000 requests per second", "wl_rate_too_many"),
])
def test_targets_that_cannot_be_met_as_said_are_refused_politely(phrase: str, key: str) -> None:
    with pytest.raises(ParseError) as exc:
        _complete(phrase)
    assert exc.value.problem is not None and exc.value.problem.key == key
    for lang in ("en", "ru"):
        assert render(lang, exc.value.problem)


def test_too_many_at_once_names_the_count_and_the_way_out() -> None:
    with pytest.raises(ParseError) as exc:
        _complete("8b 1000000 requests per second")
    for lang, words in (("en", "replica"), ("ru", "реплик")):
        assert words in render(lang, exc.value.explain())


def _meets_by_hand(w, gpu, count) -> bool:  # type: ignore[no-untyped-def]
    """The target's definition, from the speed model's public figures: each answer at the speed asked, and the
    server's answer tokens a second (its clock running through every prefill) at least the demand."""
    s = inference_speed(w, gpu, count, min_group=smallest_group(w, gpu.id, count))
    served = served_output_tokens_per_s(s, w.concurrency, w.prompt_len, w.seq_len - w.prompt_len)
    return s.decode_tokens_per_s >= w.answer_tps * (1 - 1e-9) and served >= w.demand_tps * (1 - 1e-9)


def test_each_configuration_is_marked_by_whether_it_keeps_up() -> None:
    w, notes = _complete("llama 3.1 8b 1000 requests per minute input 1k")
    a = answer(w, notes)
    sp = a.speed()
    assert sp is not None and sp.per_config
    marks = {row.meets for row in sp.per_config}
    assert marks == {True, False}  # the same memory fit, not the same speed
    for row in sp.per_config:
        card = next(g for g in GPUS if g.id == row.gpu)
        assert row.meets == _meets_by_hand(w, card, row.count)
    assert render("en", target_said(sp)) == ("1,000 requests a minute (2,500 tok/s of answers), each answer at "
                                             "25 tok/s or faster")


def test_no_target_marks_nothing() -> None:
    w, notes = _complete("llama 3.1 8b inference 20 users")
    a = answer(w, notes)
    sp = a.speed()
    assert sp is not None and all(row.meets is None for row in sp.per_config) and target_said(sp) is None
    assert not a.has_target
    assert all(a.suits(f.gpu, f.count) == a.fits(f.gpu, f.count) for f in a.report.fits)


def test_offers_suit_only_configurations_that_fit_and_keep_up() -> None:
    w, notes = _complete("llama 3.1 8b 1000 requests per minute input 1k")
    a = answer(w, notes)
    slow = [f for f in a.report.fits if not a.config_speed(f.gpu, f.count).meets]  # type: ignore[union-attr]
    fast = [f for f in a.report.fits if a.config_speed(f.gpu, f.count).meets]  # type: ignore[union-attr]
    assert slow and fast
    assert not any(a.suits(f.gpu, f.count) for f in slow) and all(a.suits(f.gpu, f.count) for f in fast)
    assert not a.suits(fast[0].gpu, 1, 0.5)  # a shared slice is never counted on for a target


def test_a_harder_target_never_adds_a_configuration() -> None:
    easy = answer(*_complete("llama 3.1 8b 300 requests per minute input 1k"))
    hard = answer(*_complete("llama 3.1 8b 300 requests per minute input 1k at least 60 tok/s each"))
    pairs = [(g.id, n) for g in GPUS for n in DEFAULT_COUNTS]
    assert {p for p in pairs if hard.suits(*p)} <= {p for p in pairs if easy.suits(*p)}
    impossible = answer(*_complete("llama 3.1 8b 9000 tok/s per user"))
    assert impossible.keeping_cards() == ()


def test_a_subscription_watches_each_card_from_its_fewest_gpus_that_keep_up() -> None:
    a = answer(*_complete("llama 3.1 8b 1000 requests per minute input 1k"))
    least = a.keeping_counts()
    assert least and set(least.values()) > {1}  # some cards keep up alone, others only several together
    for g in GPUS:
        holding = [n for n in DEFAULT_COUNTS if a.fits(g.id, n)]
        from_here = [n for n in holding if all(a.suits(g.id, m) for m in holding if m >= n)]
        if from_here:
            assert least[g.id] == min(from_here)
            assert all(a.suits(g.id, n) for n in holding if n >= least[g.id])
        else:
            assert g.id not in least
    assert a.keeping_cards() == tuple(least)
    named = answer(*_complete("llama 3.1 8b 1000 requests per minute input 1k on H100"))
    assert set(named.keeping_counts()) <= {"h100-sxm", "h100-pcie", "h100-nvl"} and named.keeping_counts()


@pytest.mark.parametrize(("phrase", "seconds"), [
    ("llama 8b 20 users ttft < 1s", 1.0),
    ("8b 10 rps time to first token 500 ms", 0.5),
    ("8b первый токен за 2 с 5 пользователей", 2.0),
    ("8b inference TTFT 300ms", 0.3),
])
def test_a_first_token_deadline_is_read_in_seconds(phrase: str, seconds: float) -> None:
    assert parse_workload(phrase).ttft_s == pytest.approx(seconds)


def test_a_first_token_deadline_needs_the_prompt_prefilled_within_it() -> None:
    w, notes = _complete("llama 3.1 8b inference ttft 200 ms input 8k")
    a = answer(w, notes)
    assert a.has_target and w.ttft_s == pytest.approx(0.2)
    kept = slow = 0
    for f in a.report.fits:
        card = next(g for g in GPUS if g.id == f.gpu)
        s = inference_speed(w, card, f.count, min_group=smallest_group(w, f.gpu, f.count))
        within = 8192 / s.prefill_tokens_per_s <= 0.2
        assert a.suits(f.gpu, f.count) is within
        kept, slow = kept + within, slow + (not within)
    assert kept and slow
    said = target_said(a.speed(limit=1))  # type: ignore[arg-type]
    assert render("en", said) == "the first token within 200 ms"
    assert render("ru", said) == "первый токен не позже чем через 200 мс"
    both = answer(*_complete("llama 3.1 8b 10 rps ttft 1.5 s"))
    assert render("en", target_said(both.workload)).endswith("; the first token within 1.5 s")
    with pytest.raises(ParseError):
        _complete("llama 3.1 8b lora ttft 1s")  # a training run has no first token
