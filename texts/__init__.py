"""The text catalog of GPU Radar: every user-facing text of the bot, the CLI and core's messages, in Russian and
English (`texts/locales/<lang>/*.ftl`, read by `texts.i18n`).

Its own package because three parts read it: the bot (`bot/`), the CLI (`gpuradar/`) and core's message keys
(`core.msg.Msg` carries a key of this catalog; core itself never imports it).
"""

from texts.i18n import LANGS, TextError, examples, has, lang_for, render, t

__all__ = ["LANGS", "TextError", "examples", "has", "lang_for", "render", "t"]
