"""The one text catalog: every user-facing text of the bot and the CLI, in Russian and English.

Texts live in Fluent files, `texts/locales/<lang>/*.ftl` (all files of a language form one catalog). Fluent was
chosen over gettext because a message carries its own CLDR plural variants (`{ $n -> [one] … [few] … *[many] … }`,
with the plural rules of Babel's CLDR data), placeholders are named, and the files need no compile step.

    t(lang, "sub_saved", what=..., n=3)     # one text
    render(lang, core_msg)                  # a `core.msg.Msg` (code + values) from core
    examples(lang)                          # the example phrases offered to the user (examples.ftl)

Both languages have the same keys and the same placeholders (tests/texts/test_i18n.py). A missing key, an unknown
language or a missing value raises: no silent fallback to English.
Numbers passed as int/float are formatted by the locale ("12 345" in Russian) and drive the plural variant; pass a
str to show a number exactly as formatted.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from fluent.runtime import FluentBundle
from fluent.syntax import FluentParser
from fluent.syntax import ast as fl
from fluent.syntax.visitor import Visitor

from core.msg import Joined, Msg

LANGS = ("ru", "en")
LOCALES = Path(__file__).with_name("locales")


def locale_lang(env: Mapping[str, str] | None = None) -> str:
    """The operator's language from the POSIX locale (LANGUAGE's first entry, LC_ALL, LC_MESSAGES, LANG, the first
    one set, as gettext reads them): "ru" for ru_RU.UTF-8 and the like, else "en" (C, POSIX, unset, any other)."""
    e = os.environ if env is None else env
    for var in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = (e.get(var) or "").split(":")[0].strip()
        if value:
            return "ru" if value.lower().startswith("ru") else "en"
    return "en"


class TextError(LookupError):
    """A text that cannot be formatted: unknown language or key, or a value it needs is missing."""


def _files(lang: str) -> list[Path]:
    return sorted((LOCALES / lang).glob("*.ftl"))


# The catalog is read lazily, a file at a time: a command that formats a few texts (`gpuradar estimate`) parses the
# files that hold them, not the whole catalog (Fluent's parser is pure Python: most of a short command's start-up
# otherwise), and each file is parsed once for both readers (FluentBundle and the fast path's AST). Which file holds
# a key comes from a scan of each file's entry lines: an entry starts at the line's start with its identifier and
# `=` (a message's further lines are indented, comments start with `#`).
_ENTRY = re.compile(r"^(-?[A-Za-z][A-Za-z0-9_-]*)[ \t]*=", re.M)


@cache
def _where(lang: str) -> dict[str, Path]:
    """The file of each message (and `-term`) of a language's catalog, from the scan (the first file wins, as
    in a bundle)."""
    if lang not in LANGS:
        raise TextError(f"no catalog for language {lang!r}")
    out: dict[str, Path] = {}
    for path in _files(lang):
        for m in _ENTRY.finditer(path.read_text(encoding="utf-8")):
            out.setdefault(m.group(1), path)
    return out


@cache
def _resource(path: Path) -> fl.Resource:
    """One file parsed (what `fluent.runtime.FluentResource` returns for its text), once."""
    return FluentParser().parse(path.read_text(encoding="utf-8"))


@cache
def _file_messages(path: Path) -> dict[str, fl.Message]:
    return {entry.id.name: entry for entry in _resource(path).body if isinstance(entry, fl.Message)}


@cache
def _lazy_bundle(lang: str) -> tuple[FluentBundle, set[Path]]:
    """A language's bundle and the files added to it so far."""
    return FluentBundle([lang], use_isolating=False), set()


def _add(lang: str, path: Path) -> None:
    """`path` into the language's bundle, with the files of the messages and terms it refers to."""
    bundle, added = _lazy_bundle(lang)
    if path in added:
        return
    added.add(path)
    resource = _resource(path)
    bundle.add_resource(resource)
    refs: set[str] = set()

    class Refs(Visitor):
        def visit_MessageReference(self, node: fl.MessageReference) -> None:
            refs.add(node.id.name)

        def visit_TermReference(self, node: fl.TermReference) -> None:
            refs.add(f"-{node.id.name}")

    Refs().visit(resource)
    where = _where(lang)
    for ref in refs:
        if ref in where:
            _add(lang, where[ref])


def _bundle_for(lang: str, key: str) -> FluentBundle:
    """The language's bundle, holding `key`'s file (every file when the scan places `key` in none)."""
    path = _where(lang).get(key)
    if path is None:
        return _bundle(lang)
    _add(lang, path)
    return _lazy_bundle(lang)[0]


@cache
def _bundle(lang: str) -> FluentBundle:
    """The language's whole catalog as one bundle."""
    if lang not in LANGS:
        raise TextError(f"no catalog for language {lang!r}")
    for path in _files(lang):
        _add(lang, path)
    return _lazy_bundle(lang)[0]


def _message(lang: str, key: str) -> fl.Message | None:
    """A message as fluent.syntax parses it (public AST), from its file; None where the catalog has none."""
    path = _where(lang).get(key)
    found = _file_messages(path).get(key) if path is not None else None
    if found is None:  # not where the scan placed it: look in every file (none, for a missing key)
        for other in _files(lang):
            found = _file_messages(other).get(key)
            if found is not None:
                break
    return found


# A message made only of text and `{ $name }` placeholders is formatted without Fluent's resolver (several times
# faster, and the estimate path renders dozens of them); anything with a selector, or a number value, goes through
# Fluent. None: not simple.
@cache
def _simple(lang: str, key: str) -> tuple[tuple[str, bool], ...] | None:
    message = _message(lang, key)
    if message is None or message.value is None:
        raise TextError(f"no text {key!r} in {lang!r}")
    parts: list[tuple[str, bool]] = []
    for el in message.value.elements:
        if isinstance(el, fl.TextElement):
            parts.append((el.value, False))
        elif isinstance(el.expression, fl.VariableReference):
            parts.append((el.expression.id.name, True))
        elif isinstance(el.expression, fl.StringLiteral):
            parts.append((el.expression.parse()["value"], False))
        else:
            return None
    return tuple(parts)


