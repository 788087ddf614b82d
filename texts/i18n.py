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
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from babel import Locale
from babel.plural import to_python
from fluent.runtime import FluentBundle
from fluent.runtime.types import fluent_number
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
# otherwise), and each file is parsed once for both readers (FluentBundle and the compiled parts' AST). Which file holds
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


# Every message is compiled once into parts a plain join formats, without Fluent's resolver (several times faster:
# an answer formats dozens of texts, and Fluent resolves a plural or a number in 20-35 us, its first use of a
# message compiling it too). What is compiled is what the catalog uses: text, `{ $name }`, string literals,
# `NUMBER($name, option: literal)`, and selectors on a variable or a NUMBER() whose variants are plural categories
# or exact numbers. Numbers are formatted and plural categories chosen by the same Babel calls Fluent makes
# (`fluent_number(...).format(locale)`, the locale's CLDR plural rule), so a text reads the same either way
# (tests/texts/test_i18n.py compares the two over the whole catalog). A message with anything else (a reference,
# another function) is None here and goes through Fluent, as does a call whose value Fluent would treat otherwise.
class _Unsupported(Exception):
    """A value the compiled parts leave to Fluent (its error, or its way of showing it)."""


_Values = dict[str, Any]
_Part = str | Callable[[_Values], str]


@cache
def _locale(lang: str) -> Locale:
    return Locale.parse(lang)


@cache
def _plural(lang: str) -> Callable[[float], str]:
    """The CLDR plural category of a number in `lang`, the rule Fluent's bundle compiles for its locale. Memoised
    per number and its type (1 and 1.0 fall in different categories in Russian): Babel's compiled rule costs ~6 us
    a call in Russian, and an answer picks the plural of the same few counts and lengths again and again."""
    rule: Callable[[float], str] = lru_cache(maxsize=1024, typed=True)(to_python(_locale(lang).plural_form))
    return rule


def _is_number(value: Any) -> bool:
    return type(value) is int or type(value) is float


@lru_cache(maxsize=4096)
def _formatted(lang: str, kind: str, value: float, options: tuple[tuple[str, Any], ...]) -> str:
    """A number as Fluent shows it (`kind` keeps 1 and 1.0 apart: Fluent formats them alike, but a cache key must
    not make one the other's answer by accident)."""
    return str(fluent_number(value, **dict(options)).format(_locale(lang)))


def _show_number(lang: str, value: Any, options: tuple[tuple[str, Any], ...] = ()) -> str:
    if not _is_number(value):
        raise _Unsupported
    if not options and type(value) is int and 0 <= value < 1000:  # no grouping, no decimals: as str() shows it
        return str(value)
    return _formatted(lang, type(value).__name__, value, options)


def _literal(node: fl.BaseNode) -> str | int | float:
    if isinstance(node, fl.StringLiteral):
        return str(node.parse()["value"])
    if isinstance(node, fl.NumberLiteral):
        return float(node.value) if "." in node.value else int(node.value)
    raise _Unsupported


def _number_call(expr: fl.FunctionReference) -> tuple[str, tuple[tuple[str, Any], ...]]:
    """NUMBER($name, option: literal, …): the variable and its options."""
    args = expr.arguments
    if expr.id.name != "NUMBER" or len(args.positional) != 1 or not isinstance(args.positional[0],
                                                                                 fl.VariableReference):
        raise _Unsupported
    return args.positional[0].id.name, tuple((a.name.name, _literal(a.value)) for a in args.named)


def _compile_pattern(lang: str, pattern: fl.Pattern) -> tuple[_Part, ...]:
    parts: list[_Part] = []
    for el in pattern.elements:
        if isinstance(el, fl.TextElement):
            parts.append(el.value)
        else:
            parts.append(_compile_expression(lang, el.expression))
    # adjacent literals joined once, here
    merged: list[_Part] = []
    for part in parts:
        if merged and type(part) is str and type(merged[-1]) is str:
            merged[-1] = str(merged[-1]) + part
        else:
            merged.append(part)
    return tuple(merged)


def _join(parts: tuple[_Part, ...], values: _Values) -> str:
    return "".join([p if type(p) is str else p(values) for p in parts])  # type: ignore[operator]


