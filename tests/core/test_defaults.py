"""Defaults that a phrase leaves open: sensible for the method, every one reported back in both languages, and
incoherent combinations refused with a polite bilingual ParseError (never another exception)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.defaults import KV_BYTES, Assumption, complete
from core.engines import profile
from core.models import from_hf_config, get_model
from core.parser import ParseError, parse_workload
from core.workload import (
    Attention,
    Method,
    Offload,
    Optimizer,
    Precision,
    Quant,
    Strategy,
    Workload,
    WorkloadSpec,
)
from texts.i18n import render

CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)


def done(text: str) -> tuple[Workload, dict[str, Assumption]]:
    workload, notes = complete(parse_workload(text))
    return workload, {a.key: a for a in notes}


def test_lora_defaults_and_what_is_reported() -> None:
    w, notes = done("13B LoRA")
    assert w.model == "llama-2-13b" and w.params_b == pytest.approx(13.02, rel=1e-3)
    assert (w.method, w.quant, w.precision, w.seq_len, w.batch, w.grad_ckpt, w.attention) == (
        Method.LORA, Quant.NONE, Precision.BF16, 2048, 1, True, Attention.FLASH)
    assert (w.lora_rank, w.lora_targets, w.optimizer, w.fused_ce, w.gpus, w.strategy, w.offload) == (
        16, "all-linear", Optimizer.ADAMW, False, 1, Strategy.SINGLE, Offload.NONE)
    assert (w.kv_dtype, w.concurrency, w.examples, w.tokens_per_example, w.epochs, w.gpu) == (
        "bf16", 1, None, None, None, None)
    # every open field that matters for LoRA is an assumption; what was said (size, method) is not
    assert set(notes) == {"arch", "quant", "precision", "seq_len", "batch", "grad_ckpt", "attention", "lora_rank",
                          "lora_targets", "optimizer", "fused_ce", "gpus", "strategy", "offload", "engine"}
    assert "Llama-2-13B" in render("en", notes["arch"].msg) and "Llama-2-13B" in render("ru", notes["arch"].msg)


def test_qlora_defaults_to_nf4() -> None:
    w, notes = done("llama-3.1-8b qlora")
    assert (w.quant, w.lora_rank, w.lora_targets) == (Quant.NF4, 16, "all-linear")
    assert "nf4" in render("en", notes["quant"].msg)
    assert "arch" not in notes  # a named model needs no architecture assumption


def test_the_issue_json_sample_workload() -> None:
    w, _ = done("llama-3.1-8b qlora")
    dumped = w.model_dump(mode="json")
    assert "arch" not in dumped
    assert {k: dumped[k] for k in ("model", "params_b", "method", "seq_len", "batch", "grad_ckpt", "lora_rank",
                                   "lora_targets", "quant", "optimizer", "gpus", "strategy", "concurrency",
                                   "examples", "tokens_per_example", "epochs")} == {
        "model": "llama-3.1-8b", "params_b": 8.03, "method": "qlora", "seq_len": 2048, "batch": 1,
        "grad_ckpt": True, "lora_rank": 16, "lora_targets": "all-linear", "quant": "nf4", "optimizer": "adamw",
        "gpus": 1, "strategy": "single", "concurrency": 1, "examples": None, "tokens_per_example": None,
        "epochs": None}


@pytest.mark.parametrize("text", ["7B full fine-tune", "7B freeze"])
def test_full_and_freeze_have_no_adapter(text: str) -> None:
    w, notes = done(text)
    assert (w.lora_rank, w.lora_targets, w.quant, w.optimizer, w.grad_ckpt) == (
        None, None, Quant.NONE, Optimizer.ADAMW, True)
    assert "lora_rank" not in notes and "lora_targets" not in notes


def test_inference_defaults() -> None:
    w, notes = done("Qwen2.5-72B inference")
    assert (w.seq_len, w.batch, w.optimizer, w.grad_ckpt, w.lora_rank, w.kv_dtype, w.concurrency) == (
        4096, 1, None, False, None, "bf16", 1)
    assert {"seq_len", "kv_dtype", "concurrency"} <= set(notes)
    # what means nothing for inference is not said back as an assumption
    assert not {"optimizer", "grad_ckpt", "batch", "lora_rank", "fused_ce", "offload"} & set(notes)


def test_inference_int4_is_a_gptq_checkpoint() -> None:
    w, notes = done("инференс 70B int4, контекст 32k, 8 пользователей")
    assert (w.method, w.quant, w.seq_len, w.concurrency) == (Method.INFERENCE, Quant.GPTQ_INT4, 32768, 8)
    assert "quant" not in notes and "concurrency" not in notes


def test_the_said_values_win_over_defaults() -> None:
    w, notes = done("70B QLoRA ctx 8k bs 4 r64 q,v adamw8bit fused ce no grad ckpt eager fp16")
    assert (w.seq_len, w.batch, w.lora_rank, w.lora_targets, w.optimizer, w.fused_ce, w.grad_ckpt, w.attention,
            w.precision) == (8192, 4, 64, "q,v", Optimizer.ADAMW_8BIT, True, False, Attention.EAGER, Precision.FP16)
    assert not {"seq_len", "batch", "lora_rank", "lora_targets", "optimizer", "fused_ce", "grad_ckpt",
                "attention", "precision"} & set(notes)


def test_every_assumption_speaks_both_languages() -> None:
    for text in ("13B LoRA", "70b qlora 4 gpus", "8x7B inference 2 gpus", "7B full 10k примеров", "7B lora V100",
                 "7B full offload"):
        _, notes = done(text)
        for note in notes.values():
            en, ru = render("en", note.msg), render("ru", note.msg)
            assert en and ru and en != ru, note
            assert CYRILLIC.search(render("ru", note.msg)) and not CYRILLIC.search(render("en", note.msg)), note


@pytest.mark.parametrize(("text", "strategy"), [
    ("70B inference 8 GPU", Strategy.TP), ("70B full 8 GPU", Strategy.ZERO3), ("70B freeze 8 GPU", Strategy.ZERO3),
    ("70B lora 8 GPU", Strategy.FSDP), ("70B qlora 8 GPU", Strategy.FSDP), ("70B qlora", Strategy.SINGLE),
    ("7B full offload", Strategy.ZERO3),
])
def test_strategy_follows_the_method_and_gpu_count(text: str, strategy: Strategy) -> None:
    w, notes = done(text)
    assert w.strategy == strategy
    assert notes["strategy"].key == "strategy"


def test_gpu_without_bf16_gets_fp16() -> None:
    w, notes = done("7B LoRA on V100")
    assert (w.precision, w.kv_dtype, w.gpu) == (Precision.FP16, "fp16", "v100-32gb")
    assert "V100" in render("en", notes["precision"].msg) and "bf16" in render("ru", notes["precision"].msg)


def test_dataset_fields_are_filled_only_when_one_was_given() -> None:
    w, notes = done("13B LoRA 10k примеров")
    assert (w.examples, w.tokens_per_example, w.epochs) == (10_000, 512, 1.0)
    assert {"tokens_per_example", "epochs"} <= set(notes)
    w, notes = done("13B LoRA 3 epochs")
    assert (w.examples, w.tokens_per_example, w.epochs) == (None, 512, 3.0)
    w, _ = done("13B LoRA")
    assert (w.examples, w.tokens_per_example, w.epochs) == (None, None, None)


@pytest.mark.parametrize("text", ["13B LoRA dataset 20M tokens", "13B LoRA датасет 20 млн токенов",
                                  "13B LoRA 20M tokens of data", "13B LoRA на 20 млн токенов данных",
                                  "13B LoRA on a 20M-token dataset", "13B LoRA на датасете в 20 млн токенов"])
def test_a_dataset_said_in_tokens_is_trained_as_that_many_tokens(text: str) -> None:
    """"dataset 20M tokens" is the data's size, not 20M examples nor a 20M-token context: the time to train counts
    20M tokens an epoch (examples made of the default example length, said back as an assumption)."""
    w, notes = done(text)
    assert w.seq_len == 2048 and w.tokens_per_example == 512
    assert w.examples is not None and 20_000_000 <= w.examples * w.tokens_per_example < 20_000_000 + 512
    assert "20000000" in render("en", notes["examples"].msg) and "20000000" in render("ru", notes["examples"].msg)


@pytest.mark.parametrize("text", ["13B LoRA on 20M tokens", "13B LoRA 20M tokens", "13B qlora 4bit 20000000 tokens",
                                  "дообучить 13B через LoRA на 20 млн токенов",
                                  "13B fine-tune LoRA on 20 million tokens"])
def test_tokens_in_millions_are_the_data_when_training(text: str) -> None:
    """No word says what the tokens are of: millions of them are the data when training, never a context."""
    w, _ = done(text)
    assert w.seq_len == 2048 and w.examples is not None
    assert 20_000_000 <= w.examples * (w.tokens_per_example or 0) < 20_000_000 + 512


def test_tokens_in_millions_are_the_context_when_serving_and_fewer_are_a_context_when_training() -> None:
    assert parse_workload("llama 4 scout inference 2M tokens").seq_len == 2 * 1024 * 1024
    spec = parse_workload("13B lora 16k tokens")
    assert (spec.seq_len, spec.dataset_tokens) == (16 * 1024, None)
    for twice in ("13B lora dataset 5M tokens, 20M tokens", "13B lora 5M tokens, 20M tokens",
                  "7B inference 2M tokens 3M tokens"):  # the same thing said twice, two ways, is a contradiction
        with pytest.raises(ParseError) as info:
            parse_workload(twice)
        assert info.value.not_understood[-1].endswith("M tokens")
        assert "contradicts" in render("en", info.value.explain())


def test_a_dataset_in_tokens_and_examples_gives_each_examples_length() -> None:
    w, notes = done("13B LoRA 5k examples, dataset 20M tokens, 2 epochs")
    assert (w.examples, w.tokens_per_example, w.epochs) == (5000, 4000, 2.0)
    assert "5000" in render("en", notes["tokens_per_example"].msg)
    for text, needle in [("13B LoRA 5k examples of 512 tokens, dataset 20M tokens", "two of them"),
                         ("7B inference dataset 1M tokens", "does not apply")]:
        with pytest.raises(ParseError) as info:
            complete(parse_workload(text))
        assert needle in render("en", info.value.explain()), text


@pytest.mark.parametrize(("text", "gb", "gpus"), [
    ("70B QLoRA on one 80GB card", 80, 1), ("Полное дообучение 13B на 2 × 80 ГБ", 80, 2), ("13B QLoRA on 24GB", 24, 1),
    ("70B inference on a 48GB GPU", 48, 1), ("7B lora 16 GB VRAM", 16, 1), ("full 13B on two 80GB cards", 80, 2),
    ("13B lora на 2 картах по 48 ГБ", 48, 2),
    ("инференс 7b модели на 8 гб видеокарте", 8, 1), ("7B inference on a 12GB card", 12, 1),  # GeForce sizes
])
def test_cards_named_by_their_memory_are_that_class(text: str, gb: float, gpus: int) -> None:
    """The catalog's every card of that memory, a bf16 one representing them, said back as an assumption."""
    from core.gpus import GPUS, get_gpu

    w, notes = done(text)
    assert set(w.gpu_ids) == {g.id for g in GPUS if g.memory_gb == gb} and w.gpus == gpus
    assert w.gpu_memory_gb == gb and get_gpu(w.gpu).bf16
    assert all(get_gpu(g).name in render("en", notes["gpu"].msg) for g in w.gpu_ids)


