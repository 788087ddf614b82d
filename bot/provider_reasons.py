"""Why a provider is degraded, as a short reason in the user's language, from the poller's stored (English,
technical) reason: the raw text may hold an exception's words or an internal URL, and is for operators' logs.

The poller writes its reasons in a few known shapes (scrapers/errors.py, scrapers/poller.py, core/verdict.py);
each is matched to a catalog key `reason_<code>`. Anything unforeseen reads as "unexpected answer".
"""

from __future__ import annotations

import re

from texts.i18n import t

_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.IGNORECASE), code) for p, code in (
    (r"\bHTTP 429\b", "rate_limited"),
    (r"\bHTTP 40[13]\b", "access_refused"),
    (r"\bHTTP 404\b", "api_moved"),
    (r"\bHTTP 5\d\d\b", "provider_down"),
    (r"\bHTTP \d{3}\b", "http_error"),
    (r"deadline|took longer", "too_slow"),
    (r"timeout|timed out|connect|unreachable|network|dns|refused", "unreachable"),
    (r"empty result", "empty"),
    (r"shrank", "shrank"),
    (r"html|not json|captcha", "page_not_data"),
    (r"truncat|cut off", "truncated"),
    (r"too large", "too_large"),
    (r"redirect", "redirected"),
    (r"needs |api[_ ]key|credential", "needs_key"),
    (r"does not match|shape|validat|schema|bad record|records", "layout_changed"),
))


def reason_code(reason: str | None) -> str:
    for pattern, code in _RULES:
        if reason and pattern.search(reason):
            return code
    return "unexpected"


def short_reason(lang: str, reason: str | None) -> str:
    return t(lang, f"reason_{reason_code(reason)}")
