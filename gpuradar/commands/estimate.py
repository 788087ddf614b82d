"""`gpuradar estimate TEXT [options] [--json] [--lang ru|en]`: the VRAM a workload needs and the GPUs that fit.

Options override or complete the text: they become a `WorkloadSpec` merged over the parsed phrase, then
`core.defaults.complete` fills what is still open. Bad input of any kind exits with status 2 and a polite message
in the chosen language on stderr (never a traceback). Enum options are read here rather than with argparse
`choices`, whose error would be English only.
"""

from __future__ import annotations

import argparse
import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # the estimator is imported where used: every `gpuradar` command imports this module at start-up
    from core.parser import ParseError
    from core.workload import WorkloadSpec

E = TypeVar("E", bound=StrEnum)

_KV_DTYPES = ("bf16", "fp16", "fp32", "fp8", "int8", "int4")
# Spellings people use for the same choice.
_ALIASES: dict[str, str] = {"fsdp_full_shard": "fsdp", "zero-3": "zero3", "zero-2": "zero2", "deepspeed": "zero3",
                            "adamw_8bit": "adamw8bit", "adamw-8bit": "adamw8bit", "paged_adamw_8bit": "paged_adamw8bit",
                            "paged-adamw8bit": "paged_adamw8bit", "gptq": "gptq-int4", "bnb4": "nf4",
                            "nf4dq": "nf4-dq", "bf16_true": "bf16-true", "full-ft": "full", "infer": "inference"}


def _problem(key: str, **values: object) -> ParseError:
    from core.msg import msg
    from core.parser import ParseError

    return ParseError(problem=msg(key, **values))


def _enum(kind: type[E], option: str, value: str | None) -> E | None:
    if value is None:
        return None
    key = value.strip().lower()
    key = _ALIASES.get(key, key)
    try:
        return kind(key)
    except ValueError:
        choices = ", ".join(m.value for m in kind)
        raise _problem("cli_opt_unknown", option=option, value=repr(value), choices=choices) from None


def _positive(option: str, value: int | float | None) -> None:
    if value is not None and value <= 0:
        raise _problem("cli_opt_positive", option=option)


def config_name(path: str, data: dict[str, Any]) -> str:
    """What a config.json file calls its model: its `_name_or_path`, else the file's name (the folder's for a
    plain `config.json`)."""
    named = data.get("_name_or_path") if isinstance(data, dict) else None
    if isinstance(named, str) and named.strip():
        return named.strip().rstrip("/")
    p = Path(path)
    return p.stem if p.stem.lower() != "config" else (p.resolve().parent.name or "custom")


def _config_arch(path: str) -> Any:
    from core.models import ConfigError, arch_from_config

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError:
        raise _problem("cli_config_unreadable", path=path) from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise _problem("cli_config_not_json", path=path) from None
    try:
        return arch_from_config(data, name=config_name(path, data), source=str(path))
    except (ConfigError, KeyError, TypeError, ValueError, AttributeError, ZeroDivisionError):
        raise _problem("cli_config_fields", path=path) from None


