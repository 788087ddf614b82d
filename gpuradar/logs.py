"""Structured logging: one JSON object per line, with secrets and user data redacted before anything is written.

Redaction happens in the formatter, on the final text of every record (message, arguments, exception traceback and
`extra=` fields), so it also covers third-party loggers (aiogram, aiohttp, httpx, SQLAlchemy) that know nothing
about it. What is removed, and how, is core.redaction's: the same redactor every stored or printed error text
passes (configure_logging installs it as the process's one).

User data is recognised by key (`chat_id=…`, `"text": "…"`, `Chat(id=…)` in aiogram's model reprs, and the same
keys in `extra=`). Log user data through `extra={"chat_id": …}` rather than interpolating it into free text.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, TextIO

from pydantic import BaseModel

from core.redaction import Redactor, install

__all__ = ["JsonFormatter", "LogSettings", "RedactingTextFormatter", "Redactor", "configure_logging"]

QUIET_LOGGERS = ("httpx", "httpcore")


class LogSettings(BaseModel):
    """`LOG__LEVEL`, `LOG__JSON` once mounted on the application settings."""

    level: str = "INFO"
    json_lines: bool = True  # JSON lines for machines; plain text (still redacted) for a developer's terminal


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
    install(redactor)  # error texts stored or printed outside logging pass the same one (core.redaction.redact)
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