def test_a_card_and_its_memory_narrow_its_family_or_are_refused() -> None:
    w, _ = done("13B lora on A100 (80GB)")
    assert w.gpu_ids == ("a100-80gb",)
    for text, needle in [("13B lora on H100 (40GB)", ("No H100 has 40 GB", "нет версии на 40 ГБ")),
                         ("70B inference on 70GB", ("No card in the catalog has 70 GB", "нет карты с 70 ГБ"))]:
        with pytest.raises(ParseError) as info:
            complete(parse_workload(text))
        assert needle[0] in render("en", info.value.explain()) and needle[1] in render("ru", info.value.explain())


def test_long_examples_stretch_the_default_sequence() -> None:
    w, notes = done("7B LoRA 1k examples по 3000 токенов")
    assert (w.seq_len, w.tokens_per_example) == (3000, 3000)
    assert "example" in render("en", notes["seq_len"].msg)
    w, _ = done("7B LoRA 1k examples по 3000 токенов ctx 1024")  # a stated length is kept (truncation)
    assert w.seq_len == 1024


def test_no_method_with_inference_hints_means_inference() -> None:
    w, notes = done("70B 8 users")
    assert w.method == Method.INFERENCE
    assert "users" in render("en", notes["method"].msg) and "пользовател" in render("ru", notes["method"].msg)
    w, _ = done("70B awq")
    assert w.method == Method.INFERENCE


