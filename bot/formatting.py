"""Small text helpers shared by the handlers: money, GiB, escaping, cutting input and splitting long answers."""

from __future__ import annotations

import html
import re

from core.limits import MAX_INPUT_CHARS
from core.offers import HOURS_PER_MONTH
from texts.i18n import number

TELEGRAM_LIMIT = 4096  # characters per message
MAX_INPUT = MAX_INPUT_CHARS  # characters of user input we read (core.limits); a workload never needs more

CURRENCY_SIGN = {"RUB": "₽", "USD": "$"}


def esc(text: object) -> str:
    return html.escape(str(text), quote=False)


def href(url: object) -> str | None:
    """A link for `<a href="...">`: only an absolute http(s) URL, attribute-escaped (quotes included); None for
    anything else (`javascript:`, `data:`, a relative path), so a scraped link can never become script."""
    text = str(url or "").strip()
    scheme, sep, rest = text.partition("://")
    if not sep or scheme.lower() not in ("http", "https") or not rest or any(c.isspace() for c in text):
        return None
    return html.escape(text, quote=True)


def money(amount: float | None, currency: str, lang: str = "en", *, exact: bool = False) -> str:
    """'$1.89', '$1,818', '12 345 ₽', '0,35 ₽' — cents for small amounts, whole units for large ones, in the
    language's number style (texts.i18n.number). `exact`: a figure the user gave (a price cap) keeps its cents
    whatever its size ('150,50 ₽', never rounded to '150 ₽')."""
    if amount is None:
        return "—"
    sign = CURRENCY_SIGN.get(currency, currency)
    whole = amount >= 100 and (not exact or round(amount, 2) == round(amount))
    text = number(amount, 0 if whole else 2, lang)
    return f"${text}" if currency == "USD" else f"{text} {sign}"


def cap_amount(max_price: float, monthly: bool) -> float:
    """A price cap in the unit it is said back in: its hourly figure (how it is stored and compared), or, where it
    was said per month (or stands beside a monthly offer's prices), its month of 730 hours: the figure the user
    typed ("до 150 000 ₽ в месяц" is held as 205.479452 ₽/h and said back as 150 000 ₽)."""
    return round(max_price * HOURS_PER_MONTH, 2) if monthly else max_price


def gib(value: float, lang: str = "en") -> str:
    return number(value, 1, lang)


# C0/C1 control characters but tab and newline (NUL, ESC, DEL...): no phrase needs them, and echoed back they
# garble the answer (or, NUL, truncate it in a client).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]+")


def has_control(text: str) -> bool:
    return _CONTROL.search(text) is not None


def cut_input(text: str, limit: int = MAX_INPUT) -> tuple[str, bool]:
    """The first `limit` characters (at a word boundary when there is one) and whether anything was cut. Control
    characters read as spaces: the one gate every user text passes, so none is ever echoed."""
    text = _CONTROL.sub(" ", text).strip()
    if len(text) <= limit:
        return text, False
    head = text[:limit]
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip(), True


def split_message(text: str, limit: int = TELEGRAM_LIMIT) -> list[str]:
    """Pieces under Telegram's limit, cut at line breaks (a single over-long line is cut hard)."""
    if len(text) <= limit:
        return [text]
    parts: list[str] = []
    current = ""
    for line in text.split("\n"):
        while len(line) > limit:
            if current:
                parts.append(current)
                current = ""
            parts.append(line[:limit])
            line = line[limit:]
        candidate = f"{current}\n{line}" if current else line
        if len(candidate) > limit:
            parts.append(current)
            current = line
        else:
            current = candidate
    if current:
        parts.append(current)
    return parts