def options_spec(args: argparse.Namespace) -> WorkloadSpec:
    """What the command-line options say, as a WorkloadSpec (None where an option was not given)."""
    from core.gpus import find_gpu, resolve_gpus
    from core.parser import normalise_targets, parse_size
    from core.workload import Method, Objective, Offload, Optimizer, Precision, Quant, Strategy, WorkloadSpec

    for option, value in (("--seq", args.seq), ("--batch", args.batch), ("--lora-rank", args.lora_rank),
                          ("--gpus", args.gpus), ("--concurrency", args.concurrency), ("--examples", args.examples),
                          ("--tokens-per-example", args.tokens_per_example),
                          ("--dataset-tokens", args.dataset_tokens), ("--epochs", args.epochs),
                          ("--input", args.prompt_len), ("--output", args.output_len)):
        _positive(option, value)
    fields: dict[str, Any] = {}
    if args.model:
        fields["model"] = args.model
    if args.config:
        arch = _config_arch(args.config)
        fields["arch"], fields["model"], fields["model_source"] = arch, arch.id, "config"
    if args.params:
        fields["params_b"], experts = parse_size(args.params)
        if experts:
            fields["experts"] = experts
    if args.gpu:
        gpu = find_gpu(args.gpu)
        if gpu is None:
            raise _problem("cli_gpu_unknown", gpu=repr(args.gpu))
        fields["gpu"] = gpu.id
        family = resolve_gpus(args.gpu)
        if len(family) > 1:  # `--gpu H100` covers SXM, PCIe and NVL; `--gpu "H100 PCIe"` that card only
            fields["gpu_family"] = tuple(g.id for g in family)
    if args.kv_dtype:
        kv = args.kv_dtype.strip().lower()
        if kv not in _KV_DTYPES:
            raise _problem("cli_kv_dtype", choices=", ".join(_KV_DTYPES))
        fields["kv_dtype"] = kv
    if args.engine:
        from core.workload import Engine

        choices = {e.value: e for e in Engine} | {"hf": Engine.HF_PEFT, "peft": Engine.HF_PEFT,
                                                  "llamacpp": Engine.LLAMA_CPP, "trt-llm": Engine.TENSORRT_LLM}
        engine = choices.get(args.engine.strip().lower())
        if engine is None:
            raise _problem("cli_engine", choices=", ".join(e.value for e in Engine))
        fields["engine"] = engine
    if args.lora_targets:
        fields["lora_targets"] = normalise_targets(args.lora_targets)
    enums = {"method": _enum(Method, "--method", args.method),
             "objective": _enum(Objective, "--objective", args.objective), "quant": _enum(Quant, "--quant", args.quant),
             "precision": _enum(Precision, "--precision", args.precision),
             "optimizer": _enum(Optimizer, "--optimizer", args.optimizer),
             "strategy": _enum(Strategy, "--strategy", args.strategy),
             "offload": _enum(Offload, "--offload", args.offload)}
    plain = {"seq_len": args.seq, "batch": args.batch, "grad_ckpt": args.grad_ckpt, "lora_rank": args.lora_rank,
             "fused_ce": args.fused_ce, "ref_precomputed": args.ref_precomputed, "gpus": args.gpus,
             "concurrency": args.concurrency,
             "examples": args.examples, "tokens_per_example": args.tokens_per_example,
             "dataset_tokens": args.dataset_tokens, "epochs": args.epochs,
             "prompt_len": args.prompt_len, "output_len": args.output_len}
    fields.update({k: v for k, v in {**enums, **plain}.items() if v is not None})
    return WorkloadSpec(**fields)


def _lookup(repo: str) -> Any:
    """A model the catalog lacks, from the Hugging Face Hub, through the shared database cache when there is one
    (a SQLite file that does not exist yet is not created for it)."""
    import asyncio

    from gpuradar.store_settings import StoreSettings
    from modelhub import HubResolver, HubSettings
    from storage.db import make_engine, make_sessionmaker
    from storage.hub_cache import HubCacheStore

    url = StoreSettings().database_url
    use_db = not (url.startswith("sqlite") and "///" in url and not Path(url.split("///", 1)[1]).is_file())

    async def go() -> Any:
        engine = make_engine(url) if use_db else None
        try:
            cache = HubCacheStore(make_sessionmaker(engine)) if engine is not None else None
            return await HubResolver(HubSettings.from_env(), cache).resolve(repo)
        finally:
            if engine is not None:
                await engine.dispose()

    return asyncio.run(go())


def stored_offers() -> list[Any]:
    """The offer store's in-stock offers (`OfferRow`s) for the JSON answer's `cheapest_offer`; none when there is no
    store yet or it cannot be read (an estimate never fails for want of prices, and never creates a store)."""
    import asyncio

    from gpuradar.store_settings import StoreSettings

    url = StoreSettings().database_url
    if url.startswith("sqlite") and "///" in url:
        path = Path(url.split("///", 1)[1])
        if not path.is_file():
            return []
    # Imported only when there is a store to read: SQLAlchemy and the storage layer are a second of start-up on
    # a loaded machine, which `gpuradar estimate` without a store (a laptop, CI) should not wait for.
    from gpuradar.estimate_view import OfferRow
    from storage.db import make_engine, make_sessionmaker
    from storage.queries import in_stock_offers

    async def load() -> list[Any]:
        engine = make_engine(url)
        try:
            async with make_sessionmaker(engine)() as session:
                return [OfferRow(r.offer, r.price_per_gpu_hour_rub, r.price_per_gpu_hour_usd)
                        for r in await in_stock_offers(session)]
        finally:
            await engine.dispose()

    try:
        return asyncio.run(load())
    except Exception:  # no schema yet, a locked or unreachable database: answer without prices
        return []


