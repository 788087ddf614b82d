"""Per-user limits on inline queries and Hub lookups, and the Hub's global cap (issue 24): one user's flood of
inline queries, half of them naming Hub repositories, is held to its allowance; another user's /help is answered;
the Hub sees a bounded number of requests. Real aiogram against the stand-in Telegram server and Hub."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from bot.ratelimit import RATES
from gpuradar.app import App
from gpuradar.settings import Settings
from testkit.fake_telegram import FakeTelegram
from testkit.waiting import until
from tests.core.test_hub import LLAMA_LIKE
from tests.support.hub_server import HubServer


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as server:
        yield server


@pytest.fixture
async def app(tg: FakeTelegram, migrated_database_url: str, hub_server: HubServer,
              monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[App]:
    monkeypatch.setenv("HF_ENDPOINT", hub_server.url)
    monkeypatch.setenv("HF_HUB_LOOKUP_TIMEOUT", "5")
    monkeypatch.setenv("HF_TOKEN", "hf_flood_secret")
    settings = Settings(database_url=migrated_database_url, bot_token="123456:TEST-token",
                        telegram_api_url=tg.base_url)
    application = App(settings, scrape=False, polling_timeout=1)
    await application.start()
    yield application
    await application.stop()


async def test_an_inline_flood_is_held_to_the_users_allowance(tg: FakeTelegram, app: App,
                                                              hub_server: HubServer) -> None:
    for i in range(100):
        hub_server.add(f"acme/m{i}", LLAMA_LIKE)
    flood = 150
    for i in range(flood):  # half name Hub repositories nobody asked for yet
        tg.inline_query(f"acme/m{i % 100} lora" if i % 2 else f"{7 + i % 60}B lora", user_id=66)
    tg.message("/help", user_id=77)
    help_reply = await tg.wait_for("sendMessage", chat_id=77, timeout=30)
    assert help_reply.text
    # every update is handled (answered or deliberately dropped): wait until the bot is idle
    await until(lambda: len(tg.calls_of("answerInlineQuery")) >= RATES["inline"].burst, limit=30)
    await asyncio.sleep(0.5)
    answers = tg.calls_of("answerInlineQuery")
    # a burst's worth plus what refills while the flood is handled, plus the one "too many requests" notice per
    # streak: far fewer than the flood (the exact count depends on the machine's speed, the bound does not)
    assert len(answers) < flood / 2, len(answers)
    assert any("Too many requests" in (r.get("title") or "") for a in answers for r in a.params["results"])
    # the Hub: at most the user's allowance of new names, two requests each, never one per keystroke
    lookups = len({path for path, _ in hub_server.requests if path.startswith("/api/models/")})
    assert lookups <= RATES["hub"].burst + 2, lookups
    assert all(auth == "Bearer hf_flood_secret" for _, auth in hub_server.requests)


async def test_hub_lookups_per_user_answer_busy_politely(tg: FakeTelegram, app: App, hub_server: HubServer) -> None:
    burst = RATES["hub"].burst
    for i in range(burst + 3):
        hub_server.add(f"acme/x{i}", LLAMA_LIKE)
    for i in range(burst + 3):
        tg.message(f"/estimate acme/x{i} lora", user_id=88, lang="ru")
        await until(lambda i=i: len([c for c in tg.calls if c.chat_id == 88 and (
            "ГиБ" in (c.text or "") or "не искали" in (c.text or ""))]) > i, limit=20)
    texts = [c.text or "" for c in tg.calls if c.chat_id == 88]
    busy = [t for t in texts if "запросили много новых моделей" in t]
    assert 1 <= len(busy) <= 3, texts  # a refill on a slow machine may let one more through
    assert all("«acme/x" in t for t in busy)
    # another user is not held by user 88's allowance; a name already known costs no allowance at all
    tg.message("/estimate acme/x0 lora", user_id=89, lang="en")
    reply = await tg.wait_for("sendMessage", chat_id=89, predicate=lambda c: "VRAM per GPU" in (c.text or ""))
    assert "acme/x0" in reply.text
