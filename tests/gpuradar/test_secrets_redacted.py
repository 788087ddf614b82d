"""No configured secret in what is stored, printed or logged, whatever a provider answers.

The RunPod stand-in on 127.0.0.1 answers a GraphQL error that quotes the request it got: the Authorization header
(the key), the body, and the key once more where the 200-character cut falls. `gpuradar scrape --once` (JSON and
table, both languages) runs as a subprocess against it; the key is in neither its output nor its log lines nor any
row of scrape_runs / provider_health (SQLite here, PostgreSQL with TEST_DATABASE_URL).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from core.redaction import Redactor, redact
from gpuradar.settings import Settings
from storage.db import make_engine
from storage.offer_tables import ProviderHealth, ScrapeRun
from testkit.provider_server import RUNPOD_PATH, ProviderServer, RecordedRequest
from tests.gpuradar.test_cli_scrape import CBR_PATH, CBR_XML, env_for, gpuradar

RUNPOD_KEY = "rpa_4F9xQ2LmZ7vB8nK3tY6wE1sD5hJ0cU"
HF_TOKEN = "hf_QwErTyUiOpAsDfGhJkLzXcVbNm123456"


def echo_request(request: RecordedRequest) -> dict[str, Any]:
    """What a careless GraphQL server answers: an error quoting the request, the key cut across 200 characters."""
    auth = request.headers.get("Authorization", "")
    return {"errors": [
        {"message": "x" * 170 + f" bad key {auth}"},
        {"message": f"request was {json.dumps(dict(request.headers))} {request.body.decode()}"},
    ]}


async def test_a_provider_echoing_its_key_leaves_it_nowhere(provider_server: ProviderServer, tmp_path: Path,
                                                           migrated_database_url: str) -> None:
    provider_server.serve(CBR_PATH, body=CBR_XML, content_type="application/xml")
    provider_server.serve(RUNPOD_PATH, answer=echo_request)
    env = env_for(provider_server, migrated_database_url, enabled=("runpod",))
    env.update({"PROVIDERS__RUNPOD__API_KEY": RUNPOD_KEY, "HF_TOKEN": HF_TOKEN})

    outputs = []
    for args in (("--json",), (), ("--lang", "ru")):
        rc, out, err = await gpuradar(env, tmp_path, "scrape", "--once", *args)
        assert rc == 1, err  # the poll is suspect: an answer of errors
        outputs += [out, err]
    first = json.loads(outputs[0])
    assert first["providers"][0]["status"] == "suspect"
    assert "[REDACTED]" in first["providers"][0]["error"]

    # the stand-in did get the key (so it was there to leak), and echoed it
    sent = provider_server.requests_to(RUNPOD_PATH)
    assert sent and all(RUNPOD_KEY in r.headers["Authorization"] for r in sent)
    assert all(RUNPOD_KEY not in text and RUNPOD_KEY[:12] not in text for text in outputs)

    engine = make_engine(migrated_database_url)
    try:
        async with engine.connect() as conn:
            runs = (await conn.execute(select(ScrapeRun.error))).scalars().all()
            health = (await conn.execute(select(ProviderHealth.reason, ProviderHealth.last_error))).all()
    finally:
        await engine.dispose()
    stored = [*runs, *(v for row in health for v in row)]
    assert len(runs) == 3 and all(stored)
    assert all(RUNPOD_KEY not in text and RUNPOD_KEY[:12] not in text for text in stored)


def test_every_secret_setting_is_registered_hf_token_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", HF_TOKEN)
    monkeypatch.setenv("BOT_TOKEN", "123456789:" + "A" * 35)
    monkeypatch.setenv("WEBHOOK__SECRET", "hook-secret-value")
    monkeypatch.setenv("PROVIDERS__RUNPOD__API_KEY", RUNPOD_KEY)
    monkeypatch.setenv("PROVIDERS__VERDA__CLIENT_SECRET", "verda-client-secret")
    monkeypatch.setenv("DATABASE_URL", "postgresql+asyncpg://gpuradar:db-pass-word@127.0.0.1/gpuradar")
    secrets = Settings().secret_values()
    assert set(secrets) >= {HF_TOKEN, "hook-secret-value", RUNPOD_KEY, "verda-client-secret", "db-pass-word"}
    redactor = Redactor(secrets)
    line = f"GET https://huggingface.co/api/models?token={HF_TOKEN} key={RUNPOD_KEY} pw=db-pass-word"
    assert all(s not in redactor.text(line) for s in secrets)


def test_redact_removes_a_callers_own_secret_before_logging_is_configured() -> None:
    assert redact(f"echo {RUNPOD_KEY} and %2F", RUNPOD_KEY) == "echo [REDACTED] and %2F"


async def test_a_delivery_error_is_stored_redacted_before_it_is_cut(sm: Any) -> None:
    """A transport error naming the Bot API URL (token in the path) or a configured secret, from the alert sender:
    stored in alert_deliveries.error without either, the secret cut across the column's 255 characters too."""
    from datetime import UTC, datetime

    from core import redaction
    from storage.alert_tables import AlertDelivery, DeliveryState
    from storage.outbox import deactivate_user, mark_failed, requeue_delivery

    token = "123456789:AAH" + "x" * 32
    previous = redaction.active()
    redaction.install(Redactor([token, RUNPOD_KEY]))
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    try:
        async with sm() as s, s.begin():
            rows = [AlertDelivery(user_id=uid, chat_id=uid, text="alert", state=DeliveryState.QUEUED, attempts=0,
                                  not_before=t0, created_at=t0) for uid in (1, 2, 3)]
            s.add_all(rows)
            await s.flush()
            ids = [r.id for r in rows]
        async with sm() as s, s.begin():
            await mark_failed(s, ids[0], f"Cannot connect to https://api.telegram.org/bot{token}/sendMessage", t0)
            await requeue_delivery(s, ids[1], t0, "x" * 240 + RUNPOD_KEY, attempts=2)
            await deactivate_user(s, 3, f"blocked: bot{token}", t0)
        async with sm() as s:
            stored = (await s.execute(select(AlertDelivery.error).order_by(AlertDelivery.id))).scalars().all()
    finally:
        redaction.install(previous)
    assert len(stored) == 3 and all(stored)
    assert all(token not in e and token[:15] not in e and RUNPOD_KEY[:8] not in e for e in stored), stored


async def test_a_reason_stored_before_redaction_is_printed_redacted(tmp_path: Path, migrated_database_url: str,
                                                                   provider_server: ProviderServer) -> None:
    """A provider_health row an older version wrote with the key in it: `gpuradar providers` prints it without."""
    from datetime import UTC, datetime

    from storage.db import make_sessionmaker

    now = datetime(2026, 1, 1, tzinfo=UTC)
    engine = make_engine(migrated_database_url)
    try:
        async with make_sessionmaker(engine)() as s, s.begin():
            s.add(ProviderHealth(provider="runpod", status="degraded", since=now, consecutive_failures=3,
                                 reason=f"GraphQL answered errors (bad key Bearer {RUNPOD_KEY})", last_poll=now,
                                 last_error=f"GraphQL answered errors (bad key Bearer {RUNPOD_KEY})",
                                 last_error_at=now))
    finally:
        await engine.dispose()
    env = env_for(provider_server, migrated_database_url, enabled=("runpod",))
    env["PROVIDERS__RUNPOD__API_KEY"] = RUNPOD_KEY
    for args in (("--json",), ()):
        rc, out, err = await gpuradar(env, tmp_path, "providers", *args)
        assert rc == 0, err
        assert RUNPOD_KEY not in out + err and "bad key Bearer [REDACTED]" in out
