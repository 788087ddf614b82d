"""A process-wide memory of each user's language and currency, so inline queries need no database read.

The user middleware writes it on every update it loads a user for (and the settings handlers on change);
inline mode reads it and falls back to Telegram's language_code for users it has not met yet.
"""

from __future__ import annotations

from dataclasses import dataclass

from storage.subscriptions import DEFAULT_CURRENCY, normalise_lang


@dataclass(frozen=True, slots=True)
class Prefs:
    lang: str
    currency: str


class PrefsCache:
    def __init__(self) -> None:
        self._prefs: dict[int, Prefs] = {}

    def remember(self, user_id: int, lang: str, currency: str) -> None:
        self._prefs[user_id] = Prefs(lang, currency)

    def get(self, user_id: int, language_code: str | None) -> Prefs:
        known = self._prefs.get(user_id)
        if known is not None:
            return known
        lang = normalise_lang(language_code)
        return Prefs(lang, DEFAULT_CURRENCY[lang])
