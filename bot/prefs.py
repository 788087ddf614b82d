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


# Users remembered at most (the longest-unseen forgotten first). An entry is ~100 bytes (a dict slot and the user
# id; the few (lang, currency) pairs are shared objects), so the cap is ~10 MB at worst, under the 50,000 users a
# deployment is sized for by far: one forgotten user's inline answers use Telegram's language_code (and that
# language's default currency) until their next message remembers them again.
PREFS_KEPT = 100_000


class PrefsCache:
    def __init__(self, capacity: int = PREFS_KEPT) -> None:
        self._prefs: dict[int, Prefs] = {}  # insertion order = least recently remembered first
        self._shared: dict[tuple[str, str], Prefs] = {}
        self.capacity = capacity

    def remember(self, user_id: int, lang: str, currency: str) -> None:
        prefs = self._shared.get((lang, currency))
        if prefs is None:
            prefs = self._shared[(lang, currency)] = Prefs(lang, currency)
        self._prefs.pop(user_id, None)  # re-inserted: now the most recently remembered
        self._prefs[user_id] = prefs
        while len(self._prefs) > self.capacity:
            del self._prefs[next(iter(self._prefs))]

    def get(self, user_id: int, language_code: str | None) -> Prefs:
        known = self._prefs.get(user_id)
        if known is not None:
            return known
        lang = normalise_lang(language_code)
        return Prefs(lang, DEFAULT_CURRENCY[lang])

    def __len__(self) -> int:
        return len(self._prefs)
