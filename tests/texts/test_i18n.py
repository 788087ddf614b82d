"""The one text catalog (texts/locales/<lang>/*.ftl): same keys and placeholders in both languages, real plurals,
no silent fallback, and core speaks in codes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.msg import Joined, msg
from texts.i18n import LANGS, TextError, messages, placeholders, plural_selectors, render, t

ROOT = Path(__file__).resolve().parents[2]
CYRILLIC = re.compile(r"[А-Яа-яЁё]")
PLURAL_COUNTS = (1, 2, 5, 11, 21, 22, 25)

# Texts that read the same in both languages (a name, a number, a symbol).
SAME_IN_BOTH = {"est_header", "subs_line", "btn_pause", "btn_resume", "btn_delete", "quiet_range",
                "inline_example_title", "f_billing", "billing_spot", "alert_where", "cli_est_gpu"}


def _sample(message, lang: str) -> dict[str, object]:
    selectors = plural_selectors(message)
    return {name: (3 if name in selectors else "x") for name in placeholders(message)}


def test_both_languages_have_the_same_keys_and_placeholders():
    ru, en = messages("ru"), messages("en")
    assert ru.keys() == en.keys(), sorted(ru.keys() ^ en.keys())
    for key, message in en.items():
        assert placeholders(ru[key]) == placeholders(message), key
        assert plural_selectors(ru[key]) <= placeholders(ru[key]), key


def test_every_text_renders_in_both_languages_and_reads_as_its_language():
    en = messages("en")
    for key, message in en.items():
        values = _sample(message, "en")
        ru_text, en_text = t("ru", key, **values), t("en", key, **values)
        assert ru_text and en_text, key
        if key not in SAME_IN_BOTH and CYRILLIC.search(ru_text + en_text):
            assert ru_text != en_text, key
        assert not CYRILLIC.search(en_text), (key, en_text)


@pytest.mark.parametrize("n", PLURAL_COUNTS)
def test_every_plural_message_renders_for_typical_counts(n: int):
    """Each message that varies with a count renders for 1, 2, 5, 11, 21, 22, 25, and Russian picks the CLDR
    form: 1/21 one, 2/22 few, 5/11/25 many — never a hack such as «конфигураций(и)» or «offer(s)»."""
    en = messages("en")
    plural = {k: m for k, m in en.items() if plural_selectors(m)}
    assert len(plural) >= 8
    for key, message in plural.items():
        values: dict[str, object] = {name: "x" for name in placeholders(message)}
        values.update({name: n for name in plural_selectors(message)})
        for lang in LANGS:
            text = t(lang, key, **values)
            assert str(n) in text, (lang, key, text)
            assert "(s)" not in text and "(ов)" not in text and "(и)" not in text, (lang, key, text)


@pytest.mark.parametrize(("n", "word"), [(1, "конфигурация"), (2, "конфигурации"), (5, "конфигураций"),
                                         (11, "конфигураций"), (21, "конфигурация"), (22, "конфигурации"),
                                         (25, "конфигураций")])
def test_russian_plural_forms_follow_cldr(n: int, word: str):
    assert t("ru", "est_fits_more", n=n).endswith(f" {n} {word}")


@pytest.mark.parametrize(("n", "text"), [(1, "1 more configuration"), (2, "2 more configurations"),
                                         (21, "21 more configurations")])
def test_english_plural_forms(n: int, text: str):
    assert t("en", "est_fits_more", n=n).endswith(text)


def test_no_silent_fallback():
    with pytest.raises(TextError):
        t("de", "start")
    with pytest.raises(TextError):
        t("ru", "no_such_text")
    with pytest.raises(TextError):
        t("en", "est_fits_more")  # the count is missing
    with pytest.raises(TextError):
        t("ru", "input_cut")


def test_core_messages_render_nested_values():
    m = msg("cli_est_no_fit", where=Joined((msg("cli_est_gpu"), "x"), " "))
    assert render("en", m) == "Does not fit on GPU x."
    assert render("ru", m) == "Не помещается на GPU x."


def test_no_text_tables_outside_the_catalog():
    """The old ways are gone: no per-module text dicts, no (en, ru) tuples, no English fallback."""
    for path in [*ROOT.glob("bot/**/*.py"), *ROOT.glob("gpuradar/**/*.py"), *ROOT.glob("core/**/*.py")]:
        source = path.read_text(encoding="utf-8")
        assert not re.search(r"^(TEXTS|ALERT_TEXTS|MESSAGES|WEBHOOK_MESSAGES|_L)\b.*= \{", source, re.M), path
        assert 'or TEXTS["en"]' not in source and 'ALERT_TEXTS["en"]' not in source, path
        assert not re.search(r"\"[^\"]*\" if lang == \"ru\" else \"", source), path  # an inline sentence pair


# Numbers around every CLDR plural boundary of both languages (one / few / many / other, 11-14, 21, 101), grouping
# (1000, 12345, a million), negative and fractional ones (Fluent keeps up to three decimals), and strings.
_NUMBERS = (0, 1, 2, 3, 4, 5, 11, 12, 14, 21, 22, 25, 101, 111, 999, 1000, 1001, 12345, 1_000_000, -1, -3,
            0.5, 1.0, 1.5, 2.25, 21.0, 0.0001, 1234.5678)


def _fluent(lang: str, key: str, values: dict[str, object]) -> str | None:
    """What Fluent's own resolver makes of `key` with `values`; None where it reports an error."""
    from texts.i18n import _bundle

    bundle = _bundle(lang)
    text, errors = bundle.format_pattern(bundle.get_message(key).value, dict(values))
    return None if errors else str(text)


