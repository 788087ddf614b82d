"""bot/delivery/policy.py: every Telegram error a send can meet maps to the action the sender takes, alone (no
sender, no server): the table retry behaviour is changed in."""

from __future__ import annotations

import pytest
from aiogram.exceptions import (
    TelegramAPIError,
    TelegramBadRequest,
    TelegramConflictError,
    TelegramEntityTooLarge,
    TelegramForbiddenError,
    TelegramMigrateToChat,
    TelegramNetworkError,
    TelegramNotFound,
    TelegramRetryAfter,
    TelegramServerError,
    TelegramUnauthorizedError,
)
from aiogram.methods import SendMessage

from bot.delivery.policy import Action, classify

M = SendMessage(chat_id=1, text="x")


@pytest.mark.parametrize(("error", "action", "detail", "metric"), [
    (TelegramRetryAfter(M, "Too Many Requests", retry_after=7), Action.WAIT, "", ""),
    (TelegramMigrateToChat(M, "migrated", migrate_to_chat_id=-100123), Action.MOVE_CHAT, "", ""),
    (TelegramForbiddenError(M, "bot was blocked by the user"), Action.CHAT_REFUSED,
     "blocked: bot was blocked by the user", ""),
    (TelegramBadRequest(M, "Bad Request: chat not found"), Action.CHAT_REFUSED,
     "chat gone: Bad Request: chat not found", ""),
    (TelegramNotFound(M, "Not Found: chat not found"), Action.CHAT_REFUSED, "chat gone: Not Found: chat not found", ""),
    (TelegramBadRequest(M, "Bad Request: can't parse entities"), Action.FAIL,
     "Bad Request: can't parse entities", "bad_request"),
    (TelegramNetworkError(M, "connection reset"), Action.RETRY, "HTTP Client says - connection reset", ""),
    (TelegramServerError(M, "Bad Gateway"), Action.RETRY, "Telegram server says - Bad Gateway", ""),
    (TimeoutError(), Action.RETRY, "TimeoutError", ""),
    (ConnectionResetError("reset by peer"), Action.RETRY, "reset by peer", ""),
    (TelegramUnauthorizedError(M, "Unauthorized"), Action.FAIL, "Unauthorized", "telegram_error"),
    (TelegramConflictError(M, "Conflict"), Action.FAIL, "Conflict", "telegram_error"),
    (TelegramEntityTooLarge(M, "Request Entity Too Large"), Action.FAIL, "Request Entity Too Large", "telegram_error"),
])
def test_each_telegram_error_has_its_action(error: BaseException, action: Action, detail: str, metric: str) -> None:
    verdict = classify(error)
    assert verdict is not None
    assert (verdict.action, verdict.detail, verdict.metric) == (action, detail, metric)


def test_what_telegram_says_to_wait_or_where_to_go_is_kept() -> None:
    wait = classify(TelegramRetryAfter(M, "Too Many Requests", retry_after=7))
    moved = classify(TelegramMigrateToChat(M, "migrated", migrate_to_chat_id=-100123))
    assert wait is not None and wait.retry_after == 7
    assert moved is not None and moved.migrate_to == -100123


def test_an_error_that_is_not_telegrams_answer_is_left_to_the_caller() -> None:
    assert classify(KeyError("ours")) is None
    assert classify(ValueError("ours")) is None
    unknown = classify(TelegramAPIError(M, "anything else"))
    assert unknown is not None and unknown.action is Action.FAIL