def _as_is(value: Any) -> bool:
    """Whether a simple message shows `value` as `str(value)`, exactly as Fluent would: anything but a number, and
    a whole number from 0 to 999 (no grouping separator in either language; an answer's GPU counts and load
    percentages). Other numbers go through Fluent's locale formatting."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return True
    return type(value) is int and 0 <= value < 1000


# One number style per language (CLDR): English "2,142" and "0.01", Russian "2 142" (narrow no-break space) and
# "0,01". Every number a front end prints itself goes through `number`; Fluent formats the ones it is given.
_GROUP = {"en": ",", "ru": "\u00a0"}  # CLDR ru: no-break space, as Fluent formats its numbers
_DECIMAL = {"en": ".", "ru": ","}


def number(value: float, decimals: int = 0, lang: str = "en") -> str:
    """`value` with `decimals` places in `lang`'s style: grouped thousands, the language's decimal mark."""
    text = f"{value:,.{decimals}f}"
    group, mark = _GROUP.get(lang, ","), _DECIMAL.get(lang, ".")
    return text.replace(",", "\x00").replace(".", mark).replace("\x00", group)


def t(lang: str, key: str, /, **values: Any) -> str:
    """The text `key` in `lang`, with `values` in its placeholders (Msg values are rendered first)."""
    plain = True  # every value shown as str(value) (see `_as_is`)
    for name, value in values.items():
        if type(value) is str:  # the common case, checked first: an answer formats dozens of texts
            continue
        if isinstance(value, Msg | Joined):
            values[name] = render(lang, value)
        elif plain and not _as_is(value):
            plain = False
    simple = _simple(lang, key)
    if simple is not None and plain:
        try:
            return "".join([str(values[p]) if is_var else p for p, is_var in simple])
        except KeyError as exc:
            raise TextError(f"text {key!r} needs a value for {exc.args[0]!r}") from None
    bundle = _bundle_for(lang, key)
    pattern = bundle.get_message(key).value
    if pattern is None:
        raise TextError(f"text {key!r} in {lang!r} has no value")
    text, errors = bundle.format_pattern(pattern, values)
    if errors:
        raise TextError(f"text {key!r} in {lang!r}: {errors[0]}")
    return str(text)


def render(lang: str, message: Msg | Joined | str) -> str:
    """A core message (key + values, possibly nested) in `lang`; a plain str is returned as it is.

    Remembered per (language, message): the catalog does not change, and an answer renders the same few
    assumptions and labels keystroke after keystroke (~7 us each through Fluent's resolver when a number is in
    them). A message holding an unhashable value is rendered afresh."""
    if isinstance(message, str):
        return message
    try:
        return _rendered(lang, message)
    except TypeError:  # unhashable (a list among the values); a genuine error is raised again below
        return _render(lang, message)


def _render(lang: str, message: Msg | Joined) -> str:
    if isinstance(message, Joined):
        return message.sep.join(render(lang, part) for part in message.parts)
    return t(lang, message.key, **dict(message.values))


# Bounded: a rendered message is a short string (~2,048 of them are well under a megabyte).
_rendered = lru_cache(maxsize=2048)(_render)


_CYRILLIC = re.compile("[\u0400-\u04ff]")


def lang_for(explicit: str | None, *texts: str | None) -> str:
    """The language to answer in: the one asked for, else Russian when the input is written in Cyrillic."""
    if explicit:
        return explicit
    return "ru" if any(text and _CYRILLIC.search(text) for text in texts) else "en"


def has(lang: str, key: str) -> bool:
    return _message(lang, key) is not None


@cache
def examples(lang: str, key: str = "examples_list") -> tuple[str, ...]:
    """Example phrases of a language, one per line of the catalog message `key` (`examples_short`: the short ones)."""
    return tuple(line.strip() for line in t(lang, key).splitlines() if line.strip())


# --- what the consistency tests read ------------------------------------------------------------------------------

def _resources(lang: str) -> Iterator[fl.Resource]:
    for path in _files(lang):
        yield _resource(path)


def messages(lang: str) -> dict[str, fl.Message]:
    """Every message of a language's catalog by key (a key defined twice raises)."""
    out: dict[str, fl.Message] = {}
    for resource in _resources(lang):
        for entry in resource.body:
            if isinstance(entry, fl.Junk):
                raise TextError(f"syntax error in the {lang} catalog: {(entry.content or '')[:80]!r}")
            if isinstance(entry, fl.Message):
                if entry.id.name in out:
                    raise TextError(f"{entry.id.name!r} is defined twice in the {lang} catalog")
                out[entry.id.name] = entry
    return out


def placeholders(message: fl.Message) -> set[str]:
    """The `$names` a message uses (in any variant)."""
    found: set[str] = set()

    class Refs(Visitor):
        def visit_VariableReference(self, node: fl.VariableReference) -> None:
            found.add(node.id.name)

    Refs().visit(message)
    return found


def plural_selectors(message: fl.Message) -> set[str]:
    """The `$names` a message selects a variant on (its plural counts)."""
    found: set[str] = set()

    class Selectors(Visitor):
        def visit_SelectExpression(self, node: fl.SelectExpression) -> None:
            if isinstance(node.selector, fl.VariableReference):
                found.add(node.selector.id.name)
            self.generic_visit(node)

    Selectors().visit(message)
    return found
