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
from tests.support.provider_server import RUNPOD_PATH, ProviderServer, RecordedRequest
from tests.test_cli_scrape import CBR_PATH, CBR_XML, env_for, gpuradar

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
