"""Free text in Russian or English -> `WorkloadSpec`.

The phrase is read by an ordered alternation of regex rules ("13B", "ctx 8k", "8 пользователей", "on 8 H100"...),
scanned left to right. At each word start the first rule that matches wins, so specific rules ("10k примеров",
"8-bit adam", "kv fp8") sit before general ones ("10k" as a context, "8-bit" as a quantisation). What no rule
consumed and is not a filler word ("on", "для"...) is reported back: a phrase is either understood completely or
a `ParseError` says what was and what was not understood, with examples.

Speed matters (the bot answers inline queries keystroke by keystroke): at each word start only the rules that can
begin with that character are tried (see `_first_chars`), each set compiled once; parse + defaults stay in the
tens of microseconds.

Only what was said is set; the defaults a phrase leaves open are `core.defaults.complete`'s business.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from functools import lru_cache
from typing import Any

from pydantic import TypeAdapter

from core.gpus import GPUS, find_gpu, resolve_gpus, singular
from core.limits import MAX_INPUT_CHARS, WORKLOAD_LIMITS
from core.memo import AheadMemo
from core.models import (
    GGUF_TYPE,
    Arch,
    did_you_mean,
    family_members,
    find_model,
    one_of_family,
    typical_member,
)
from core.msg import Joined, Msg, msg
from core.workload import (
    INFERENCE_ENGINES,
    TRAINING_METHODS,
    Attention,
    Engine,
    Method,
    Objective,
    Offload,
    Optimizer,
    Precision,
    Quant,
    Strategy,
    WorkloadSpec,
)

# A workload is a phrase; anything longer is a paste by mistake (inline queries stop at 256). core.limits.
MAX_CHARS = MAX_INPUT_CHARS

# --- the error -------------------------------------------------------------------------------------------------

class ParseError(ValueError):
    """A phrase (or a combination of fields) that cannot be read as a workload.

    `understood` / `not_understood` are the fragments of the user's text (or `field=value` items when the
    error comes from `complete`); `choices`, the readings the phrase could have had when one fragment stood in
    the way (a family's models, either side of a contradiction); `explain()` says what was and was not understood,
    with example phrases, as a message for the text catalog (`texts.i18n.render(lang, err.explain())`).
    """

    def __init__(self, understood: Sequence[str] = (), not_understood: Sequence[str] = (), *,
                 problem: Msg | None = None, meanings: Sequence[Msg | Joined | None] = (),
                 reasons: Mapping[str, Msg] | None = None, from_fields: bool = False,
                 choices: Sequence[tuple[str, str]] = ()) -> None:
        self.understood: list[str] = list(understood)
        self.from_fields = from_fields  # `understood` holds field=value codes: only their meanings are shown
        self.not_understood: list[str] = list(not_understood)
        self.problem = problem
        self._meanings = list(meanings)
        self._reasons = dict(reasons or {})
        # (label, phrase): what the phrase could have meant, when one fragment was all that stood in the way ("qwen3
        # lora" -> "Qwen3-8B lora"...; "70B LoRA or QLoRA" -> "70B LoRA", "70B QLoRA"), for front ends to offer
        self.choices: tuple[tuple[str, str], ...] = tuple(choices)
        self.respelled: str | None = None  # the phrase with its misspellings put right, when that reads whole
        # the words of prose nothing reads ("7b lora for a chatbot"), when the phrase reads whole without them
        self.left_out: tuple[str, ...] = ()
        super().__init__(problem.key if problem else f"not understood: {self.not_understood}")

    def explain(self) -> Joined:
        """The whole answer, one message per line."""
        lines: list[Msg] = []
        if self.problem:
            lines.append(self.problem)
        else:
            lines.append(msg("parse_not_all" if self.not_understood else "parse_cannot"))
        if self.understood:
            items: list[Msg | Joined] = []
            for i, frag in enumerate(self.understood):
                meaning = self._meanings[i] if i < len(self._meanings) else None
                if self.from_fields:
                    item = meaning if meaning else msg("parse_item", fragment=frag)
                elif meaning:
                    item = msg("parse_item_meaning", fragment=frag, meaning=meaning)
                else:
                    item = msg("parse_item", fragment=frag)
                if item not in items:  # "13B LoRA 13B LoRA ..." says each thing once
                    items.append(item)
            lines.append(msg("parse_understood", items=Joined(tuple(items), "; ")))
        elif self.not_understood:
            lines.append(msg("parse_understood_nothing"))
        if self.not_understood:
            items = []
            for frag in self.not_understood:
                reason = self._reasons.get(frag)
                items.append(msg("parse_item_reason", fragment=frag, reason=reason) if reason else
                             msg("parse_item", fragment=frag))
            lines.append(msg("parse_not_understood", items=Joined(tuple(items), "; ")))
        chosen = self._reasons.get(self.not_understood[0]) if self.choices else None  # one fragment in the way
        why = chosen.key if chosen else ""
        if self.respelled is not None:
            lines.append(msg("parse_did_you_mean", phrase=self.respelled))
        elif self.left_out and self.choices:
            # said, not done: a word nothing reads may have mattered, so leaving it out is the user's choice
            lines.append(msg("parse_without", words=Joined(tuple(msg("parse_item", fragment=w)
                                                                 for w in self.left_out), ", "),
                             phrase=self.choices[0][1]))
            lines.append(msg("parse_try"))
        elif why == "parse_contradicts" and len(self.choices) == 2:
            # either side of a contradiction, said where no button can offer it (the CLI, a plain reply)
            lines.append(msg("parse_either", a=self.choices[0][1], b=self.choices[1][1]))
        elif why != "parse_model_family":  # a family's answer already lists its models and an example
            lines.append(msg("parse_try"))
        return Joined(tuple(lines), "\n")


# --- how fields read back to the user (shared with core.defaults) ------------------------------------------------

# How a field and its value read back to the user: catalog keys `field_<name>` and `val_<enum>_<member>`.
FIELDS = ("model", "arch", "params_b", "experts", "method", "objective", "ref_precomputed", "quant", "precision",
          "seq_len", "batch", "grad_ckpt", "attention", "lora_rank", "lora_targets", "optimizer", "fused_ce", "gpus",
          "strategy", "offload", "gpu", "kv_dtype", "concurrency", "examples", "tokens_per_example", "epochs", "images",
          "prompt_len", "output_len", "engine", "packing", "request_rate", "answer_tps", "total_tps", "ttft_s")
# enums whose members read as words; the rest read as their value
_NAMED_VALUES = (Method, Objective, Offload, Strategy)


def field_label(field: str) -> Msg:
    return msg(f"field_{field}")


def render_value(field: str, value: Any) -> Msg | str:
    """A field's value as the user reads it: a catalog message, or a name that reads the same in any language."""
    if isinstance(value, _NAMED_VALUES):
        return msg(f"val_{type(value).__name__.lower()}_{value.value}")
    if field == "quant" and value == Quant.NONE:
        return msg("val_quant_none")
    if isinstance(value, bool):
        return msg("val_on" if value else "val_off")
    if field in ("params_b", "params_min_b"):
        return f"{value:g}B"
    if field == "gpu_memory_gb":
        return msg("val_card_memory", gb=_plain(value))
    if field == "request_rate":
        return rate_said(float(value))
    if field in ("answer_tps", "total_tps"):
        return msg("val_tps", n=_plain(round(float(value), 1)))
    if field == "ttft_s":
        seconds = float(value)
        if seconds < 1:
            return msg("val_ms", n=_plain(round(seconds * 1000)))
        return msg("val_s", n=_plain(round(seconds, 2)))
    if field in ("seq_len", "tokens_per_example", "dataset_tokens", "prompt_len", "output_len"):
        return msg("val_tokens", n=int(value))
    if field == "model":
        arch = find_model(str(value))
        return arch.name if arch else str(value)
    if field == "gpu":
        gpu = find_gpu(str(value))
        return gpu.name if gpu else str(value)
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


_RATE_UNITS = {1.0: "val_rate_s", 60.0: "val_rate_m", 3600.0: "val_rate_h", 86400.0: "val_rate_d"}


def rate_said(per_second: float, unit: float | None = None) -> Msg:
    """Requests a second in the unit they were said in ("120 a minute" stays that, not "2 a second"); with none,
    in the unit that reads as a whole number where one does ("1,000 a minute", not "16.7 a second"): a second, a
    minute, an hour or a day."""
    if unit in _RATE_UNITS:
        return msg(_RATE_UNITS[unit], n=_plain(round(per_second * unit, 2)))
    for key, seconds in (("val_rate_s", 1.0), ("val_rate_m", 60.0), ("val_rate_h", 3600.0)):
        n = per_second * seconds
        if n >= 1 and (n >= 100 or abs(n - round(n)) < 1e-6 * max(1.0, n)):
            return msg(key, n=_plain(round(n, 2)))
    n = per_second * 86400.0
    return msg("val_rate_d", n=_plain(round(n, 2)))


@lru_cache(maxsize=2048, typed=True)
def describe(field: str, value: Any, rate_unit: float | None = None) -> Msg:
    """'sequence length: 8192 tokens' / 'длина последовательности: 8192 токена'; a request rate in `rate_unit`,
    the unit it was said in."""
    if field == "training":  # not a setting but what the phrase is about
        return msg("parse_training")
    if field == "request_rate":
        return msg("field_is", label=field_label(field), value=rate_said(float(value), rate_unit))
    return msg("field_is", label=field_label(field), value=render_value(field, value))


# --- numbers ---------------------------------------------------------------------------------------------------

# Inclusive sanity ranges (core.limits, shared with every other reader of input): a value outside is reported,
# never passed on (no 10^30-token contexts).
LIMITS: dict[str, tuple[float, float]] = WORKLOAD_LIMITS
_INT_FIELDS = frozenset({"experts", "seq_len", "batch", "lora_rank", "gpus", "concurrency", "examples",
                         "tokens_per_example", "dataset_tokens", "images", "prompt_len", "output_len"})

_UNIT = re.compile(r"(k|к|m|тыс(?:яч(?:а|и|ах|ами)?)?\.?|млн\.?|миллион(?:а|ов|ах|ами)?|thousands?|millions?)$")


_SPACES = re.compile(r"[\s\u202f]")


def _number(text: str) -> float:
    return float(_SPACES.sub("", text).replace(",", "."))


def _amount(text: str, kilo: int = 1000) -> float:
    """'10k' -> 10000; with kilo=1024 (contexts) '8k' -> 8192. 'тыс' is always 1000, 'млн' a million."""
    if text.isdigit():
        return int(text)
    text = text.strip()
    unit = _UNIT.search(text)
    if not unit:
        return _number(text)
    value = _number(text[: unit.start()])
    u = unit.group(1)
    if u in ("k", "к"):
        return value * kilo
    if u.startswith(("тыс", "thousand")):
        return value * 1000
    return value * (kilo * kilo if u == "m" else 1_000_000)


def _plain(x: float) -> int | float:
    return int(x) if float(x).is_integer() else x


def check_range(field: str, value: float) -> Msg | None:
    """None when the value is sane for the field, else why not."""
    lo, hi = LIMITS[field]
    if not lo <= value <= hi:
        # plain numbers, never "4.1943e+06": the catalog formats them for the user's language
        return msg("parse_range", label=field_label(field), lo=_plain(lo), hi=_plain(hi))
    if field in _INT_FIELDS and abs(value - round(value)) > 1e-6:
        return msg("parse_whole", label=field_label(field))
    return None


# --- the rules -------------------------------------------------------------------------------------------------

# Possessive quantifiers (Python 3.11+): a number is never split and retried digit by digit when the rest of a
# rule fails, which keeps every numeric rule a single attempt.
N = r"[0-9]{1,9}+(?:[.,][0-9]{1,4}+)?+"  # a number; Russian decimal comma allowed
INT = r"[0-9]{1,9}+"
AMT = (r"[0-9]{1,9}+(?:[.,][0-9]{1,4}+)?+(?:\s?(?:k|к|m|тыс(?:яч(?:а|и|ах|ами)?)?\.?|млн\.?|миллион(?:а|ов|ах|ами)?|"
       r"thousands?|"
       r"millions?)(?!\w))?")
# "50 000" as Russians write it (dataset sizes); never a leading 0 ("0 512" is two numbers)
THOUSANDS = r"[1-9][0-9]{0,2}(?:[ \u00a0\u202f][0-9]{3})+(?![0-9])"
SEP = r"[\s_\-]*"
MUL = r"[x×х*]"  # Latin x, the multiplication sign, Cyrillic х
TOKW = r"(?:tokens?|tok|токен\w*)"
# a dataset's kind before its noun: "5k preference pairs", "10k comparison pairs", "20k chosen/rejected pairs"
EXW = (r"(?:(?:(?:preference|comparison|chosen[\s/\-]*rejected|training|labell?ed)\s+)?"
       r"(?:examples?|samples?|rows|records|dialog(?:ue)?s?|conversations?|instructions?|pairs)|"
       r"пример\w*|сэмпл\w*|диалог\w*|строк\w*|запис\w*|инструкц\w*|пар\b)")
EPW = r"(?:epochs?|эпох\w*|ep|эп)"
DATAW = r"dataset|датасет\w*|набор\w*\s+данных|corpus|корпус\w*"
KVT = r"(?:fp8|int8|int4|bf16|fp16|q8_0|q4_0|8[\s\-_]*bit|4[\s\-_]*bit)"
GC = (r"(?:grad(?:ient)?s?[\s_\-]*(?:ckpt|checkpoint(?:ing|s)?)|activation[\s_\-]*(?:ckpt|checkpoint(?:ing)?|"
      r"recomput\w*)|checkpointing|recompute|(?:градиентн\w*\s+)?чекпо[иий]нт\w*|gc)")
FA = r"(?:flash[\s_\-]*(?:attn|attention)(?:[\s_\-]*[0-9])?|flash|fa[23]|sdpa)"
FCE = (r"(?:(?:fused|chunked)[\s_\-]*(?:ce|cross[\s_\-]*entropy|loss)|cut[\s_\-]*cross[\s_\-]*entropy|cce|"
       r"liger(?:[\s_\-]*kernels?)?|unsloth)")
PACK = (r"(?:(?:sample|sequence)[\s_\-]*packing|packing|packed|padding[\s_\-]*free|упаковк\w*|упакованн\w*|"
        r"пакинг\w*)")
OFF = r"(?:offload\w*|оффлоад\w*|выгрузк\w*)"
TI = r"(?:[qkvo]|gate|up|down)(?:_proj)?"
NO = r"(?:no|without|disable|без)[\s_\-]+"
# Inference: the prompt (prefilled at once) and the tokens generated after it ("input 1k output 2k", "ISL/OSL").
PROMPTW = (r"(?:(?:prompt|input)(?:[\s_\-]*(?:len(?:gth)?|tokens?|size))?|isl|входн\w*(?:\s+(?:токен\w*|контекст\w*|"
           r"текст\w*|данн\w*))?|вход|промпт\w*|на\s+входе)")
OUTPUTW = (r"(?:output(?:[\s_\-]*(?:len(?:gth)?|tokens?|size))?|osl|(?:max[\s_\-]*)?new[\s_\-]*tokens|"
           r"(?:(?:each|every|an?)\s+)?(?:answers?|responses?|completions?|replies|reply)"
           r"(?:[\s_\-]*(?:len(?:gth)?|size|of))?|"
           r"выходн\w*(?:\s+токен\w*)?|выход|ответ\w*|на\s+выходе|генераци\w*\s+(?:до\s+)?)")


def _card_gb(group: str) -> str:
    """A card's memory, the number in `group`, with what it is of: "24GB", "80 ГБ", "16 GB VRAM", "24 ГБ памяти"."""
    return (rf"(?P<{group}>[0-9]{{1,3}}+)\s*(?:gb|гб|gib|гиб)(?!\w)(?:\s+(?:of\s+)?(?:vram|gpus?|cards?|карт\w*|"
            r"видеокарт\w*|видеопамят\w*|памяти))?")


def _gpu_pattern() -> str:
    """Every catalog spelling of a card (memory left to an optional suffix), longest first."""
    names: set[str] = set()
    for gpu in GPUS:
        for alias in (*gpu.aliases, gpu.name):
            toks = [t for t in re.split(r"[\s_\-/]+", alias.lower()) if t and not re.fullmatch(r"[0-9]+gb", t)]
            if toks:
                names.add(SEP.join(re.escape(t) for t in toks))
    alts = "|".join(sorted(names, key=len, reverse=True))
    # a card's memory said bare after its name ("A100 80"): only the sizes cards come in, and never a number that
    # has its own unit ("A100 80 users", "H100 24 часа")
    sizes = "|".join(sorted({f"{g.memory_gb:g}" for g in GPUS}, key=len, reverse=True))
    bare = (rf"\s+(?:{sizes})(?![0-9.,])(?!\s*(?:[xх×*]|gpus?|cards?|карт|гпу|users?|пользоват|concurren|"
            r"одновремен|parallel|параллел|час|hours?|h(?!\w)|ч(?!\w)|min|мин|rps|rpm|req|запрос|k(?!\w)|к(?!\w)|"
            r"b(?!\w)|б(?!\w)|tok|ток|ms|мс|s(?!\w)|с(?!\w)|sec|сек|%|epoch|эпох|ep(?!\w)|эп(?!\w)|example|пример|"
            r"sample|шт|штук|x(?!\w)|раз))")
    # a Russian ending on the card's number: "на 4090-ой", "две 3090-ые", "на 3090-х"
    ending = r"(?:-(?:ая|ой|ую|ий|ый|ые|ых|ыми|ом|х|й|ка|ки|ке|ку))?"
    return (rf"(?:(?:nvidia|geforce|tesla|тесла|amd|instinct|quadro)[\s_\-]*)*(?:{alts})"
            rf"(?:[\s_\-]*(?:sxm[0-9]?|pcie|nvl|hbm[0-9]e?|[0-9]{{1,3}}[\s_\-]*(?:gb|гб|g))|{bare})*{ending}"
            rf"(?:['\u2019]?s(?!\w))?")


GPU = _gpu_pattern()

Handler = Callable[[re.Match[str]], dict[str, Any]]


class Bad(Exception):
    """Raised by a rule handler: the fragment was recognised as something but its value is wrong."""

    def __init__(self, reason: Msg, options: tuple[str, ...] = ()) -> None:
        super().__init__(reason.key)
        self.reason = reason
        self.options = options  # what the fragment could be instead (a family's models), for the user to pick


def _const(**fields: Any) -> Handler:
    return lambda m: dict(fields)


def _field(field: str, *groups: str, kilo: int = 1000, **extra: Any) -> Handler:
    """A handler that reads a number from the first present group into `field` (range-checked)."""
    def handle(m: re.Match[str]) -> dict[str, Any]:
        raw = m.group(groups[0])
        for g in groups[1:]:
            raw = raw or m.group(g)
        value = _amount(raw, kilo)
        reason = check_range(field, value)
        if reason:
            raise Bad(reason)
        return {field: round(value) if field in _INT_FIELDS else value, **extra}
    return handle


_SIZE_FIELD = _field("params_b", "sz_n")
_PROMPT_IN = _field("prompt_len", "io_p", kilo=1024)
_OUTPUT_OUT = _field("output_len", "io_o", kilo=1024)


def _size(m: re.Match[str]) -> dict[str, Any]:
    out = _SIZE_FIELD(m)
    return {"params_b": out["params_b"]}


def _size_range(m: re.Match[str]) -> dict[str, Any]:
    """"30-70B", "7–13B", "от 7 до 13B": sized for the largest (what fits it fits every size below), the smallest
    kept to be said back."""
    sizes = sorted(_number(m.group(g)) for g in ("sr_a", "sr_b"))
    for value in sizes:
        reason = check_range("params_b", value)
        if reason:
            raise Bad(reason)
    if sizes[0] == sizes[1]:
        return {"params_b": sizes[1]}
    return {"params_b": sizes[1], "params_min_b": sizes[0]}


def _moe(m: re.Match[str]) -> dict[str, Any]:
    experts = int(m.group("moe_e"))
    params = _number(m.group("moe_p"))
    for field, value in (("experts", experts), ("params_b", params)):
        reason = check_range(field, value)
        if reason:
            raise Bad(reason)
    return {"experts": experts, "params_b": params}


# The catalogs' lookups normalise their input with several regex passes; a phrase names the same few cards and
# models again and again (keystroke by keystroke), so the answers are remembered.
_gpu_named_as = lru_cache(maxsize=1024)(find_gpu)
_gpus_named_as = lru_cache(maxsize=1024)(resolve_gpus)
_model_named_as = find_model  # memoised by `core.models` itself


_CARD_ENDING = re.compile(r"-[а-яё]{1,3}$")  # "4090-ой": the card's number with a Russian ending (`_gpu_pattern`)


def _gpu_named(name_group: str, count_group: str | None) -> Handler:
    count = _field("gpus", count_group) if count_group else None

    def handle(m: re.Match[str]) -> dict[str, Any]:
        name = _CARD_ENDING.sub("", m.group(name_group))
        gpu = _gpu_named_as(name)
        if gpu is None and (one := singular(name)) is not None:  # a plural: "8 H100s", "two A100's"
            name = one
            gpu = _gpu_named_as(name)
        if gpu is None:
            raise Bad(msg("parse_gpu_unknown"))
        out: dict[str, Any] = {"gpu": gpu.id}
        family = _gpus_named_as(name)
        if len(family) > 1:  # a family name covers its variants (issue 10): "on H100" is SXM, PCIe and NVL
            out["gpu_family"] = tuple(g.id for g in family)
        if count is not None:
            out.update(count(m))
        return out
    return handle


# Russian spellings in any case ("ламы", "квена") -> the Latin family name
_FAMILIES = (("лл", "llama"), ("лам", "llama"), ("квен", "qwen"), ("мистрал", "mistral"), ("микстрал", "mixtral"),
             ("гемм", "gemma"), ("дипсик", "deepseek"), ("фи", "phi"), ("гигачат", "gigachat"),
             ("яндекс", "yandexgpt"), ("сайг", "saiga"), ("вихр", "vikhr"))
_CYRILLIC_FAMILY = r"лл?ам\w*|квен\w*|мистрал\w*|микстрал\w*|гемм\w*|дипсик\w*|гигачат\w*|сайг\w*|вихр\w*"

# Words that cannot begin a model name even though a catalog name begins with them (they are ordinary words).
# "seed" is a training seed ("seed 42") unless "oss" follows it (`_MODEL_RX`: Seed-OSS)
_NOT_FAMILIES = frozenset({"open", "micro", "meta", "nous", "r", "t", "c", "a", "model", "seed"})
# Words of catalog names that the phrase grammar reads itself when they stand alone (a quantisation, a method, a
# training objective: "llama 3 8b dpo lora" is DPO, the checkpoint "llama-3-8b-dpo" keeps its name).
_NOT_NAME_WORDS = frozenset({"lora", "qlora", "inference", "full", "gptq", "awq", "int4", "int8", "fp8", "fp16",
                             "bf16", "gguf", "bnb", "4bit", "8bit", "nf4", "mlx", "exl2", "w4a16", "w8a8", "ctx",
                             "sft", "dpo", "ipo", "orpo", "simpo", "cpo", "kto"})


def _model_vocabulary() -> tuple[set[str], set[str]]:
    """(family words, name words) of the catalog.

    A model name starts with a family word ("qwen", "deepseek", "gigachat", "saiga"...): the alphabetic head of the
    first word of any catalog name or alias, or the whole word ("c4ai"). Joined by - _ . it runs on freely
    ("DeepSeek-R1-Distill-Qwen-32B"); after a space it continues only with a size ("32b", "8x22b", "a3b"), a version
    before more of the name ("llama 3.3 70b"), or a word that occurs in catalog names ("instruct", "vision", "air").
    """
    from core.models import FINETUNE_PREFIXES, MODELS

    heads: set[str] = set(FINETUNE_PREFIXES)
    words: set[str] = set()
    for arch in MODELS:
        for alias in (arch.name, *arch.aliases):
            toks = [t for t in re.split(r"[\s_\-/:]+", alias.lower().rsplit("/", 1)[-1]) if t]
            if not toks:
                continue
            head = re.match(r"[a-z]+", toks[0])
            if head and len(head.group(0)) >= 2:
                heads.add(head.group(0))
            if re.fullmatch(r"[a-z][a-z0-9]+", toks[0]) and sum(ch.isalpha() for ch in toks[0]) >= 2:
                heads.add(toks[0])
            for t in toks[1:]:
                if re.fullmatch(r"[a-z][a-z0-9.]*", t) and len(t) >= 2:
                    words.add(t.rstrip("."))
    return heads - _NOT_FAMILIES - _NOT_NAME_WORDS, words - _NOT_NAME_WORDS


def _alternation(words: set[str]) -> str:
    return "|".join(re.escape(x) for x in sorted(words, key=len, reverse=True))


_CATALOG_HEADS, _CATALOG_WORDS = _model_vocabulary()
_FAMILY_WORDS, _NAME_WORDS = _alternation(_CATALOG_HEADS), _alternation(_CATALOG_WORDS)
# "13В": a Cyrillic capital В typed for the Latin B, glued to its number (a spaced "в" is the preposition "in")
_MSIZE = r"(?:[0-9]{1,3}x)?[0-9]{1,4}(?:\.[0-9]{1,2})?(?:\s?[bб]|в)(?!\w)|a[0-9]{1,3}(?:\.[0-9])?b(?!\w)"
_MSIZE += r"|[0-9]{2,3}\s?m(?!\w)"  # millions: "smollm2 135m", "gemma 3 270m"
# a context length that is part of a name ("phi3 mini 128k"); `_model` leaves it to the context rule when the name
# with it is no catalog model ("llama 3 8b 128k")
_MSIZE += r"|[0-9]{1,3}k(?!\w)"
_MVER = r"v?[0-9]{1,2}(?:\.[0-9]{1,2})?"
_MJOINED = r"(?:[\-_.:][a-z0-9]+)*"  # ":" joins an Ollama tag ("qwen3:30b-a3b", "llama3.1:70b-instruct-q4_K_M")
# a spaced part: a size, a name word, a version followed by more name, or a version right after a bare family
# a release date, YYMM or MMDD ("2409", "2507", "0905"); a context length taken for one ("llama 8b 4096") makes the
# name unknown, and `_model` then keeps the leading part that names a model
_MDATE = r"[0-9]{4}(?![\w.,])"
# what a bare number after a name must not be followed by to belong to it ("phi 4" yes, "llama 8b 4 gpus" no)
_MUNIT = (r"(?![0-9.])(?!в(?!\w))(?!\s*(?:[xх×*]|gpus?|cards?|карт\w*|гпу|users?|пользоват\w*|bit|бит\w*|"
          r"b(?!\w)|б(?!\w)|bn(?!\w)|billion|миллиард|млрд|"
          r"k(?!\w)|к(?!\w)|тыс|token|токен|epoch|эпох|examples?|пример|ctx|контекст))")
# a size may carry its experts or active parameters joined on: "17b-16e", "30b-a3b"
_MSIZE_MOE = r"(?:[\s\-_/](?:[0-9]{1,3}e|a[0-9]{1,3}(?:\.[0-9])?b)(?!\w))?"
# Russian words inside a name, read as the catalog's Latin ones by `_latin_family`
_RU_NAME_WORDS = ((re.compile(r"дистил\w*"), "distill"), (re.compile(r"немо"), "nemo"),
                  (re.compile(r"лардж"), "large"), (re.compile(r"смолл?"), "small"), (re.compile(r"кодер\w*"), "coder"),
                  (re.compile(r"р1(?![0-9])"), "r1"))  # "дипсик р1": a Cyrillic "р"
_RU_NAME_RX = "|".join(word.pattern for word, _ in _RU_NAME_WORDS)
_MPART = (rf"(?:(?:{_MSIZE}){_MSIZE_MOE}|{_RU_NAME_RX}|{_MDATE}|(?:{_NAME_WORDS})(?!\w){_MJOINED}|"
          rf"(?:{_CYRILLIC_FAMILY}){_MJOINED}|{_MVER}{_MUNIT}{_MJOINED})")
# "r1" names DeepSeek's model before "distill" or a size ("r1 70b"); alone it is a LoRA rank
_R1 = r"r1[\s\-_]distill|r1(?=[\s\-_:]+[0-9]{1,3}(?:\.[0-9])?\s?[bб](?!\w))"
_MODEL_RX = (rf"(?:meta[\s_\-]?)?(?:{_R1}|command[\s_\-]*(?:r\+?|a)(?![\w+])|t[\-_\s]?(?:pro|lite)|"
             rf"gpt[\s_\-]*oss|seed[\s_\-]*oss|(?:{_FAMILY_WORDS})[0-9.]*|{_CYRILLIC_FAMILY}){_MJOINED}\+?(?:\s+{_MPART})*")
# "org/name"; not a pair of words the grammar reads itself ("lora/qlora", "fp8/int4": either, a contradiction)
_GRAMMAR_WORD = "|".join(sorted(_NOT_NAME_WORDS | {"ft", "finetune", "fine-tune"}, key=len, reverse=True))
# nor an amount per unit of time or card ("$1/h", "0.5/gpu-hour"): a price, not a repository
_PER_UNIT = r"[0-9]+(?:[.,][0-9]+)?/(?:h|hrs?|hours?|mo|months?|d|days?|gpu(?:-?h|-?hours?)?)(?![\w.\-])"
_HUB_RX = (rf"(?!(?:{_GRAMMAR_WORD})/)(?!{_PER_UNIT})[a-z0-9][\w.\-]*/(?!(?:{_GRAMMAR_WORD})(?![\w.\-]))"
           rf"[a-z0-9][\w.\-]*")


def _latin_family(text: str) -> str:
    """'квен 32б' -> 'qwen 32b', 'дипсик' -> 'deepseek': a Russian spelling of a family and a Cyrillic size
    letter read as the catalog's Latin ones."""
    text = re.sub(r"([0-9])(?:\s?б|в)(?![а-яё\w])", r"\1b", text)
    for word, latin in _RU_NAME_WORDS:
        text = word.sub(latin, text)
    # each family word, the first and any later one ("сайга ллама3 8b": a fine-tune named after its base)
    return " ".join(_latin_word(word) for word in text.split(" ")).strip()


def _latin_word(word: str) -> str:
    family = next((latin for prefix, latin in _FAMILIES if word.startswith(prefix)), None)
    return word if family is None else (family + " " + re.sub(r"^[а-яё]+", "", word)).strip()


# How many of a family's models a "which one?" names before "and N more"
FAMILY_SHOWN = 6


def family_choice(members: Sequence[Arch]) -> dict[str, Any]:
    """The values of a "which of the family?" message: the first models by name, how many more, and one of those
    shown as the example."""
    shown: list[Any] = [a.name for a in members[:FAMILY_SHOWN]]
    if len(members) > FAMILY_SHOWN:
        shown.append(msg("model_family_more", n=len(members) - FAMILY_SHOWN))
    return {"members": Joined(tuple(shown)), "example": typical_member(tuple(members[:FAMILY_SHOWN])).name}


def _unknown_model(name: str) -> Bad:
    """A name that is no catalog model: a family said without its size ("qwen3", "llama 3") is asked which of its
    models; anything else gets the closest names."""
    latin = _latin_family(name)
    members = family_members(latin)
    if len(members) > 1:
        return Bad(msg("parse_model_family", **family_choice(members)),
                   options=tuple(a.name for a in members[:FAMILY_SHOWN]))
    close = [members[0].name] if members else did_you_mean(latin)
    return Bad(msg("parse_model_unknown_close", close=", ".join(close)) if close else msg("parse_model_unknown"))


# A repository named after its quantisation ("…-GPTQ-Int4", "…-AWQ", "…-FP8", "…-bnb-4bit", "…-GGUF").
_NAME_QUANTS: tuple[tuple[re.Pattern[str], Quant], ...] = (
    (re.compile(r"gptq[\-_]?(?:int)?8|gptq.*8[\-_]?bit"), Quant.GPTQ_INT8), (re.compile(r"gptq"), Quant.GPTQ_INT4),
    (re.compile(r"awq"), Quant.AWQ), (re.compile(r"mxfp4"), Quant.MXFP4), (re.compile(r"fp8"), Quant.FP8),
    (re.compile(r"bnb[\-_]?8bit|8bit"), Quant.INT8), (re.compile(r"bnb|4bit|nf4"), Quant.NF4),
    (re.compile(r"gguf"), Quant.Q4_K_M),
)


def quant_in_name(name: str) -> Quant | None:
    """The quantisation a repository name states, if any ('Qwen2.5-7B-Instruct-GPTQ-Int4' -> gptq-int4).
    Memoised: eight searches per name, and a phrase names the same model keystroke after keystroke; the catalog's
    spellings are answered ahead (`warm_names`)."""
    return _QUANT_NAMED(name)


# A GGUF file's or an Ollama tag's quantisation type ("…-Q5_K_M.gguf", "llama3.1:8b-instruct-q8_0").
_NAME_GGUF = re.compile(rf"(?<![a-z0-9])({GGUF_TYPE})(?![a-z0-9])")
_GGUF_KNOWN = "Q2_K, Q3_K_M, Q4_0, Q4_K_S, Q4_K_M, Q5_K_S, Q5_K_M, Q6_K, Q8_0"


def _quant_in_name(name: str) -> Quant | None:
    low = name.lower()
    gguf = _NAME_GGUF.search(low)
    if gguf is not None:
        quant = _GGUF.get(gguf.group(1).replace("_", ""))
        if quant is None:  # a type the estimator has no size for ("IQ4_XS"): said so, not sized as 16-bit
            raise Bad(msg("parse_gguf_type", known=_GGUF_KNOWN))
        return quant
    return next((q for rx, q in _NAME_QUANTS if rx.search(low)), None)


# The catalog's own model spellings as a phrase reads them (lower-cased), answered by `warm_names`; other names
# memoised as asked.
_QUANT_NAMED: AheadMemo[Quant | None] = AheadMemo(_quant_in_name, 1024)


def _with_name_quant(name: str, out: dict[str, Any]) -> dict[str, Any]:
    quant = quant_in_name(name)
    if quant is not None:
        out["quant"] = quant
    return out


def _named(text: str, loose: bool = True) -> Any:
    arch = _model_named_as(text, loose)
    if arch is None:
        latin = _latin_family(text)  # "квен3" -> "qwen 3", "ллама 70б" -> "llama 70b"
        if latin != text:
            arch = _model_named_as(latin, loose)
    return arch


_SPACE_RUN = re.compile(r"\s+")


def _model(m: re.Match[str]) -> dict[str, Any]:
    """A model name. When the words after a space do not belong to it ("llama-3.1-8b 70B"), the longest leading
    part that names a model is taken and the scan resumes after it (`_end`). The name exactly as a catalog entry
    spells it wins ("kimi k2 0905"), then a family's words with a size only one of its models has ("deepseek r1
    distill 32b"); a shorter name beats one found only by dropping dates or release words
    ("llama-3.1-8b 4096 tokens" is a model and a length)."""
    text = m.group(0).rstrip()
    end = len(text)
    arch = _named(text, loose=False) or one_of_family(_latin_family(text))
    if arch is None and " " in text:
        cuts = [g.start() for g in _SPACE_RUN.finditer(text)]
        for cut in reversed(cuts):
            arch = _named(text[:cut], loose=False) or _named(text[:cut])
            if arch is not None:
                end = cut
                break
    if arch is None:
        arch = _named(text)
        end = len(text)
    if arch is None:
        raise _unknown_model(text)
    out = _with_name_quant(text[:end], {"model": arch.id})
    if end < len(text):
        out["_end"] = end
    return out


def _hub_model(m: re.Match[str]) -> dict[str, Any]:
    return _hub_model_named(m.group(0))


def _hub_model_named(repo: str) -> dict[str, Any]:
    """'org/name': the catalog's when it knows the repository's architecture, else a name for the Hub lookup."""
    arch = _model_named_as(repo)
    if arch is not None:
        return _with_name_quant(repo, {"model": arch.id})
    return _with_name_quant(repo, {"model": repo, "_hub": True})


_KV = {"8bit": "int8", "4bit": "int4", "q80": "q8_0", "q40": "q4_0"}


_SEPARATOR_CHARS = re.compile(r"[\s\-_]")


def _kv(group: str) -> Handler:
    # Each handler reads only its own rule's groups: the scanner that matched may not hold the other rules.
    def handle(m: re.Match[str]) -> dict[str, Any]:
        raw = _SEPARATOR_CHARS.sub("", m.group(group))
        return {"kv_dtype": _KV.get(raw, raw)}
    return handle


_GGUF = {"q4km": Quant.Q4_K_M, "q5km": Quant.Q5_K_M, "q6k": Quant.Q6_K, "q80": Quant.Q8_0, "q8": Quant.Q8_0,
         "q4": Quant.Q4_K_M, "q5": Quant.Q5_K_M, "q6": Quant.Q6_K,
         "q2k": Quant.Q2_K, "q3km": Quant.Q3_K_M, "q40": Quant.Q4_0, "q4ks": Quant.Q4_K_S, "q5ks": Quant.Q5_K_S}


def _gguf(m: re.Match[str]) -> dict[str, Any]:
    kind = m.group("gg_t")
    if not kind:
        return {"quant": Quant.Q4_K_M}
    quant = _GGUF.get(_SEPARATOR_CHARS.sub("", kind))
    if quant is None:
        raise Bad(msg("parse_gguf_type", known=_GGUF_KNOWN))
    return {"quant": quant}


def _targets(group: str) -> Handler:
    return lambda m: {"lora_targets": normalise_targets(m.group(group))}


_TP_COUNT = _field("gpus", "tp_n")


def _tp(m: re.Match[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"strategy": Strategy.TP}
    if m.group("tp_n"):
        out.update(_TP_COUNT(m))
    return out


def _noop(m: re.Match[str]) -> dict[str, Any]:
    return {"_note": msg("parse_noop")}


# "N tokens" with no word saying of what. In millions it is the data of a training run ("LoRA on 5M tokens": no
# one trains at a million-token context) and a context only when serving (Llama 4 Scout reads 10M), so the method
# decides once the whole phrase is read (`_Reading.settle_tokens`); fewer tokens are a context length.
_IN_MILLIONS = re.compile(r"(?:m|млн\.?|миллион(?:а|ов)?|millions?)$")
_SEQ_BARE = _field("seq_len", "sq_c", kilo=1024)
DATA_TOKENS_FROM = 1_000_000


def _bare_tokens(m: re.Match[str]) -> dict[str, Any]:
    raw = m.group("sq_c").strip()
    if _IN_MILLIONS.search(raw) or _amount(raw) >= DATA_TOKENS_FROM:
        return {"_tokens": raw}
    return _SEQ_BARE(m)


_DX_EXAMPLES, _DX_EPOCHS = _field("examples", "dx_n"), _field("epochs", "dx_e")
_ONE_NAMED = _gpu_named("g1_g", None)
_MEM_COUNT = _field("gpus", "mc_n")
_MEM_OF = _field("gpu_memory_gb", "mc_m")
_MEM_ONE = _field("gpu_memory_gb", "m1_m")
_MEM_WORDED = _field("gpu_memory_gb", "cw_q")
_ONE_WORD = r"одн(?:ой|у|а|ого|ом|им)|one|a\s+single|single"
_WORD_NAMED = _gpu_named("cw_g", None)
# GPU counts said in words ("on two H100", "на двух A100", "dual 4090"), as the phrase reads them (lower-cased, ё as е);
# `/subscribe` reads them too (bot/subscribe_query.py)
COUNT_WORDS = {"two": 2, "dual": 2, "three": 3, "four": 4, "quad": 4, "six": 6, "eight": 8,
                "два": 2, "две": 2, "двух": 2, "двум": 2, "двумя": 2, "три": 3, "трех": 3, "трем": 3, "тремя": 3,
                "четыре": 4, "четырех": 4, "четырем": 4, "четырьмя": 4, "шесть": 6, "шести": 6, "шестью": 6,
                "восемь": 8, "восьми": 8, "восьмью": 8, "восемью": 8,
                "pair": 2, "couple": 2, "пара": 2, "пары": 2, "паре": 2, "пару": 2, "парой": 2}
COUNT_WORD_RX = "|".join(sorted(COUNT_WORDS, key=len, reverse=True))


def _count_word(m: re.Match[str], group: str) -> int:
    return COUNT_WORDS[m.group(group)]

# Engine / framework names, both languages (`core.engines`): an inference engine also says "inference" (as the
# names did before they were engines), a training framework says "training". "deepspeed zero3" stays a strategy.
_ENGINE_WORDS: tuple[tuple[str, Engine], ...] = (
    (r"v[\s_\-]?llm|вллм", Engine.VLLM),
    (r"sg[\s_\-]?lang", Engine.SGLANG),
    (r"llama[\s_\-]?\.?[\s_\-]?cpp|llamacpp|ламаспп|лама[\s_\-]?цпп|llama[\s_\-]?(?:server|cli)", Engine.LLAMA_CPP),
    (r"ollama|оллама", Engine.OLLAMA),
    (r"tensor[\s_\-]?rt(?:[\s_\-]?llm)?|trt[\s_\-]?llm|trtllm|тензор[\s_\-]?рт", Engine.TENSORRT_LLM),
    (r"(?:hf|hugging[\s_\-]?face)[\s_\-]+(?:transformers|generate)|transformers(?:[\s_\-]+generate)?|"
     r"трансформерс\w*|hf[\s_\-]+generate", Engine.TRANSFORMERS),
    (r"unsloth|анслот\w*", Engine.UNSLOTH),
    (r"llama[\s_\-]?factory|ллама[\s_\-]?фактори|лама[\s_\-]?фактори", Engine.LLAMA_FACTORY),
    (r"axolotl|аксолотл\w*", Engine.AXOLOTL),
    (r"torch[\s_\-]?tune|торчтюн\w*", Engine.TORCHTUNE),
    (r"liger(?:[\s_\-]*kernels?)?|лайгер\w*|лигер\w*", Engine.LIGER),
    (r"deep[\s_\-]?speed(?![\s_\-]*(?:(?:zero|z)[\s_\-]*(?:stage[\s_\-]*)?|stage[\s_\-]*)[0-9])|дипспид\w*",
     Engine.DEEPSPEED),
    (r"(?:hf|hugging[\s_\-]?face)[\s_\-]*(?:trainer|peft|trl)(?:[\s_\-/+]*(?:peft|trainer|trl))?|peft|trl|"
     r"sft[\s_\-]?trainer", Engine.HF_PEFT),
)
_ENGINE_RX = "|".join(f"(?P<en_{i}>{rx})" for i, (rx, _) in enumerate(_ENGINE_WORDS))


def _engine(m: re.Match[str]) -> dict[str, Any]:
    for i, (_, engine) in enumerate(_ENGINE_WORDS):
        if m.group(f"en_{i}") is not None:
            if engine in INFERENCE_ENGINES:
                return {"engine": engine, "method": Method.INFERENCE}
            return {"engine": engine, "_training": True}
    return {}


# (name, pattern, handler). Order matters only between rules that can start at the same place: specific first.
# Models that are not language models, which people rent the same cards for: named, they are refused with why, not
# "not understood" (image: Stable Diffusion, FLUX, Kandinsky; video: Wan, HunyuanVideo; speech: Whisper; vision: YOLO)
_NOT_LLM = (r"(?:stable[\s_\-]*diffusion\w*|sdxl\w*|sd[\s_\-]?(?=[0-9])|flux|kandinsk\w*|кандинск\w*|"
            r"wan(?=[\s_\-]?2\.)|hunyuan[\s_\-]*video|whisper|yolo\w*)"
            r"(?:[\s_\-.]*v?[0-9]{1,2}(?:\.[0-9])?(?![\w.]))?"  # its release: "stable diffusion 3.5", "kandinsky 3"
            r"(?:[\s_\-]*(?:dev|schnell|pro|kontext|t2v|i2v|large|medium|small|base|tiny|turbo)"
            r"(?:[\s_\-]*v[0-9])?(?!\w))?")


def _not_llm(m: re.Match[str]) -> dict[str, Any]:
    raise Bad(msg("parse_not_llm"))


# Online reinforcement tuning samples answers while it trains: its memory holds a generation engine, groups of
# sampled answers and reward or value models (TRL's GRPOTrainer, RLOOTrainer, the experimental PPO and online DPO),
# so it is named and refused with why, never read as the fine-tune the user did not ask about.
_ONLINE_RL = (r"(?:online[\s_\-]*(?:dpo|ipo)|grpo|gspo|dapo|ppo|rloo|rlhf|rlaif|reinforce\+\+|"
              r"rl[\s_\-]*(?:with|from)[\s_\-]*(?:human|ai)[\s_\-]*feedback)(?![\w-])")


def _online_rl(m: re.Match[str]) -> dict[str, Any]:
    raise Bad(msg("parse_online_rl"))


# Offline preference objectives, sized (`core.objectives`): "DPO", "ORPO", "KTO", "SimPO", "IPO", "CPO"
_OBJECTIVE = r"(?P<obj_w>dpo|ipo|orpo|simpo|cpo|kto|дпо|орпо)(?![\w-])"
_CYRILLIC_OBJECTIVE = {"дпо": "dpo", "орпо": "orpo"}  # typed in Cyrillic by ear


def _objective(m: re.Match[str]) -> dict[str, Any]:
    word = m.group("obj_w")
    return {"objective": Objective(_CYRILLIC_OBJECTIVE.get(word, word))}


# TRL's `precompute_ref_log_probs=True` as its flag or in words: the reference's log-probs computed before training
_REF_PRECOMPUTED = (r"precompute[\s_\-]*ref(?:erence)?[\s_\-]*log[\s_\-]*probs?(?:\s*[=:]\s*true)?|"
                    r"precomputed[\s_\-]*ref(?:erence)?(?:[\s_\-]*(?:log[\s_\-]*probs?|logps))?|"
                    r"(?:пред(?:варительно[\s_\-]*)?(?:вычисл|посчита|рассчита)\w*)\s+(?:опорн\w*|референс\w*)"
                    r"(?:\s+(?:лог[\s_\-]*вероятност\w*|logprobs?|модел\w*))?")


# --- serving targets: a request rate, an answer speed -------------------------------------------------------------

# "1000 requests per minute", "10 rps", "500 запросов в час", "20 req/s": requests a second. The noun or the
# compact form is required: a bare "1000 requests" is that many at once (the `users` rule).
_SECONDS_IN = (("s", 1.0), ("sec", 1.0), ("second", 1.0), ("секунд", 1.0), ("сек", 1.0), ("с", 1.0),
               ("m", 60.0), ("min", 60.0), ("minute", 60.0), ("минут", 60.0), ("мин", 60.0), ("м", 60.0),
               ("h", 3600.0), ("hr", 3600.0), ("hour", 3600.0), ("час", 3600.0), ("ч", 3600.0),
               ("d", 86400.0), ("day", 86400.0), ("сут", 86400.0), ("день", 86400.0), ("дн", 86400.0))
_COMPACT_RATE = {"rps": 1.0, "qps": 1.0, "rpm": 60.0, "qpm": 60.0, "rph": 3600.0, "rpd": 86400.0}
_TIME_UNIT = (r"(?:seconds?|secs?|s|секунд\w*|сек|с|minutes?|mins?|m|минут\w*|мин|м|hours?|hrs?|h|час\w*|ч|days?|d|"
              r"сутк\w*|сут|сутки|день|дн\w*)")
_PER = r"(?:\s*/\s*|\s+(?:per|a|an|every|each|в|за)\s+)"
_REQW = r"(?:requests?|reqs?|quer(?:y|ies)|calls?|запрос\w*|обращени\w*|вызов\w*)"
# an answer speed: "30 tok/s", "50 tokens per second", "20 токенов в секунду", "40 t/s", "25 tps"
_TOKS = (rf"(?:(?:tokens?|toks?|t|токен\w*|ток|т){_PER}(?:seconds?|secs?|s|секунд\w*|сек|с)|tps|tokens?/sec)")
_AT_LEAST = (r"(?:(?:at\s+least|no\s+less\s+than|не\s+(?:меньше|менее|медленнее)|минимум|min(?:imum)?|от|>=|≥|"
             r"(?:generation\s+|answer\s+|output\s+)?speed(?:\s+of)?|скорост\w*(?:\s+(?:генераци\w*|ответ\w*|"
             r"вывода))?)\s*[=:]?\s*)")
_EACH = (r"(?:per\s+(?:user|request|stream|session|answer|person|sequence|chat)|each|for\s+each(?:\s+user)?|"
         r"на\s+(?:пользовател\w*|юзер\w*|запрос|каждого(?:\s+пользовател\w*)?|человека|поток|сесси\w*|ответ|чат)|"
         r"для\s+каждого(?:\s+пользовател\w*)?|каждому(?:\s+пользовател\w*)?)")
_TOTAL = (r"(?:total|in\s+total|overall|aggregate|throughput|combined|суммарн\w*|в\s+сумме|всего|"
          r"общ\w*(?:\s+скорост\w*)?|пропускн\w*(?:\s+способност\w*)?)")


def _seconds(unit: str) -> float:
    unit = unit.rstrip("s") if unit.isascii() and len(unit) > 2 else unit
    for prefix, seconds in _SECONDS_IN:
        if unit == prefix or (len(prefix) > 1 and unit.startswith(prefix)):
            return seconds
    return 1.0


def _checked(field: str, value: float) -> dict[str, Any]:
    """`{field: value}` once the value is in the field's range (`check_range`), else the reason why not."""
    reason = check_range(field, value)
    if reason:
        raise Bad(reason)
    return {field: value}


def _per_second(value: float, seconds: float) -> dict[str, Any]:
    return _checked("request_rate", value / seconds) | {"request_rate_unit": seconds}


def _per_token_ms(raw: str) -> dict[str, Any]:
    """A time per output token (TPOT, inter-token latency) is the answer speed it allows: 1000 / ms tokens a second."""
    ms = _number(raw)
    return _checked("answer_tps", 1000.0 / ms if ms > 0 else float("inf"))  # "0 ms": out of range, not a crash


def _ttft(m: re.Match[str]) -> dict[str, Any]:
    return _checked("ttft_s", _number(m.group("tf_n")) / (1000.0 if m.group("tf_u") in ("ms", "мс") else 1.0))


def _billions(m: re.Match[str]) -> dict[str, Any]:
    return _checked("dataset_tokens", round(_number(m.group("db_n")) * 1e9))


def _rate(m: re.Match[str]) -> dict[str, Any]:
    return _per_second(_amount(m.group("rq_n")), _seconds(m.group("rq_u")))


def _compact_rate(m: re.Match[str]) -> dict[str, Any]:
    return _per_second(_amount(m.group("rq_m")), _COMPACT_RATE[m.group("rq_v")])


# ZeRO's stage before its number: "zero-3", "deepspeed zero stage 3", "DeepSpeed stage 3" (its stages are DeepSpeed's)
_ZERO_STAGE = (r"(?:(?:(?:deepspeed|ds)[\s_\-]*)?(?:zero|z)[\s_\-]*(?:stage[\s_\-]*)?|"
               r"(?:deepspeed|ds)[\s_\-]*stage[\s_\-]*)")

_RULES: list[tuple[str, str, Handler]] = [
    ("not_llm", _NOT_LLM, _not_llm),
    ("online_rl", _ONLINE_RL, _online_rl),
    ("objective", _OBJECTIVE, _objective),
    ("ref_precomputed", _REF_PRECOMPUTED, _const(ref_precomputed=True)),
    ("engine", rf"(?:(?:on|via|with|using|in|под|на|через|в)\s+)?(?:{_ENGINE_RX})", _engine),
    ("rate", rf"(?P<rq_n>{AMT})\s*{_REQW}{_PER}(?P<rq_u>{_TIME_UNIT})", _rate),
    ("rate_compact", rf"(?P<rq_m>{AMT})\s*(?P<rq_v>rps|qps|rpm|qpm|rph|rpd)", _compact_rate),
    ("speed_total", rf"{_TOTAL}(?:\s+(?:скорост\w*|speed|rate|output))?\s*(?:of\s+)?[=:]?\s*(?P<tt_n>{AMT})\s*{_TOKS}",
     _field("total_tps", "tt_n")),
    ("speed_total2", rf"(?P<tt_m>{AMT})\s*{_TOKS}\s*(?:{_TOTAL}|on\s+all|for\s+all|на\s+всех)",
     _field("total_tps", "tt_m")),
    ("speed", rf"{_AT_LEAST}?(?P<ts_n>{AMT})\s*{_TOKS}(?:\s*{_EACH})?", _field("answer_tps", "ts_n")),
    # the same target as a time per token: "TPOT 40 ms", "ITL < 50ms", "50 ms per token", "30 мс на токен"
    ("tpot", rf"(?:tpot|itl|inter[\s_\-]?token[\s_\-]+latency|time[\s_\-]+per[\s_\-]+(?:output[\s_\-]+)?token)"
             rf"\s*(?:<=?|≤|under|below|of|=|:|до|не\s+(?:больше|более))?\s*(?P<tp_ms>{N})\s*(?:ms|мс)",
     lambda m: _per_token_ms(m.group("tp_ms"))),
    # the first token's deadline: "TTFT < 1s", "time to first token 500 ms", "первый токен за 2 с"
    ("ttft", rf"(?:ttft|time[\s_\-]+to[\s_\-]+first[\s_\-]+token|перв\w+\s+токен\w*)\s*(?:<=?|≤|under|below|within|"
             rf"of|=|:|до|за|через|меньше|менее|не\s+(?:больше|более|дольше))?\s*(?P<tf_n>{N})\s*(?P<tf_u>ms|мс|s|secs?|seconds?|"
             r"с|сек\w*|секунд\w*)", _ttft),
    ("tpot2", rf"(?P<tq_ms>{N})\s*(?:ms|мс)\s*(?:/|per|a|на|за)\s*(?:output\s+)?(?:tokens?|токен\w*|tok|ток)",
     lambda m: _per_token_ms(m.group("tq_ms"))),
    ("ds_x_ep", rf"(?P<dx_n>{AMT})\s*(?:{EXW}\s*)?{MUL}\s*(?P<dx_e>{N})\s*{EPW}",
     lambda m: {**_DX_EXAMPLES(m), **_DX_EPOCHS(m)}),
    ("examples", rf"(?P<ex_n>{THOUSANDS}|{AMT})\s*(?:(?:штук\w*|шт\.?)\s+)?{EXW}", _field("examples", "ex_n")),
    # billions of tokens are a dataset (pretraining scale), never a context or a model size: "10B tokens", "2 млрд"
    ("ds_billions", rf"(?:(?:{DATAW})\s*(?:of\s+|with\s+|из\s+|на\s+|в\s+|size\s+|размером\s+)?[=:]?\s*)?"
                    rf"(?P<db_n>{N})\s*(?:b|bn|billion|млрд\.?|миллиард\w*)\s*{TOKW}", _billions),
    # the data's size in tokens, said as such: "dataset 20M tokens", "1 млн токенов данных" (not a context length)
    ("ds_tokens", rf"(?:{DATAW})\s*(?:of\s+|with\s+|из\s+|на\s+|в\s+|size\s+|размером\s+)?[=:]?\s*"
                  rf"(?P<dt_a>{THOUSANDS}|{AMT})\s*{TOKW}", _field("dataset_tokens", "dt_a")),
    ("ds_tokens2", rf"(?P<dt_b>{THOUSANDS}|{AMT})\s*-?\s*{TOKW}\s*(?:of\s+)?(?:training\s+)?(?:{DATAW}|data|данных|"
                   r"обучающих\s+данных|текста|text)(?!\w)", _field("dataset_tokens", "dt_b")),
    ("examples2", rf"(?:dataset|датасет\w*|num[\s_]*examples)\s*(?:of\s+|из\s+|на\s+)?[=:]?\s*"
                  rf"(?P<ex_n2>{THOUSANDS}|{AMT})"
                  rf"(?:\s*{EXW})?", _field("examples", "ex_n2")),
    ("tpe", rf"(?:по\s+)?(?P<tp_a>{AMT})\s*{TOKW}\s*(?:per|each|/|на|в|за)?\s*(?:an?\s+|каждый\s+|один\s+)?"
            rf"(?:examples?|samples?|пример\w*|сэмпл\w*|dialog\w*|диалог\w*|records?|rows?)",
     _field("tokens_per_example", "tp_a")),
    ("tpe2", rf"(?:по|of|each)\s+(?P<tp_b>{AMT})\s*{TOKW}(?:\s+(?:each|каждый))?",
     _field("tokens_per_example", "tp_b")),
    ("tpe3", rf"(?P<tp_c>{AMT})\s*{TOKW}\s+(?:each|каждый)", _field("tokens_per_example", "tp_c")),
    ("tpe4", rf"(?:tokens?[\s_]*per[\s_]*(?:example|sample)|tokens_per_example|tpe|длин\w*\s+пример\w*)"
             rf"\s*[=:]?\s*(?P<tp_d>{AMT})(?:\s*{TOKW})?", _field("tokens_per_example", "tp_d")),
    ("tpe5", rf"(?:avg|average|mean|в\s+среднем|средн\w*)(?:\s+(?:length|len|длин\w*))?\s*(?:of\s+|по\s+)?[=:]?\s*"
             rf"(?P<tp_e>{AMT})(?!\s*(?:{TOKW}\s*)?in\s*[,;/]?\s*(?:and\s+|и\s+)?{AMT})(?:\s*{TOKW})?",
     _field("tokens_per_example", "tp_e")),  # not "avg 500 in / 200 out": a prompt and an answer (`in_out`)
    ("epochs", rf"(?P<ep_n>{N})\s*{EPW}", _field("epochs", "ep_n")),
    ("epochs2", rf"(?:epochs?|эпох\w*|num[\s_]*train[\s_]*epochs)\s*[=:]?\s*(?P<ep_n2>{N})",
     _field("epochs", "ep_n2")),
    ("moe", rf"(?P<moe_e>[0-9]{{1,3}})\s*{MUL}\s*(?P<moe_p>{N})\s*(?:b|bn|б|млрд\.?)"
            r"(?:\s*(?:params?|parameters?|параметр\w*))?", _moe),
    # "8 шт H100", "4 штуки A100", "на 2 штуках 4090", "H100 8 шт.", "8 pcs H100": pieces of a named card
    ("gpu_pieces", rf"(?P<gp_n>{INT})\s*(?:штук\w*|шт\.?|pcs\.?)\s+(?:(?:по|of)\s+)?(?P<gp_g>{GPU})",
     _gpu_named("gp_g", "gp_n")),
    ("pieces_after", rf"(?P<pa_g>{GPU})\s+(?P<pa_n>{INT})\s*(?:штук\w*|шт|pcs)(?!\w)\.?", _gpu_named("pa_g", "pa_n")),
    ("gpu_count", rf"(?P<gc_n>{INT})(?:\s*{MUL}\s*|\s+)(?P<gc_g>{GPU})", _gpu_named("gc_g", "gc_n")),
    ("gpu_times", rf"(?P<gx_g>{GPU})\s*{MUL}\s*(?P<gx_n>{INT})", _gpu_named("gx_g", "gx_n")),
    ("times_gpu", rf"{MUL}\s*(?P<xg_n>{INT})\s+(?P<xg_g>{GPU})", _gpu_named("xg_g", "xg_n")),  # "x2 A100"
    # "H100 8x", "A100 80GB 4×", as listings and chats write it; "8x7b" after a card is a model, not a count
    ("gpu_n_times", rf"(?P<gt_g>{GPU})\s+(?P<gt_n>{INT})\s*{MUL}(?![\w.])", _gpu_named("gt_g", "gt_n")),
    ("gpus", rf"(?P<gn_n>{INT})\s*(?:{MUL}\s*)?(?:gpus?|gpu's|гпу|карт(?!ин)\w*|видеокарт\w*|cards?|ускорител\w*|"
             r"devices?)", _field("gpus", "gn_n")),
    ("gpu", rf"(?P<gg>{GPU})", _gpu_named("gg", None)),
    # a card named by its memory, as the rental guides class them ("24 / 48 / 80 GB"): "on a 24GB GPU", "2 × 80 ГБ"
    ("mem_count", rf"(?P<mc_n>{INT})\s*{MUL}\s*{_card_gb('mc_m')}", lambda m: {**_MEM_COUNT(m), **_MEM_OF(m)}),
    ("mem_card", _card_gb("mg_m"), _field("gpu_memory_gb", "mg_m")),
    ("one_mem", rf"(?:{_ONE_WORD})\s+{_card_gb('m1_m')}", lambda m: {**_MEM_ONE(m), "gpus": 1}),
    ("count_word_mem", rf"(?P<cw_k>{COUNT_WORD_RX})\s+(?:of\s+)?{_card_gb('cw_q')}",
     lambda m: {**_MEM_WORDED(m), "gpus": _count_word(m, "cw_k")}),
    ("gpus2", r"(?:num[\s_]*gpus|n[\s_]*gpus|gpus?)\s*[=:]?\s*(?P<gn_m>[0-9]{1,3})", _field("gpus", "gn_m")),
    ("count_word_named", rf"(?P<cw_n>{COUNT_WORD_RX})\s+(?:of\s+)?(?P<cw_g>{GPU})",
     lambda m: {**_WORD_NAMED(m), "gpus": _count_word(m, "cw_n")}),
    ("count_word_gpus", rf"(?P<cw_m>{COUNT_WORD_RX})\s+(?:of\s+)?(?:gpus?|cards?|карт\w*|видеокарт\w*|гпу|"
                        r"ускорител\w*)",
     lambda m: {"gpus": _count_word(m, "cw_m")}),
    ("one_named", rf"(?:{_ONE_WORD})\s+(?P<g1_g>{GPU})",
     lambda m: {**_ONE_NAMED(m), "gpus": 1}),
    ("one_gpu", r"(?:one|a\s+single|single)[\s_\-]+(?:gpu|card|device)|одн(?:ой|у|а|ом|им)\s+(?:карт\w*|gpu|"
                r"видеокарт\w*|гпу)", _const(gpus=1)),
    ("users", rf"(?P<cc_n>{INT})\s*(?:concurrent(?:ly)?(?:\s+(?:users?|requests?|sequences?|sessions?|streams?|"
              r"chats?))?|simultaneous(?:\s+(?:users?|requests?|sequences?|sessions?))?|parallel\s+(?:users?|"
              r"requests?|sequences?|sessions?|streams?)|users?|requests?(?:\s+in\s+parallel)?|sequences?|"
              r"sessions?|streams?|пользовател\w*|юзер\w*|клиент\w*|одновременн\w*(?:\s+(?:запрос\w*|"
              r"пользовател\w*|сесси\w*|диалог\w*|чат\w*))?|параллельн\w*(?:\s+(?:запрос\w*|сесси\w*|поток\w*))?|"
              r"запрос\w*|сесси\w*|поток\w*|чат\w*|people|persons|developers?|engineers?|employees?|разработчик\w*|"
              r"человек|сотрудник\w*|программист\w*)", _field("concurrency", "cc_n")),
    # "a team of 20", "команда из 20 человек": that many people, each a user
    ("users_team", rf"(?:team|команд\w*)\s+(?:of|из)\s+(?P<ct_n>{INT})(?:\s+(?:people|persons|users?|человек|"
                   r"пользовател\w*|разработчик\w*|сотрудник\w*|инженер\w*|engineers?|developers?))?",
     _field("concurrency", "ct_n")),
    ("images", rf"(?P<im_n>{INT})\s*(?:images?|pictures?|photos?|screenshots?|изображени\w*|картин\w*|фото\w*|"
               r"скриншот\w*)(?:\s+(?:per|each|на|в)\s+(?:request|prompt|sequence|example|запрос\w*|пример\w*))?",
     _field("images", "im_n")),
    ("users2", rf"(?:concurrency|max[\s_\-]*num[\s_\-]*seqs|parallel|np|параллельно|одновременно)\s*[=:]?\s*"
               rf"(?P<cc_m>{INT})",
     _field("concurrency", "cc_m")),
    ("size_range", rf"(?:от\s+|from\s+)?(?P<sr_a>{N})\s*(?:b|bn|б|млрд\.?)?\s*(?:-|to|до|\.\.)\s*(?P<sr_b>{N})\s*"
                   r"(?:b|bn|б|billion|млрд\.?|миллиард\w*)(?!\w)(?:\s*(?:params?|parameters?|параметр\w*))?",
     _size_range),
    ("size", rf"(?P<sz_n>{N})(?:\s*(?:b|bn|б|billion|млрд\.?|миллиард\w*)|в(?!\w))"
             r"(?:\s*(?:params?|parameters?|параметр\w*))?",
     _size),
    # a Hugging Face page's address pasted whole: its repository ("https://huggingface.co/Qwen/Qwen2.5-7B/tree/main")
    ("hub_url", rf"(?:https?://)?(?:www\.)?(?:huggingface\.co|hf\.co)/(?P<hu_r>{_HUB_RX})(?:/[^\s,;]*)?",
     lambda m: {**_hub_model_named(m.group("hu_r")), "_hub_group": "hu_r"}),
    ("hub", _HUB_RX, _hub_model),
    ("model", _MODEL_RX, _model),
    ("kv", rf"(?:kv|кв)(?:[\s_\-]*(?:cache|кэш\w*|кеш\w*))?(?:[\s_\-]*(?:dtype|type|in|в))?\s*[=:]?\s*"
           rf"(?P<kv_t>{KVT})", _kv("kv_t")),
    ("kv2", rf"(?P<kv_t2>{KVT})\s*(?:kv|кв)(?:[\s_\-]*(?:cache|кэш\w*|кеш\w*))?", _kv("kv_t2")),
    ("kv3", rf"(?:кэш\w*|кеш\w*|cache)\s*(?:в\s+|in\s+)?(?P<kv_t3>{KVT})", _kv("kv_t3")),
    ("opt_paged", r"paged[\s_\-]*adam\w*(?:[\s_\-]*8[\s_\-]*bit)?|paged(?:[\s_\-]*optim\w*)?",
     _const(optimizer=Optimizer.PAGED_ADAMW_8BIT)),
    ("opt_8bit", r"adam\w*?[\s_\-]*8[\s_\-]*bit|8[\s_\-]*(?:bit|бит\w*)[\s_\-]*(?:adam\w*|адам\w*|optim\w*|"
                 r"оптимизатор\w*)|bnb[\s_\-]*adam\w*|adamw?[\s_\-]*bnb[\s_\-]*8[\s_\-]*bit",
     _const(optimizer=Optimizer.ADAMW_8BIT)),
    ("opt_adam", r"adam\w*|адам\w*", _const(optimizer=Optimizer.ADAMW)),
    ("opt_sgd", r"sgd(?:[\s_\-]*(?:with[\s_\-]*)?momentum)?", _const(optimizer=Optimizer.SGD)),
    ("gc_off", rf"{NO}{GC}|{GC}[\s_\-]*(?:=\s*)?(?:off|false|no|0|выкл\w*|нет)", _const(grad_ckpt=False)),
    ("gc_on", rf"{GC}(?:[\s_\-]*(?:=\s*)?(?:on|true|yes|1|вкл\w*|да))?", _const(grad_ckpt=True)),
    ("eager", rf"{NO}{FA}|eager(?:[\s_\-]*(?:attn|attention))?|(?:standard|vanilla|naive)[\s_\-]*attention",
     _const(attention=Attention.EAGER)),
    ("flash", FA, _const(attention=Attention.FLASH)),
    ("pack_off", rf"{NO}{PACK}|padd(?:ing|ed)(?![\s_\-]*free)(?:[\s_\-]*(?:to[\s_\-]*)?(?:longest|max(?:_length)?))?"
                 r"|паддинг\w*|дополнени\w*\s+до\s+(?:самого\s+)?длинн\w*", _const(packing=False)),
    ("pack_on", PACK, _const(packing=True)),
    ("ce_off", rf"{NO}{FCE}", _const(fused_ce=False)),
    ("ce_on", FCE, _const(fused_ce=True)),
    ("off_none", rf"{NO}(?:cpu[\s_\-]*)?{OFF}", _const(offload=Offload.NONE)),
    ("off_all", rf"(?:cpu[\s_\-]*)?{OFF}\s+(?:of\s+)?(?:all|everything|params?|parameters|weights|model|всего|все|"
                r"всё|весов|параметров)(?:\s+(?:to|на|в)\s+(?:cpu|ram|озу|цпу))?|(?:param(?:eter)?s?|weights?)"
                rf"[\s_\-]+{OFF}|zero[\s_\-]*infinity|nvme[\s_\-]*{OFF}|offload[\s_\-]*param\w*",
     _const(offload=Offload.ALL)),
    ("off_opt", rf"(?:cpu[\s_\-]*)?{OFF}(?:\s+(?:of\s+)?(?:the\s+)?(?:optimizer|optim|оптимизатор\w*))?"
                r"(?:\s+(?:to|на|в)\s+(?:cpu|ram|озу|цпу))?|(?:optimizer|optim)[\s_\-]+" + OFF,
     _const(offload=Offload.OPTIMIZER)),
    ("zero3", rf"{_ZERO_STAGE}3", _const(strategy=Strategy.ZERO3)),
    ("zero2", rf"{_ZERO_STAGE}2", _const(strategy=Strategy.ZERO2)),
    ("fsdp", r"fsdp[0-9]?(?:[\s_\-]*full[\s_\-]*shard\w*)?", _const(strategy=Strategy.FSDP)),
    ("ddp", r"ddp|(?:distributed[\s_\-]*)?data[\s_\-]*parallel\w*", _const(strategy=Strategy.DDP)),
    ("tp", r"(?:tp|tensor[\s_\-]*parallel\w*(?:[\s_\-]*size)?|тензорн\w*\s+параллел\w*)(?:\s*[=:]?\s*"
           r"(?P<tp_n>[0-9]{1,3}))?", _tp),
    ("q_dq", r"nf4[\s_\-+]*(?:dq|double[\s_\-]*quant\w*)|double[\s_\-]*quant\w*|двойн\w*\s+квантизац\w*",
     _const(quant=Quant.NF4_DQ)),
    ("q_nf4", r"nf4|(?:bnb|bitsandbytes)[\s_\-]*(?:nf)?4[\s_\-]*bit|(?:bnb|bitsandbytes)[\s_\-]*nf4",
     _const(quant=Quant.NF4)),
    ("q_gptq8", r"gptq[\s_\-]*(?:int8|8[\s_\-]*bit|w8\w*)", _const(quant=Quant.GPTQ_INT8)),
    ("q_gptq", r"gptq(?:[\s_\-]*(?:int4|4[\s_\-]*bit|w4\w*))?", _const(quant=Quant.GPTQ_INT4)),
    ("q_awq", r"awq(?:[\s_\-]*(?:int4|4[\s_\-]*bit|w4\w*))?", _const(quant=Quant.AWQ)),
    # a bare "q4" / "q5" / "q6" is the K-quant people mean by it: Ollama's default tags are Q4_K_M
    ("q_gguf", r"(?:gguf[\s_\-]*)?(?P<gg_t>q[2-6][\s_\-]?k(?:[\s_\-]?[msl])?|q[48][\s_\-]?0|q[4-8](?![\w.]))|gguf",
     _gguf),
    # Gemma 3's quantisation-aware-trained checkpoints are published as Q4_0 GGUF files
    # (https://huggingface.co/google/gemma-3-27b-it-qat-q4_0-gguf; Ollama's gemma3:27b-it-qat)
    ("q_qat", r"qat(?:[\s_\-]*(?:q4[\s_\-]?0|int4|4[\s_\-]*bit))?", _const(quant=Quant.Q4_0)),
    ("q_fp8", r"fp8|float8|e4m3", _const(quant=Quant.FP8)),
    ("q_int8", r"(?:(?:bnb|bitsandbytes)[\s_\-]*)?(?:int8|8[\s_\-]*bit|8[\s\-]*бит\w*)|llm\.int8|w8a16",
     _const(quant=Quant.INT8)),
    ("q_4bit", r"int4|4[\s_\-]*bit|4[\s\-]*бит\w*|w4a16|load[\s_\-]*in[\s_\-]*4[\s_\-]*bit(?:\s*=\s*true)?",
     _const(_four_bit=True)),
    ("q_none", rf"{NO}(?:quant\w*|квантизац\w*|квантован\w*)|unquantized|неквантован\w*", _const(quant=Quant.NONE)),
    # "quantized" with no bits said: 4-bit, as the GGUF, AWQ and GPTQ checkpoints people mean by it mostly are; it
    # only fills the quantisation in (an "8-bit quantized" says its own), and the answer's header says which it took
    ("q_some", r"quanti[sz]ed|квантован\w*|квантизованн\w*", _const(_quantized=True)),
    ("p_true", r"(?:pure|true)[\s_\-]*bf16|bf16[\s_\-]*(?:true|pure|only)|чист\w*\s+bf16",
     _const(precision=Precision.BF16_TRUE)),
    ("p_bf16", r"bf16(?:[\s_\-]*mixed)?|bfloat16|mixed[\s_\-]*precision|amp", _const(precision=Precision.BF16)),
    ("p_fp16", r"fp16|float16|half(?:[\s_\-]*precision)?", _const(precision=Precision.FP16)),
    ("p_fp32", r"fp32|float32|(?:full|single)[\s_\-]*precision|полн\w*\s+точност\w*", _const(precision=Precision.FP32)),
    ("single", r"single", _const(strategy=Strategy.SINGLE)),
    ("prompt", rf"{PROMPTW}\s*(?:of\s+|=|:)?\s*(?P<pr_a>{AMT})(?:\s*{TOKW})?", _field("prompt_len", "pr_a", kilo=1024)),
    # "1k in, 2k out" only as a pair: a lone "8k in bf16" stays a context length
    ("in_out", rf"(?P<io_p>{AMT})\s*(?:{TOKW}\s*)?in\s*[,;/]?\s*(?:and\s+|и\s+)?(?P<io_o>{AMT})\s*(?:{TOKW}\s*)?out"
               rf"(?:\s*{TOKW})?",
     lambda m: {**_PROMPT_IN(m), **_OUTPUT_OUT(m)}),
    ("prompt2", rf"(?P<pr_b>{AMT})\s*(?:{TOKW}\s*)?(?:(?:of\s+)?(?:prompts?|inputs?)|на\s+входе|входн\w*|"
                r"(?:в\s+)?промпт\w*)", _field("prompt_len", "pr_b", kilo=1024)),
    ("output", rf"{OUTPUTW}\s*(?:of\s+|=|:)?\s*(?P<ou_a>{AMT})(?:\s*{TOKW})?", _field("output_len", "ou_a", kilo=1024)),
    ("output3", rf"(?P<ou_c>{AMT})\s*-?\s*{TOKW}\s+(?:answers?|responses?|completions?|replies)",
     _field("output_len", "ou_c", kilo=1024)),  # "500-token answers"; "10k answers" alone may be a dataset
    ("output2", rf"(?P<ou_b>{AMT})\s*(?:{TOKW}\s*)?(?:(?:of\s+)?outputs?|new\s+tokens|generated|на\s+выходе|"
                r"выходн\w*|(?:в\s+)?ответ\w*)", _field("output_len", "ou_b", kilo=1024)),
    # llama.cpp's "-c 8192" / "--ctx-size" / "n_ctx" among them
    ("seq", r"(?:ctx[\s_\-]*size|n[\s_\-]*ctx|c(?=\s+[0-9]{3,7}(?![0-9.,]))|ctx|"
            r"context(?:[\s_\-]*(?:length|len|window|size))?|контекст\w*|окн\w*(?:\s+контекста)?|"
            r"seq(?:uence)?(?:[\s_\-]*len(?:gth)?)?|max[\s_\-]*(?:seq(?:uence)?[\s_\-]*)?len(?:gth)?|"
            r"max[\s_\-]*model[\s_\-]*len|cutoff[\s_\-]*len|max[\s_\-]*tokens|длин\w*(?:\s+(?:контекста|"
            rf"последовательност\w*))?|последовательност\w*)\s*(?:of\s+|в\s+|до\s+)?[=:]?\s*(?P<sq_a>{THOUSANDS}|{AMT})"
            rf"(?:\s*{TOKW})?", _field("seq_len", "sq_a", kilo=1024)),
    ("seq2", rf"(?P<sq_b>{THOUSANDS}|{AMT})\s*(?:{TOKW}\s*)?(?:of\s+)?"
             r"(?:ctx|context(?:[\s_\-]*(?:window|length|len|size))?|контекст\w*(?:\s+окн\w*)?|seq(?:uence)?"
             r"(?:[\s_\-]*len(?:gth)?)?|окн\w*)", _field("seq_len", "sq_b", kilo=1024)),
    ("seq3", rf"(?P<sq_c>{THOUSANDS}|{AMT})\s*{TOKW}", _bare_tokens),
    ("seq_k", r"(?P<sq_k>[0-9]{1,4}(?:[.,][0-9])?\s?(?:k|к))", _field("seq_len", "sq_k", kilo=1024)),
    ("batch", r"(?:bs|mbs|batch(?:[\s_\-]*size)?|micro[\s_\-]*batch(?:[\s_\-]*size)?|per[\s_\-]*device[\s_\-]*"
              r"(?:train[\s_\-]*)?batch[\s_\-]*size|батч\w*|размер\w*\s+батча|пакет\w*)\s*(?:of\s+|=|:)?\s*"
              rf"(?P<bs_n>{INT})", _field("batch", "bs_n")),
    # "р16": a Cyrillic "р" typed for the r, at a power of two as ranks are ("р40" looks like a P40 card, and
    # "дипсик р1" is read by the model rule, before this one)
    ("rank", rf"(?:r|rank|lora_r|lora_rank|ранг\w*|р(?=\s*[=:]?\s*(?:4|8|16|32|64|128|256|512)(?![0-9])))\s*[=:]?\s*"
             rf"(?P<rk_n>{INT})", _field("lora_rank", "rk_n")),
    ("targets", rf"(?:targets?|target[\s_\-]*modules|модул\w*)\s*[=:]?\s*(?P<tg_l>{TI}(?:\s*[,+/]\s*{TI})*|"
                r"all[\s_\-]*linear|all|qkvo|qkv|qv)", _targets("tg_l")),
    ("targets2", rf"(?P<tg_l2>{TI}(?:\s*[,+/]\s*{TI})+)", _targets("tg_l2")),
    ("t_all", r"all[\s_\-]*(?:linear|layers|modules|linears)|все\s+(?:линейные\s+)?(?:сло\w*|модул\w*|матриц\w*)",
     _const(lora_targets="all-linear")),
    ("t_attn", r"(?:attention|attn)(?:[\s_\-]*(?:layers|modules|projections))?[\s_\-]+only|only[\s_\-]+"
               r"(?:attention|attn)|только\s+(?:внимани\w*|attention|attn)", _const(lora_targets="q,k,v,o")),
    ("t_mlp", r"(?:mlp|ffn)[\s_\-]+only|only[\s_\-]+(?:mlp|ffn)|только\s+(?:mlp|ffn)",
     _const(lora_targets="gate,up,down")),
    ("noop", rf"(?:lora_)?alpha\s*[=:]?\s*{N}|(?:lora_)?dropout\s*[=:]?\s*[0-9]*\.?[0-9]+|"
             r"(?:lr|learning[\s_\-]*rate)\s*[=:]?\s*[0-9]*\.?[0-9]+(?:e-?[0-9]+)?|"
             r"warmup(?:[\s_\-]*(?:steps|ratio))?\s*[=:]?\s*[0-9]*\.?[0-9]+|seed\s*[=:]?\s*[0-9]+|"
             # "how long", "how many (cards)", "сколько карт": asked, answered by the estimate
             r"how\s+(?:long|many)|сколько\s+(?:(?:видео)?карт\w*|gpu|гпу|ускорител\w*)|"
             # an engine's flags that change neither memory nor speed here: vLLM's share of the card it may take,
             # the trainer's accumulation steps (the same micro-batch), llama.cpp's every layer on the GPU
             r"gpu[\s_\-]*memory[\s_\-]*utili[sz]ation\s*[=:]?\s*[0-9]*\.?[0-9]+|"
             r"grad(?:ient)?[\s_\-]*accum\w*(?:[\s_\-]*steps)?\s*[=:]?\s*[0-9]+|"
             r"(?:ngl|n[\s_\-]*gpu[\s_\-]*layers|gpu[\s_\-]*layers)\s*[=:]?\s*(?:99|[1-9][0-9]{2,})(?![0-9])", _noop),
    ("qlora", r"q[\s_\-]?lora|к?улор[аоуеыи]\w*|qлор[аоуеыи]\w*|кь?ю[\s_\-]?лор[аоуеыи]\w*",
     _const(method=Method.QLORA)),
    ("lora", r"(?:lora|лор[аоуеыи]\w*)(?:[\s_\-]*(?:adapters?|адаптер\w*|fine[\s_\-]*tun\w*|finetun\w*|"
             r"дообучени\w*|tuning|training))?", _const(method=Method.LORA)),
    ("full", r"full(?:[\s_\-]*param(?:eter)?s?)?(?:[\s_\-]*(?:fine[\s_\-]*tun\w*|finetun\w*|ft|sft|training|train|"
             r"tun\w*))?|fft|полн\w*(?:\s+(?:дообучени\w*|дообучить|дообучать|обучени\w*|обучить|"
             r"файн[\s_\-]?тюн\w*|fine[\s_\-]*tun\w*|finetun\w*|тюнинг\w*))?|"
             r"фулл?(?:[\s_\-]*(?:файн[\s_\-]?тюн\w*|тюн\w*|fine[\s_\-]*tun\w*|finetun\w*|ft|дообучени\w*))",
     _const(method=Method.FULL)),
    # training from scratch updates every weight: the memory of a full fine-tune
    ("scratch", r"from\s+scratch|с\s+нуля", _const(method=Method.FULL)),
    ("freeze", r"freeze(?:[\s_\-]*(?:tun\w*|training|fine[\s_\-]*tun\w*))?|frozen[\s_\-]*layers|заморозк\w*|"
               r"замораживан\w*", _const(method=Method.FREEZE)),
    # "серв" / "засервить" are serving; "сервер" (a server) is not
    ("inference", r"inferenc\w*|infer|serving|serve|(?:за)?серв(?:ить|им|лю)?(?!\w)|deploy\w*|host(?:ing)?|"
                  r"generation|generate|vllm|tgi|sglang|"
                  r"llama\.cpp|ollama|инференс\w*|инферен\w*|вывод\w*|генераци\w*|сервинг\w*|развер\w*|деплой\w*|"
                  r"захост\w*|хост\w*|обслужива\w*|обслужит\w*", _const(method=Method.INFERENCE)),
    # "run" / "запустить" / "поднять" mean serving unless a training method is named too ("run a LoRA")
    ("run", r"run(?:ning)?|запуст\w*|запуска\w*|подн(?:ять|им\w*)|покрутить", _const(_run=True)),
    ("training", r"(?:continued[\s_\-]+)?pre[\s_\-]?train\w*|предобуч\w*|претрейн\w*|"
                 r"fine[\s_\-]*tun\w*|finetun\w*|sft|train\w*|tuning|дообуч\w*|обуч\w*|файн[\s_\-]?тюн\w*|тренир\w*|"
                 r"тюнинг\w*|дотрен\w*|(?:за)?(?:файн[\s_\-]?)?тюн(?:ить|им|ю|ишь|ят|ил\w*|инг\w*)",
     _const(_training=True)),
]

def _first_chars(pattern: str) -> frozenset[str] | None:
    """The characters a match of `pattern` can start with, or None when that cannot be bounded.

    Python's `re` tries every branch of an alternation at every word start, and a branch that opens with a named
    group skips its cheap first-character test: with ~80 rules that was ~10 us per word. Knowing each rule's
    first characters lets the scan try only the rules that can start at the character in front of it.
    Reads the parse tree of the private `re._parser`; any surprise there only costs speed (None = any).
    """
    try:
        from re import _constants as c  # type: ignore[attr-defined]  # private: see the docstring
        from re import _parser as sre  # type: ignore[attr-defined]
        first, nullable = _first_of(sre.parse(pattern), c)
    except Exception:  # an unknown opcode or another Python's internals: fall back to trying the rule everywhere
        return None
    return None if first is None or nullable else frozenset(first)


def _first_of(items: Any, c: Any) -> tuple[set[str] | None, bool]:
    """(first characters, can match empty) of a sequence of parsed regex items."""
    out: set[str] = set()
    for op, av in items:
        if op is c.LITERAL:
            return out | {chr(av)}, False
        if op is c.IN:
            chars: set[str] = set()
            for kind, val in av:
                if kind is c.LITERAL:
                    chars.add(chr(val))
                elif kind is c.RANGE and val[1] - val[0] < 4096:
                    chars.update(chr(x) for x in range(val[0], val[1] + 1))
                else:  # a category or a negation: anything
                    return None, False
            return out | chars, False
        if op in (c.ASSERT, c.ASSERT_NOT, c.AT):
            continue  # zero-width: the next item decides
        if op is c.BRANCH:
            results = [_first_of(branch, c) for branch in av[1]]
            sub: tuple[set[str] | None, bool] = (None, False) if any(r[0] is None for r in results) else \
                (set().union(*(r[0] for r in results if r[0] is not None)), any(r[1] for r in results))
        elif op is c.SUBPATTERN:
            sub = _first_of(av[3], c)
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            first, nullable = _first_of(av[2], c)
            sub = (first, nullable or av[0] == 0)
        elif op is c.ATOMIC_GROUP:
            sub = _first_of(av, c)
        else:
            return None, False
        if sub[0] is None:
            return None, False
        out |= sub[0]
        if not sub[1]:
            return out, False
    return out, True


_RULE_FIRST = {name: _first_chars(pattern) for name, pattern, _ in _RULES}
_ANY_START = [name for name, first in _RULE_FIRST.items() if first is None]
_PATTERNS = {name: pattern for name, pattern, _ in _RULES}


@lru_cache(maxsize=256)
def _scanner(names: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"(?:" + "|".join(f"(?P<{n}>{_PATTERNS[n]})" for n in names) + r")(?!\w)")


_SCANNERS: dict[str, re.Pattern[str] | None] = {}
_UNSEEN = re.compile("")  # sentinel: a character not looked at yet


def _scanner_for(char: str) -> re.Pattern[str] | None:
    """The rules (in their order) that can start with `char`, compiled once on first use; None when no rule can."""
    scanner = _SCANNERS.get(char, _UNSEEN)
    if scanner is _UNSEEN:
        names = tuple(name for name, first in _RULE_FIRST.items() if first is None or char in first)
        scanner = _SCANNERS[char] = _scanner(names) if names else None
        if len(_SCANNERS) > 4096:  # arbitrary unicode input must not grow this without bound
            _SCANNERS.clear()
    return scanner


# The letters and digits phrases are written in (lower-cased as `_normalise` leaves them): their scanners are what
# `warm_up` compiles ahead of the first phrase.
WORD_START_CHARS = "0123456789abcdefghijklmnopqrstuvwxyz_абвгдежзийклмнопрстуфхцчшщъыьэюя"


def warm_up(chars: str = WORD_START_CHARS) -> int:
    """Compile the scanners of every character in `chars` now (a running bot's start-up), not on the first phrase
    that has a word starting with it: one scanner is one `re.compile` of the rules that can start there, ~1-25 ms
    each, which would otherwise land on some user's keystroke. Returns how many distinct scanners exist."""
    for char in chars:
        _scanner_for(char)
    return len({id(s) for s in _SCANNERS.values() if s is not None})


def warm_names() -> None:
    """Answer now what a phrase asks of the catalogs' own spellings, as the scan reads them (lower-cased): which card
    each card spelling names (and its family), and which quantisation each model spelling states (the models'
    names themselves: `core.models.warm_up`). ~1,500 spellings, milliseconds; first-time phrases that paste a
    catalog name then find it in a table instead of paying the normalising regex passes."""
    from core.models import catalog_spellings

    for gpu in GPUS:
        for alias in (gpu.id, gpu.name, *gpu.aliases):
            _gpu_named_as(_normalise(alias))
            _gpus_named_as(_normalise(alias))
    _QUANT_NAMED.fill((_normalise(name),) for name in catalog_spellings())


_WORD_START = re.compile(r"(?<![\w.])\w")
_HANDLERS: dict[str, Handler] = {name: handler for name, _, handler in _RULES}

# Words that carry no meaning for the estimate. The second part frames the product's own question ("does 70B QLoRA
# fit on one A100 80GB?", "влезет ли 70B в одну 4090?", "какая видеокарта нужна для ..."): asked as a question, a
# workload is still only the workload, and the answer says whether and where it fits.
_FILLER_WORDS = """
on with for the a an and using use via in of at to model models llm i we want need needs please x per gpu gpus
how much what do vram memory weights instruct base method mode by tokens token setup config is it
на с со для и в во по модель модели моделью мне нам нужно нужна нужен хочу надо сколько памяти видеопамяти х
через при под карта карте карту gpu токенов токена токены метод режим это как типа примерно около хватит
does can could will would which enough fit fits locally local my our there if be are possible
ли можно какая какой какие каких какую влезет влезут поместится поместятся уместится хватает мой моя мою моей
видеокарта видеокарты видеокарту видеокарте видеокарт локально понадобится потребуется требуется получится будет
cost costs price cheapest cheap cheaper minimum minimal best optimal recommended time take takes it's
dtype torch_dtype auto quantization m own home
свой своя свою своей своем дома видюха видюхи видюхе видюху карточка карточки карточке карточку
стоит стоить стоимость цена цену времени время займет займут уйдет самая самый самую самое дешевая дешевый дешевую
дешевле минимальная минимальный минимальную минимум лучшая лучший лучшую лучше оптимальная оптимальный подойдет
подойдут подходит чтобы чтоб час hour hourly у себя чем подскажите подскажи посоветуйте посоветуй реально вообще
свои своих своими данных данные needed required way s team команда команды из сервер сервера серверы server
avg average mean typical среднем средний средняя средней было была были быть
что чего what's whats ноутбук ноутбуке ноутбука ноутбуком laptop notebook
взять брать выбрать купить арендовать арендую снять аренду аренда аренде rent renting подешевле
потянет потянут пойдет пойдут штук штуки гпу card cards hardware requirement requirements врам запуск скорость
throughput часов видюхой ноут ноуте колаб колабе colab p99 about should lol free tier nvlink kv cache кэш кеш кэша
карты карт something that can could которая который которые может
better faster выгоднее выгодней быстрее compare сравни сравнить сравнение comparison
за течение ллм handle handles cope тянет тянут выдержит выдержат осилит осилят справится справятся
stock available availability now right any наличии есть сейчас
"""
# "70B LoRA or QLoRA": the words between two alternatives (the contradiction is what is then reported)
_ALTERNATIVE = frozenset({"or", "или", "либо", "vs", "vs.", "versus", "против"})
_CARD_FIELDS = frozenset({"gpu", "gpu_family", "gpus"})  # what a card fragment sets ("2x 4090")
_UNSAID = frozenset({"gpu_family", "request_rate_unit"})  # said with another field (the card, the rate), not alone
_AND = frozenset({"and", "и", "&"})
# a phrase that compares ("compare H100 and A100", "сравни 3090 и 4090"): its "and" between cards is an "or"
_COMPARES = re.compile(r"(?<!\w)(?:compar\w*|сравн\w*|versus|vs\.?|против)(?!\w)")
_FILLER = frozenset(_FILLER_WORDS.split()) | _ALTERNATIVE
_ARTICLE_BEFORE = re.compile(r"(?<!\w)(?:an?)\s+$", re.IGNORECASE)  # "or a 5090": one card, said by its article
_GAP_SPLIT = re.compile(r"[\s,;:()\[\]{}!?\"'«»|]+")
_SEPARATORS = re.compile(r"[\s,;:()\[\]{}!?\"'«»|.+&/-]*")
_HAS_ALNUM = re.compile(r"\w")
_NUMBER_ONLY = re.compile(r"[0-9]+(?:[.,][0-9]+)?")

_NUMBER_REASON = msg("parse_number_no_unit")
_PSEUDO_MEANING: dict[str, Msg] = {"_four_bit": msg("parse_four_bit"), "_quantized": msg("parse_quantized"),
                                   "_training": msg("parse_training"), "_run": msg("parse_run")}


_FOUR_BIT = frozenset({Quant.NF4, Quant.NF4_DQ, Quant.GPTQ_INT4, Quant.AWQ, Quant.Q4_K_M})


def _meaning(found: dict[str, Any]) -> Joined:
    """What one understood fragment set, in words (only needed for an error message)."""
    unit = found.get("request_rate_unit")
    return Joined(tuple(value if field == "_note" else _PSEUDO_MEANING.get(field) or describe(field, value, unit)
                        for field, value in found.items() if field not in _UNSAID))


def _one_reading(phrase: str) -> str:
    """One side of "A or B" once the other is dropped: without the "or" and the separators left between."""
    words = (w.strip("/") if _HAS_ALNUM.search(w) else w for w in phrase.split())  # "lora/" of "lora/qlora"
    return " ".join(w for w in words if w.lower() not in _ALTERNATIVE and _HAS_ALNUM.search(w))


def _negative(low: str, start: int) -> bool:
    return start > 0 and low[start - 1] in "-\u2212" and low[start].isdigit() and \
        (start == 1 or not low[start - 2].isalnum())


# A card typed in the Russian layout: "т4", "а100", "н100", "л40с", "ртх 4090" are T4, A100, H100, L40S, RTX 4090.
# Letter for letter, so every position still points at the user's spelling; a letter only when a card's digits
# follow it at once (the preposition "в 4 битах" is left alone).
_CYRILLIC_CARD = re.compile(r"(?<![\w])(?:(ртх|гтх)(\s?[0-9]{3,4})|([антлвн])([0-9]{1,4})(с?))(?![\w])")
_CARD_LETTERS = str.maketrans({"р": "r", "т": "t", "х": "x", "г": "g", "а": "a", "н": "h", "л": "l", "в": "b",
                               "с": "s"})


def _latin_card(m: re.Match[str]) -> str:
    return m.group(0).translate(_CARD_LETTERS)


def latin_cards(text: str) -> str:
    """`text` with the cards typed in the Russian layout ("а100", "т4", "ртх 4090") in Latin letters, as a phrase
    reads them; lower-cased, every position kept."""
    low = text.lower()
    return _CYRILLIC_CARD.sub(_latin_card, low) if _CYRILLIC_CARD.search(low) else low


def _fold(word: str) -> str:
    """A word as the vocabulary spells it: lower case, "ё" as "е"."""
    return word.lower().replace("ё", "е")


def _normalise(text: str) -> str:
    low = (_fold(text).replace("\u00a0", " ").replace("\u202f", " ")
           .replace("\u2013", "-").replace("\u2014", "-").replace("\u2011", "-"))
    return _CYRILLIC_CARD.sub(_latin_card, low) if _CYRILLIC_CARD.search(low) else low


# `WorkloadSpec(**fields)` without the keyword round trip: pydantic's public TypeAdapter, the same checks.
_new_spec: Callable[[dict[str, Any]], WorkloadSpec] = TypeAdapter(WorkloadSpec).validate_python


class _Reading:
    """One phrase being read: the fields understood so far, where each came from, and what could not be read."""

    __slots__ = ("bad", "card_end", "choices", "fields", "origin", "readings", "reasons", "shown", "spans",
                 "understood")

    def __init__(self, shown: str) -> None:
        self.shown = shown  # the user's spelling, at the positions of the normalised text
        self.fields: dict[str, Any] = {}
        self.origin: dict[str, str] = {}  # field -> the fragment that set it
        self.understood: list[str] = []
        self.readings: list[dict[str, Any]] = []  # what each understood fragment set: worded only if an error
        self.bad: list[str] = []
        self.reasons: dict[str, Msg] = {}
        self.spans: dict[str, tuple[int, int]] = {}  # understood fragment -> where it stands in the phrase
        # rejected fragment -> (label, phrase) for each reading it could have had: a family's models put in its place,
        # or either of two contradicting fragments dropped ("70B LoRA or QLoRA")
        self.choices: dict[str, list[tuple[str, str]]] = {}
        self.card_end: int | None = None  # where the last card said ends: the next may be its alternative

    def reject(self, fragment: str, reason: Msg | None) -> None:
        if fragment not in self.bad:
            self.bad.append(fragment)
        if reason:
            self.reasons.setdefault(fragment, reason)

    def leftovers(self, start: int, end: int) -> None:
        """The words between two understood fragments: separators and filler pass, anything else is rejected."""
        shown = self.shown
        if start >= end or _SEPARATORS.fullmatch(shown, start, end):
            return
        for word in _GAP_SPLIT.split(shown[start:end]):
            key = _fold(word).strip(".-")
            if not key or not _HAS_ALNUM.search(key) or key in _FILLER:
                continue
            self.reject(word, _NUMBER_REASON if _NUMBER_ONLY.fullmatch(key) else None)

    def take(self, m: re.Match[str], low: str) -> int:
        """Apply one rule's match; returns where reading goes on (a rule may use less than it matched)."""
        pos = m.end()
        fragment = self.shown[m.start():m.end()].strip()
        rule = m.lastgroup or ""
        if _negative(low, m.start()):  # "-7B": a sign, not a hyphen inside a name ("llama-3")
            self.reject("-" + fragment, msg("parse_negative"))
            return pos
        try:
            found = _HANDLERS[rule](m)
            if "_end" in found:  # the rule used less than it matched: read the rest with the other rules
                pos = m.start() + found.pop("_end")
                fragment = self.shown[m.start():pos].strip()
        except Bad as exc:
            self.reject(fragment, exc.reason)
            if exc.options:
                start, end = m.start(), pos
                self.choices.setdefault(fragment, [(name, self._phrase(start, end, name)) for name in exc.options])
            return pos
        except (ValueError, OverflowError):  # a number Python cannot read: say so, never crash
            self.reject(fragment, None)
            return pos
        fields = self.fields
        if "gpu" in fields and self._card_alternative(found, m.start()):
            self.take_alternative(found, fragment, m.start(), pos)
            return pos
        clash = None
        for f, v in found.items():
            if f in fields and fields[f] != v and (f[0] != "_" or f == "_tokens"):  # two sizes of tokens clash too
                clash = f
                break
        if clash is not None:
            earlier = self.origin[clash]
            self.reject(fragment, msg("parse_contradicts", fragment=earlier))
            if earlier in self.spans:  # either reading: without this fragment, or without the one it contradicts
                kept = _one_reading(self._phrase(m.start(), pos, ""))
                other = _one_reading(self._phrase(*self.spans[earlier], ""))
                self.choices.setdefault(fragment, [(kept[:60], kept), (other[:60], other)])
            return pos
        group = found.pop("_hub_group", None)  # the repository inside what matched (an address's path)
        if found.pop("_hub", False):  # keep the user's spelling of a Hub repository
            start, end = m.span(group) if group else m.span()
            found["model"] = self.shown[start:end].strip()
        for field, value in found.items():
            fields[field] = value
            self.origin[field] = fragment
        self.understood.append(fragment)
        self.readings.append(found)
        self.spans.setdefault(fragment, (m.start(), pos))
        if "gpu" in found:
            self.card_end = pos
        return pos

    def _card_alternative(self, found: dict[str, Any], start: int) -> bool:
        """Whether this card is said as an alternative to the card before it ("4090 or 5090", "A100/H100",
        "3090, 4090 или 5090", "3090 or do I need a 4090", "compare H100 and A100"): between them only separators,
        filler and an "or" word (an "and" when the phrase compares). The user asks about either card, as about a
        family's variants; "4090 and 5090" alone stays a contradiction (one of each is a configuration of its own)."""
        if self.card_end is None or "gpu" not in found or set(found) - _CARD_FIELDS:
            return False
        gap = _fold(self.shown[self.card_end:start])
        words = [w for w in _GAP_SPLIT.split(gap.replace("/", " / ")) if w]
        if not all(w in _ALTERNATIVE or w in _FILLER or w in _AND or w == "/" for w in words):
            return False
        said_apart = "gpus" in self.fields and self.origin.get("gpus") != self.origin["gpu"]  # "2 GPUs: …"
        if said_apart and found.get("gpus", self.fields["gpus"]) != self.fields["gpus"]:
            return False  # "2 GPUs: 4090 or 4x 5090": which count?
        either = any(w in _ALTERNATIVE or w == "/" for w in words) or ("," in gap and not words)
        return either or (any(w in _AND for w in words) and _COMPARES.search(self.shown.lower()) is not None)

    def take_alternative(self, found: dict[str, Any], fragment: str, start: int, end: int) -> None:
        """One more card to consider: its variants join the cards already named, the first card still leads. A count
        said once, before the first card, covers the cards listed after it bare ("8x A100 or H100", "8xA100/H100": 8 of
        either). Counts said with the cards that differ ("two 4090 or one A100", "two 4090s or a 5090", where the
        article is the count) are each among the counts every card is fitted at (1, 2, 4, 8), so the stated count
        goes: the answer lists both configurations, and the rest."""
        fields = self.fields
        with_cards = self.origin.get("gpus") == self.origin["gpu"]  # the count said with the first card, if any
        covers = with_cards and "gpus" not in found and not _ARTICLE_BEFORE.search(self.shown, 0, start)
        if fields.get("gpus") != found.get("gpus") and (with_cards or "gpus" not in fields) and not covers:
            fields.pop("gpus", None)
            self.origin.pop("gpus", None)
        named = fields.get("gpu_family") or (fields["gpu"],)
        more = found.get("gpu_family") or (found["gpu"],)
        fields["gpu_family"] = tuple(dict.fromkeys((*named, *more)))
        self.understood.append(fragment)
        self.readings.append({"gpu": found["gpu"]})
        self.spans.setdefault(fragment, (start, end))
        self.card_end = end

    def _phrase(self, start: int, end: int, instead: str) -> str:
        """The phrase with [start, end) replaced, spaces collapsed."""
        return " ".join((self.shown[:start] + " " + instead + " " + self.shown[end:]).split())

    def settle_four_bit(self) -> None:
        """"int4"/"4bit": NF4 when training (LoRA on a 4-bit base is QLoRA), a GPTQ 4-bit checkpoint for
        inference; a contradicting quantisation rejects it."""
        fields = self.fields
        method = fields.get("method")
        quant = Quant.GPTQ_INT4 if method in (None, Method.INFERENCE) else Quant.NF4
        said = fields.get("quant")
        if said is None:
            fields["quant"] = quant
        elif said not in _FOUR_BIT:
            fragment = self.origin["_four_bit"]
            if fragment in self.understood:  # it was taken as understood before the clash could be seen
                self.readings.pop(self.understood.index(fragment))
                self.understood.remove(fragment)
            self.reject(fragment, msg("parse_contradicts", fragment=self.origin["quant"]))
        if method == Method.LORA and fields.get("quant") in (Quant.NF4, Quant.NF4_DQ):
            fields["method"] = Method.QLORA

    def settle_family_size(self) -> None:
        """A family said without its size and the size said apart ("qlora 34b yi", "7b qwen"): the model "yi 34b"
        or "qwen 7b" would be read as."""
        size = self.fields["params_b"]
        for fragment in self.bad:
            if fragment not in self.choices:  # only a family asked "which one?"
                continue
            arch = _model_named_as(f"{_latin_family(_normalise(fragment))} {size:g}b")
            if arch is not None and abs(arch.params_b - size) <= 0.15 * size:
                self.bad.remove(fragment)
                self.reasons.pop(fragment, None)
                del self.choices[fragment]
                self.fields["model"] = arch.id
                self.origin["model"] = fragment
                self.understood.append(fragment)
                self.readings.append({"model": arch.id})
                return

    def settle_tokens(self, raw: str) -> None:
        """A bare "N tokens" in millions (`_bare_tokens`): the data's size when training, else a context length;
        range-checked and held against the same field said elsewhere, as any fragment is."""
        fields = self.fields
        training = fields.get("method") in TRAINING_METHODS or "_training" in fields
        field, kilo = ("dataset_tokens", 1000) if training else ("seq_len", 1024)
        fragment = self.origin.pop("_tokens")
        at = self.understood.index(fragment)
        value = _amount(raw, kilo)
        reason = check_range(field, value)
        if reason is None and field in fields and fields[field] != round(value):
            reason = msg("parse_contradicts", fragment=self.origin[field])
        if reason is not None:
            del self.understood[at], self.readings[at]
            self.reject(fragment, reason)
            return
        fields[field] = round(value)
        self.origin[field] = fragment
        self.readings[at] = {field: round(value)}

    def spec(self) -> WorkloadSpec:
        """The phrase's workload once every fragment was read, or the ParseError that says what was not."""
        fields = self.fields
        if fields.pop("_quantized", False) and "quant" not in fields and "_four_bit" not in fields:
            fields["_four_bit"], self.origin["_four_bit"] = True, self.origin["_quantized"]
        if fields.pop("_four_bit", False):
            self.settle_four_bit()
        tokens = fields.pop("_tokens", None)
        if tokens is not None:
            self.settle_tokens(tokens)
        if fields.pop("_training", False) and "method" not in fields:
            fields["training"] = True
        fields.pop("_note", None)
        if fields.pop("_run", False) and "method" not in fields:
            fields["method"] = Method.INFERENCE
        if "params_b" in fields and "model" not in fields:
            self.settle_family_size()
        if self.bad:
            # readings to offer only when one fragment is all that stands in the way
            choices = self.choices.get(self.bad[0], []) if len(self.bad) == 1 else []
            raise ParseError(self.understood, self.bad, meanings=[_meaning(r) for r in self.readings],
                             reasons=self.reasons, choices=choices)
        if not self.understood:
            raise ParseError(problem=msg("parse_describe"))
        try:
            return _new_spec(fields)
        except ValueError as exc:  # pydantic's ValidationError is a ValueError; ranges above should prevent it
            raise ParseError(self.understood, problem=msg("parse_out_of_range"),
                             meanings=[_meaning(r) for r in self.readings]) from exc


def parse_workload(text: str) -> WorkloadSpec:
    """Read a workload phrase. Raises `ParseError` (and nothing else) when any part of it cannot be read; one whose
    words are only misspelt ("lamma 3 8b lroa") offers the phrase put right as its one reading."""
    try:
        return _read(text)
    except ParseError as err:
        # something of a workload read already: a lone unknown word ("null", "page") is no misspelling to guess at
        if err.understood and err.not_understood and not err.choices and err.problem is None:
            fixed = _respelled(text, err.not_understood)
            if fixed is not None:
                err.respelled, err.choices = fixed, ((fixed[:60], fixed),)
            elif (shorter := _without_prose(text, err)) is not None:
                err.left_out, err.choices = tuple(err.not_understood), ((shorter[:60], shorter),)
        raise


def _read(text: str) -> WorkloadSpec:
    if not isinstance(text, str):
        raise ParseError(problem=msg("parse_not_text"))
    if len(text) > MAX_CHARS:
        raise ParseError(problem=msg("parse_too_long", n=len(text), limit=MAX_CHARS))
    low = _normalise(text)
    # Show the user's own spelling when lower-casing kept positions (it does, except for rare letters like "İ").
    reading = _Reading(text if len(low) == len(text) else low)
    pos = 0
    for start in _WORD_START.finditer(low):
        if start.start() < pos:
            continue  # inside what the previous rule consumed
        scanner = _scanner_for(start.group())
        m = scanner.match(low, start.start()) if scanner is not None else None
        if m is None:
            continue
        reading.leftovers(pos, m.start())
        pos = reading.take(m, low)
    reading.leftovers(pos, len(low))
    return reading.spec()


# --- misspellings: a word one letter off a word the phrases use ("lamma", "lroa", "инференц") ------------------

_SPELT = re.compile(r"[a-zа-я]{4,}")  # shorter words are too close to too many others to guess at
_STEM_MIN = 6  # a stem shorter ("полн") is the start of too many words to put right the rest by


@lru_cache(maxsize=1)
def _spellings() -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """(words, stems) the grammar and the catalogs read (model names, filler, the rules' own words; a stem is a
    rule's word that any ending may follow, "пользовател\\w*"), each keyed by itself and by each of its one-letter
    deletions: a misspelling one edit away shares a key with its word. Built on the first misspelling, not at import."""
    words = _CATALOG_HEADS | _CATALOG_WORDS | _FILLER
    stems: set[str] = set()
    for _, pattern, _ in _RULES:
        for m in re.finditer(r"([a-zа-я]{4,})(\\w|\?)?", pattern):
            (stems if m.group(2) == "\\w" else words).add(m.group(1))
            if m.group(2) == "?":  # "minutes?": "minute" too
                words.add(m.group(1)[:-1])
        # a word whose last letter is a class, "лор[аоуеыи]\w*": each letter of it ends a word ("лора", "лору")
        for m in re.finditer(r"(?<![a-zа-я\\?])([a-zа-я]{3,})\[([a-zа-я]+)\]", pattern):
            words.update(m.group(1) + letter for letter in m.group(2))
    return _deletion_index(words), _deletion_index(stems)


def _deletion_index(words: set[str]) -> dict[str, tuple[str, ...]]:
    index: dict[str, set[str]] = {}
    for word in words:
        if _SPELT.fullmatch(word):
            for key in (word, *_deletions(word)):
                index.setdefault(key, set()).add(word)
    return {key: tuple(sorted(found)) for key, found in index.items()}


def _deletions(word: str) -> set[str]:
    return {word[:i] + word[i + 1:] for i in range(len(word))}


def _one_edit(a: str, b: str) -> bool:
    """One letter added, dropped, changed, or two neighbours swapped ("lroa" / "lora")."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
                                  and a[diff[1]] == b[diff[0]])
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))


def respelling(word: str) -> str | None:
    """The word the phrases use that `word` is one edit from ("lroa", "plese"), or for a word of five letters or
    more one letter changed in place or moved ("lamma" / "llama": the same word with one letter each left out); a
    stem's word keeps the user's ending ("пользоватлей" -> "пользователей"). The nearest, with the same first letter,
    preferred; then a letter left out before one changed, before one too many. None for a word that is known, too
    short or near nothing."""
    low = _fold(word)
    if not _SPELT.fullmatch(low):
        return None
    words, stems = _spellings()
    if low in words.get(low, ()):
        return None
    found = _near(words, low)
    for cut in range(_STEM_MIN - 1, len(low) + 1):  # the stem, misspelt, then the user's own ending
        found |= {stem + low[cut:] for stem in _near(stems, low[:cut]) if len(stem) >= _STEM_MIN}
    found.discard(low)
    # the nearest first; then a letter left out ("plese"), one changed or moved, one too many
    return min(found, key=lambda w: (not _one_edit(low, w), w[0] != low[0], {1: 0, 0: 1}.get(len(w) - len(low), 2),
                                     w)) if found else None


def _near(index: dict[str, tuple[str, ...]], low: str) -> set[str]:
    """The indexed words `low` is one edit from (or, for five letters or more, one letter changed or moved)."""
    near = {w for key in (low, *_deletions(low)) for w in index.get(key, ())}
    return {w for w in near if _one_edit(low, w) or (len(low) >= 5 and len(w) == len(low) and w != low)}


def _known(word: str) -> bool:
    """A word the phrases use, or one a stem of theirs begins ("пользовател" + any ending)."""
    low = _fold(word)
    words, stems = _spellings()
    return low in words.get(low, ()) or any(low[:n] in stems.get(low[:n], ()) for n in range(4, len(low) + 1))


def _respelled(text: str, bad: Sequence[str]) -> str | None:
    """`text` with its misspelt words of `bad` put right, when the phrase then reads whole; else None. The words
    nothing knows first: a known word may stand unread only because a misspelling broke the rule it is part of
    ("requsts per minute"); those too only when that alone is not enough ("20 пользоватлей")."""
    fixes = [(fragment, right) for fragment in bad if (right := respelling(fragment)) is not None]
    for chosen in ([f for f in fixes if not _known(f[0])], fixes):
        fixed = text
        for fragment, right in chosen:
            fixed = re.sub(rf"(?<!\w){re.escape(fragment)}(?!\w)", right, fixed, count=1)
        if fixed == text:
            continue
        try:
            _read(fixed)
        except ParseError:
            continue
        return fixed
    return None


# --- words of prose the grammar does not know ("for a chatbot", "для бота техподдержки") ---------------------

_PROSE = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")  # letters only: a fragment with a digit is a value misread
_MAX_LEFT_OUT = 4  # past a few words the sentence is about something else, and what reads of it is a guess
# Words that turn the meaning of what follows: left out, the phrase would read as the opposite of what was asked
_NEGATION_WORDS = """
no not non nor never without except excluding don't dont isn't cannot can't
не нет ни без кроме исключая нельзя
"""
_NEGATIONS = frozenset(_NEGATION_WORDS.split())
# the small words that lead into what was cut ("for a chatbot", "для моего бота") go with it
_LEADS = r"(?:for|a|an|the|my|our|your|of|для|моего|моей|моих|нашего|нашей|наших|своего|своей|своих)"
_EDGE_FILLER = re.compile(r"^(?:[\s,;:.!?-]+)|(?:[\s,;:.!?-]+)$")


def _without_prose(text: str, err: ParseError) -> str | None:
    """`text` without the words of prose it could not read, when what is left reads whole and names its model; else
    None. Only plain words go ("7b lora for a chatbot" -> "7b lora"): none that negates, none a term misspelt or cut
    short, not a value that failed to read (a digit in it), not a word with a reason of its own, not more than a few
    words of it."""
    bad = err.not_understood
    words = [w for fragment in bad for w in fragment.split()]
    if (not bad or len(words) > _MAX_LEFT_OUT or err._reasons
            or not all(_PROSE.fullmatch(w) and _fold(w) not in _NEGATIONS and not _cut_short(_fold(w))
                       and respelling(w) is None for w in words)):  # a misspelt term ("инферес") is no prose
        return None
    shorter = left_out(text, bad)
    if not shorter:
        return None
    try:
        spec = _read(shorter)
    except ParseError:
        return None
    # what is left must name the model ("zzzz lora" leaves "lora": the unread word was the model, not prose)
    return shorter if spec.model is not None or spec.params_b is not None or spec.arch is not None else None


def left_out(text: str, fragments: Sequence[str]) -> str | None:
    """`text` with each of `fragments` cut out once and what is left tidied; None when one is not in it. Also for a
    command that carries the phrase ("/subscribe 7b lora for a chatbot x2" -> "7b lora x2")."""
    for fragment in fragments:
        text, n = re.subn(rf"(?<!\w)(?:{_LEADS}\s+)*{re.escape(fragment)}(?!\w)", " ", text, count=1,
                          flags=re.IGNORECASE)
        if not n:
            return None
    return _tidy(text)


@lru_cache(maxsize=1)
def _vocabulary() -> tuple[str, ...]:
    """The words and stems the phrases use, short ones ("ctx", "bs") too, sorted: the words beginning with a given
    word follow it at once."""
    found = set(_CATALOG_HEADS | _CATALOG_WORDS | _FILLER)
    for _, pattern, _ in _RULES:
        found.update(re.findall(r"[a-zа-я]{2,}", pattern))
    return tuple(sorted(found))


def _cut_short(word: str) -> bool:
    """`word` is the beginning of a longer word the phrases use: "lo", "ct", "контек" are a word cut short (an
    inline query as it is typed), which leaving out would lose."""
    vocabulary = _vocabulary()
    i = bisect_right(vocabulary, word)
    return i < len(vocabulary) and vocabulary[i].startswith(word)


def _tidy(text: str) -> str:
    """The phrase after words were cut from it: one space between words, no separator doubled or left at either
    end, and no filler word left dangling there ("7b lora for" -> "7b lora")."""
    text = re.sub(r"\s*([,;])(?:\s*[,;])+", r"\1", re.sub(r"\s+", " ", text))
    text = re.sub(r"\s+([,;.!?])", r"\1", text)
    words = _EDGE_FILLER.sub("", text).split(" ")
    while len(words) > 1 and _fold(words[-1].strip(",;:.!?")) in _FILLER:
        words.pop()
    while len(words) > 1 and _fold(words[0].strip(",;:.!?")) in _FILLER:
        words.pop(0)
    return _EDGE_FILLER.sub("", " ".join(words))


# --- helpers for command-line options (the same vocabulary as the phrases) --------------------------------------

_TARGET_ORDER = ("q", "k", "v", "o", "gate", "up", "down")
_TARGET_SPLIT = re.compile(r"[\s,+/;]+")
_TARGET_WORDS = {"all": "all-linear", "all-linear": "all-linear", "all_linear": "all-linear",
                 "alllinear": "all-linear", "qv": "q,v", "qkv": "q,k,v", "qkvo": "q,k,v,o",
                 "attention": "q,k,v,o", "attn": "q,k,v,o", "mlp": "gate,up,down"}


def normalise_targets(text: str) -> str:
    """'q_proj, v_proj' -> 'q,v'; 'all linear' -> 'all-linear'. Raises ParseError for an unknown module."""
    raw = text.strip().lower()
    if raw.replace(" ", "-") in _TARGET_WORDS:
        return _TARGET_WORDS[raw.replace(" ", "-")]
    chosen: set[str] = set()
    for part in (p for p in _TARGET_SPLIT.split(raw) if p):
        name = part.removesuffix("_proj")
        if name in _TARGET_WORDS and name != "all":
            chosen.update(_TARGET_WORDS[name].split(","))
        elif name in _TARGET_ORDER:
            chosen.add(name)
        else:
            raise ParseError([], [part], reasons={part: msg("parse_lora_targets")})
    if not chosen:
        raise ParseError(problem=msg("parse_lora_which"))
    if chosen == set(_TARGET_ORDER):
        return "all-linear"
    return ",".join(t for t in _TARGET_ORDER if t in chosen)


_SIZE_ONLY = re.compile(rf"\s*(?:(?P<e>[0-9]{{1,3}})\s*{MUL}\s*)?(?P<p>{N})\s*(?:b|bn|б|млрд\.?)?\s*", re.IGNORECASE)


def parse_size(text: str) -> tuple[float, int | None]:
    """'13B' -> (13.0, None); '8x7B' -> (7.0, 8). For `--params`. Raises ParseError."""
    m = _SIZE_ONLY.fullmatch(text or "")
    if not m:
        raise ParseError([], [text], reasons={text: msg("parse_size_format")})
    params = _number(m.group("p"))
    experts = int(m.group("e")) if m.group("e") else None
    for field, value in (("params_b", params), ("experts", experts)):
        reason = check_range(field, value) if value is not None else None
        if reason:
            raise ParseError([], [text], reasons={text: reason})
    return params, experts


__all__ = ["FIELDS", "LIMITS", "MAX_CHARS", "ParseError", "check_range", "describe", "field_label", "left_out",
           "normalise_targets", "parse_size", "parse_workload", "render_value"]
