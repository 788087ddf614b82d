"""The longest context each catalog model was trained / configured for, in tokens.

Source: each model's Hugging Face `config.json` `max_position_embeddings` (the model card where RoPE scaling
extends it: Qwen2.5 7B and larger reach 131072 with YaRN, Llama 3.1 / 3.2 are 131072 natively, Mistral-Nemo's card
says 128k). A context beyond this is refused with the limit instead of estimated: the model cannot attend that far,
and the KV cache of such a context would be a meaningless number. Bare sizes ("13B") stand for a typical
architecture and are not limited by that stand-in's context. A config.json brings its own limit.
"""

from __future__ import annotations

MAX_CONTEXT: dict[str, int] = {
    "qwen2.5-0.5b": 32768, "qwen2.5-1.5b": 32768, "qwen2.5-3b": 32768,
    "qwen2.5-7b": 131072, "qwen2.5-14b": 131072, "qwen2.5-32b": 131072, "qwen2.5-72b": 131072,
    "qwen3-8b": 40960,
    "llama-3.2-1b": 131072, "llama-3.2-3b": 131072,
    "llama-3.1-8b": 131072, "llama-3.1-70b": 131072, "llama-3.1-405b": 131072,
    "llama-2-7b": 4096, "llama-2-13b": 4096, "llama-2-70b": 4096,
    "mistral-7b": 32768, "mistral-nemo-12b": 131072,
    "mixtral-8x7b": 32768, "mixtral-8x22b": 65536,
    "gemma-2-2b": 8192, "gemma-2-9b": 8192, "gemma-2-27b": 8192,
    "phi-3-mini": 4096, "yi-34b": 4096,
}


def max_context(model_id: str | None) -> int | None:
    return MAX_CONTEXT.get(model_id) if model_id else None
