"""The bot and a model only the Hugging Face Hub knows: it says it is looking the model up, then answers; a Hub
that does not answer, or a repository that does not exist, gets a polite message in the user's language. Real
aiogram against the stand-in Telegram server, real httpx against the stand-in Hub, real database cache."""

from __future__ import annotations

import pytest

from gpuradar.app import App
from gpuradar.settings import Settings
from testkit.fake_telegram import FakeTelegram
from tests.core.test_hub import LLAMA_LIKE
from tests.support.hub_server import HubServer


@pytest.fixture
async def tg():
    async with FakeTelegram() as server:
        yield server


@pytest.fixture
async def app(tg, migrated_database_url, hub_server: HubServer, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", hub_server.url)
    monkeypatch.setenv("HF_HUB_LOOKUP_TIMEOUT", "2")  # generous: a loaded CI machine must not read as offline
    monkeypatch.delenv("HF_TOKEN", raising=False)
    settings = Settings(database_url=migrated_database_url, bot_token="123456:TEST-token",
                        telegram_api_url=tg.base_url)
    application = App(settings, scrape=False, polling_timeout=1)
    await application.start()
    yield application
    await application.stop()


async def test_estimate_of_a_hub_model_says_it_looks_it_up_then_answers(tg, app, hub_server: HubServer):
    hub_server.add("acme/llama-ft", LLAMA_LIKE, params=8.03e9)
    tg.message("/estimate acme/llama-ft lora", user_id=7, lang="en")
    looking = await tg.wait_for("sendMessage", chat_id=7)
    assert "Looking up acme/llama-ft on Hugging Face" in looking.text
    answer = await tg.wait_for("sendMessage", chat_id=7, predicate=lambda c: "VRAM per GPU" in (c.text or ""))
    assert "acme/llama-ft" in answer.text
    # the second time it is known: no lookup message, no request to the Hub
    before = len(hub_server.requests)
    tg.message("/estimate acme/llama-ft lora ctx 4k", user_id=8, lang="ru")
    reply = await tg.wait_for("sendMessage", chat_id=8)
    assert "Ищу" not in reply.text and len(hub_server.requests) == before


async def test_a_pasted_hugging_face_address_is_its_repository(tg, app, hub_server: HubServer):
    hub_server.add("acme/url-ft", LLAMA_LIKE, params=8.03e9)
    tg.message("/estimate https://huggingface.co/acme/url-ft/tree/main lora", user_id=11, lang="en")
    looking = await tg.wait_for("sendMessage", chat_id=11)
    assert "Looking up acme/url-ft on Hugging Face" in looking.text
    answer = await tg.wait_for("sendMessage", chat_id=11, predicate=lambda c: "VRAM per GPU" in (c.text or ""))
    assert "acme/url-ft" in answer.text and "https" not in answer.text


@pytest.mark.parametrize(("lang", "needle"), [("en", "There is no model"), ("ru", "нет модели")])
async def test_unknown_repository_is_a_polite_message(tg, app, hub_server: HubServer, lang: str, needle: str):
    tg.message("/estimate nobody/nothing-7b inference", user_id=9, lang=lang)
    await tg.wait_for("sendMessage", chat_id=9)  # "looking up"
    edited = await tg.wait_for("editMessageText", chat_id=9)
    assert needle in edited.text and "nobody/nothing-7b" in edited.text


async def test_hub_that_does_not_answer(tg, app, hub_server: HubServer):
    hub_server.add("acme/slow", LLAMA_LIKE, delay=4.0)
    tg.message("/estimate acme/slow lora", user_id=10, lang="ru")
    await tg.wait_for("sendMessage", chat_id=10)
    edited = await tg.wait_for("editMessageText", chat_id=10)
    assert "Hugging Face не ответил" in edited.text


async def test_inline_keystroke_starts_the_lookup_and_the_next_one_answers(tg, app, hub_server: HubServer):
    import asyncio

    hub_server.add("acme/llama-ft", LLAMA_LIKE, params=8.03e9)
    qid = tg.inline_query("acme/llama-ft lora", user_id=21)
    first = await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))
    (only,) = first.params["results"]
    assert "Looking up acme/llama-ft" in only["input_message_content"]["message_text"]
    for _ in range(100):  # the lookup runs in the background
        if len(hub_server.requests) >= 2:
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.2)
    qid = tg.inline_query("acme/llama-ft lora ", user_id=21)
    second = await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))
    assert "GiB per GPU" in second.params["results"][0]["title"]


async def test_offers_for_a_hub_model(tg, app, hub_server: HubServer):
    hub_server.add("acme/llama-ft", LLAMA_LIKE, params=8.03e9)
    tg.message("/offers acme/llama-ft lora", user_id=22, lang="en")
    reply = await tg.wait_for("sendMessage", chat_id=22)
    assert "Looking up" not in reply.text and "not in the catalog" not in reply.text
