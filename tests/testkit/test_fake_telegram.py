"""The stand-in Bot API server behaves like Telegram towards the real aiogram client."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from aiogram import Bot, Dispatcher
from aiogram.exceptions import (
    TelegramBadRequest,
    TelegramForbiddenError,
    TelegramMigrateToChat,
    TelegramNetworkError,
    TelegramRetryAfter,
    TelegramServerError,
)
from aiogram.types import BufferedInputFile, InlineKeyboardButton, InlineKeyboardMarkup, Message

from testkit.fake_telegram import FakeTelegram


@pytest.fixture
async def tg():
    async with FakeTelegram() as server:
        yield server


@pytest.fixture
async def bot(tg):
    b = Bot(tg.token, session=tg.session())
    yield b
    await b.session.close()


async def test_get_me_and_send_message_recorded(tg, bot):
    me = await bot.get_me()
    assert me.username == "gpuradar_test_bot" and me.is_bot
    kb = InlineKeyboardMarkup(inline_keyboard=[[InlineKeyboardButton(text="Press", callback_data="x:1")]])
    sent = await bot.send_message(42, "hello <b>there</b>", reply_markup=kb)
    call = await tg.wait_for("sendMessage", chat_id=42)
    assert call.text == "hello <b>there</b>"
    assert call.button("press")["callback_data"] == "x:1"
    assert (42, sent.message_id) in tg.messages
    assert tg.stats.sent == 1 and tg.stats.sent_per_chat[42] == 1


async def test_wait_for_returns_each_call_once_in_order(tg, bot):
    await bot.send_message(1, "a")
    await bot.send_message(1, "b")
    assert (await tg.wait_for("sendMessage")).text == "a"
    assert (await tg.wait_for("sendMessage")).text == "b"
    with pytest.raises(AssertionError, match="no sendMessage"):
        await tg.wait_for("sendMessage", timeout=0.1)


async def test_send_photo_keeps_bytes(tg, bot):
    png = b"\x89PNG\r\n\x1a\n" + b"x" * 500
    await bot.send_photo(5, BufferedInputFile(png, "chart.png"), caption="chart")
    call = await tg.wait_for("sendPhoto", chat_id=5)
    assert call.photo == png
    assert call.text == "chart"


async def test_edit_and_delete(tg, bot):
    msg = await bot.send_message(9, "first")
    edited = await bot.edit_message_text("second", chat_id=9, message_id=msg.message_id)
    assert isinstance(edited, Message) and edited.text == "second"
    with pytest.raises(TelegramBadRequest, match="not modified"):
        await bot.edit_message_text("second", chat_id=9, message_id=msg.message_id)
    assert await bot.delete_message(9, msg.message_id)
    with pytest.raises(TelegramBadRequest):
        await bot.delete_message(9, msg.message_id)


async def test_faults(tg, bot):
    tg.fail("sendMessage", "429", retry_after=3)
    with pytest.raises(TelegramRetryAfter) as e:
        await bot.send_message(1, "x")
    assert e.value.retry_after == 3
    tg.fail("sendMessage", "500")
    with pytest.raises(TelegramServerError):
        await bot.send_message(1, "x")
    tg.fail("sendMessage", "drop")
    with pytest.raises(TelegramNetworkError):
        await bot.send_message(1, "x")
    tg.block_chat(77)
    with pytest.raises(TelegramForbiddenError):
        await bot.send_message(77, "x")
    await bot.send_message(78, "others unaffected")
    tg.migrate_chat(-5, -1005)
    with pytest.raises(TelegramMigrateToChat) as m:
        await bot.send_message(-5, "x")
    assert m.value.migrate_to_chat_id == -1005
    assert tg.stats.too_many == 1
    assert tg.stats.sent_per_chat[78] == 1 and tg.stats.sent_per_chat[77] == 0


async def test_fault_for_one_chat_only(tg, bot):
    tg.fail("*", "403", chat_id=3, times=2)
    await bot.send_message(4, "fine")
    for _ in range(2):
        with pytest.raises(TelegramForbiddenError):
            await bot.send_message(3, "x")
    await bot.send_message(3, "recovered")


async def test_enforced_limits_per_chat_and_global(tg, bot):
    tg.enforce_limits(global_rate=3, per_chat_rate=1, window=60)
    await bot.send_message(1, "ok")
    with pytest.raises(TelegramRetryAfter) as e:
        await bot.send_message(1, "same chat too soon")
    assert e.value.retry_after >= 1
    await bot.send_message(2, "ok")
    await bot.send_message(3, "ok")
    with pytest.raises(TelegramRetryAfter):
        await bot.send_message(4, "over the global rate")
    assert tg.stats.sent == 3
    assert tg.stats.too_many == 2
    assert tg.stats.too_many_per_chat[1] == 1 and tg.stats.too_many_per_chat[4] == 1


async def test_limits_window_slides(tg, bot):
    tg.enforce_limits(global_rate=30, per_chat_rate=1, window=0.05)
    await bot.send_message(1, "a")
    await asyncio.sleep(0.06)
    await bot.send_message(1, "b")  # the window has moved on: accepted
    assert tg.stats.too_many == 0


async def test_inline_results_validated_like_telegram(tg, bot):
    from aiogram.types import InlineQueryResultArticle, InputTextMessageContent

    def art(i: str) -> InlineQueryResultArticle:
        return InlineQueryResultArticle(id=i, title=i, input_message_content=InputTextMessageContent(message_text=i))

    with pytest.raises(TelegramBadRequest, match="DUPLICATE"):
        await bot.answer_inline_query("q1", [art("a"), art("a")])
    assert await bot.answer_inline_query("q2", [art("a"), art("b")], next_offset="10")
    call = tg.calls_of("answerInlineQuery")[-1]
    assert [r["id"] for r in call.params["results"]] == ["a", "b"]
    assert call.params["next_offset"] == "10"


async def test_updates_reach_a_polling_dispatcher(tg, bot):
    dp = Dispatcher()
    seen: list[str] = []

    @dp.message()
    async def echo(message: Message) -> None:
        seen.append(message.text or "")
        await message.answer(f"echo {message.text} {message.from_user.language_code}")

    @dp.callback_query()
    async def cb(query) -> None:  # type: ignore[no-untyped-def]
        await query.answer("pressed " + query.data)

    @dp.inline_query()
    async def iq(query) -> None:  # type: ignore[no-untyped-def]
        await query.answer([], cache_time=0)

    task = asyncio.create_task(dp.start_polling(bot, handle_signals=False, polling_timeout=1))
    try:
        tg.message("/start", user_id=11, lang="ru")
        call = await tg.wait_for("sendMessage", chat_id=11)
        assert call.text == "echo /start ru"
        tg.callback("go", user_id=11)
        answer = await tg.wait_for("answerCallbackQuery")
        assert answer.params["text"] == "pressed go"
        uid = tg.inline_query("70B", user_id=11)
        inline = await tg.wait_for("answerInlineQuery", inline_query_id=str(uid))
        assert inline.at >= tg.update_times[uid]
    finally:
        await dp.stop_polling()
        await task
    assert seen == ["/start"]


async def test_plain_http_clients_and_bad_token(tg):
    async with httpx.AsyncClient(base_url=tg.base_url) as client:
        r = await client.post(f"/bot{tg.token}/sendMessage", json={"chat_id": 5, "text": "json body"})
        assert r.json()["ok"] is True
        assert (await tg.wait_for("sendMessage", chat_id=5)).text == "json body"
        r = await client.post("/botWRONG/getMe")
        assert r.status_code == 401
        r = await client.post(f"/bot{tg.token}/noSuchMethod")
        assert r.status_code == 404
