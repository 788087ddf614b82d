"""Display names: what a person reads instead of an internal id (models, methods, providers, regions).

- providers: the provider catalog's titles (`core.providers`: vastai -> Vast.ai);
- models: the catalog's names written the way model cards title them (llama-3.1-70b -> Llama 3.1 70B);
- methods and quantisations: the text catalog's words (qlora -> QLoRA, inference -> инференс) and upper-case
  format names (nf4 -> NF4);
- regions: the cloud region ids providers report (ap_northeast_kr_se_1, ewr, usny01_a01) -> a place in the user's
  language: `texts.regions` (the one table, shared with the CLI), re-exported here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from core.gpus import get_gpu, resolve_gpus
from core.models import MODELS, find_model
from core.msg import msg
from core.providers import provider_title
from core.remedies import split_changes
from core.workload import Objective, Workload
from texts.i18n import number, render, t
from texts.regions import region_name

__all__ = ["ctx_label", "method_name", "method_said", "model_name", "provider_name", "quant_name", "query_words",
           "region_name", "warm_up"]


def query_words(lang: str, text: str) -> str:
    """A subscription's or an answer's phrase as the user reads it: a remedy's change carried as a code
    ('70B full on 8 H100 [+offload_optimizer]', core.remedies) is said in words, never shown as the code."""
    base, codes = split_changes(text)
    if not codes:
        return text
    return t(lang, "query_with_changes", query=base.strip(),
             changes=", ".join(render(lang, msg(f"remedy_{c}")) for c in codes))


def provider_name(provider: str) -> str:
    return provider_title(provider)


@lru_cache(maxsize=1)
def _family_spellings() -> dict[str, str]:
    """'gemma' -> 'Gemma', 'glm' -> 'GLM': how the catalog's own capitalised names write a family that some
    upstream configs spell in lower case ('gemma-3-27B', 'glm-4-9B' from litgpt)."""
    out: dict[str, str] = {}
    for arch in MODELS:
        head = re.sub(r"\d+(?:\.\d+)?$", "", re.split(r"[-_ ]", arch.name)[0])
        if head and head != head.lower():
            out.setdefault(head.lower(), head)
    return out


@lru_cache(maxsize=512)
def model_name(model: str) -> str:
    """'llama-3.1-70b' or 'Llama-3.1-70B' -> 'Llama 3.1 70B'; a name not in the catalog is kept as it is."""
    arch = find_model(model) if "/" not in model else None
    if arch is None:  # a Hugging Face repo id ("acme/llama-ft") or a config.json's name: shown as given
        return model
    name = arch.name
    if "(" in name or " " in name:  # "70B (scaled from …)", "8x70B MoE (…)": already prose
        return name
    head, sep, rest = name.partition("-")
    if head == head.lower() and head not in _family_spellings():
        # a family its publisher writes in lower case with hyphens ("gpt-oss-120b"): shown as published
        return next((a for a in arch.aliases if a.lower() == name.lower() and "/" not in a), name)
    head = _family_spellings().get(head, head)
    return (head + sep + rest).replace("-", " ")


def warm_up() -> None:
    """Every catalog model's display name, worked out now (at start-up) rather than by its first answer."""
    for arch in MODELS:
        model_name(arch.name)


def method_name(lang: str, method: str) -> str:
    return t(lang, f"val_method_{method}")


def method_said(lang: str, w: Workload) -> str:
    """The method, with a preference objective after it: 'LoRA', 'LoRA DPO', 'full fine-tune ORPO'."""
    method = method_name(lang, w.method.value)
    if w.objective is Objective.SFT:
        return method
    return f"{method} {t(lang, f'val_objective_{w.objective.value}')}"


def quant_name(quant: str) -> str:
    return quant.replace("-", " ").upper().replace("GPTQ INT", "GPTQ int").replace("_K_M", "_K_M")


def ctx_label(w: Workload, lang: str = "en") -> str:
    """'ctx 8192', or with a stated prompt 'ctx 3072 (input 1024 + output 2048)' (inference)."""
    if w.prompt_len is not None and w.prompt_len < w.seq_len:
        return t(lang, "label_ctx_io", ctx=number(w.seq_len, 0, lang), prompt=number(w.prompt_len, 0, lang),
                 output=number(w.seq_len - w.prompt_len, 0, lang))
    return t(lang, "label_ctx", ctx=number(w.seq_len, 0, lang))


def cards_named(gpu_ids: Sequence[str], sep: str = ", ") -> str:
    """Cards as they were asked about: each one, or its family's name where every variant of the family is among
    them ("A100, H100" for "A100/H100", "RTX 4090", "A100 80GB"), joined by `sep`; an id the catalog no longer
    has, as it is."""
    named = set(gpu_ids)
    labels: dict[str, None] = {}
    for gpu_id in gpu_ids:
        try:
            card = get_gpu(gpu_id)
        except KeyError:
            labels[gpu_id] = None
            continue
        whole = card.family is not None and {g.id for g in resolve_gpus(card.family)} <= named
        labels[card.family if whole and card.family else card.name] = None
    return sep.join(labels)


def cards_label(w: Workload, lang: str) -> str:
    """The cards a workload was named on: "24 GB card" for a class of that memory (its cards are many models), else
    the cards and families named, said as either ("H100" covers each of its variants; "A100 / H100")."""
    if w.memory_class_gb is not None:
        return t(lang, "cards_of_memory", gb=f"{w.memory_class_gb:g}")
    return cards_named(w.gpu_ids, " / ")
