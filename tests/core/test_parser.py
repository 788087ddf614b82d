"""The workload parser: every phrase of issue 2 means what a person means, the vocabulary around it, and the
promise that nothing but a polite bilingual ParseError ever comes out of it."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from core.defaults import complete
from core.gpus import GPUS, find_gpu, resolve_gpus
from core.models import MODELS, find_model
from core.parser import MAX_CHARS, ParseError, left_out, normalise_targets, parse_size, parse_workload
from core.workload import Attention, Engine, Method, Offload, Optimizer, Precision, Quant, Strategy, WorkloadSpec
from texts.i18n import render

CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)


def said(text: str) -> dict:
    """Only the fields the phrase set."""
    return parse_workload(text).model_dump(exclude_none=True)


# The phrases of issue 2, each with exactly the fields it must set (and no others).
ISSUE_PHRASES = [
    ("13B LoRA", {"params_b": 13.0, "method": Method.LORA}),
    ("70b qlora", {"params_b": 70.0, "method": Method.QLORA}),
    ("7B full fine-tune", {"params_b": 7.0, "method": Method.FULL}),
    ("полное дообучение 7B", {"params_b": 7.0, "method": Method.FULL}),
    ("70B QLoRA ctx 8k bs 4", {"params_b": 70.0, "method": Method.QLORA, "seq_len": 8192, "batch": 4}),
    ("llama-3.1-8b lora r16 seq 4096",
     {"model": "llama-3.1-8b", "method": Method.LORA, "lora_rank": 16, "seq_len": 4096}),
    ("Qwen2.5-72B inference 32k", {"model": "qwen2.5-72b", "method": Method.INFERENCE, "seq_len": 32768}),
    ("инференс 70B int4, контекст 32k, 8 пользователей",
     {"params_b": 70.0, "method": Method.INFERENCE, "quant": Quant.GPTQ_INT4, "seq_len": 32768, "concurrency": 8}),
    ("mixtral qlora", {"model": "mixtral-8x7b", "method": Method.QLORA}),
    ("405B QLoRA на 8 GPU", {"params_b": 405.0, "method": Method.QLORA, "gpus": 8}),
    ("13B LoRA 10k примеров 3 эпохи", {"params_b": 13.0, "method": Method.LORA, "examples": 10_000, "epochs": 3.0}),
    ("7B LoRA, 5k examples x 3 epochs", {"params_b": 7.0, "method": Method.LORA, "examples": 5_000, "epochs": 3.0}),
    ("70B full fine-tune zero3 on 8 H100",
     {"params_b": 70.0, "method": Method.FULL, "strategy": Strategy.ZERO3, "gpus": 8, "gpu": "h100-sxm",
      "gpu_family": ("h100-pcie", "h100-sxm", "h100-nvl")}),  # a family name covers its variants (issue 10)
]


@pytest.mark.parametrize(("text", "expected"), ISSUE_PHRASES, ids=[p for p, _ in ISSUE_PHRASES])
def test_issue_phrases_mean_what_a_person_means(text: str, expected: dict) -> None:
    assert said(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    # GPUs: count and card, in any of the spellings people and providers use
    ("13B LoRA на 2x A100 80GB", {"gpus": 2, "gpu": "a100-80gb"}),
    ("13B LoRA 4090", {"gpu": "rtx-4090"}),
    ("13B LoRA on 2 x A100 PCIe 40GB", {"gpus": 2, "gpu": "a100-40gb"}),
    ("7B LoRA GeForce RTX 4090 24GB", {"gpu": "rtx-4090"}),
    ("7B LoRA Tesla V100-SXM2-32GB", {"gpu": "v100-32gb"}),
    ("70B inference H100 80GB HBM3 x4", {"gpus": 4, "gpu": "h100-sxm"}),
    ("70B inference 8xH200 NVL", {"gpus": 8, "gpu": "h200-nvl"}),
    ("7B qlora на одной карте", {"gpus": 1}),
    ("7B qlora single gpu", {"gpus": 1}),
    ("7B full 4 карты", {"gpus": 4}),
    ("70B QLoRA на одной A100 80GB", {"gpus": 1, "gpu": "a100-80gb"}),
    # pieces of a card, as a Russian order says it ("8 шт H100"), before or after the card
    ("70B QLoRA на 2 штуках 4090", {"gpus": 2, "gpu": "rtx-4090"}),
    ("70B inference 8 шт. H100 SXM", {"gpus": 8, "gpu": "h100-sxm"}),
    ("70B inference H100 SXM 8шт", {"gpus": 8, "gpu": "h100-sxm"}),
    ("70B inference 4 pcs A100 80GB", {"gpus": 4, "gpu": "a100-80gb"}),
    ("7B lora 5000 штук примеров", {"examples": 5000}),  # pieces of data stay examples
    # quantisation words
    ("7B lora nf4", {"quant": Quant.NF4}),
    ("7B lora nf4 double quant", {"quant": Quant.NF4_DQ}),
    ("7B lora int8", {"quant": Quant.INT8}),
    ("7B inference 8-bit", {"quant": Quant.INT8}),
    ("7B inference awq", {"quant": Quant.AWQ}),
    ("7B inference gptq", {"quant": Quant.GPTQ_INT4}),
    ("7B inference gptq int8", {"quant": Quant.GPTQ_INT8}),
    ("7B inference fp8", {"quant": Quant.FP8}),
    ("7B inference 4bit", {"quant": Quant.GPTQ_INT4}),
    ("7B inference gguf q4_k_m", {"quant": Quant.Q4_K_M}),
    ("7B inference Q8_0", {"quant": Quant.Q8_0}),
    ("7B inference q5_k_m", {"quant": Quant.Q5_K_M}),
    # precision
    ("7B full bf16", {"precision": Precision.BF16}),
    ("7B full fp16", {"precision": Precision.FP16}),
    ("7B full fp32", {"precision": Precision.FP32}),
    ("7B full pure bf16", {"precision": Precision.BF16_TRUE}),
    # optimizers
    ("7B full adamw", {"optimizer": Optimizer.ADAMW}),
    ("7B full 8-bit adam", {"optimizer": Optimizer.ADAMW_8BIT}),
    ("7B full adamw8bit", {"optimizer": Optimizer.ADAMW_8BIT}),
    ("7B full paged adamw", {"optimizer": Optimizer.PAGED_ADAMW_8BIT}),
    ("7B full sgd", {"optimizer": Optimizer.SGD}),
    # checkpointing, attention, fused CE
    ("7B lora grad ckpt off", {"grad_ckpt": False}),
    ("7B lora no gradient checkpointing", {"grad_ckpt": False}),
    ("7B lora gradient checkpointing", {"grad_ckpt": True}),
    ("7B lora eager", {"attention": Attention.EAGER}),
    ("7B lora flash attention", {"attention": Attention.FLASH}),
    ("7B lora fused ce", {"fused_ce": True}),
    ("7B lora liger", {"engine": Engine.LIGER, "method": Method.LORA}),
    ("7B lora через лайгер", {"engine": Engine.LIGER}),
    ("7B lora with liger kernels", {"engine": Engine.LIGER}),
    ("7B lora no liger", {"fused_ce": False}),
    # LoRA rank and targets
    ("7B lora rank 64", {"lora_rank": 64}),
    ("7B lora r=8", {"lora_rank": 8}),
    ("7B lora q,v", {"lora_targets": "q,v"}),
    ("7B lora q_proj, k_proj, v_proj, o_proj", {"lora_targets": "q,k,v,o"}),
    ("7B lora all-linear", {"lora_targets": "all-linear"}),
    ("7B lora attention only", {"lora_targets": "q,k,v,o"}),
    # offload, strategies
    ("7B full zero3 offload", {"strategy": Strategy.ZERO3, "offload": Offload.OPTIMIZER}),
    ("7B full zero3 cpu offload", {"strategy": Strategy.ZERO3, "offload": Offload.OPTIMIZER}),
    ("7B full zero3 offload all", {"strategy": Strategy.ZERO3, "offload": Offload.ALL}),
    ("7B full zero2", {"strategy": Strategy.ZERO2}),
    ("7B full fsdp", {"strategy": Strategy.FSDP}),
    ("7B full ddp", {"strategy": Strategy.DDP}),
    ("70B inference tp 4", {"strategy": Strategy.TP, "gpus": 4}),
    # inference: KV cache and concurrency
    ("7B inference kv fp8", {"kv_dtype": "fp8"}),
    ("7B inference fp8 kv cache", {"kv_dtype": "fp8"}),
    ("7B inference kv q8_0", {"kv_dtype": "q8_0"}),
    ("7B inference kv 4-bit", {"kv_dtype": "int4"}),
    ("7B inference 8 users", {"concurrency": 8}),
    ("7B inference 8 concurrent", {"concurrency": 8}),
    ("7B inference 16 одновременных запросов", {"concurrency": 16}),
    ("7B inference 128k context", {"seq_len": 131072}),
    # dataset
    ("7B lora 512 tokens per example", {"tokens_per_example": 512}),
    ("7B lora по 1000 токенов", {"tokens_per_example": 1000}),
    ("7B lora 20 тыс примеров", {"examples": 20_000}),
    ("7B lora 1.5 эпохи", {"epochs": 1.5}),
    ("7B LoRA 5k × 3 эпохи", {"examples": 5_000, "epochs": 3.0}),
    ("LoRA 7B, 2 эпохи, 50 000 примеров", {"examples": 50_000, "epochs": 2.0}),
    ("обучить 7b лору на 100 тысяч примеров за 2 эпохи", {"examples": 100_000, "epochs": 2.0}),  # "за": in
    ("13B LoRA 10k примеров в течение 3 эпох", {"examples": 10_000, "epochs": 3.0}),
    ("7B lora 10000 examples of 256 tokens", {"examples": 10_000, "tokens_per_example": 256}),
    ("7B lora 1.5k samples", {"examples": 1_500}),
    ("7B lora 20k samples avg 1k tokens", {"examples": 20_000, "tokens_per_example": 1_000}),
    ("7B lora 20k примеров в среднем по 700 токенов", {"examples": 20_000, "tokens_per_example": 700}),
    ("7B lora 5k examples, average length 2k tokens", {"examples": 5_000, "tokens_per_example": 2_000}),
    ("7B lora средняя длина 900 токенов", {"tokens_per_example": 900}),
    # loose words people use
    ("7B lora градиентный чекпоинтинг", {"grad_ckpt": True}),
    ("mistral 7b серв", {"method": Method.INFERENCE}),
    ("7B засервить", {"method": Method.INFERENCE}),
    ("Qwen2.5-Coder-32B инференс для команды из 10 разработчиков", {"concurrency": 10}),
    ("serve 8B for a team of 25 developers", {"concurrency": 25}),
    ("llama 3 70b inference for a team of 20", {"concurrency": 20}),  # the people said by the team alone
    ("инференс 70b, команда из 15", {"concurrency": 15}),
    ("70B full ft DeepSpeed stage 3", {"strategy": Strategy.ZERO3, "engine": None}),  # ZeRO's stage, DeepSpeed's name
    ("70B full ft ds stage-2", {"strategy": Strategy.ZERO2}),
    ("хочу запустить llama 3.1 8b у себя", {"method": Method.INFERENCE}),
    ("deepseek r1 distill 32b on 2x 3090", {"model": "deepseek-r1-distill-qwen-32b"}),
    ("qwen3 coder 30b inference", {"model": "qwen3-coder-30b-a3b"}),
    ("qwen3 8b q4", {"quant": Quant.Q4_K_M}),
    ("qwen3 8b q5", {"quant": Quant.Q5_K_M}),
    ("qwen3 8b q6", {"quant": Quant.Q6_K}),
    ("gemma 3 27b qat", {"quant": Quant.Q4_0}),
])
def test_vocabulary(text: str, expected: dict) -> None:
    fields = said(text)
    assert {k: fields.get(k) for k in expected} == expected


@pytest.mark.parametrize(("text", "model"), [
    ("Llama 3 70B lora", "llama-3-70b"),
    ("meta-llama/Llama-3.1-8B qlora", "llama-3.1-8b"),
    ("Qwen/Qwen2.5-72B-Instruct inference", "qwen2.5-72b"),
    ("mistral 7b lora", "mistral-7b"),
    ("mixtral 8x7b inference", "mixtral-8x7b"),
    ("gemma 2 9b lora", "gemma-2-9b"),
    ("llama 70b qlora", "llama-3.1-70b"),
    ("llama-2-7b-chat lora", "llama-2-7b"),
    ("инференс ламы 70b", "llama-3.1-70b"),
])
def test_model_names(text: str, model: str) -> None:
    assert parse_workload(text).model == model


@pytest.mark.parametrize(("text", "params", "experts"), [
    ("0.5B lora", 0.5, None), ("0,5B lora", 0.5, None), ("405B qlora", 405.0, None), ("8x7B inference", 7.0, 8),
    ("8x22B qlora", 22.0, 8), ("13b lora", 13.0, None), ("7 млрд lora", 7.0, None),
    ("7 billion parameters lora", 7.0, None),
])
def test_bare_sizes(text: str, params: float, experts: int | None) -> None:
    spec = parse_workload(text)
    assert (spec.params_b, spec.experts, spec.model) == (params, experts, None)


@pytest.mark.parametrize(("text", "method"), [
    ("7B дообучение LoRA", Method.LORA), ("дообучить 7B полностью", Method.FULL),
    ("файнтюн 7B полный", Method.FULL), ("полное обучение 7B", Method.FULL), ("инференс 7B", Method.INFERENCE),
    ("вывод 7B", Method.INFERENCE), ("генерация 7B", Method.INFERENCE), ("7B заморозка", Method.FREEZE),
    ("7B freeze", Method.FREEZE), ("7B serving", Method.INFERENCE), ("7B lora 4bit", Method.QLORA),
])
def test_methods_in_both_languages(text: str, method: Method) -> None:
    assert parse_workload(text).method == method


@pytest.mark.parametrize(("text", "expected"), [
    ("gemma 2 27b lora bs 2 seq 8192 grad ckpt",
     {"model": "gemma-2-27b", "method": Method.LORA, "batch": 2, "seq_len": 8192, "grad_ckpt": True}),
    ("run mistral 7b inference with vllm, 16 concurrent users, 8k context",
     {"model": "mistral-7b", "method": Method.INFERENCE, "concurrency": 16, "seq_len": 8192,
      "engine": Engine.VLLM}),  # the engine is part of the workload (issue 21)
    ("сколько памяти нужно для 70B QLoRA", {"params_b": 70.0, "method": Method.QLORA}),
    ("дообучить llama-3.1-8b через qlora на 4090",
     {"model": "llama-3.1-8b", "method": Method.QLORA, "gpu": "rtx-4090"}),
    ("qwen 2.5 72b awq inference 4 x L40S",
     {"model": "qwen2.5-72b", "method": Method.INFERENCE, "quant": Quant.AWQ, "gpus": 4, "gpu": "l40s"}),
    ("7B LoRA rank 8 alpha 16 dropout 0.05", {"params_b": 7.0, "method": Method.LORA, "lora_rank": 8}),
])
def test_longer_phrases(text: str, expected: dict) -> None:
    assert said(text) == expected


# The product's own question, asked as people ask it: the framing is no part of the workload (core/parser.py's
# _FILLER_WORDS), and what the question names is read as it is in the plain phrase.
@pytest.mark.parametrize(("question", "plain"), [
    ("does 70B QLoRA fit on one A100 80GB?", "70B QLoRA on one A100 80GB"),
    ("Can I run llama-3.1-8b on a 4090?", "run llama-3.1-8b on 4090"),
    ("which GPU would 13B LoRA need?", "13B LoRA"),
    ("will 7B inference fit locally on my 3090?", "7B inference on 3090"),
    ("влезет ли 70B QLoRA в одну A100 80GB?", "70B QLoRA в одну A100 80GB"),
    ("можно ли запустить 32B на 4090", "запустить 32B на 4090"),
    ("какая видеокарта нужна для 13B LoRA", "13B LoRA"),
    ("поместится ли qwen2.5-7b инференс в мою видеокарту 4090?", "qwen2.5-7b инференс 4090"),
    ("запустить 7B локально", "запустить 7B"),
    ("how much does it cost to fine-tune 7B with LoRA?", "fine-tune 7B with LoRA"),
    ("how long to train 13B LoRA on 10k examples", "13B LoRA 10k examples"),
    ("сколько времени займёт 13B LoRA 10k примеров", "13B LoRA 10k примеров"),
    ("what is the cheapest GPU for 70B inference", "70B inference"),
    ("самая дешёвая видеокарта для 70B инференс", "70B инференс"),
    ("лучшая карта для llama 3 70b, инференс", "llama 3 70b инференс"),
    ("how many GPUs for 405B inference with a 32k context window", "405B inference ctx 32k"),
    ("Can a single RTX 4090 handle QLoRA on a 70B model?", "70B QLoRA on 1x RTX 4090"),
    ("справится ли 4090 с qlora 70b", "70b qlora 4090"), ("тянет ли 3090 инференс 13b", "13b инференс 3090"),
])
def test_a_question_means_its_workload(question: str, plain: str) -> None:
    assert said(question) == said(plain)


# Ways people write the same thing: counts in words, plural cards, Ollama tags and GGUF file names, number words.
@pytest.mark.parametrize(("written", "plain"), [
    ("70B inference on two H100s", "70B inference on 2 H100"),
    ("13B lora on dual 4090", "13B lora on 2x 4090"),
    ("70B QLoRA на двух A100 80GB", "70B QLoRA на 2 A100 80GB"),
    ("70B lora на четырёх H100", "70B lora на 4 H100"),
    ("405B qlora eight H200s", "405B qlora 8 H200"),
    ("7B lora две карты", "7B lora 2 карты"),
    ("13B lora on 8 A100's", "13B lora on 8 A100"),
    ("70B inference x2 A100", "70B inference 2x A100"),
    ("70B inference on a pair of A100s", "70B inference on 2 A100"),
    ("70B инференс на паре H100", "70B инференс на 2 H100"),
    ("13B lora на своей видюхе 4090", "13B lora на 4090"),
    ("13B lora at home on my own 3090", "13B lora on 3090"),
    ("gemma3:27b inference", "gemma 3 27b inference"),
    ("qwen3:30b-a3b inference", "qwen3-30b-a3b inference"),
    ("llama3.1:8b-instruct-q8_0 inference", "llama-3.1-8b inference q8_0"),
    ("qwen2.5:72b-instruct-q4_K_M inference", "qwen2.5-72b inference q4_k_m"),
    ("Meta-Llama-3.1-8B-Instruct-Q5_K_M.gguf inference", "llama-3.1-8b inference q5_k_m"),
    ("7B inference контекст 128 тысяч", "7B inference контекст 128000"),
    ("7B lora 2 миллиона примеров", "7B lora 2000000 примеров"),
    ("llama 3 8b lora на 50 тысячах примеров", "llama 3 8b lora 50000 примеров"),  # every case of the word
    ("8b lora на 2 миллионах токенов", "8b lora датасет 2000000 токенов"),
    ("qwen2.5-vl 7b инференс 4 картинки на запрос", "qwen2.5-vl 7b инференс 4 изображения"),  # pictures, not cards
    ("что нужно для 405b инференс в fp8", "405b инференс fp8"),
    ("mistral nemo 12b q4 инференс на ноутбуке с 8 гб", "mistral nemo 12b q4 инференс 8 гб"),
    # serving targets said as people say them (core.parser rules rate / speed)
    ("Qwen2.5-72B-Instruct, 200 RPS, avg prompt 2k, output 300", "qwen2.5-72b 200 rps prompt 2k output 300"),
    ("нужно обслуживать 300 запросов в минуту на qwen2.5 32b", "qwen2.5 32b инференс 5 rps"),
    ("8B суммарная скорость 5000 токенов/с", "8B 5000 tok/s in total"),
    ("какая карта нужна для llama 3.1 8b чтобы было 60 токенов в секунду", "llama 3.1 8b 60 tok/s"),
    ("llama 3.1 8b 1 rps each answer 500 tokens", "llama 3.1 8b 1 rps output 500"),
    ("8b 1 rps 400-token answers", "8b 1 rps output 400"),
    ("8b 2 rps responses of 300 tokens", "8b 2 rps output 300"),
    # pretraining scale: billions of tokens are the data, never a context or a model size
    ("llama 3 8b continued pretraining full 10B tokens", "llama 3 8b full fine-tune dataset 10000M tokens"),
    ("8b полное дообучение на 2 млрд токенов", "8b full fine-tune dataset 2000M tokens"),
    ("train a 1b model from scratch on 100b tokens", "1b full fine-tune dataset 100000M tokens"),
    ("обучить модель 1b с нуля на 20 млрд токенов", "1b full fine-tune dataset 20000M tokens"),
    ("7B lora 5 thousand examples", "7B lora 5000 examples"),
    ("7B lora датасет 50 000", "7B lora 50000 примеров"),
    ("https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct lora", "meta-llama/Llama-3.1-8B-Instruct lora"),
    ("hf.co/Qwen/Qwen2.5-72B-Instruct/tree/main, inference", "Qwen/Qwen2.5-72B-Instruct inference"),
    ("huggingface.co/acme/my-llama-ft lora", "acme/my-llama-ft lora"),  # a repository only the Hub knows
    ("vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4",
     "meta-llama/Llama-3.1-70B-Instruct on vllm tp 4"),
    # an engine's command line pasted: its flags are what the phrase would say
    ("vllm serve Qwen/Qwen2.5-7B-Instruct --dtype bfloat16 --max-model-len 16384 --gpu-memory-utilization 0.9",
     "Qwen2.5-7B inference on vllm bf16 ctx 16384"),
    ("llama-server -m qwen2.5-7b-instruct-q5_k_m.gguf --ctx-size 16384 --n-gpu-layers 99 --parallel 4",
     "qwen2.5-7b q5_k_m on llama.cpp ctx 16384 4 users"),
    ("llama-cli -m Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf -c 8192 -ngl 99", "llama-3.1-8b q4_k_m llama.cpp ctx 8192"),
    ("qwen2.5-7b lora --per_device_train_batch_size 4 --gradient_accumulation_steps 8 --num_train_epochs 3",
     "qwen2.5-7b lora bs 4 3 epochs"),
    ("llama-3.1-8b qlora load_in_4bit=True max_seq_length=2048", "llama-3.1-8b qlora 4bit ctx 2048"),
    # a MoE size with its experts or active parameters joined on, and DeepSeek's distills as people shorten them
    ("llama 4 scout 17b-16e qlora", "llama-4-scout-17b-16e qlora"),
    ("Llama 4 Maverick 17B-128E fp8 inference", "llama-4-maverick-17b-128e fp8 inference"),
    ("qwen3 30b-a3b lora", "qwen3-30b-a3b lora"),
    ("r1 distill qwen 32b inference", "DeepSeek-R1-Distill-Qwen-32B inference"),
    ("r1 70b q4 on 2x3090", "deepseek-r1-distill-llama-70b q4 on 2x 3090"),
    ("хочу запустить deepseek r1 70b дистилл локально", "deepseek-r1-distill-llama-70b инференс"),
    ("deepseek r1 дистилл 32b инференс", "deepseek-r1-distill-qwen-32b инференс"),
    # the mid-range cards as people and marketplaces write them
    ("13b qlora на 4070 ti super", "13b qlora на RTX 4070 Ti Super"),
    ("7b lora on a geforce rtx 4060 ti 16gb", "7b lora on RTX 4060 Ti 16GB"),
    ("8b qlora на двух 3080", "8b qlora на 2x RTX 3080"),
    ("qwen2.5 7b lora на rtx 4060 ti 16 гб", "qwen2.5 7b lora на RTX 4060 Ti 16GB"),
    ("какую видеокарту взять для инференса mistral 7b", "mistral 7b инференс"),
    ("deepseek v3 fp8 инференс, сколько карт нужно", "deepseek v3 fp8 инференс"),
    # cards as people type them: a Russian ending, the Russian layout, the memory said bare
    ("ллама 3.1 8b инференс на 4090-ой, контекст 32 тыс", "llama 3.1 8b инференс на RTX 4090 контекст 32000"),
    ("7b lora на двух 3090-х", "7b lora на 2x RTX 3090"),
    ("t-pro qlora r=64 bs 4 на одной a100 80", "t-pro qlora r=64 bs 4 на 1x A100 80GB"),
    ("70b inference on h100 80 users", "70b inference on h100, 80 users"),  # a count with its unit stays a count
    ("тесла т4 хватит для phi-4 в 4 бита?", "phi-4 4bit on T4"),
    ("70b инференс на 2 н100", "70b инференс на 2x H100"), ("7b lora л40с", "7b lora L40S"),
    ("13b lora на ртх 4090", "13b lora на RTX 4090"), ("gemma 3 27b инференс на двух 3090, потянет?",
                                                      "gemma 3 27b инференс на 2x 3090"),
    # numbers as people write them
    ("llama 3 70b инференс при 32 768 токенах", "llama 3 70b инференс контекст 32768"),
    ("7b lora датасет 2 млрд токенов", "7b lora dataset 2000M tokens"),
    ("8b 1000 requests per minute, avg 500 in / 200 out tokens", "8b 1000 requests per minute prompt 500 output 200"),
    ("full ft qwen3-4b на 8 x h100 sxm, 1M токенов, 3 эп", "qwen3-4b full 8x h100 sxm dataset 1M tokens 3 epochs"),
    ("GigaChat 20B-A3B инференс в sglang, ttft меньше 300 мс", "GigaChat 20B-A3B inference sglang ttft 300 ms"),
    # names: a context size that is part of the name, Russian words of a name
    ("phi3 mini 128k inference on t4", "phi-3-mini-128k inference on t4"),
    ("мистраль немо 12b qlora", "mistral nemo 12b qlora"), ("мистраль лардж 2 инференс", "mistral large 2 inference"),
    # a Cyrillic capital В typed for B, glued to its number
    ("13В лора", "13b lora"), ("лама 3 8В лора", "llama 3 8b lora"),
    ("qwen2.5 7в инференс в fp8", "qwen2.5 7b inference fp8"),
    # a LoRA rank with a Cyrillic "р" ("р40" stays unread: it looks like a P40, not a rank)
    ("7b лора р16", "7b lora r16"), ("лора р 64 ллама 3 8б", "llama 3 8b lora rank 64"),
    ("7b лора р=32", "7b lora r=32"),
])
def test_the_same_workload_written_another_way(written: str, plain: str) -> None:
    # the same workload: a rate's unit is only how it is said back ("300 a minute" is "5 rps")
    assert said(written) | {"request_rate_unit": None} == said(plain) | {"request_rate_unit": None}


def test_a_cyrillic_r_before_a_number_no_rank_has_is_left_unread() -> None:
    """"на р40" looks like a P40 card: not read as a LoRA rank of 40 (and so never refused as one inference lacks)."""
    with pytest.raises(ParseError) as e:
        parse_workload("7b инференс на р40")
    text = render("ru", e.value.explain())
    assert "«р40»" in text and "ранг" not in text, text


@pytest.mark.parametrize(("written", "plain"), [
    ("llama 70 billion inference", "llama 70b inference"), ("лама 3 70 миллиардов qlora", "llama 3 70b qlora"),
    ("qwen 72 bn inference", "qwen 72b inference"), ("квен 2.5 72 млрд инференс", "qwen2.5 72b inference"),
])
def test_a_size_in_words_after_a_family_is_its_model(written: str, plain: str) -> None:
    """"llama 70 billion": the family and a size said in words (read apart, not as the name "llama 70") complete
    to the model "llama 70b" names."""
    assert complete(parse_workload(written))[0] == complete(parse_workload(plain))[0]


# Ollama's DeepSeek-R1 tags are the distilled models of that size (tools/gen_models.py EXTRA_ALIASES), not R1 at
# another size: before, "deepseek-r1 70b" was refused as R1 having 671B parameters.
@pytest.mark.parametrize(("written", "model"), [
    ("deepseek-r1:70b inference", "DeepSeek-R1-Distill-Llama-70B"),
    ("deepseek-r1 32b qlora", "DeepSeek-R1-Distill-Qwen-32B"),
    ("deepseek-r1:1.5b inference", "DeepSeek-R1-Distill-Qwen-1.5B"),
    ("deepseek-r1:671b inference", "deepseek-r1"),
])
def test_ollama_deepseek_r1_tags_are_the_distills(written: str, model: str) -> None:
    assert parse_workload(written).model == find_model(model).id


def test_a_gguf_type_the_estimator_cannot_size_is_said_not_dropped() -> None:
    with pytest.raises(ParseError) as info:
        parse_workload("qwen2.5-7b-instruct-iq4_xs inference")
    assert "Q4_K_M" in render("en", info.value.explain()) and "Q4_K_M" in render("ru", info.value.explain())


def test_framing_words_do_not_hide_a_word_that_means_something_else() -> None:
    with pytest.raises(ParseError) as info:
        parse_workload("does 13B LoRA fit on a frobnicator?")
    assert info.value.not_understood == ["frobnicator"]
    with pytest.raises(ParseError) as info:  # "how long" is a question; "long context" is a length not given
        parse_workload("how long does 70B inference with long context take")
    assert info.value.not_understood == ["long", "context"]
    with pytest.raises(ParseError) as info:  # some layers on the CPU: a memory this estimate does not model
        parse_workload("llama-server -m qwen2.5-7b-instruct-q4_k_m.gguf -ngl 20")
    assert info.value.not_understood == ["-ngl", "20"]


def test_every_catalog_model_alias_is_read() -> None:
    for arch in MODELS:
        for alias in (arch.id, arch.name, *arch.aliases):
            assert parse_workload(f"{alias} lora").model == find_model(alias).id, alias


def test_every_catalog_gpu_alias_is_read() -> None:
    for gpu in GPUS:
        for alias in (gpu.name, *gpu.aliases):
            assert parse_workload(f"13B LoRA on {alias}").gpu == find_gpu(alias).id, alias


def test_training_word_alone_leaves_the_method_open() -> None:
    # "fine-tune" is understood, but full vs LoRA is the user's choice: complete() asks which way to train
    assert said("7B fine-tune") == {"params_b": 7.0, "training": True}
    assert said("7B LoRA fine-tune") == {"params_b": 7.0, "method": Method.LORA}


def test_unknown_words_are_reported_with_what_was_understood() -> None:
    with pytest.raises(ParseError) as info:
        parse_workload("13B LoRA frobnicate")
    err = info.value
    assert err.understood == ["13B", "LoRA"]
    assert err.not_understood == ["frobnicate"]
    en, ru = render("en", err.explain()), render("ru", err.explain())
    assert "Understood" in en and "«13B»" in en and "«frobnicate»" in en and "Try for example" in en
    assert "Понял" in ru and "«frobnicate»" in ru and "Не понял" in ru and "например" in ru


def test_error_message_gives_three_or_four_examples_in_each_language() -> None:
    err = ParseError(["13B"], ["zzz"])
    for lang in ("en", "ru"):
        last = render(lang, err.explain()).splitlines()[-1]
        assert 3 <= last.count("«") <= 4
    assert CYRILLIC.search(render("ru", err.explain()).splitlines()[-1])


def test_a_bare_number_gets_a_hint() -> None:
    with pytest.raises(ParseError) as info:
        parse_workload("7B lora 4096")
    assert info.value.not_understood == ["4096"]
    assert "ctx 4096" in render("en", info.value.explain()) and "контекст 4096" in render("ru", info.value.explain())


def test_contradictions_are_reported_not_guessed() -> None:
    with pytest.raises(ParseError) as info:
        parse_workload("13B 70B lora")
    assert info.value.not_understood == ["70B"]
    assert "contradicts «13B»" in render("en", info.value.explain())
    assert "противоречит «13B»" in render("ru", info.value.explain())
    with pytest.raises(ParseError) as info:
        parse_workload("7B inference int8 4bit")
    assert (info.value.understood, info.value.not_understood) == (["7B", "inference", "int8"], ["4bit"])


@pytest.mark.parametrize("text", ["13B lora bs 0", "999999999B lora", "13B lora ctx 99999999k", "7B inference 0 users",
                                  "7B lora r0"])
def test_out_of_range_values_are_refused(text: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_workload(text)
    assert info.value.not_understood
    assert re.search(r"between|whole", render("en", info.value.explain()))


@pytest.mark.parametrize(("phrase", "named"), [
    ("flux.1 dev lora", "flux.1 dev"), ("sdxl inference on 4090", "sdxl"),
    ("whisper large v3 inference", "whisper large v3"), ("кандинский 3 инференс", "кандинский 3"),
    ("stable diffusion 3.5 lora", "stable diffusion 3.5"),
    ("wan 2.1 inference", "wan 2.1"),
])
def test_a_model_that_is_not_a_language_model_is_refused_with_why(phrase: str, named: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_workload(phrase)
    assert info.value.not_understood == [named]
    assert "language models (LLMs) only" in render("en", info.value.explain())
    assert "только языковые модели (LLM)" in render("ru", info.value.explain())


@pytest.mark.parametrize(("phrase", "quant"), [
    ("quantized 70b inference", Quant.GPTQ_INT4), ("квантованная лама 70б q4 на двух 3090", Quant.Q4_K_M),
    ("70b 8-bit quantized inference", Quant.INT8), ("lora on a quantized 70b", Quant.NF4),
    ("неквантованная лама 70б инференс", Quant.NONE),
])
def test_quantized_without_its_bits_is_four_bit_and_never_overrides_the_bits_said(phrase: str, quant: Quant) -> None:
    assert parse_workload(phrase).quant == quant
    assert parse_workload("lora on a quantized 70b").method == Method.QLORA  # LoRA on a 4-bit base


def test_a_server_is_not_serving() -> None:
    # "серв" is serving; "сервер" (which server do I need?) only frames the question
    assert said("7B lora сервер")["method"] == Method.LORA
    assert "method" not in said("какой сервер нужен для 70b")


def test_unknown_model_and_gpu_are_not_guessed() -> None:
    with pytest.raises(ParseError) as info:
        parse_workload("llama 3 13b lora")
    assert info.value.not_understood == ["llama 3 13b"]
    assert "not in the catalog" in render("en", info.value.explain())
    assert "нет в каталоге" in render("ru", info.value.explain())
    with pytest.raises(ParseError) as info:
        parse_workload("7B lora 4090 48GB")  # a modded card is a different card
    assert info.value.not_understood == ["4090 48GB"]


@pytest.mark.parametrize(("phrase", "family"), [
    ("qwen3 inference", "qwen3"), ("llama 3 lora", "llama 3"), ("gpt-oss inference 8k", "gpt-oss"),
    ("квен3 лора", "квен3"), ("дипсик инференс", "дипсик"), ("gemma qlora on 4090", "gemma"),
])
def test_a_family_without_a_size_is_asked_which_model(phrase: str, family: str) -> None:
    # The answer names the family's models and an example; the example put in the family's place is understood.
    with pytest.raises(ParseError) as info:
        parse_workload(phrase)
    assert info.value.not_understood == [family]
    en, ru = render("en", info.value.explain()), render("ru", info.value.explain())
    assert "Which one?" in en and "Какая из них?" in ru and "not in the catalog" not in en
    assert "Try for example" not in en and "Попробуйте" not in ru  # the family's own example is the one to try
    listed = en.split("go by this name: ", 1)[1].split(". Which one?", 1)[0]
    example = re.search(r"e\.g\. «([^»]+)»", en)
    assert example is not None and example.group(1) in listed.split(", ")
    assert parse_workload(phrase.replace(family, example.group(1))).model is not None


def test_a_family_without_its_size_offers_each_model_in_its_place() -> None:
    with pytest.raises(ParseError) as info:
        parse_workload("gpt-oss inference, ctx 8k")
    assert [label for label, _ in info.value.choices] == ["gpt-oss-20B", "gpt-oss-120B"]
    for label, phrase in info.value.choices:
        assert phrase == f"{label} inference, ctx 8k" and parse_workload(phrase).model is not None


@pytest.mark.parametrize(("phrase", "readings"), [
    ("70B LoRA or QLoRA", ["70B LoRA", "70B QLoRA"]),
    ("70B QLoRA или LoRA на 2x 4090", ["70B QLoRA на 2x 4090", "70B LoRA на 2x 4090"]),
    ("13B vs 70B lora ctx 8k", ["13B lora ctx 8k", "70B lora ctx 8k"]),
    ("7B lora / full ft", ["7B lora", "7B full ft"]),
])
def test_two_fragments_that_contradict_offer_either_reading(phrase: str, readings: list[str]) -> None:
    with pytest.raises(ParseError) as info:
        parse_workload(phrase)
    assert len(info.value.not_understood) == 1 and "contradicts" in render("en", info.value.explain())
    assert [p for _, p in info.value.choices] == readings
    assert len({parse_workload(p).model_dump_json() for p in readings}) == 2  # each reads whole, and differently
    # said in the text as well, for where no button offers them (the CLI)
    assert f"Did you mean «{readings[0]}» or «{readings[1]}»?" in render("en", info.value.explain())
    assert f"Вы имели в виду «{readings[0]}» или «{readings[1]}»?" in render("ru", info.value.explain())


@pytest.mark.parametrize(("phrase", "cards", "count"), [
    ("7B LoRA on 5090 or 4090", ["RTX 5090", "RTX 4090"], None),
    ("7B LoRA на 3090, 4090 или 5090", ["RTX 3090", "RTX 4090", "RTX 5090"], None),
    ("70B QLoRA on A100/H100", ["A100", "H100"], None),
    ("13B lora 4090 vs. 5090", ["RTX 4090", "RTX 5090"], None),
    ("70B full ft 8x A100 or 8x H100", ["A100", "H100"], 8),
    ("2 gpus: 4090 либо на 5090, 7B lora", ["RTX 4090", "RTX 5090"], 2),
    ("инференс 8B на 4090 или 4090", ["RTX 4090"], None),
    # asked as people compare: filler between the cards, "and" where the phrase compares
    ("will 13b lora fit on a 3090 or do i need a 4090", ["RTX 3090", "RTX 4090"], None),
    ("4090 или 5090, что выгоднее для 7B LoRA", ["RTX 4090", "RTX 5090"], None),
    ("сравни h100 и a100 для 70b qlora", ["H100", "A100"], None),
    ("compare 3090 and 4090 for 13b lora", ["RTX 3090", "RTX 4090"], None),
    # different counts with the cards: both configurations are among the counts every card is fitted at
    ("7B LoRA 4090 or 2x 5090", ["RTX 4090", "RTX 5090"], None),
    ("что лучше для инференса 70b: две 4090 или одна a100", ["RTX 4090", "A100"], None),
    ("7B LoRA on two 4090s or a 5090", ["RTX 4090", "RTX 5090"], None),  # the article is a count of its own
    # a count said once before the first card covers the cards listed after it bare: 8 of either
    ("70B full ft on 8x A100 or H100", ["A100", "H100"], 8),
    ("70B full ft 8xA100/H100", ["A100", "H100"], 8),
    ("70b qlora на 2 a100 или h100", ["A100", "H100"], 2),
    ("7B LoRA on 4x 3090, 4090 or 2x 5090", ["RTX 3090", "RTX 4090", "RTX 5090"], None),
])
def test_cards_said_as_alternatives_are_each_considered(phrase: str, cards: list[str], count: int | None) -> None:
    """"5090 or 4090" asks about either card, as "H100" asks about each of its variants: every card (or family)
    named joins the cards the answer is about, the first one leading; never a contradiction to pick a side of."""
    spec = parse_workload(phrase)
    named = [g.id for name in cards for g in resolve_gpus(name)]
    assert spec.gpu == (find_gpu(cards[0]) or GPUS[0]).id
    assert set(spec.gpu_family or (spec.gpu,)) == set(named) and len(spec.gpu_family or (spec.gpu,)) == len(set(named))
    assert spec.gpus == count


@pytest.mark.parametrize("phrase", ["7B LoRA 4090 and 5090", "7B LoRA на 4090 и 5090", "7B LoRA 4090 frobnicate 5090",
                                    "2 gpus: 7B LoRA 4090 or 4x 5090"])
def test_cards_joined_by_and_or_with_two_counts_said_still_contradict(phrase: str) -> None:
    """"4090 and 5090" is one of each, a configuration the estimate cannot hold as one (unless the phrase
    compares); "2 GPUs: 4090 or 4x 5090" says two counts for the 5090: the user picks."""
    with pytest.raises(ParseError) as info:
        parse_workload(phrase)
    second = phrase.split()[-1]  # the later card is the one set against the first
    assert info.value.not_understood[-1].endswith(second) and second not in " ".join(info.value.understood)


def test_the_readings_of_a_slash_contradiction_leave_no_stray_slash() -> None:
    with pytest.raises(ParseError) as info:
        parse_workload("7B lora/qlora on 4090")
    assert [p for _, p in info.value.choices] == ["7B lora on 4090", "7B qlora on 4090"]


@pytest.mark.parametrize(("phrase", "meant"), [
    ("lamma 3 8b lroa", "llama 3 8b lora"),  # letters doubled and swapped
    ("mistrall 7b inference", "mistral 7b inference"),  # one too many
    ("qwen 2.5 72b infrence 8 users", "qwen 2.5 72b inference 8 users"),  # one left out
    ("70b qlora ctx 8k on h100 plese", "70b qlora ctx 8k on h100 please"),
    ("llama 3 8b инферес", "llama 3 8b инференс"),  # a word, not the stem "инферен" the rule also reads
    ("13B лорра", "13B лора"), ("70b qlorra", "70b qlora"),  # a rule's word ending in a class, "лор[аоуеыи]"
    ("лама 3 8b инференс 20 пользоватлей", "лама 3 8b инференс 20 пользователей"),  # a stem keeps the user's ending
    # "minute" went unread only because "requsts" broke the rate it belongs to: it stays as typed
    ("llama 3 8b inference 100 requsts per minute", "llama 3 8b inference 100 requests per minute"),
])
def test_misspelt_words_are_offered_put_right(phrase: str, meant: str) -> None:
    """A phrase that reads whole once its misspelt words (one edit from a word the phrases use) are put right offers
    that phrase as its one reading: a button in the bot, the estimate in inline mode, said in both languages."""
    with pytest.raises(ParseError) as info:
        parse_workload(phrase)
    assert info.value.respelled == meant and info.value.choices == ((meant, meant),)
    parse_workload(meant)  # reads whole
    assert f"Did you mean «{meant}»?" in render("en", info.value.explain())
    assert f"Вы имели в виду «{meant}»?" in render("ru", info.value.explain())


@pytest.mark.parametrize("phrase", [
    "null", "inner", "turing", "page",  # a lone unknown word: nothing of a workload read to guess a misspelling by
    "hello there",  # near no word the phrases use, and nothing of a workload read
    "7b qlora инферес",  # put right it still contradicts (QLoRA or inference): no reading to offer
    "7b lora on rtx 4900",  # a misspelt number is not guessed at
])
def test_no_reading_is_guessed_where_nothing_reads_whole(phrase: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_workload(phrase)
    assert info.value.respelled is None and info.value.choices == ()


@pytest.mark.parametrize(("phrase", "shorter", "left"), [
    ("13B lora frobnicate", "13B lora", ["frobnicate"]),
    ("7b lora for a chatbot", "7b lora", ["chatbot"]),  # the small words leading into it go too
    ("fine-tune llama 3 8b for my customer support bot", "fine-tune llama 3 8b", ["customer", "support", "bot"]),
    ("13B LoRA для бота техподдержки", "13B LoRA", ["бота", "техподдержки"]),
    ("mymodel 7b lora, ctx 8k", "7b lora, ctx 8k", ["mymodel"]),
    ("13B LoRA, chatbot, ctx 8k", "13B LoRA, ctx 8k", ["chatbot"]),  # no separator left doubled
])
def test_words_of_prose_nothing_reads_are_offered_left_out(phrase: str, shorter: str, left: list[str]) -> None:
    """A phrase that reads whole once its unread plain words are left out offers that shorter phrase as its one
    reading, saying in both languages which words it leaves out: the user chooses, nothing is dropped silently."""
    with pytest.raises(ParseError) as info:
        parse_workload(phrase)
    err = info.value
    assert err.respelled is None and err.choices == ((shorter, shorter),) and list(err.left_out) == left
    parse_workload(shorter)  # reads whole
    quoted = ", ".join(f"«{w}»" for w in left)
    assert f"Leaving out {quoted}, it reads «{shorter}»." in render("en", err.explain())
    assert f"Если пропустить {quoted}, получится «{shorter}»." in render("ru", err.explain())
    assert "Not understood" in render("en", err.explain())  # still said, before the offer


@pytest.mark.parametrize("phrase", [
    "7b lora for chatbot v2",  # a digit: a value that failed to read, not prose
    "13b lora ct", "70b qlora конте",  # a word cut short (typed so far): leaving it out would lose it
    "13B lora не frobnicate", "13b lora except frobnicate",  # a negation turns what follows
    "7b lora for my big enterprise customer support chatbot",  # past a few words: a sentence about something else
    "zzzz lora",  # what is left names no model: the unread word was the model
    "qwen3 lora frobnicate",  # a fragment with its own reason (which Qwen3?) is answered by that
])
def test_no_shorter_reading_where_leaving_words_out_could_change_the_meaning(phrase: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_workload(phrase)
    assert info.value.left_out == () and info.value.choices == (), info.value.choices


def test_left_out_cuts_each_fragment_once_and_keeps_the_rest_as_typed() -> None:
    assert left_out("7b lora for a chatbot x2 на runpod", ["chatbot"]) == "7b lora x2 на runpod"
    assert left_out("13B LoRA, chatbot, ctx 8k", ["chatbot"]) == "13B LoRA, ctx 8k"
    assert left_out("7b lora", ["chatbot"]) is None  # not in it: nothing to offer


def test_readings_are_offered_only_when_one_fragment_stands_in_the_way() -> None:
    for phrase in ("13B 70B lora frobnicate", "qwen3 lora frobnicate", "zzzz lora"):
        with pytest.raises(ParseError) as info:
            parse_workload(phrase)
        assert info.value.choices == (), phrase


def test_a_long_family_is_cut_with_how_many_more_in_each_language() -> None:
    with pytest.raises(ParseError) as info:
        parse_workload("qwen lora")
    en, ru = render("en", info.value.explain()), render("ru", info.value.explain())
    more = re.search(r"(\d+) more models", en)
    assert more is not None and int(more.group(1)) > 10
    assert re.search(rf"ещё {more.group(1)} модел(?:ей|и|ь)", ru)


@pytest.mark.parametrize("text", ["", "   ", "please", "на", "!!!"])
def test_nothing_to_read(text: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_workload(text)
    assert "model" in render("en", info.value.explain()) and "модель" in render("ru", info.value.explain())


def test_too_long_input_is_refused_politely() -> None:
    with pytest.raises(ParseError) as info:
        parse_workload("13B LoRA " * 2000)
    assert "too long" in render("en", info.value.explain())
    assert "длинно" in render("ru", info.value.explain())
    assert parse_workload("13B LoRA".ljust(MAX_CHARS)).method == Method.LORA  # the limit itself is fine


def test_non_text_is_a_parse_error() -> None:
    with pytest.raises(ParseError):
        parse_workload(None)  # type: ignore[arg-type]


# --- properties ------------------------------------------------------------------------------------------------

VOCAB = ["13B", "70b", "8x7B", "0.5B", "7 млрд", "llama-3.1-8b", "Qwen2.5-72B", "mixtral", "LoRA", "qlora", "full",
         "freeze", "inference", "инференс", "дообучение", "ctx 8k", "seq 4096", "32k", "bs 4", "r16", "rank 64",
         "q,v", "all-linear", "nf4", "int4", "int8", "awq", "gptq", "q4_k_m", "fp8", "bf16", "fp16", "adamw",
         "8-bit adam", "paged", "sgd", "grad ckpt", "no grad ckpt", "eager", "flash", "fused ce", "offload",
         "offload all", "zero3", "zero2", "fsdp", "ddp", "tp", "tp 4", "kv fp8", "8 users", "8 пользователей",
         "on 8 H100", "2x A100 80GB", "4090", "V100", "10k примеров", "3 эпохи", "512 tokens per example",
         "на 8 GPU", "x", ",", "и", "blah", "0", "99999999999999999999"]


def _outcome(text: str) -> WorkloadSpec | ParseError:
    try:
        return parse_workload(text)
    except ParseError as err:
        assert render("ru", err.explain()) and render("en", err.explain())
        return err


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_arbitrary_text_only_ever_raises_parse_error(text: str) -> None:
    _outcome(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(VOCAB), max_size=8).map(" ".join))
def test_vocabulary_soup_only_ever_raises_parse_error(text: str) -> None:
    _outcome(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=6))
@example(["0", "0", "512 tokens per example"])  # "0 512" once read as one number grouped by a space
def test_case_and_spacing_do_not_change_the_meaning(words: list[str]) -> None:
    plain = _outcome(" ".join(words))
    shouted = _outcome("  ".join(w.upper() for w in words))
    assert type(plain) is type(shouted)
    if isinstance(plain, WorkloadSpec):
        assert plain == shouted
    else:
        assert len(plain.not_understood) == len(shouted.not_understood)


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=10**40),
       st.sampled_from(["{}B lora", "7B lora ctx {}", "7B lora bs {}", "7B inference {} users", "{}x7B qlora",
                        "7B lora {} examples", "7B lora {} epochs", "7B full on {} H100", "7B lora r{}", "{}k ctx",
                        "7B lora {}.{} эпохи", "7B lora по {} токенов"]))
def test_huge_numbers_only_ever_raise_parse_error(number: int, template: str) -> None:
    result = _outcome(template.replace("{}", str(number)))
    if isinstance(result, WorkloadSpec):  # whatever was accepted is within the sane ranges
        for field in ("seq_len", "batch", "gpus", "concurrency", "lora_rank"):
            value = getattr(result, field)
            assert value is None or 1 <= value <= 4_194_304


@settings(max_examples=20, deadline=None)
@given(st.text(min_size=MAX_CHARS + 1, max_size=10_000))
def test_long_text_is_too_long(text: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_workload(text)
    assert info.value.problem is not None and info.value.problem.key == "parse_too_long"
    assert "too long" in render("en", info.value.explain())


def test_ten_thousand_characters() -> None:
    with pytest.raises(ParseError) as info:
        parse_workload("9" * 10_000)
    assert "10,000 characters" in render("en", info.value.explain())


# --- helpers for command-line options --------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("q,v", "q,v"), ("v_proj, q_proj", "q,v"), ("all-linear", "all-linear"), ("all linear", "all-linear"),
    ("q,k,v,o,gate,up,down", "all-linear"), ("attention", "q,k,v,o"), ("mlp", "gate,up,down"), ("qkvo", "q,k,v,o"),
])
def test_normalise_targets(text: str, expected: str) -> None:
    assert normalise_targets(text) == expected


@pytest.mark.parametrize("text", ["lm_head", "", "q,zz"])
def test_normalise_targets_refuses_unknown_modules(text: str) -> None:
    with pytest.raises(ParseError):
        normalise_targets(text)


@pytest.mark.parametrize(("text", "expected"), [("13B", (13.0, None)), ("8x7B", (7.0, 8)), ("0.5", (0.5, None)),
                                                ("70 млрд", (70.0, None))])
def test_parse_size(text: str, expected: tuple) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["thirteen", "0B", "1x7B", "99999999B"])
def test_parse_size_refuses(text: str) -> None:
    with pytest.raises(ParseError):
        parse_size(text)


# --- the first-character dispatch is an optimisation only: it must agree with trying every rule everywhere --------

def test_first_characters_of_patterns() -> None:
    from core.parser import _first_chars

    assert _first_chars(r"(?:ab|c)d") == {"a", "c"}
    assert _first_chars(r"x?y") == {"x", "y"}
    assert _first_chars(r"(?<!\w)[0-9]{1,3}+k") == set("0123456789")
    assert _first_chars(r"x?") is None  # can match empty: must be tried everywhere
    assert _first_chars(r".x") is None and _first_chars(r"\wx") is None  # any character


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([*VOCAB, "Qwen/Qwen2.5-72B-Instruct", "по 800 токенов", "все слои"]), max_size=6)
       .map(" ".join).map(str.lower))
def test_dispatch_agrees_with_the_full_alternation(text: str) -> None:
    from core.parser import _RULES, _WORD_START, _scanner_for

    full = re.compile("(?:" + "|".join(f"(?P<{n}>{p})" for n, p, _ in _RULES) + r")(?!\w)")
    for start in _WORD_START.finditer(text):
        scanner = _scanner_for(start.group())
        fast = scanner.match(text, start.start()) if scanner else None
        slow = full.match(text, start.start())
        assert (fast and (fast.lastgroup, fast.span())) == (slow and (slow.lastgroup, slow.span()))


def test_range_errors_show_plain_numbers_in_each_language() -> None:
    with pytest.raises(ParseError) as info:
        parse_workload("llama 8b 500m tokens")
    assert "4,194,304" in render("en", info.value.explain())
    assert "4\u00a0194\u00a0304" in render("ru", info.value.explain()).replace(" ", "\u00a0")
    assert "e+" not in render("en", info.value.explain())


@pytest.mark.parametrize(("written", "model"), [
    ("qlora 34b yi on a 3090 ti, r=64, seq len 2048", "yi-34b"), ("7b qwen inference", "qwen2.5-7b"),
    ("70b llama lora", "llama-3.1-70b"),
])
def test_a_family_with_its_size_said_apart_is_that_model(written: str, model: str) -> None:
    # "34b yi" is what "yi 34b" is: the family's model of that size, not "which Yi?"
    assert parse_workload(written).model == model


@pytest.mark.parametrize(("phrase", "gpu", "count"), [
    ("70B QLoRA on H100 8x", "h100-sxm", 8),
    ("70b lora a100 80gb 4×", "a100-80gb", 4),
    ("инференс 8B на 4090 2х", "rtx-4090", 2),
])
def test_a_count_written_after_the_card_is_its_count(phrase: str, gpu: str, count: int) -> None:
    """"H100 8x", as listings and chats write it; "8x7b" after a card stays a model."""
    spec = parse_workload(phrase)
    assert (spec.gpu, spec.gpus) == (gpu, count)
    mixtral = parse_workload("mixtral 8x7b inference on h100")
    assert mixtral.gpus is None and mixtral.model == "mixtral-8x7b"


@pytest.mark.parametrize("phrase", ["13B LoRA under $1/h", "13b lora 0.5/gpu-hour", "7B inference 2/hr"])
def test_an_amount_per_unit_is_never_a_hub_repository(phrase: str) -> None:
    """"$1/h" is a price (a filter of /offers and /subscribe), not the repository "1/h"; "01-ai/Yi-34B" still is one."""
    with pytest.raises(ParseError) as info:
        parse_workload(phrase)
    assert not any("/" in u for u in info.value.understood), info.value.understood
    assert parse_workload("01-ai/Yi-34B inference").model == "yi-34b"
