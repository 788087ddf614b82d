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


@pytest.mark.parametrize("lang", LANGS)
def test_numbers_read_the_same_on_the_fast_path_as_through_fluent(lang: str):
    """Simple texts (text and placeholders only) are formatted without Fluent's resolver, small whole numbers
    included; each must read exactly as Fluent formats it (grouping, locale) for every number."""
    from texts.i18n import _bundle, _simple

    bundle = _bundle(lang)
    checked = 0
    for key, message in messages(lang).items():
        names = placeholders(message)
        if not names or _simple(lang, key) is None:
            continue
        for n in (0, 1, 7, 42, 999, 1000, 12345, -3, 2.5):
            values = {name: n for name in names}
            expected, errors = bundle.format_pattern(bundle.get_message(key).value, dict(values))
            assert not errors and t(lang, key, **values) == expected, (key, n)
        checked += 1
    assert checked > 50
