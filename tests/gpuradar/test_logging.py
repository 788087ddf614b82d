"""Structured logs: JSON lines, and neither the bot token nor a user's data ever reaches the output."""

from __future__ import annotations

import io
import json
import logging
import warnings
from collections.abc import Iterator

import pytest
from aiogram.types import Update

from gpuradar.logs import Redactor, configure_logging

TOKEN = "7412345678:AAHk3mX9_p-QrStUvWxYz0123456789abcdEF"
USER_TEXT = "please find me an H100 for my secret-project-falcon"
USERNAME = "alice_the_tuner"
CHAT_ID = 987654321


@pytest.fixture(autouse=True)
def restore_root_logger() -> Iterator[None]:
    """configure_logging changes process-wide state; put it back for the tests that follow."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    logging.captureWarnings(False)


@pytest.fixture
def output() -> io.StringIO:
    stream = io.StringIO()
    configure_logging("DEBUG", secrets=[TOKEN, "webhook-s3cret"], stream=stream)
    return stream


def lines(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def update_from_user() -> Update:
    return Update.model_validate(
        {
            "update_id": 10,
            "message": {
                "message_id": 5,
                "date": 1700000000,
                "chat": {"id": CHAT_ID, "type": "private", "username": USERNAME, "first_name": "Alice"},
                "from": {"id": CHAT_ID, "is_bot": False, "first_name": "Alice", "username": USERNAME},
                "text": USER_TEXT,
            },
        }
    )


def test_token_never_reaches_the_output(output: io.StringIO) -> None:
    log = logging.getLogger("gpuradar.test")
    log.info("starting with token %s", TOKEN)
    log.warning("GET https://api.telegram.org/bot%s/getUpdates failed", TOKEN)
    log.info("file at https://api.telegram.org/file/bot42:short/photos/1.jpg")  # a short (stand-in) token too
    log.info("database postgresql+asyncpg://radar:pa55word@db:5432/gpuradar")
    try:
        raise RuntimeError(f"request to /bot{TOKEN}/sendMessage broke; secret webhook-s3cret")
    except RuntimeError:
        log.exception("send failed")
    log.info("webhook set", extra={"url": f"https://example.org/bot{TOKEN}/hook", "token": TOKEN})
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn(f"deprecated call with {TOKEN}", UserWarning, stacklevel=1)

    text = output.getvalue()
    assert TOKEN not in text and TOKEN.split(":")[1] not in text
    assert "42:short" not in text and "pa55word" not in text and "webhook-s3cret" not in text
    # Only this test's records: the root logger is at DEBUG here, and a library thread left by an earlier test
    # (aiosqlite finishing a close after its engine was disposed) may log into the same stream at any moment.
    records = [r for r in lines(output) if r["logger"] in ("gpuradar.test", "py.warnings")]
    assert len(records) == 7
    assert records[6]["logger"] == "py.warnings" and "[REDACTED]" in records[6]["msg"]
    assert records[0]["msg"] == "starting with token [REDACTED]"
    assert records[1]["msg"] == "GET https://api.telegram.org/bot[REDACTED]/getUpdates failed"
    assert records[2]["msg"] == "file at https://api.telegram.org/file/bot[REDACTED]/photos/1.jpg"
    assert records[3]["msg"] == "database postgresql+asyncpg://radar:***@db:5432/gpuradar"
    assert records[4]["level"] == "error" and "RuntimeError" in records[4]["exc"]
    assert records[5]["url"] == "https://example.org/bot[REDACTED]/hook"
    assert {"ts", "level", "logger", "msg"} <= set(records[0])


def test_token_shaped_strings_are_redacted_without_configuration() -> None:
    redactor = Redactor()
    other = "1234567:" + "x" * 35
    assert redactor.text(f"token={other} end") == "token=[REDACTED_TOKEN] end"


def test_user_data_never_reaches_the_output(output: io.StringIO) -> None:
    log = logging.getLogger("bot.test")
    update = update_from_user()
    log.info("update received: %s", update)  # aiogram's repr: Chat(id=…), username='…', text='…'
    log.info("incoming %s", update.model_dump_json())  # raw JSON of the update
    log.info("message", extra={"chat_id": CHAT_ID, "username": USERNAME, "text": USER_TEXT, "gpu": "H100"})
    log.info("answered chat_id=%d user_id=%d", CHAT_ID, CHAT_ID)

    text = output.getvalue()
    for secret in (USER_TEXT, "secret-project-falcon", USERNAME, str(CHAT_ID), "Alice"):
        assert secret not in text, secret
    records = [r for r in lines(output) if r["logger"] == "bot.test"]  # not a stray library thread's (see above)
    assert len(records) == 4
    structured = records[2]
    assert structured["gpu"] == "H100"  # ordinary fields survive
    assert structured["text"] == f"<redacted {len(USER_TEXT)} chars>"
    # one chat, one pseudonym, wherever it appeared: a support engineer can still follow a user's trail
    pseudonym = structured["chat_id"]
    assert pseudonym.startswith("id#")
    assert records[3]["msg"] == f"answered chat_id={pseudonym} user_id={pseudonym}"
    assert pseudonym in records[0]["msg"]


def test_pseudonyms_differ_per_user_and_depend_on_the_key() -> None:
    a, b = Redactor([TOKEN]), Redactor(["another-token-value"])
    assert a.pseudonym(1) == a.pseudonym(1) != a.pseudonym(2)
    assert a.pseudonym(1) != b.pseudonym(1)  # without the key, an id cannot be brute-forced back from its pseudonym


def test_plain_text_mode_is_redacted_too() -> None:
    stream = io.StringIO()
    configure_logging("INFO", json_lines=False, secrets=[TOKEN], stream=stream)
    logging.getLogger("x").info("token %s text=%r", TOKEN, USER_TEXT)
    logging.getLogger("x").debug("below the level")
    out = stream.getvalue()
    assert TOKEN not in out and USER_TEXT not in out
    assert "token [REDACTED] text=<redacted" in out
    assert "below the level" not in out


def test_configuring_twice_does_not_duplicate_lines() -> None:
    first, second = io.StringIO(), io.StringIO()
    configure_logging("INFO", stream=first)
    configure_logging("INFO", stream=second)
    logging.getLogger("y").info("once")
    assert first.getvalue() == ""
    assert [r["msg"] for r in lines(second)] == ["once"]
