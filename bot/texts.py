"""Texts of the bot: `t(lang, key, **values)` from the one catalog (bot/i18n.py, bot/locales/<lang>/*.ftl).

Output is Telegram HTML: callers escape user input before it reaches a placeholder.
"""

from __future__ import annotations

from bot.i18n import LANGS, render, t

EXAMPLES = ("13B LoRA", "70B QLoRA ctx 8k", "Qwen2.5-72B inference 32k", "qwen3-8b inference input 1k output 2k",
            "7B LoRA, 5k examples x 3 epochs")
EXAMPLES_RU = ("13B LoRA", "70B QLoRA ctx 8k", "инференс 70B int4, контекст 32k",
               "инференс qwen3-8b, вход 1к, выход 2к", "полное дообучение 7B")


def examples(lang: str) -> tuple[str, ...]:
    return EXAMPLES_RU if lang == "ru" else EXAMPLES


def examples_block(lang: str) -> str:
    return "\n".join(f"<code>{e}</code>" for e in examples(lang))


__all__ = ["EXAMPLES", "EXAMPLES_RU", "LANGS", "examples", "examples_block", "render", "t"]
