"""Structured logging: one JSON object per line, with secrets and user data redacted before anything is written.

Redaction happens in the formatter, on the final text of every record (message, arguments, exception traceback and
`extra=` fields), so it also covers third-party loggers (aiogram, aiohttp, httpx, SQLAlchemy) that know nothing
about it. What is removed:

- the bot token: the configured value, anything shaped like a Telegram token, and the `/bot<token>/` part of URLs;
- passwords inside URLs (`scheme://user:password@host`);
- user data: chat and user ids are replaced by a keyed pseudonym (the same id gives the same pseudonym, so one
  user's trail can still be followed, but the id cannot be recovered without the key); usernames, names and
  message texts are replaced outright.

User data is recognised by key (`chat_id=…`, `"text": "…"`, `Chat(id=…)` in aiogram's model reprs, and the same
keys in `extra=`). Log user data through `extra={"chat_id": …}` rather than interpolating it into free text.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import secrets as _secrets
import sys
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, TextIO
from urllib.parse import quote, quote_plus

from pydantic import BaseModel

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


QUIET_LOGGERS = ("httpx", "httpcore")


class LogSettings(BaseModel):
    """`LOG__LEVEL`, `LOG__JSON` once mounted on the application settings."""

    level: str = "INFO"
    json_lines: bool = True  # JSON lines for machines; plain text (still redacted) for a developer's terminal


class Redactor:
    """Replaces secrets and user data in text and in structured values."""

    def __init__(self, secrets: Iterable[str | None] = (), pseudonym_key: bytes | None = None) -> None:
        given = [s for s in secrets if s]
        # Each secret also as it appears inside a URL (percent-encoded, '+' for spaces), e.g. a key in a query string.
        forms = {form for s in given for form in (s, quote(s, safe=""), quote_plus(s), quote(s))}
        # Longest first, so a secret that contains another is removed whole.
        self.secrets = sorted(forms, key=len, reverse=True)
        # Keyed with the first secret (the bot token) when there is one: every replica then gives a user the same
        # pseudonym. Otherwise a random per-process key: pseudonyms still correlate within this process's logs.
        self._key = pseudonym_key or (given[0].encode() if given else _secrets.token_bytes(32))

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


def _placeholder(value: str) -> str:
    return f"<redacted {len(value)} chars>"


# Attributes every LogRecord has; anything else on a record came from `extra=`.
_RECORD_ATTRS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, msg, [exc], [stack], and the `extra=` fields."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": self.redactor.text(record.getMessage()),
        }
        if record.exc_info:
            entry["exc"] = self.redactor.text(self.formatException(record.exc_info))
        elif record.exc_text:
            entry["exc"] = self.redactor.text(record.exc_text)
        if record.stack_info:
            entry["stack"] = self.redactor.text(self.formatStack(record.stack_info))
        for key, value in vars(record).items():
            if key not in _RECORD_ATTRS and key not in entry:
                entry[key] = self.redactor.value(key, value)
        # value() already turned every leaf into a redacted JSON scalar; default=str is a last resort, never hit.
        return json.dumps(entry, ensure_ascii=False, default=str)


class RedactingTextFormatter(logging.Formatter):
    """Human-readable lines for a terminal, redacted the same way."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s")
        self.redactor = redactor

    def format(self, record: logging.LogRecord) -> str:
        return self.redactor.text(super().format(record))


class _GpuradarHandler(logging.StreamHandler):
    """Marks the handler we installed, so configuring twice replaces it instead of doubling every line."""


def configure_logging(
    level: str | int = "INFO",
    *,
    json_lines: bool = True,
    secrets: Iterable[str | None] = (),
    stream: TextIO | None = None,
) -> Redactor:
    """Send every logger's records through one redacting handler on the root logger.

    `secrets`: values that must never appear (the bot token, the webhook secret). Returns the redactor, for code
    that writes outside logging (e.g. an error shown to an admin).
    """
    redactor = Redactor(secrets)
    handler = _GpuradarHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter(redactor) if json_lines else RedactingTextFormatter(redactor))
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _GpuradarHandler)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)
    # httpx logs every request line (method, full URL with its query string) at INFO: never at INFO or below here,
    # whatever the level, so a URL that carries a provider's key is not written at all (the redactor is the
    # second line of defence).
    for noisy in QUIET_LOGGERS:
        logging.getLogger(noisy).setLevel(logging.WARNING)
    logging.captureWarnings(True)  # warnings.warn(...) goes through the same redaction
    return redactor
