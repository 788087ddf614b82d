"""What the end-to-end bot tests share: the stand-in Bot API server, a whole app started on a migrated database with
a market already ingested, built with `testkit.market`.

A test module that wants the `app` fixture says what market it starts with: `MARKET = {provider: [offers]}` at
module level (ingested ten minutes ago, at the module's rates)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from core.offers import Offer
from gpuradar.app import App, alert_hook
from gpuradar.settings import Settings
from testkit.fake_telegram import FakeTelegram
from testkit.market import NOW, RATES, poll


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as server:
        yield server


@pytest.fixture
async def app(tg: FakeTelegram, migrated_database_url: str, request: pytest.FixtureRequest) -> AsyncIterator[App]:
    market: dict[str, list[Offer]] = request.module.MARKET
    settings = Settings(database_url=migrated_database_url, bot_token="123456:TEST-token",
                        telegram_api_url=tg.base_url)
    application = App(settings, alerts=alert_hook(poll_interval=0.05), scrape=False, polling_timeout=1)
    await application.start()
    for provider, offers in market.items():
        await application.ingest(poll(provider, offers, NOW - timedelta(minutes=10)), RATES)
    yield application
    await application.stop()