def test_no_method_asks_for_one_listing_them() -> None:
    with pytest.raises(ParseError) as info:
        done("7B fine-tune ctx 4k")
    en, ru = render("en", info.value.explain()), render("ru", info.value.explain())
    for word in ("inference", "full fine-tune", "freeze", "LoRA", "QLoRA"):
        assert word in en
    for word in ("инференс", "полное дообучение", "LoRA", "QLoRA"):
        assert word in ru
    assert "params_b=7.0" in info.value.understood


def test_architecture_resolution_order() -> None:
    custom = from_hf_config({"hidden_size": 2048, "num_hidden_layers": 20, "num_attention_heads": 16,
                             "num_key_value_heads": 4, "intermediate_size": 5632, "vocab_size": 32000}, "my-2b")
    def arch_note(spec: WorkloadSpec) -> tuple[Workload, str | None]:
        workload, notes = complete(spec)
        return workload, next((render("en", n.msg) for n in notes if n.key == "arch"), None)

    w, note = arch_note(WorkloadSpec(arch=custom, model="my-2b", method=Method.LORA))
    assert w.arch is custom and w.model == "my-2b" and w.params_b == custom.params_b and note is None
    w, note = arch_note(WorkloadSpec(model="Llama 3.1 70B", method=Method.LORA))
    assert w.arch is get_model("llama-3.1-70b") and note is None
    w, note = arch_note(WorkloadSpec(params_b=22, experts=8, method=Method.QLORA))
    assert w.model == "mixtral-8x22b" and "8x22B" in note
    w, note = arch_note(WorkloadSpec(params_b=20, method=Method.QLORA))  # no typical 20B: scaled, and said so
    assert w.params_b == 20 and "20B" in note and "scaled" in w.arch.name


