"""Issue 13, the operator's side: every configured secret stays out of the logs (messages, URLs, tracebacks),
httpx request lines stay out at INFO, handler failures name users only by pseudonym, a flood of forged webhook
requests is one warning per interval, nested JSON with the right secret is a 400, and /healthz fails when the
database refuses writes."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from gpuradar.app import App
from gpuradar.logs import configure_logging
from gpuradar.metrics import Metrics
from gpuradar.settings import Settings
from gpuradar.web import SECRET_HEADER, Throttle, create_app, start_server
from storage.db import make_engine
from testkit.fake_telegram import FakeTelegram
from testkit.provider_server import ProviderServer
from tests.bot.test_abuse import read_only_connections
from tests.gpuradar.test_webhook import PATH, SECRET, WebhookTelegram, update, webhook_settings

RUNPOD_KEY = "rp_live_9f8e7d6c5b4a3210"
VAST_KEY = "vast key/with+odd=chars"
DB_PASSWORD = "pg-Pa55w0rd!"


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    levels = {name: logging.getLogger(name).level for name in ("httpx", "httpcore")}
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, lvl in levels.items():
        logging.getLogger(name).setLevel(lvl)
    logging.captureWarnings(False)


def settings_with_secrets() -> Settings:
    return Settings(bot_token="7412345678:AAHk3mX9_p-QrStUvWxYz0123456789abcdEF",
                    database_url=f"postgresql+asyncpg://radar:{DB_PASSWORD}@db.internal:5432/radar",
                    webhook={"secret": "Wh-secret_0123456789"},
                    providers={"runpod": {"base_url": "https://api.runpod.io", "api_key": RUNPOD_KEY},
                               "vastai": {"base_url": "https://console.vast.ai", "api_key": VAST_KEY}})


def test_every_configured_secret_is_collected() -> None:
    s = settings_with_secrets()
    assert set(s.secret_values()) >= {s.bot_token.get_secret_value(), "Wh-secret_0123456789",  # type: ignore[union-attr]
                                      RUNPOD_KEY, VAST_KEY, DB_PASSWORD}


def test_secrets_are_redacted_in_messages_urls_and_tracebacks() -> None:
    s = settings_with_secrets()
    stream = io.StringIO()
    configure_logging("DEBUG", secrets=s.secret_values(), stream=stream)
    log = logging.getLogger("gpuradar.test")
    from urllib.parse import quote_plus

    log.info("GET https://api.runpod.io/graphql?api_key=%s", RUNPOD_KEY)
    log.info("GET https://console.vast.ai/api/v0/bundles?api_key=%s", quote_plus(VAST_KEY))
    log.info("connecting with password %s", DB_PASSWORD)
    try:
        raise RuntimeError(f"provider said no to key {RUNPOD_KEY} and {VAST_KEY}")
    except RuntimeError:
        log.exception("poll failed")
    out = stream.getvalue()
    for secret in (RUNPOD_KEY, VAST_KEY, quote_plus(VAST_KEY), DB_PASSWORD, "Wh-secret_0123456789"):
        assert secret not in out
    assert out.count("[REDACTED]") == 5  # two URLs, the password line, the two in the traceback


async def test_httpx_request_lines_are_not_logged_at_info(provider_server: ProviderServer) -> None:
    stream = io.StringIO()
    configure_logging("INFO", secrets=[RUNPOD_KEY], stream=stream)
    provider_server.serve("/graphql", {"data": {}})
    async with httpx.AsyncClient() as client:
        await client.post(f"{provider_server.base_url}/graphql?api_key={RUNPOD_KEY}", json={})
    assert "HTTP Request" not in stream.getvalue() and "/graphql" not in stream.getvalue()


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as server:
        yield server


async def test_a_failing_handler_logs_a_pseudonym_not_the_user_id(tg: FakeTelegram,
                                                                   migrated_database_url: str) -> None:
    stream = io.StringIO()
    configure_logging("INFO", secrets=["123456:TEST-token"], stream=stream)
    settings = Settings(database_url=migrated_database_url, bot_token="123456:TEST-token",
                        telegram_api_url=tg.base_url)
    app = App(settings, scrape=False, polling_timeout=1)
    await app.start()
    try:
        tg.message("/start", user_id=424242)
        await tg.wait_for("sendMessage", chat_id=424242)
        assert app.engine is not None
        await app.engine.dispose()
        with read_only_connections():
            tg.message("/subscribe H100", user_id=424242)
            await tg.wait_for("sendMessage", chat_id=424242)
            await app.engine.dispose()
    finally:
        await app.stop()
    failures = [json.loads(line) for line in stream.getvalue().splitlines() if "handler failed" in line]
    assert failures and "id#" in failures[0]["msg"]
    assert "424242" not in stream.getvalue()


# --------------------------------------------------------------------------------------------------- webhook
def test_throttle_reports_the_first_event_then_once_per_interval() -> None:
    now = [0.0]
    throttle = Throttle(60.0, clock=lambda: now[0])
    reports = []
    for i in range(1000):
        now[0] = i * 0.5  # 500 seconds of one forged request every half second
        if (count := throttle.hit()) is not None:
            reports.append(count)
    assert reports[0] == 1 and len(reports) == 9 and sum(reports) <= 1000
    assert all(r == 120 for r in reports[1:])


async def test_forged_webhook_floods_log_little_and_deep_json_is_a_400(migrated_database_url: str) -> None:
    stream = io.StringIO()
    configure_logging("INFO", secrets=[SECRET], stream=stream)
    async with WebhookTelegram() as tg:
        app = App(webhook_settings(tg, migrated_database_url), scrape=False, metrics=Metrics(process=False))
        await app.start()
        try:
            assert app.web is not None
            hook = f"{app.web.url}{PATH}"
            async with httpx.AsyncClient() as client:
                for i in range(300):
                    r = await client.post(hook, json=update(i, "/start", 8), headers={SECRET_HEADER: "nope"})
                    assert r.status_code == 401
                deep = b"[" * 100_000 + b"]" * 100_000
                nested = b'{"update_id":1,"message":' * 20_000 + b"{}" + b"}" * 20_000  # under aiohttp's 1 MB
                for body in (deep, nested):
                    r = await client.post(hook, content=body, headers={SECRET_HEADER: SECRET,
                                                                       "Content-Type": "application/json"})
                    assert r.status_code == 400
                good = await client.post(hook, json=update(3, "/start", 7), headers={SECRET_HEADER: SECRET})
            assert good.status_code == 200
        finally:
            await app.stop()
    out = stream.getvalue()
    assert out.count("webhook requests refused") == 1  # 300 refusals within a minute: one line
    assert "Traceback" not in out


# --------------------------------------------------------------------------------------------------- healthz
async def test_healthz_fails_while_the_database_refuses_writes(migrated_database_url: str) -> None:
    engine = make_engine(migrated_database_url)
    server = await start_server(create_app(engine=engine, metrics=Metrics(process=False)), "127.0.0.1", 0)
    try:
        async with httpx.AsyncClient() as client:
            assert (await client.get(f"{server.url}/healthz")).status_code == 200
            await engine.dispose()
            with read_only_connections():
                response = await client.get(f"{server.url}/healthz")
                await engine.dispose()
            assert response.status_code == 503 and response.json()["checks"]["database"].startswith("error")
            assert (await client.get(f"{server.url}/healthz")).status_code == 200  # writable again: healthy
    finally:
        await server.close()
        await engine.dispose()

