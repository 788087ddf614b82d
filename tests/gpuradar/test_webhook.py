"""Webhook mode through real HTTP: the App's own aiohttp server takes Telegram's POSTs (secret checked on every
request), the dispatcher handles them, and answers go to the stand-in Bot API server, which also records the
setWebhook call. Settings that cannot work are refused with a message in Russian and English."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from gpuradar.app import App, WebhookSettingsError
from gpuradar.metrics import Metrics
from gpuradar.settings import Settings
from gpuradar.web import SECRET_HEADER
from testkit.fake_telegram import Call, FakeTelegram

ROOT = Path(__file__).resolve().parents[2]
SECRET = "Wh-secret_0123456789"
PATH = "/tg/hook"


class WebhookTelegram(FakeTelegram):
    """The stand-in Bot API plus the webhook methods (recorded like every call)."""

    def _m_setWebhook(self, params: dict[str, Any], call: Call) -> Any:
        if not str(params.get("url", "")):
            return self._error(400, "Bad Request: bad webhook: URL is empty")
        return True

    def _m_getWebhookInfo(self, params: dict[str, Any], call: Call) -> Any:
        done = self.calls_of("setWebhook")
        return {"url": done[-1].params["url"] if done else "", "has_custom_certificate": False,
                "pending_update_count": 0}


def webhook_settings(tg: FakeTelegram, url: str, **webhook: Any) -> Settings:
    return Settings(database_url=url, bot_token=tg.token, telegram_api_url=tg.base_url,
                    web={"host": "127.0.0.1", "port": 0},
                    webhook={"url": f"https://bot.example.com{PATH}", "secret": SECRET, "path": PATH, **webhook})


def update(update_id: int, text: str, user_id: int) -> dict[str, Any]:
    user = {"id": user_id, "is_bot": False, "first_name": "U", "language_code": "en"}
    return {"update_id": update_id, "message": {"message_id": update_id, "date": 1_700_000_000, "text": text,
                                                "chat": {"id": user_id, "type": "private"}, "from": user,
                                                "entities": [{"type": "bot_command", "offset": 0,
                                                              "length": len(text.split()[0])}]}}


async def test_webhook_updates_reach_handlers_only_with_the_secret(migrated_database_url: str) -> None:
    async with WebhookTelegram() as tg:
        app = App(webhook_settings(tg, migrated_database_url), scrape=False, metrics=Metrics(process=False))
        await app.start()
        try:
            assert app.web is not None and app.dispatcher is not None
            (set_hook,) = tg.calls_of("setWebhook")
            assert set_hook.params["url"] == f"https://bot.example.com{PATH}"
            assert set_hook.params["secret_token"] == SECRET
            used = app.dispatcher.resolve_used_update_types()
            assert sorted(set_hook.params["allowed_updates"]) == sorted(used)
            assert {"message", "callback_query", "inline_query"} <= set(used)
            assert tg.calls_of("deleteWebhook") == []  # that would switch every replica's webhook off

            hook = f"{app.web.url}{PATH}"
            async with httpx.AsyncClient() as client:
                wrong = await client.post(hook, json=update(1, "/start", 8), headers={SECRET_HEADER: SECRET + "x"})
                missing = await client.post(hook, json=update(2, "/start", 8))
                garbage = await client.post(hook, content=b"not json", headers={SECRET_HEADER: SECRET})
                good = await client.post(hook, json=update(3, "/start", 7), headers={SECRET_HEADER: SECRET})
                health = await client.get(f"{app.web.url}/healthz")
            assert (wrong.status_code, missing.status_code) == (401, 401)
            assert garbage.status_code == 400
            assert good.status_code == 200
            # Handled before the answer: the reply is already at Telegram, and nothing went to the forged chat.
            assert [c.chat_id for c in tg.calls_of("sendMessage")] == [7]
            assert health.status_code == 200 and health.json()["updates"] == "webhook"
        finally:
            await app.stop()


async def test_polling_mode_deletes_the_webhook_and_sets_none(migrated_database_url: str) -> None:
    async with WebhookTelegram() as tg:
        settings = Settings(database_url=migrated_database_url, bot_token=tg.token, telegram_api_url=tg.base_url)
        app = App(settings, scrape=False, polling_timeout=1)
        await app.start()
        try:
            tg.message("/start", user_id=5)
            await tg.wait_for("sendMessage", chat_id=5)
        finally:
            await app.stop()
        assert len(tg.calls_of("deleteWebhook")) == 1 and tg.calls_of("setWebhook") == []
        assert app.web is None  # no port taken unless asked for


@pytest.mark.parametrize(("webhook", "says"), [
    ({"secret": None}, ("WEBHOOK__SECRET", "нужен WEBHOOK__SECRET")),
    ({"secret": "has spaces"}, ("WEBHOOK__SECRET", "нужен WEBHOOK__SECRET")),
    ({"url": "http://bot.example.com/hook"}, ("https://", "только по HTTPS")),
])
def test_webhook_mode_refuses_settings_that_cannot_work(webhook: dict[str, Any], says: tuple[str, str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    settings = Settings(bot_token="1:x", webhook={"url": "https://bot.example.com/hook", "secret": SECRET,
                                                  **webhook})
    for var in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(var, raising=False)
    setting, russian = says
    for locale in ("ru_RU.UTF-8", "en_GB.UTF-8"):  # one line, in the operator's language only
        monkeypatch.setenv("LANG", locale)
        with pytest.raises(WebhookSettingsError) as err:
            App(settings)
        assert setting in str(err.value) and "\n" not in str(err.value)
        assert (russian in str(err.value)) is locale.startswith("ru")


def test_run_webhook_without_secret_exits_politely(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WEBHOOK__", "WEB__"))}
    env = {k: v for k, v in env.items() if not k.startswith(("LANG", "LC_"))}
    env.update(BOT_TOKEN="123456:TEST-token", DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite3'}",
               WEBHOOK__URL="https://bot.example.com/hook", PYTHONPATH=str(ROOT), LANG="ru_RU.UTF-8")
    done = subprocess.run([sys.executable, "-m", "gpuradar.cli", "run", "--webhook"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "WEBHOOK__SECRET" in done.stderr and "нужен WEBHOOK__SECRET" in done.stderr
    assert "needs WEBHOOK__SECRET" not in done.stderr  # the operator's language (LANG) only
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "db.sqlite3").exists()  # refused before touching anything