def test_command_line_options_complete_the_text() -> None:
    spec = parse_workload("13B").merged(WorkloadSpec(method=Method.LORA, lora_rank=8))
    w, _ = complete(spec)
    assert (w.method, w.lora_rank) == (Method.LORA, 8)


def test_kv_bytes_cover_every_default_kv_type() -> None:
    for text in ("7B inference", "7B inference fp16", "7B inference fp32", "7B inference kv int4"):
        assert done(text)[0].kv_dtype in KV_BYTES


INCOHERENT = [
    ("7B full tp 2", "Tensor parallel"),
    ("7B full nf4", "nf4"),
    ("7B lora gguf", "q4_k_m"),
    ("7B full r16", "LoRA rank"),
    ("7B inference adamw", "optimizer"),
    ("7B inference grad ckpt", "gradient checkpointing"),
    ("7B inference 3 epochs", "epochs"),
    ("7B lora 8 users", "concurrent"),
    ("7B full 8 gpus single", "single"),
    ("7B full ddp offload", "offload"),
    ("7B full zero2 offload all", "ZeRO-3"),
    ("7B inference zero3", "tensor parallel"),
    ("70B inference on vllm 3 H100", "heads"),  # tensor parallel; llama.cpp splits layers (below)
    ("7B lora bf16 on V100", "bf16"),
    ("llama-3.1-8b 70B lora", "parameters"),
    ("7B inference bs 4 8 users", "batch"),
    ("lora ctx 8k", "Which model"),
]


