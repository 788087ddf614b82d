"""The whole alert path on loopback: users subscribe through the real bot (aiogram against the stand-in Bot API
server) -> the RunPod stand-in changes its payload -> the scrapers' real job polls it through httpx -> ingest
records the events and, in the same transaction, the outbox -> the sender delivers -> "Stop" pauses."""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from typing import Any

import pytest
from sqlalchemy import select

from core.offers import Rates
from gpuradar.app import App, alert_hook
from gpuradar.sender_process import SenderProcess
from gpuradar.settings import Settings
from scrapers.http import RetryPolicy, make_client
from scrapers.scheduler import ScrapeScheduler
from storage.alert_tables import AlertDelivery
from storage.user_tables import Subscription
from testkit.fake_telegram import FakeTelegram
from testkit.provider_server import RUNPOD_PATH, ProviderServer

RATES = Rates(rub_per={"USD": 80.0})
TYPES = {"NVIDIA H100 80GB HBM3": ("H100 SXM", 80), "NVIDIA A100-SXM4-80GB": ("A100 SXM", 80),
         "NVIDIA GeForce RTX 4090": ("RTX 4090", 24), "NVIDIA B200": ("B200", 180)}
H100, A100, R4090, B200 = TYPES


def runpod(stock: dict[str, tuple[float, int]]) -> dict[str, Any]:
    """A RunPod GraphQL answer: type id -> (price per GPU-hour, free GPUs)."""
    types = []
    for type_id, (price, free) in stock.items():
        name, mem = TYPES[type_id]
        types.append({"id": type_id, "displayName": name, "memoryInGb": mem, "secureCloud": True,
                      "communityCloud": False, "securePrice": price, "communityPrice": None,
                      "lowestPrice": {"stockStatus": "High" if free else None, "maxUnreservedGpuCount": free,
                                      "uninterruptablePrice": price, "minVcpu": 16, "minMemory": 64}})
    return {"data": {"secure": types, "community": []}}




@pytest.fixture
async def tg():
    async with FakeTelegram() as server:
        yield server


async def test_payload_change_alerts_each_matching_subscriber_once_and_stop_pauses(
        tg: FakeTelegram, provider_server: ProviderServer, migrated_database_url: str) -> None:
    server = provider_server
    server.serve(RUNPOD_PATH, runpod({R4090: (0.69, 8), B200: (5.99, 0)}))
    providers = server.providers_settings()
    settings = Settings(database_url=migrated_database_url, bot_token="123456:TEST-token",
                        telegram_api_url=tg.base_url, providers=providers,
                        sender={"in_process": False})  # the production default (tests/conftest.py: in-process)
    app = App(settings, alerts=alert_hook(poll_interval=0.05), scrape=False, polling_timeout=1)
    await app.start()
    # Issue 26: the sender runs in a child process of its own (own loop, engine, Bot session and pacer).
    sender = app._sender
    assert isinstance(sender, SenderProcess)
    await asyncio.wait_for(sender.ready.wait(), 30)
    assert sender.pid is not None and sender.pid != os.getpid()
    # Replies first, alerts take the rest: both pacers have the whole share; the child leaves the replies their room.
    assert sender.spec.rate == pytest.approx(29.5) and app.pacer.global_rate == pytest.approx(29.5)
    assert sender.replies is app.pacer and app.pacer.granted == sender.spec.reply_room(app.pacer.ceiling)[0] == 6
    client = make_client(retry=RetryPolicy(scale=0.001))

    async def sink(result) -> None:
        await app.ingest(result, RATES)

    scheduler = ScrapeScheduler(providers, client, sink, providers=["runpod"], run_now=False)
    try:
        # Three people subscribe through the bot, in their own words.
        for uid, text, lang in ((7, "/subscribe 13B LoRA", "en"), (8, "/subscribe H100 до 250 ₽/ч", "ru"),
                                (9, "/subscribe B200", "en"), (10, "/subscribe H100 under $1/h", "en")):
            tg.message(text, user_id=uid, lang=lang)
            await tg.wait_for("sendMessage", chat_id=uid)
        # Baseline poll, then the provider's payload changes: A100 and H100 appear, the 4090 gets cheaper.
        await scheduler.run_provider("runpod")
        server.serve(RUNPOD_PATH, runpod({R4090: (0.49, 8), B200: (5.99, 0), H100: (2.39, 4), A100: (1.64, 2)}))
        await scheduler.run_provider("runpod")

        alert7 = await tg.wait_for("sendMessage", chat_id=7, predicate=lambda c: "Order at" in c.text)
        alert8 = await tg.wait_for("sendMessage", chat_id=8, predicate=lambda c: "Заказать" in c.text)
        await asyncio.sleep(0.5)  # room for any wrong or duplicate alert to show up
        alerts = [c for c in tg.calls_of("sendMessage") if "Order at" in c.text or "Заказать" in c.text]
        assert Counter(c.chat_id for c in alerts) == {7: 1, 8: 1}  # B200 still sold out; $1 cap not met
        # 13B LoRA fits H100 and A100 (one message, grouped) but not a single 24 GB card.
        assert "2 offers match your subscriptions" in alert7.text
        assert "H100 SXM" in alert7.text and "A100 80GB" in alert7.text and "RTX 4090" not in alert7.text
        assert "needs" in alert7.text and "GiB per GPU" in alert7.text and "— fits" in alert7.text
        assert "В наличии: H100 SXM" in alert8.text and "191 ₽ за GPU-час" in alert8.text
        assert "дешевле вашего порога 250 ₽/ч за всю конфигурацию" in alert8.text  # "до 250 ₽/ч": the whole machine

        # "Stop" under the alert pauses that subscription; the next fitting offer is not sent to user 7.
        tg.press(alert7, "Stop", user_id=7)
        answer = await tg.wait_for("answerCallbackQuery")
        assert "paused" in answer.params.get("text", "")
        assert app.sessionmaker is not None
        async with app.sessionmaker() as s:
            paused = (await s.scalars(select(Subscription.paused).where(Subscription.user_id == 7))).all()
        assert paused == [True]
        server.serve(RUNPOD_PATH, runpod({R4090: (0.49, 8), B200: (5.49, 3), H100: (2.39, 4), A100: (1.64, 2)}))
        await scheduler.run_provider("runpod")
        await tg.wait_for("sendMessage", chat_id=9, predicate=lambda c: "B200" in c.text)
        async with app.sessionmaker() as s:
            written = (await s.scalars(select(AlertDelivery.user_id))).all()
        assert sorted(written) == [7, 8, 9]  # one message each; nothing new for the paused subscription
    finally:
        scheduler.shutdown()
        await client.aclose()
        await app.stop()
