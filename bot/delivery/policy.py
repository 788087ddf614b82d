"""What a failed send means for its delivery: one table from Telegram's errors to an action.

Changing retry behaviour means changing a row here (and `AlertSender._act`, which carries the actions out); the
sender itself never inspects an exception. Rows are tried in order, the first whose types match wins, so the
specific errors come before `TelegramAPIError`, their common base. An error no row names is not Telegram's
answer but our own fault: the sender logs it and requeues the delivery.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from aiogram.exceptions import (
    TelegramAPIError,
    TelegramBadRequest,
    TelegramEntityTooLarge,
    TelegramForbiddenError,
    TelegramMigrateToChat,
    TelegramNetworkError,
    TelegramNotFound,
    TelegramRetryAfter,
    TelegramServerError,
)


class Action(StrEnum):
    WAIT = "wait"  # 429: not delivered; the chat (or everyone) waits as long as Telegram says, then it goes again
    MOVE_CHAT = "move_chat"  # the group became a supergroup: the same message goes to the new chat id
    CHAT_REFUSED = "chat_refused"  # a group refusing us -> the user's private chat; a private chat: user blocked us
    FAIL = "fail"  # refused for good (the message itself is wrong): recorded as failed, never retried
    RETRY = "retry"  # transient (network, 5xx, timeout): retried with backoff until the attempts run out


@dataclass(frozen=True, slots=True)
class Verdict:
    action: Action
    detail: str = ""  # what is stored with the delivery (failed or requeued) or the user (blocked)
    metric: str = ""  # the `alert_failed` reason for FAIL
    retry_after: float = 0.0  # WAIT: seconds, as Telegram said
    migrate_to: int = 0  # MOVE_CHAT: the new chat id


def _bad_request(e: Any) -> Verdict:
    if "chat not found" in e.message.lower():
        return Verdict(Action.CHAT_REFUSED, f"chat gone: {e.message}")
    return Verdict(Action.FAIL, e.message, metric="bad_request")


RULES: tuple[tuple[tuple[type[BaseException], ...], Callable[[Any], Verdict]], ...] = (
    ((TelegramRetryAfter,), lambda e: Verdict(Action.WAIT, retry_after=e.retry_after)),
    ((TelegramMigrateToChat,), lambda e: Verdict(Action.MOVE_CHAT, migrate_to=e.migrate_to_chat_id)),
    ((TelegramForbiddenError,), lambda e: Verdict(Action.CHAT_REFUSED, f"blocked: {e.message}")),
    ((TelegramBadRequest, TelegramNotFound), _bad_request),
    # aiogram files a 413 under network errors; the same request can never pass, so it is not retried.
    ((TelegramEntityTooLarge,), lambda e: Verdict(Action.FAIL, e.message, metric="telegram_error")),
    ((TelegramNetworkError, TelegramServerError, TimeoutError, OSError),
     lambda e: Verdict(Action.RETRY, str(e) or type(e).__name__)),
    ((TelegramAPIError,), lambda e: Verdict(Action.FAIL, e.message, metric="telegram_error")),
)


def classify(error: BaseException) -> Verdict | None:
    """The verdict for a failed send; None for an error that is not Telegram's answer (a bug of ours)."""
    for types, verdict in RULES:
        if isinstance(error, types):
            return verdict(error)
    return None