@pytest.mark.parametrize(("text", "needle"), INCOHERENT, ids=[t for t, _ in INCOHERENT])
def test_incoherent_combinations_are_refused_politely(text: str, needle: str) -> None:
    with pytest.raises(ParseError) as info:
        done(text)
    err = info.value
    assert needle in render("en", err.explain())
    assert CYRILLIC.search(render("ru", err.explain()).splitlines()[0])


@pytest.mark.parametrize("text", ["fine-tune llama 3.1 8b", "дообучить Llama-3.1-8B на 10k примерах",
                                  "llama-3.1-8b 3 epochs", "llama 3.1 8b unsloth", "llama 3.1 8b r=16"])
def test_training_without_a_method_is_asked_which_way_to_train(text: str) -> None:
    # The question offers the ways to train, each example naming the user's model; each example is understood.
    with pytest.raises(ParseError) as info:
        complete(parse_workload(text))
    en, ru = render("en", info.value.explain()), render("ru", info.value.explain())
    assert "Which way to fine-tune Llama-3.1-8B?" in en and "Как дообучать Llama-3.1-8B?" in ru
    assert "inference" not in en.splitlines()[0] and "инференс" not in ru.splitlines()[0]
    for lang, first in (("en", en.splitlines()[0]), ("ru", ru.splitlines()[0])):
        examples = re.findall(r"«([^»]+)»", first)
        assert len(examples) == 4, lang
        methods = {complete(parse_workload(e))[0].method for e in examples}
        assert methods == {Method.LORA, Method.QLORA, Method.FULL, Method.FREEZE}, lang


def test_no_word_of_training_or_serving_is_asked_every_method() -> None:
    with pytest.raises(ParseError) as info:
        complete(parse_workload("70B on H100"))
    assert "inference" in render("en", info.value.explain()).splitlines()[0]


@pytest.mark.parametrize(("text", "lo", "hi"), [("30-70B QLoRA", 30, 70), ("7–13B LoRA", 7, 13),
                                                ("от 7 до 13B инференс", 7, 13), ("13B-7B lora", 7, 13),
                                                ("7 to 13 billion params lora", 7, 13)])
def test_a_range_of_sizes_is_sized_for_its_largest_and_says_so(text: str, lo: float, hi: float) -> None:
    w, notes = done(text)
    assert w.params_b == pytest.approx(complete(parse_workload(f"{hi}B {w.method.value}"))[0].params_b)
    for lang in ("en", "ru"):
        said = render(lang, notes["size_range"].msg)
        assert f"{lo}B" in said and f"{hi}B" in said


def test_a_family_given_as_the_model_option_is_asked_which() -> None:
    with pytest.raises(ParseError) as info:
        complete(WorkloadSpec(model="gpt-oss", method=Method.INFERENCE))
    en, ru = render("en", info.value.explain()), render("ru", info.value.explain())
    assert "«gpt-oss»" in en and "gpt-oss-20B" in en and "gpt-oss-120B" in en and "Which one?" in en
    assert "gpt-oss-120B" in ru and "Какая из них?" in ru