@pytest.mark.parametrize("lang", LANGS)
def test_every_compiled_text_reads_as_fluent_formats_it(lang: str):
    """The compiled catalog (texts without Fluent's resolver: plurals, NUMBER(), grouping included) must read
    exactly as Fluent formats the same text, for every message, numbers at the plural boundaries, strings and each
    variant's own key; a value Fluent refuses is refused (TextError) or shown as the plain path always showed it."""
    import random

    from texts.i18n import _compiled

    rng = random.Random(26)
    compiled = 0
    for key, message in messages(lang).items():
        if _compiled(lang, key) is None:
            continue
        compiled += 1
        names = sorted(placeholders(message))
        keys = sorted({v.key.name for v in _variants(message) if hasattr(v.key, "name")})
        trials: list[dict[str, object]] = [{}] if not names else []
        for value in (*_NUMBERS, "x", *keys):
            trials.append(dict.fromkeys(names, value))
        for _ in range(20 if names else 0):  # mixed: each placeholder its own value
            trials.append({name: rng.choice((*_NUMBERS, "x", *keys)) for name in names})
        for values in trials:
            expected = _fluent(lang, key, values)
            if expected is None:  # Fluent refuses: the compiled path must too
                with pytest.raises(TextError):
                    t(lang, key, **values)
            else:
                assert t(lang, key, **values) == expected, (key, values)
    assert compiled == len(messages(lang))  # the catalog uses nothing the compiler leaves to Fluent


def _variants(message):  # type: ignore[no-untyped-def]
    from fluent.syntax import ast as fl
    from fluent.syntax.visitor import Visitor

    found: list[fl.Variant] = []

    class Collect(Visitor):
        def visit_Variant(self, node: fl.Variant) -> None:
            found.append(node)
            self.generic_visit(node)

    Collect().visit(message)
    return found


def test_a_text_the_compiler_does_not_know_still_goes_through_fluent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A message with a construct outside the compiled subset (a message reference) is formatted by Fluent."""
    from fluent.syntax import FluentParser

    import texts.i18n as i18n

    resource = FluentParser().parse("base = GPU\nref = { base } x{ $n }\n")
    messages_ = {e.id.name: e for e in resource.body}
    monkeypatch.setattr(i18n, "_message", lambda lang, key: messages_.get(key))
    i18n._compiled.cache_clear()
    try:
        assert i18n._compiled("en", "ref") is None
        assert i18n._compiled("en", "base") == ("GPU",)
    finally:
        i18n._compiled.cache_clear()


def test_a_plural_and_a_grouped_number_on_the_compiled_path():
    """Spot checks a reader can verify by eye: Russian few/many and its no-break-space grouping."""
    from texts.i18n import _compiled

    assert _compiled("ru", "est_fits_more") is not None
    assert t("ru", "est_fits_more", n=2) != t("ru", "est_fits_more", n=5)
    assert t("ru", "est_fits_more", n=21) == t("ru", "est_fits_more", n=1).replace("1", "21")
    assert "12\u00a0345" in t("ru", "est_fits_more", n=12345)
    assert "12,345" in t("en", "est_fits_more", n=12345)
