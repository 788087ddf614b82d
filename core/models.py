"""The model catalog: transformer architectures under the names people use, and bare sizes ("13B", "8x7B").

Architectures are from the models' published config.json files (reference §7). A size with no named model maps
to a stated typical architecture; any other model can be described by its Hugging Face config.json.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any


@dataclass(frozen=True, slots=True)
class Arch:
    id: str  # "llama-3.1-8b"
    name: str  # "Llama-3.1-8B"
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    intermediate: int  # per expert for MoE
    vocab: int
    params_b: float  # total, billions
    head_dim: int = 128
    tied_embeddings: bool = False
    qkv_bias: bool = False
    experts: int = 1
    experts_active: int = 1
    aliases: tuple[str, ...] = field(default=())

    @property
    def active_params_b(self) -> float:
        """Parameters touched per token: compute follows these, memory follows `params_b` (reference §7)."""
        if self.experts <= 1:
            return self.params_b
        mlp_per_expert = 3 * self.hidden * self.intermediate * self.layers / 1e9
        return self.params_b - (self.experts - self.experts_active) * mlp_per_expert

    @property
    def embedding_params_b(self) -> float:
        """embed_tokens + lm_head (one matrix when tied): kept in 16-bit by quantised bases."""
        return self.vocab * self.hidden * (1 if self.tied_embeddings else 2) / 1e9

    @property
    def q_dim(self) -> int:
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim

    def linear_shapes(self) -> dict[str, tuple[int, int, int]]:
        """(d_in, d_out, copies per layer) of every linear layer a LoRA adapter can target."""
        h, i, e = self.hidden, self.intermediate, self.experts
        return {
            "q": (h, self.q_dim, 1),
            "k": (h, self.kv_dim, 1),
            "v": (h, self.kv_dim, 1),
            "o": (self.q_dim, h, 1),
            "gate": (h, i, e),
            "up": (h, i, e),
            "down": (i, h, e),
        }


def _a(id_: str, name: str, hidden: int, layers: int, heads: int, kv: int, inter: int, vocab: int, params: float,
       aliases: tuple[str, ...] = (), **kw: Any) -> Arch:
    return Arch(id_, name, hidden, layers, heads, kv, inter, vocab, params, aliases=aliases, **kw)


MODELS: tuple[Arch, ...] = (
    _a("qwen2.5-0.5b", "Qwen2.5-0.5B", 896, 24, 14, 2, 4864, 151936, 0.49, ("qwen2.5 0.5b", "qwen 0.5b"),
       head_dim=64, tied_embeddings=True, qkv_bias=True),
    _a("llama-3.2-1b", "Llama-3.2-1B", 2048, 16, 32, 8, 8192, 128256, 1.24, ("llama 3.2 1b", "llama3.2-1b"),
       head_dim=64, tied_embeddings=True),
    _a("qwen2.5-1.5b", "Qwen2.5-1.5B", 1536, 28, 12, 2, 8960, 151936, 1.54, ("qwen 1.5b",),
       tied_embeddings=True, qkv_bias=True),
    _a("gemma-2-2b", "Gemma-2-2B", 2304, 26, 8, 4, 9216, 256000, 2.61, ("gemma 2 2b", "gemma2-2b"),
       head_dim=256, tied_embeddings=True),
    _a("qwen2.5-3b", "Qwen2.5-3B", 2048, 36, 16, 2, 11008, 151936, 3.09, ("qwen 3b",),
       tied_embeddings=True, qkv_bias=True),
    _a("llama-3.2-3b", "Llama-3.2-3B", 3072, 28, 24, 8, 8192, 128256, 3.21, ("llama 3.2 3b", "llama3.2-3b"),
       tied_embeddings=True),
    _a("phi-3-mini", "Phi-3-mini", 3072, 32, 32, 32, 8192, 32064, 3.82, ("phi-3", "phi3 mini", "phi-3-mini-4k")),
    _a("llama-2-7b", "Llama-2-7B", 4096, 32, 32, 32, 11008, 32000, 6.74, ("llama 2 7b", "llama2-7b", "llama-7b")),
    _a("mistral-7b", "Mistral-7B", 4096, 32, 32, 8, 14336, 32000, 7.24,
       ("mistral", "mistral 7b", "mistral-7b-v0.1", "mistral-7b-instruct", "mistral-7b-v0.3")),
    _a("qwen2.5-7b", "Qwen2.5-7B", 3584, 28, 28, 4, 18944, 152064, 7.62,
       ("qwen2.5 7b", "qwen 7b", "qwen2-7b", "qwen2.5-7b-instruct", "qwen2.5-coder-7b"), qkv_bias=True),
    _a("llama-3.1-8b", "Llama-3.1-8B", 4096, 32, 32, 8, 14336, 128256, 8.03,
       ("llama 3 8b", "llama-3-8b", "llama3-8b", "llama 3.1 8b", "llama3.1-8b", "llama-3.1-8b-instruct",
        "meta-llama-3.1-8b", "llama-3.1-8b-instruct")),
    _a("qwen3-8b", "Qwen3-8B", 4096, 36, 32, 8, 12288, 151936, 8.19, ("qwen3 8b",)),
    _a("gemma-2-9b", "Gemma-2-9B", 3584, 42, 16, 8, 14336, 256000, 9.24, ("gemma 2 9b", "gemma2-9b"),
       head_dim=256, tied_embeddings=True),
    _a("mistral-nemo-12b", "Mistral-Nemo-12B", 5120, 40, 32, 8, 14336, 131072, 12.25,
       ("mistral nemo", "mistral-nemo", "nemo 12b")),
    _a("llama-2-13b", "Llama-2-13B", 5120, 40, 40, 40, 13824, 32000, 13.02, ("llama 2 13b", "llama2-13b")),
    _a("qwen2.5-14b", "Qwen2.5-14B", 5120, 48, 40, 8, 13824, 152064, 14.77, ("qwen 14b", "qwen2.5-14b-instruct"),
       qkv_bias=True),
    _a("gemma-2-27b", "Gemma-2-27B", 4608, 46, 32, 16, 36864, 256000, 27.23, ("gemma 2 27b", "gemma2-27b"),
       tied_embeddings=True),
    _a("qwen2.5-32b", "Qwen2.5-32B", 5120, 64, 40, 8, 27648, 152064, 32.76,
       ("qwen 32b", "qwen2.5-32b-instruct", "qwen2.5-coder-32b", "qwq-32b"), qkv_bias=True),
    _a("yi-34b", "Yi-34B", 7168, 60, 56, 8, 20480, 64000, 34.39, ("yi 34b",)),
    _a("mixtral-8x7b", "Mixtral-8x7B", 4096, 32, 32, 8, 14336, 32000, 46.7,
       ("mixtral", "mixtral 8x7b", "mixtral-8x7b-instruct"), experts=8, experts_active=2),
    _a("llama-2-70b", "Llama-2-70B", 8192, 80, 64, 8, 28672, 32000, 68.98, ("llama 2 70b", "llama2-70b")),
    _a("llama-3.1-70b", "Llama-3.1-70B", 8192, 80, 64, 8, 28672, 128256, 70.55,
       ("llama 3 70b", "llama-3-70b", "llama3-70b", "llama 3.1 70b", "llama-3.3-70b", "llama 3.3 70b",
        "llama-3.1-70b-instruct", "llama-3.3-70b-instruct")),
    _a("qwen2.5-72b", "Qwen2.5-72B", 8192, 80, 64, 8, 29568, 152064, 72.71, ("qwen 72b", "qwen2.5-72b-instruct"),
       qkv_bias=True),
    _a("mixtral-8x22b", "Mixtral-8x22B", 6144, 56, 48, 8, 16384, 32768, 140.6, ("mixtral 8x22b",),
       experts=8, experts_active=2),
    _a("llama-3.1-405b", "Llama-3.1-405B", 16384, 126, 128, 8, 53248, 128256, 405.85,
       ("llama 3.1 405b", "llama-3-405b", "llama 405b")),
)

# A bare size means this architecture (stated back to the user as an assumption).
TYPICAL_FOR_SIZE: dict[str, str] = {
    "0.5": "qwen2.5-0.5b", "1": "llama-3.2-1b", "1.5": "qwen2.5-1.5b", "2": "gemma-2-2b", "3": "llama-3.2-3b",
    "7": "qwen2.5-7b", "8": "llama-3.1-8b", "9": "gemma-2-9b", "12": "mistral-nemo-12b", "13": "llama-2-13b",
    "14": "qwen2.5-14b", "27": "gemma-2-27b", "32": "qwen2.5-32b", "34": "yi-34b", "70": "llama-3.1-70b",
    "72": "qwen2.5-72b", "405": "llama-3.1-405b", "8x7": "mixtral-8x7b", "8x22": "mixtral-8x22b",
}

_SEP = re.compile(r"[\s_\-/:]+")


def _key(text: str) -> str:
    return _SEP.sub("", text.lower()).removeprefix("metallama").removeprefix("meta")


@lru_cache(maxsize=1)
def _index() -> dict[str, Arch]:
    out: dict[str, Arch] = {}
    for arch in MODELS:
        for alias in (arch.id, arch.name, *arch.aliases):
            out.setdefault(_key(alias), arch)
    return out


def find_model(name: str) -> Arch | None:
    """The catalog architecture for a model name ('Llama 3 70B', 'qwen2.5-72b'), or None."""
    key = _key(name)
    if "/" in name:  # "meta-llama/Llama-3.1-8B"
        key = _key(name.rsplit("/", 1)[1])
    return _index().get(key)


def get_model(model_id: str) -> Arch:
    return {m.id: m for m in MODELS}[model_id]


def _size_key(params_b: float) -> str:
    return f"{params_b:g}"


def model_for_size(params_b: float, experts: int | None = None) -> Arch:
    """A typical architecture for a bare size ('13B', '8x7B' -> experts=8, params_b=7).

    Sizes with a known model map to it; others take the nearest known dense model with its parameter count and
    layer count scaled so that the memory follows the size asked for.
    """
    if experts:
        key = f"{experts}x{_size_key(params_b)}"
        if key in TYPICAL_FOR_SIZE:
            return get_model(TYPICAL_FOR_SIZE[key])
        base = get_model("mixtral-8x7b")
        scale = (experts * params_b) / (8 * 7)
        return replace(base, id=f"moe-{key}b", name=f"{key}B MoE (Mixtral-like)", params_b=base.params_b * scale,
                       layers=max(1, round(base.layers * scale)), experts=experts, aliases=())
    key = _size_key(params_b)
    if key in TYPICAL_FOR_SIZE:
        return get_model(TYPICAL_FOR_SIZE[key])
    dense = [m for m in MODELS if m.experts == 1]
    nearest = min(dense, key=lambda m: abs(m.params_b - params_b) / m.params_b)
    scale = params_b / nearest.params_b
    return replace(nearest, id=f"generic-{key}b", name=f"{key}B (scaled from {nearest.name})",
                   params_b=params_b, layers=max(1, round(nearest.layers * scale)), aliases=())


def from_hf_config(config: dict[str, Any], name: str = "custom") -> Arch:
    """An architecture from a Hugging Face config.json (Llama / Mistral / Qwen2 / Mixtral / Gemma style keys)."""
    hidden = int(config["hidden_size"])
    layers = int(config["num_hidden_layers"])
    heads = int(config["num_attention_heads"])
    kv = int(config.get("num_key_value_heads") or heads)
    head_dim = int(config.get("head_dim") or hidden // heads)
    inter = int(config.get("intermediate_size") or config.get("moe_intermediate_size") or 4 * hidden)
    vocab = int(config["vocab_size"])
    tied = bool(config.get("tie_word_embeddings", False))
    experts = int(config.get("num_local_experts") or config.get("num_experts") or 1)
    active = int(config.get("num_experts_per_tok") or 1) if experts > 1 else 1
    attn = layers * (hidden * heads * head_dim * 2 + hidden * kv * head_dim * 2)
    mlp = layers * 3 * hidden * inter * experts
    emb = vocab * hidden * (1 if tied else 2)
    params = (attn + mlp + emb + layers * 2 * hidden) / 1e9
    return Arch(id=name, name=name, hidden=hidden, layers=layers, heads=heads, kv_heads=kv, intermediate=inter,
                vocab=vocab, params_b=round(params, 3), head_dim=head_dim, tied_embeddings=tied,
                qkv_bias=bool(config.get("attention_bias", False)) or config.get("model_type") == "qwen2",
                experts=experts, experts_active=active)
