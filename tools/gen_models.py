"""Generate `core/data/models.json`, the model catalog, from public configs.

Sources, each entry saying which it came from:
  1. litgpt's model configs (`litgpt/config.py` of the `litgpt` PyPI package, Apache-2.0): layers, hidden size,
     heads, KV groups, head size, MLP width, vocabulary, experts, sliding windows. The file imports nothing
     heavy, so it is loaded on its own from the downloaded wheel.
  2. `tools/model_facts.py`: Hugging Face config.json keys of the models litgpt lacks (DeepSeek, Kimi, gpt-oss,
     Llama 4, GLM, Command R, Qwen-VL, Russian models...), read with the same `core.models.arch_from_config` that
     reads a config.json from a file or the Hub.

The context limit (`max_context`) is litgpt's `block_size`, `CONTEXT_FIXES` below where litgpt's differs from the
model's, and for `model_facts` entries their config's `max_position_embeddings` or `model_facts.CONTEXT`.

Parameter counts come from `core.models.count_params` (the shape), or from the model card / safetensors index
where `model_facts` states one; `tests/core/test_models.py` checks the counts against model cards.

    python tools/gen_models.py                      # downloads litgpt==0.5.13 (wheel only) with pip
    python tools/gen_models.py --litgpt path/to/litgpt/config.py
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from model_facts import CONTEXT, FACTS, HF  # noqa: E402

from core.models import Arch, arch_from_config, count_params  # noqa: E402

LITGPT_VERSION = "0.5.13"
OUT = ROOT / "core" / "data" / "models.json"

# litgpt repositories that are not models people rent GPUs for (merges, research checkpoints).
SKIP_ORGS = {"garage-bAInd", "stabilityai", "Trelis", "keeeeenw", "togethercomputer", "openlm-research", "BSC-LT"}
# litgpt does not record tied embeddings; these Hugging Face configs set tie_word_embeddings.
TIED = re.compile(r"^(gemma|codegemma|llama-3\.2-[13]b|qwen2\.5-(coder-)?(0\.5|1\.5|3)b|qwen3-(0\.6|1\.7|4)b|"
                  r"smollm2|phi-4-mini|olmo-1b|tinyllama|qwen2\.5-math-1\.5b)", re.I)
# Catalog ids the first, hand-typed catalog used (kept so stored subscriptions and tests keep resolving).
ID_OVERRIDES = {"mistral-7b-v0.1": "mistral-7b", "phi-3-mini-4k": "phi-3-mini", "mixtral-8x7b-v0.1": "mixtral-8x7b",
                "mixtral-8x22b-v0.1": "mixtral-8x22b"}
EXTRA_ALIASES: dict[str, list[str]] = {
    "mistral-7b": ["mistral", "mistral 7b", "mistral-7b-instruct", "mistral-7b-v0.2"],
    "phi-3-mini": ["phi-3", "phi3 mini", "phi-3-mini-4k", "phi 3 mini"],
    "mixtral-8x7b": ["mixtral", "mixtral 8x7b"],
    "llama-3.1-8b": ["llama 3 8b", "llama-3.1-8b-instruct", "meta-llama-3.1-8b"],
    "llama-3.1-405b": ["llama 405b", "llama-3-405b"],
    "llama-3.1-nemotron-70b-hf": ["nemotron 70b", "llama 3.1 nemotron 70b"],
    "llama-2-7b": ["llama-7b", "llama 7b"],
    "phi-4": ["phi 4", "phi4", "phi-4 14b"],
    "qwen3-235b-a22b": ["qwen3 235b", "qwen3-235b"],
    "qwen3-30b-a3b": ["qwen3 30b", "qwen3-30b"],
    "mistral-large-2407": ["mistral large 2", "mistral-large-2", "mistral large", "mistral-large-123b"],
    "mistral-large-2411": ["mistral large 2.1", "mistral-large-2.1", "mistral large 24.11"],
    # Ollama's library tags of DeepSeek-R1 name the distilled models by size (https://ollama.com/library/deepseek-r1/tags:
    # 1.5b, 7b, 14b, 32b Qwen distills, 70b the Llama distill, 671b R1 itself); "deepseek-r1 70b" means the same. The
    # 8b tag moved from the Llama distill to DeepSeek-R1-0528-Qwen3-8B in May 2025, so it is left to the user's words.
    "r1-distill-llama-70b": ["deepseek-r1:70b"],
    "deepseek-r1-distill-qwen-32b": ["deepseek-r1:32b"],
    "deepseek-r1-distill-qwen-14b": ["deepseek-r1:14b"],
    "deepseek-r1-distill-qwen-7b": ["deepseek-r1:7b"],
    "deepseek-r1-distill-qwen-1.5b": ["deepseek-r1:1.5b"],
    "deepseek-r1": ["deepseek-r1:671b"],
}
# litgpt's `block_size` is the model's context except where litgpt chose otherwise; these catalog ids take the
# Hugging Face config.json `max_position_embeddings` or the model card instead (the reason goes into `source`).
CONTEXT_FIXES: dict[str, tuple[int, str]] = {
    "mistral-7b": (32768, "config.json max_position_embeddings; litgpt uses the 4096 sliding window"),
    "qwen2.5-1.5b": (32768, "model card: 32,768 tokens"),
    "qwen2.5-coder-7b": (131072, "model card: 131,072 tokens with YaRN"),
    "qwen2.5-coder-14b": (131072, "model card: 131,072 tokens with YaRN"),
    "qwen2.5-coder-32b": (131072, "model card: 131,072 tokens with YaRN"),
    "phi-3.5-mini": (131072, "config.json max_position_embeddings"),
    "gemma-2b": (8192, "config.json max_position_embeddings"),
    "gemma-7b": (8192, "config.json max_position_embeddings"),
    "codegemma-7b": (8192, "config.json max_position_embeddings"),
    "mistral-large-2407": (131072, "config.json max_position_embeddings"),
    "mistral-large-2411": (131072, "config.json max_position_embeddings"),
}
VARIANT_TAIL = re.compile(r"(?:[-_](?:instruct|it|chat|hf|base|Base|Instruct|Chat))+$", re.I)
NAME_VARIANTS = re.compile(r"-(?:Instruct|Base|Chat|chat|it|hf|instruct|pretrain)(?=-|$)")


def _display(name: str) -> str:
    """'Llama-2-13b-hf' -> 'Llama-2-13B', 'gemma-3-270m' -> 'gemma-3-270M': sizes in capitals, variant words
    dropped."""
    name = NAME_VARIANTS.sub("", name)
    name = re.sub(r"(?<=[-_])(\d+(?:\.\d+)?)([bm])(?=[-_]|$)", lambda m: m.group(1) + m.group(2).upper(), name)
    return name


def _slug(name: str) -> str:
    base = NAME_VARIANTS.sub("", name)
    base = re.sub(r"^Meta-", "", base)
    return base.lower()


def _load_litgpt(path: Path | None) -> list[dict[str, Any]]:
    if path is None:
        tmp = Path(tempfile.mkdtemp())
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", f"litgpt=={LITGPT_VERSION}", "-d",
                        str(tmp), "-q"], check=True)
        wheel = next(tmp.glob("litgpt-*.whl"))
        with zipfile.ZipFile(wheel) as z:
            z.extract("litgpt/config.py", tmp)
        path = tmp / "litgpt" / "config.py"
    spec = importlib.util.spec_from_file_location("litgpt_config", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = []
    for raw in mod.configs:
        cfg = mod.Config(**raw)
        out.append({"raw": raw, "cfg": cfg})
    return out


def _from_litgpt(item: dict[str, Any]) -> Arch | None:
    raw, c = item["raw"], item["cfg"]
    org = raw["hf_config"]["org"]
    if org in SKIP_ORGS:
        return None
    name = _display(raw["name"])
    repo = f"{org}/{raw['hf_config']['name']}"
    moe = c.mlp_class_name == "LLaMAMoE"
    window = c.sliding_window_size or 0
    local = sum(c.sliding_window_indices[: c.n_layer]) if window and c.sliding_window_indices else 0
    if window and not c.sliding_window_indices:
        local = c.n_layer
    slug = _slug(raw["name"])
    arch = Arch(
        id=ID_OVERRIDES.get(slug, slug), name=name, hidden=c.n_embd, layers=c.n_layer, heads=c.n_head,
        kv_heads=c.n_query_groups, intermediate=(c.moe_intermediate_size or c.intermediate_size) if moe
        else c.intermediate_size, vocab=c.padded_vocab_size, params_b=0.0, head_dim=c.head_size,
        tied_embeddings=bool(TIED.match(raw["name"])), qkv_bias=bool(c.attn_bias or c.bias),
        experts=c.n_expert if moe else 1, experts_active=c.n_expert_per_token if moe else 1,
        mlp_matrices=2 if c.mlp_class_name == "GptNeoxMLP" else 3, window=window, local_layers=local,
        family=name.split("-")[0].lower(), max_context=c.block_size,
        source=f"litgpt {LITGPT_VERSION} config '{raw['name']}' ({HF.format(repo=repo)})")
    total, active = count_params(arch)
    return replace(arch, params_b=round(total, 3), active_b=round(active, 3) if moe else 0.0,
                   aliases=(repo, raw["name"]))


def _from_fact(f: dict[str, Any], by_id: dict[str, Arch]) -> Arch:
    repo = f["repo"]
    name = repo.split("/", 1)[1]
    slug = f.get("id") or _slug(name)
    aliases = (repo, name, *f.get("aliases", ()))
    # `source`: where the numbers come from when it is not the repository's config.json (a paper, an engine's loader)
    source = f.get("source") or HF.format(repo=repo)
    source += f" ({f['note']})" if f.get("note") else ""
    if "same_as" in f and "config" not in f:
        base = by_id[f["same_as"]]
        return replace(base, id=slug, name=_display(name), aliases=aliases,
                       max_context=CONTEXT.get(repo, base.max_context),
                       source=f"{source}: the architecture of {base.name}")
    arch = arch_from_config(f["config"], _display(name), params_b=f.get("params_b"),
                            active_b=f.get("active_b"), source=source)
    return replace(arch, id=slug, aliases=aliases, family=name.split("-")[0].lower(),
                   max_context=CONTEXT.get(repo, arch.max_context))


def _entry(a: Arch) -> dict[str, Any]:
    defaults = {f.name: f.default for f in fields(Arch)}
    out: dict[str, Any] = {}
    for k, v in asdict(a).items():
        if k in ("id", "name", "hidden", "layers", "heads", "kv_heads", "intermediate", "vocab", "params_b",
                 "source") or v != defaults.get(k):
            out[k] = list(v) if isinstance(v, tuple) else v
    return out


def build(litgpt: Path | None) -> dict[str, Any]:
    by_id: dict[str, Arch] = {}
    for item in _load_litgpt(litgpt):
        arch = _from_litgpt(item)
        if arch is None:
            continue
        if arch.id in by_id:  # "-Instruct" / "-Base" twins: one architecture, every spelling an alias
            old = by_id[arch.id]
            by_id[arch.id] = replace(old, aliases=tuple(dict.fromkeys((*old.aliases, *arch.aliases))))
        else:
            by_id[arch.id] = arch
    by_repo = {alias.lower(): a.id for a in by_id.values() for alias in a.aliases if "/" in alias}
    for f in FACTS:
        arch = _from_fact(f, by_id)
        twin = by_repo.get(f["repo"].lower())
        if twin is not None and twin != arch.id:  # litgpt has it under its own name: one entry, the repo's name
            arch = replace(arch, id=twin)
            by_id[twin] = replace(by_id[twin], name=arch.name)
        if arch.id in by_id:
            old = by_id[arch.id]
            if "config" in f or "same_as" not in f:  # a config.json beats litgpt (towers, quantisation...)
                arch = replace(arch, aliases=tuple(dict.fromkeys((*old.aliases, *arch.aliases))))
            else:
                arch = replace(old, aliases=tuple(dict.fromkeys((*old.aliases, *arch.aliases))))
        by_id[arch.id] = arch
    for arch_id, (limit, why) in CONTEXT_FIXES.items():
        a = by_id[arch_id]
        by_id[arch_id] = replace(a, max_context=limit, source=f"{a.source}; max_context {limit}: {why}")
    for arch_id, extra in EXTRA_ALIASES.items():
        a = by_id[arch_id]
        by_id[arch_id] = replace(a, aliases=tuple(dict.fromkeys((*a.aliases, *extra))))
    models = [_entry(a) for a in by_id.values()]
    return {"about": "Generated by tools/gen_models.py from litgpt's configs and Hugging Face config.json facts "
                     "(tools/model_facts.py); every entry names its source. Do not edit by hand.",
            "models": models}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--litgpt", type=Path, help="litgpt/config.py (default: download the wheel)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    data = build(args.litgpt)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(f"{len(data['models'])} models -> {args.out}")


if __name__ == "__main__":
    main()
