"""bot/lazy_aiogram.py: aiogram's Telegram types and API methods are built when first used, and every one of them
still builds and validates exactly as aiogram's own eager import would have built it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[2]

# Run in a fresh interpreter: this test process imported aiogram long ago. It imports what `gpuradar run` imports,
# validates an update whose message nests most of the common types lazily, then forces the build of every aiogram
# type (the eager import's work) to prove each one's annotations resolve.
SCRIPT = r"""
import json, sys
import gpuradar.app  # what `gpuradar run` imports first
import aiogram.types as T
import aiogram.methods as M
from aiogram.methods import AnswerInlineQuery
from pydantic import BaseModel

out = {"deferred_at_start": [n for n in ("Message", "Update", "Chat", "InlineQuery", "CallbackQuery")
                             if not getattr(T, n).__pydantic_complete__],
       "methods_deferred": [n for n in ("SendMessage", "AnswerInlineQuery", "EditMessageText")
                            if not getattr(M, n).__pydantic_complete__]}
update = T.Update.model_validate({"update_id": 1, "message": {
    "message_id": 5, "date": 1700000000, "chat": {"id": 7, "type": "private"},
    "from": {"id": 7, "is_bot": False, "first_name": "A", "language_code": "ru"},
    "text": "/start sub_x", "entities": [{"type": "bot_command", "offset": 0, "length": 6}],
    "reply_to_message": {"message_id": 4, "date": 1700000000, "chat": {"id": 7, "type": "private"}, "text": "hi",
                         "reply_markup": {"inline_keyboard": [[{"text": "Stop", "callback_data": "a:1"}]]}}}})
m = update.message
out["parsed"] = [m.from_user.language_code, m.entities[0].type, m.reply_to_message.text,
                 m.reply_to_message.reply_markup.inline_keyboard[0][0].callback_data]
answer = AnswerInlineQuery(inline_query_id="9", cache_time=30, results=[T.InlineQueryResultArticle(
    id="e", title="t", input_message_content=T.InputTextMessageContent(message_text="<b>m</b>", parse_mode="HTML"),
    reply_markup=T.InlineKeyboardMarkup(inline_keyboard=[[T.InlineKeyboardButton(text="x", url="https://t.me/b")]]))])
out["answer"] = answer.results[0].reply_markup.inline_keyboard[0][0].url
out["method_built"] = [AnswerInlineQuery.__pydantic_complete__, M.SendMessage.__pydantic_complete__]
failed = []
models = [getattr(T, n) for n in T.__all__ if isinstance(getattr(T, n), type) and issubclass(getattr(T, n), BaseModel)]
methods = [getattr(M, n) for n in M.__all__ if n != "TelegramMethod"]
for cls in models + methods:
    try:
        cls.model_rebuild(force=True)
    except Exception as e:
        failed.append(f"{cls.__name__}: {e}")
out["types"] = len(models)
out["methods"] = len(methods)
out["failed"] = failed
print(json.dumps(out))
"""


def test_every_aiogram_type_and_method_is_deferred_then_builds_and_validates() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, cwd=ROOT, timeout=300,
                          check=True)
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["deferred_at_start"] == ["Message", "Update", "Chat", "InlineQuery", "CallbackQuery"]
    assert out["methods_deferred"] == ["SendMessage", "AnswerInlineQuery", "EditMessageText"]
    assert out["method_built"] == [True, False]  # built by its first use, the others still not
    assert out["parsed"] == ["ru", "bot_command", "hi", "a:1"]
    assert out["answer"] == "https://t.me/b"
    assert out["types"] > 250 and out["methods"] > 150
    assert out["failed"] == []


def test_other_models_rebuild_as_pydantic_does() -> None:
    """The deferral is only for aiogram's own import loop: a model of ours with a forward reference still resolves."""

    class Later(BaseModel):
        child: Child | None = None

    class Child(BaseModel):
        n: int

    assert Later.model_rebuild(_types_namespace={"Child": Child}) is True
    assert Later.model_validate({"child": {"n": 3}}).child == Child(n=3)


def test_the_installed_aiogram_and_pydantic_are_versions_the_deferral_was_checked_on() -> None:
    """An upgrade past `CHECKED` turns the deferral off (safe, but the memory and start-up it saves are lost): this
    fails so that the new version is verified (the test above) and the range extended on purpose."""
    from bot.lazy_aiogram import CHECKED, checked_versions

    assert checked_versions(), f"aiogram/pydantic outside the versions bot/lazy_aiogram.py was checked on: {CHECKED}"
