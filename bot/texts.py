"""The bot's view of the one text catalog (`texts/`): `t(lang, key, **values)` plus Telegram HTML helpers.

Output is Telegram HTML: callers escape user input before it reaches a placeholder. The example phrases themselves
live in the catalog (`texts/locales/<lang>/examples.ftl`).
"""

from __future__ import annotations

from texts import LANGS, examples, render, t


def examples_block(lang: str) -> str:
    return "\n".join(f"<code>{e}</code>" for e in examples(lang))


__all__ = ["LANGS", "examples", "examples_block", "render", "t"]