def test_unknown_model_or_gpu_from_options() -> None:
    for spec, needle in ((WorkloadSpec(model="gpt-5", method=Method.LORA), "not in the catalog"),
                         (WorkloadSpec(params_b=7, method=Method.LORA, gpu="GTX 480"), "not in the catalog"),
                         (WorkloadSpec(params_b=7, method=Method.INFERENCE, kv_dtype="fp3"), "KV-cache"),
                         (WorkloadSpec(params_b=7, method=Method.LORA, lora_targets="lm_head"), "LoRA targets")):
        with pytest.raises(ParseError) as info:
            complete(spec)
        assert needle in render("en", info.value.explain())


# --- properties: complete(parse_workload(x)) gives a Workload or a ParseError, nothing else -----------------------

PHRASE_PARTS = ["13B", "70b", "8x7B", "8x22B", "0.5B", "405B", "llama-3.1-8b", "mixtral", "Qwen2.5-72B", "LoRA",
                "qlora", "full", "freeze", "inference", "fine-tune", "ctx 8k", "32k", "bs 4", "r16", "q,v", "nf4",
                "int4", "int8", "awq", "gptq", "q4_k_m", "fp8", "bf16", "fp16", "fp32", "adamw", "8-bit adam",
                "paged", "sgd", "no grad ckpt", "eager", "fused ce", "offload", "offload all", "zero3", "zero2",
                "fsdp", "ddp", "tp", "single", "kv fp8", "kv int4", "8 users", "on 8 H100", "2x A100 80GB",
                "on 3 GPU", "V100", "T4", "10k примеров", "3 эпохи", "по 4000 токенов", "attention only"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PHRASE_PARTS), min_size=1, max_size=7).map(" ".join))
def test_complete_after_parse_only_ever_raises_parse_error(text: str) -> None:
    try:
        workload, notes = complete(parse_workload(text))
    except ParseError as err:
        assert render("ru", err.explain()) and render("en", err.explain())
        return
    assert workload.gpus >= 1 and workload.seq_len >= 1
    assert workload.is_training == (workload.optimizer is not None)
    assert (workload.lora_rank is not None) == (workload.method in (Method.LORA, Method.QLORA))
    assert len({n.key for n in notes}) == len(notes)  # each field is assumed at most once


specs = st.builds(
    WorkloadSpec,
    model=st.sampled_from([None, "llama-3.1-8b", "mixtral", "nope"]),
    params_b=st.one_of(st.none(), st.floats(min_value=0.001, max_value=1e6)),
    experts=st.one_of(st.none(), st.integers(min_value=1, max_value=1000)),
    method=st.one_of(st.none(), st.sampled_from(Method)),
    quant=st.one_of(st.none(), st.sampled_from(Quant)),
    precision=st.one_of(st.none(), st.sampled_from(Precision)),
    seq_len=st.one_of(st.none(), st.integers(min_value=1, max_value=10**7)),
    gpus=st.one_of(st.none(), st.integers(min_value=1, max_value=64)),
    strategy=st.one_of(st.none(), st.sampled_from(Strategy)),
    offload=st.one_of(st.none(), st.sampled_from(Offload)),
    gpu=st.sampled_from([None, "h100-sxm", "T4", "4090", "unknown"]),
    kv_dtype=st.sampled_from([None, "fp8", "int4", "bogus"]),
    concurrency=st.one_of(st.none(), st.integers(min_value=1, max_value=10**6)),
    lora_targets=st.sampled_from([None, "q,v", "all-linear", "lm_head"]),
    tokens_per_example=st.one_of(st.none(), st.integers(min_value=1, max_value=10**7)),
    epochs=st.one_of(st.none(), st.floats(min_value=0.01, max_value=100)),
)


