"""One redactor for every text that leaves the process: log lines (gpuradar.logs formats each record through it)
and error texts that are stored (scrape_runs.error, provider_health.last_error), printed (`gpuradar scrape`,
`providers check`) or sent to an admin.

What is removed:

- every configured secret (the bot token, the webhook secret, each provider's key, HF_TOKEN, the database password),
  also as it appears inside a URL; anything shaped like a Telegram token, and the `/bot<token>/` part of URLs;
- passwords inside URLs (`scheme://user:password@host`);
- user data: chat and user ids are replaced by a keyed pseudonym (the same id gives the same pseudonym, so one
  user's trail can still be followed, but the id cannot be recovered without the key); usernames, names and
  message texts are replaced outright.

User data is recognised by key (`chat_id=…`, `"text": "…"`, `Chat(id=…)` in aiogram's model reprs). The process
has one active redactor (`install`, done by `gpuradar.logs.configure_logging` with the settings' secrets);
`redact` is what code outside logging calls. Pure: no I/O, nothing from the other packages.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets as _secrets
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus

TOKEN_RE = re.compile(r"\d{6,}:[A-Za-z0-9_-]{30,}")
# Bot API URLs carry the token in the path: /bot<token>/method and /file/bot<token>/path, however short the token.
BOT_PATH_RE = re.compile(r"/bot\d+:[^/\s'\"]*")
URL_PASSWORD_RE = re.compile(r"(?P<head>[a-zA-Z][a-zA-Z0-9+.-]*://[^:/\s@]+:)[^@/\s]+@")

ID_KEYS = frozenset({"chat_id", "user_id", "from_user_id", "sender_chat_id", "migrate_to_chat_id"})
TEXT_KEYS = frozenset(
    {"text", "caption", "query", "message_text", "username", "first_name", "last_name", "full_name",
     "phone_number", "user_text", "bio"}
)  # fmt: skip

_QUOTED = r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\""
# key=value, key: value, 'key': value, "key": value -- in plain messages, reprs and embedded JSON alike.
_KEY_VALUE_RE = re.compile(
    r"(?P<key>['\"]?\b(?P<name>" + "|".join(sorted(ID_KEYS | TEXT_KEYS)) + r")\b['\"]?\s*[:=]\s*)"
    r"(?P<value>" + _QUOTED + r"|[^\s,;)}\]]+)"
)
# The id of a chat or user object: aiogram's reprs (Chat(id=123, …), User(id=123, …)) and raw update JSON
# ("chat": {"id": 123, …}, "from": {"id": 123, …}).
_MODEL_ID_RE = re.compile(
    r"(?P<key>\b(?:Chat|User)\(id="
    r"|['\"]?\b(?:chat|from|from_user|user|sender_chat|forward_from|forward_from_chat)\b['\"]?\s*[:=]\s*"
    r"\{\s*['\"]?id['\"]?\s*[:=]\s*)"
    r"(?P<value>-?\d+)"
)


class Redactor:
    """Replaces secrets and user data in text and in structured values."""

    def __init__(self, secrets: Iterable[str | None] = (), pseudonym_key: bytes | None = None) -> None:
        given = [s for s in secrets if s]
        self.secrets = _forms(given)
        # Keyed with the first secret (the bot token) when there is one: every replica then gives a user the same
        # pseudonym. Otherwise a random per-process key: pseudonyms still correlate within this process's logs.
        self._key = pseudonym_key or (given[0].encode() if given else _secrets.token_bytes(32))

    def add(self, secrets: Iterable[str | None]) -> None:
        """More secrets to remove (the pseudonym key stays what it was)."""
        self.secrets = _forms([*self.secrets, *(s for s in secrets if s)])

    def pseudonym(self, value: object) -> str:
        digest = hmac.new(self._key, str(value).encode(), hashlib.sha256).hexdigest()
        return f"id#{digest[:10]}"

    def text(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "[REDACTED]")
        text = TOKEN_RE.sub("[REDACTED_TOKEN]", text)
        text = BOT_PATH_RE.sub("/bot[REDACTED]", text)
        text = URL_PASSWORD_RE.sub(r"\g<head>***@", text)
        text = _MODEL_ID_RE.sub(lambda m: m["key"] + self.pseudonym(m["value"]), text)
        return _KEY_VALUE_RE.sub(self._key_value, text)

    def _key_value(self, match: re.Match[str]) -> str:
        name, value = match["name"], match["value"]
        if value in ("None", "null"):
            return match[0]
        if name in ID_KEYS:
            return match["key"] + self.pseudonym(value.strip("'\""))
        return match["key"] + _placeholder(value.strip("'\""))

    def value(self, key: str | None, value: Any) -> Any:
        """A structured value under `key` (an `extra=` field), redacted recursively."""
        if value is None or isinstance(value, bool):
            return value
        if key in ID_KEYS:
            return self.pseudonym(value)
        if key in TEXT_KEYS:
            return _placeholder(str(value))
        if isinstance(value, Mapping):
            return {str(k): self.value(str(k), v) for k, v in value.items()}
        if isinstance(value, list | tuple | set | frozenset):
            return [self.value(None, v) for v in value]
        if isinstance(value, int | float):
            return value
        return self.text(str(value))


def _forms(secrets: Iterable[str]) -> list[str]:
    """Each secret also as it appears inside a URL (percent-encoded, '+' for spaces), e.g. a key in a query string;
    longest first, so a secret that contains another is removed whole."""
    forms = {form for s in secrets for form in (s, quote(s, safe=""), quote_plus(s), quote(s))}
    return sorted(forms, key=len, reverse=True)


def _placeholder(value: str) -> str:
    return f"<redacted {len(value)} chars>"


_active = Redactor()


def install(redactor: Redactor) -> None:
    """Make `redactor` the one `redact` uses (configure_logging does, with every configured secret)."""
    global _active
    _active = redactor


def active() -> Redactor:
    return _active


def register(*secrets: str | None) -> None:
    """Add secrets to the active redactor (a value known only once a part is built)."""
    _active.add(secrets)


def redact(text: str, *also: str | None) -> str:
    """`text` with every secret and user datum removed: the active redactor's, and `also` (a caller's own secrets,
    e.g. the provider settings an error came from, removed even before logging is configured)."""
    for secret in _forms(s for s in also if s):
        text = text.replace(secret, "[REDACTED]")
    return _active.text(text)