def run(args: argparse.Namespace) -> int:
    from core.defaults import complete
    from core.hub import HubError, hub_error_msg, hub_name_to_resolve, with_hub_arch
    from core.parser import ParseError, parse_workload
    from core.workload import WorkloadSpec
    from gpuradar.estimate_view import answer, render_text, to_json
    from texts.i18n import lang_for, render

    lang = lang_for(args.lang, *args.text)
    try:
        text = " ".join(args.text).strip()
        options = options_spec(args)
        # Nothing said at all (no words, no options) gets the parser's "describe the workload", as emoji do.
        spec = parse_workload(text) if text or options == WorkloadSpec() else WorkloadSpec()
        # Naming the model one way replaces what the text said the other way (--model beats "13B" and vice versa).
        if options.model or options.arch:
            spec = spec.model_copy(update={"params_b": None, "experts": None})
        if options.params_b:
            spec = spec.model_copy(update={"model": None, "arch": None})
        spec = spec.merged(options)
        repo = hub_name_to_resolve(spec)
        if repo is not None:
            spec = with_hub_arch(spec, repo, _lookup(repo))
        w, assumptions = complete(spec)
    except ParseError as exc:
        print(render(lang, exc.explain()), file=sys.stderr)
        return 2
    except HubError as exc:
        print(render(lang, hub_error_msg(exc)), file=sys.stderr)
        return 2
    result = answer(w, assumptions)
    if args.json:
        print(json.dumps(to_json(result, lang, stored_offers()), ensure_ascii=False))
    else:
        print(render_text(result, lang, stored_offers()))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "estimate", help="VRAM a workload needs and the GPU configurations that fit",
        description="Estimate per-GPU memory, fitting GPU configurations and training time for an LLM workload, "
                    "e.g. gpuradar estimate \"70B QLoRA ctx 8k\".")
    p.add_argument("text", nargs="*", help="the workload in words (Russian or English)")
    p.add_argument("--model", help="model name, e.g. llama-3.1-8b")
    p.add_argument("--config", metavar="PATH", help="a Hugging Face config.json describing the model")
    p.add_argument("--params", help="bare size: 13B, 0.5B, 8x7B")
    p.add_argument("--method", help="inference|full|freeze|lora|qlora")
    p.add_argument("--objective", help="training objective: sft|dpo|ipo|orpo|simpo|cpo|kto")
    p.add_argument("--precompute-ref", dest="ref_precomputed", action="store_const", const=True,
                   help="DPO / IPO / KTO: the reference's log-probs computed before training (no reference in memory)")
    p.add_argument("--quant", help="none|nf4|nf4-dq|int8|fp8|gptq-int4|gptq-int8|awq|q4_k_m|q5_k_m|q6_k|q8_0")
    p.add_argument("--precision", help="bf16|fp16|fp32|bf16-true")
    p.add_argument("--seq", type=int, help="sequence length (context for inference)")
    p.add_argument("--input", "--prompt", dest="prompt_len", type=int,
                   help="inference: prompt tokens, prefilled at once (unset: the whole context, the worst case)")
    p.add_argument("--output", dest="output_len", type=int, help="inference: tokens generated after the prompt")
    p.add_argument("--batch", type=int, help="micro-batch per GPU")
    p.add_argument("--grad-ckpt", dest="grad_ckpt", action=argparse.BooleanOptionalAction, default=None,
                   help="gradient checkpointing on/off")
    p.add_argument("--lora-rank", type=int)
    p.add_argument("--lora-targets", help="q,v | all-linear | q,k,v,o | …")
    p.add_argument("--optimizer", help="adamw|adamw8bit|paged_adamw8bit|sgd")
    p.add_argument("--fused-ce", dest="fused_ce", action=argparse.BooleanOptionalAction, default=None,
                   help="fused / chunked cross-entropy (Liger, Unsloth, torchtune)")
    p.add_argument("--gpus", type=int, help="number of GPUs")
    p.add_argument("--strategy", help="single|ddp|zero2|zero3|fsdp|tp")
    p.add_argument("--offload", help="none|optimizer|all")
    p.add_argument("--gpu", help="a GPU to check, e.g. H100 or 'RTX 4090'")
    p.add_argument("--kv-dtype", dest="kv_dtype", help="bf16|fp16|fp8|int8|int4")
    p.add_argument("--concurrency", type=int, help="concurrent sequences (inference)")
    p.add_argument("--engine", help="what runs it: vllm|sglang|llama.cpp|transformers|tensorrt-llm|ollama; training: "
                                    "hf-trainer/peft|unsloth|llama-factory|axolotl|torchtune|deepspeed|liger (default: "
                                    "transformers for one sequence, vllm for several, hf-trainer/peft for training; "
                                    "stated as an assumption)")
    p.add_argument("--examples", type=int, help="training examples")
    p.add_argument("--tokens-per-example", dest="tokens_per_example", type=int)
    p.add_argument("--dataset-tokens", dest="dataset_tokens", type=int,
                   help="the training data's size in tokens (with --examples or --tokens-per-example, not both)")
    p.add_argument("--epochs", type=float)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--lang", choices=("ru", "en"), default=None,
                   help="output language / язык вывода (default: Russian for Cyrillic input, else English)")
    p.set_defaults(handler=run)