@settings(max_examples=400, deadline=None)
@given(specs)
def test_complete_any_spec_only_ever_raises_parse_error(spec: WorkloadSpec) -> None:
    try:
        workload, _ = complete(spec)
    except ParseError:
        return
    assert isinstance(workload, Workload)


# --- a family name in a workload covers its variants (issue 10) -----------------------------------------------------

@pytest.mark.parametrize(("text", "ids"), [
    ("70B QLoRA on H100", {"h100-sxm", "h100-pcie", "h100-nvl"}),
    ("70B QLoRA на 2 A100", {"a100-40gb", "a100-80gb"}),
    ("70B QLoRA on H100 PCIe", {"h100-pcie"}),
    ("70B QLoRA on A100 80GB", {"a100-80gb"}),
    ("8B LoRA on RTX 4090", {"rtx-4090"}),
    ("8B LoRA", set()),
])
def test_a_family_named_in_a_workload_covers_its_variants(text: str, ids: set[str]) -> None:
    w, _ = complete(parse_workload(text))
    assert set(w.gpu_ids) == ids
    assert (w.gpu is None) == (not ids) and (not w.gpu or w.gpu in ids)
    assert w.gpu_ids[:1] == ((w.gpu,) if w.gpu else ())  # the representative first
    assert len(w.gpu_family) == (len(ids) if len(ids) > 1 else 0)


def test_a_family_keeps_one_representative_gpu_in_json() -> None:
    w, _ = complete(parse_workload("70B QLoRA on H100"))
    data = w.model_dump(mode="json")
    assert data["gpu"] == "h100-sxm" and set(data["gpu_family"]) == {"h100-sxm", "h100-pcie", "h100-nvl"}
    one, _ = complete(parse_workload("70B QLoRA on H100 SXM"))
    assert one.gpu == "h100-sxm" and one.model_dump(mode="json")["gpu_family"] == []


def test_options_naming_a_variant_replace_the_texts_family() -> None:
    from core.workload import WorkloadSpec

    spec = parse_workload("70B QLoRA on H100").merged(WorkloadSpec(gpu="h100-pcie"))
    assert spec.gpu == "h100-pcie" and spec.gpu_family is None
    w, _ = complete(spec)
    assert w.gpu_ids == ("h100-pcie",)


@pytest.mark.parametrize("text", ["70b q4_k_m llama.cpp на 3x3090", "llama 3 70b ollama on 3 RTX 3090",
                                  "70B inference on 3 H100"])
def test_an_engine_that_splits_layers_runs_on_any_count(text: str) -> None:
    # llama.cpp / Ollama / transformers put whole layers on each GPU: the heads need not divide by the count, and
    # the answer says layers, not tensor parallelism
    from core.fit import fit_configs

    w, notes = done(text)
    assert w.gpus == 3 and profile(w.engine).layer_split
    assert "layers split across the GPUs" in render("en", notes["strategy"].msg)
    assert "слои поровну между GPU" in render("ru", notes["strategy"].msg)
    assert any(f.count == 3 for f in fit_configs(w, counts=(3,)).fits)


def test_ollama_serves_its_library_default_file_unless_told() -> None:
    # "llama3.1:70b" on Ollama is the Q4_K_M file: sized as 16-bit weights it would need four times the memory
    w, notes = done("llama 3 70b ollama on 2 RTX 3090")
    assert w.quant is Quant.Q4_K_M and "Ollama" in render("en", notes["quant"].msg)
    assert "Ollama" in render("ru", notes["quant"].msg)
    assert done("llama 3 70b ollama q8_0")[0].quant is Quant.Q8_0  # a tag said is kept
    assert done("llama 3 70b ollama fp16")[0].quant is Quant.NONE  # the 16-bit file
    assert done("gpt-oss 20b ollama")[0].quant is Quant.MXFP4  # the model's own format first
    assert done("llama 3 70b inference")[0].quant is Quant.NONE  # other engines: 16-bit unless said