def _compile_expression(lang: str, expr: fl.BaseNode) -> _Part:
    if isinstance(expr, fl.StringLiteral | fl.NumberLiteral):
        value = _literal(expr)
        return value if isinstance(value, str) else _show_number(lang, value)
    if isinstance(expr, fl.Placeable):
        inner = _compile_pattern(lang, fl.Pattern([expr]))
        return inner[0] if len(inner) == 1 else (lambda values: _join(inner, values))
    if isinstance(expr, fl.VariableReference):
        name = expr.id.name

        def variable(values: _Values) -> str:
            value = values[name]
            if type(value) is str:
                return value
            if _is_number(value):
                return _show_number(lang, value)
            if isinstance(value, bool | int | float | Decimal):  # a bool, an int or float subclass: Fluent's way
                raise _Unsupported
            return str(value)  # shown as it is, as the plain path always did (Fluent would refuse it)

        return variable
    if isinstance(expr, fl.FunctionReference):
        name, options = _number_call(expr)
        return lambda values: _show_number(lang, values[name], options)
    if isinstance(expr, fl.SelectExpression):
        return _compile_select(lang, expr)
    raise _Unsupported


def _compile_select(lang: str, expr: fl.SelectExpression) -> Callable[[_Values], str]:
    selector = expr.selector
    if isinstance(selector, fl.VariableReference):
        name, options = selector.id.name, None
    elif isinstance(selector, fl.FunctionReference):
        name, options = _number_call(selector)
    else:
        raise _Unsupported
    variants = [(_literal(v.key) if isinstance(v.key, fl.NumberLiteral) else v.key.name,
                 _compile_pattern(lang, v.value)) for v in expr.variants]
    default = next(parts for v, (_, parts) in zip(expr.variants, variants, strict=True) if v.default)
    plural = _plural(lang)

    def select(values: _Values) -> str:
        value = values[name]
        if options is not None and not _is_number(value):
            raise _Unsupported  # NUMBER() of a string: Fluent's error
        if _is_number(value):
            category = plural(value)
            for key, parts in variants:
                if (key == value) if _is_number(key) else (key == category):
                    return _join(parts, values)
        elif type(value) is str:  # a string selector matches a variant of its name; a numeric key by its category
            for key, parts in variants:
                if (key == value) if isinstance(key, str) else (plural(key) == value):
                    return _join(parts, values)
        else:
            raise _Unsupported
        return _join(default, values)

    return select


@cache
def _compiled(lang: str, key: str) -> tuple[_Part, ...] | None:
    message = _message(lang, key)
    if message is None or message.value is None:
        raise TextError(f"no text {key!r} in {lang!r}")
    try:
        return _compile_pattern(lang, message.value)
    except _Unsupported:
        return None


# One number style per language (CLDR): English "2,142" and "0.01", Russian "2 142" (narrow no-break space) and
# "0,01". Every number a front end prints itself goes through `number`; Fluent formats the ones it is given.
_GROUP = {"en": ",", "ru": "\u00a0"}  # CLDR ru: no-break space, as Fluent formats its numbers
_DECIMAL = {"en": ".", "ru": ","}
# Python's "1,234.5" into each language's marks in one pass (None: already the language's own).
_MARKS = {lang: None if (_GROUP[lang], _DECIMAL[lang]) == (",", ".")
          else str.maketrans({",": _GROUP[lang], ".": _DECIMAL[lang]}) for lang in _GROUP}


def number(value: float, decimals: int = 0, lang: str = "en") -> str:
    """`value` with `decimals` places in `lang`'s style: grouped thousands, the language's decimal mark."""
    text = f"{value:,.{decimals}f}"
    marks = _MARKS.get(lang)
    return text if marks is None else text.translate(marks)


_MESSAGES = (Msg, Joined)  # what `t` renders first (a tuple: `Msg | Joined` would build a union at every value)


def t(lang: str, key: str, /, **values: Any) -> str:
    """The text `key` in `lang`, with `values` in its placeholders (Msg values are rendered first)."""
    for name, value in values.items():
        if type(value) is not str and isinstance(value, _MESSAGES):
            values[name] = render(lang, value)
    compiled = _compiled(lang, key)
    if compiled is not None:
        try:
            return _join(compiled, values)
        except KeyError as exc:
            raise TextError(f"text {key!r} needs a value for {exc.args[0]!r}") from None
        except _Unsupported:
            pass  # Fluent's own way (or its error) below
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


def warm_up() -> None:
    """What a long-running front end does once at start-up: every message of both catalogs compiled and Babel's
    locale data read (its first number formatted costs ~45 ms), so no user's first answer pays for a text's first
    use. ~0.1 s after the estimate path's warm-up, ~2 MB."""
    for lang in LANGS:
        for key in _where(lang):
            if not key.startswith("-"):  # a term is only ever reached through a message
                _compiled(lang, key)
        _formatted(lang, "float", 1234.5, ())
        _plural(lang)(1)
