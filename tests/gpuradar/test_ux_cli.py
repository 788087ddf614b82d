"""The command line speaks the user's language and says what its numbers mean (issue 12): Russian for Cyrillic input
unless --lang says otherwise, honest refusals of impossible sizes, and an exchange-rate line in words."""

from __future__ import annotations

import pytest

from core.offers import Rates
from gpuradar.cli import main
from gpuradar.commands.scrape import rates_line


def _estimate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(["estimate", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def test_cyrillic_input_answers_in_russian(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _estimate(capsys, "инференс 7B, контекст 8k")
    assert rc == 0 and "Память на один GPU" in out
    rc, out, _ = _estimate(capsys, "инференс 7B, контекст 8k", "--lang", "en")
    assert rc == 0 and "Memory per GPU" in out
    rc, out, _ = _estimate(capsys, "7B inference ctx 8k")
    assert rc == 0 and "Memory per GPU" in out
    rc, _, err = _estimate(capsys, "полное дообучение пингвина")
    assert rc == 2 and "Не понял" in err


@pytest.mark.parametrize(("args", "needle_en"), [
    (("--", "-7B", "lora"), "cannot be negative"),
    (("llama-3.1-70b", "inference", "ctx", "1m"), "at most 131,072 tokens"),
    (("70B", "inference", "100000", "users"), "between 1 and 4,096"),
])
def test_impossible_sizes_are_refused_with_the_limit(capsys: pytest.CaptureFixture[str], args: tuple[str, ...],
                                                     needle_en: str) -> None:
    rc, out, err = _estimate(capsys, *args)
    assert rc == 2 and out == "" and needle_en in err
    assert "GiB" not in err and "params_b=" not in err and "model=" not in err


def test_exchange_rate_line_says_what_the_source_means() -> None:
    cbr = Rates(rub_per={"USD": 81.5, "EUR": 95.0}, as_of="2026-11-30", source="cbr")
    assert rates_line(cbr, "en") == "Exchange rates: Bank of Russia, 2026-11-30 (EUR 95 ₽, USD 81.5 ₽)."
    fallback = Rates(rub_per={"USD": 80.0}, source="fallback")
    en, ru = rates_line(fallback, "en"), rates_line(fallback, "ru")
    assert "could not be reached" in en and "FX_FALLBACK_RUB_PER" in en and "approximate" in en
    assert "недоступен" in ru and "—" not in en
    cached = Rates(rub_per={"USD": 80.0}, as_of="2026-11-29", source="cache")
    assert "last rates kept, of 2026-11-29" in rates_line(cached, "en")
