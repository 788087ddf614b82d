"""The replica's HTTP side over real HTTP on 127.0.0.1: /healthz, /metrics, and the webhook secret check."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import httpx
import pytest
from aiohttp import web
from prometheus_client.parser import text_string_to_metric_families

from gpuradar.metrics import Metrics
from gpuradar.web import SECRET_HEADER, WebServer, add_webhook_route, create_app, start_server
from storage.db import make_engine


@pytest.fixture
async def serve() -> AsyncIterator:
    servers: list[WebServer] = []

    async def start(app: web.Application) -> WebServer:
        server = await start_server(app, "127.0.0.1", 0)
        servers.append(server)
        return server

    yield start
    for server in servers:
        await server.close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_healthz_ok_when_the_database_answers(serve, migrated_database_url: str) -> None:
    engine = make_engine(migrated_database_url)
    try:
        server = await serve(create_app(engine=engine, metrics=Metrics(process=False), status=lambda: {"leader": True}))
        assert server.port > 0 and server.url.startswith("http://127.0.0.1:")
        async with httpx.AsyncClient() as client:
            response = await client.get(f"{server.url}/healthz")
        assert response.status_code == 200
        assert response.json() == {"status": "ok", "checks": {"database": "ok"}, "leader": True}
    finally:
        await engine.dispose()


async def test_healthz_503_when_the_database_does_not_answer(serve) -> None:
    engine = make_engine(f"postgresql+asyncpg://nobody:secret@127.0.0.1:{_closed_port()}/nothing")
    try:
        server = await serve(create_app(engine=engine, metrics=Metrics(process=False)))
        async with httpx.AsyncClient() as client:
            response = await client.get(f"{server.url}/healthz")
        assert response.status_code == 503
        body = response.json()
        assert body["status"] == "unavailable"
        assert body["checks"]["database"].startswith("error: ")
        assert "secret" not in response.text  # no DSN, no password on an open endpoint
    finally:
        await engine.dispose()


async def test_healthz_503_when_a_check_hangs(serve) -> None:
    async def stuck() -> None:
        await asyncio.Event().wait()

    async def fine() -> None:
        return None

    app = create_app(metrics=Metrics(process=False), checks={"stuck": stuck, "fine": fine}, health_timeout=0.2)
    server = await serve(app)
    async with httpx.AsyncClient() as client:
        response = await client.get(f"{server.url}/healthz")
    assert response.status_code == 503
    assert response.json()["checks"] == {"stuck": "error: TimeoutError", "fine": "ok"}


async def test_metrics_endpoint_serves_prometheus_text_after_refreshing(serve) -> None:
    metrics = Metrics()
    metrics.observe_scrape("vast", 0.4, "ok", offers=9)
    refreshed: list[int] = []

    async def outbox() -> None:
        refreshed.append(1)
        metrics.set_outbox(pending=len(refreshed), oldest_age_seconds=5.0)

    metrics.add_refresher(outbox)
    server = await serve(create_app(metrics=metrics))
    async with httpx.AsyncClient() as client:
        first = await client.get(f"{server.url}/metrics")
        second = await client.get(f"{server.url}/metrics")
    assert first.status_code == 200
    assert first.headers["content-type"].startswith("text/plain; version=")
    values = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(second.text)
        for s in family.samples
    }
    assert values[("gpuradar_scrape_offers", (("provider", "vast"),))] == 9
    assert values[("gpuradar_alerts_pending", ())] == 2  # refreshed once per scrape
    assert any(name.startswith("process_") for name, _ in values)  # the replica's own process metrics


async def test_webhook_route_checks_the_secret_token(serve) -> None:
    received: list[dict] = []

    async def handler(request: web.Request) -> web.Response:
        received.append(await request.json())
        return web.json_response({"ok": True})

    app = create_app(metrics=Metrics(process=False))
    add_webhook_route(app, "/telegram/webhook", handler, "s3cr3t-Token_1")
    server = await serve(app)
    url = f"{server.url}/telegram/webhook"
    update = {"update_id": 1}
    async with httpx.AsyncClient() as client:
        good = await client.post(url, json=update, headers={SECRET_HEADER: "s3cr3t-Token_1"})
        wrong = await client.post(url, json=update, headers={SECRET_HEADER: "s3cr3t-Token_2"})
        prefix = await client.post(url, json=update, headers={SECRET_HEADER: "s3cr3t"})
        missing = await client.post(url, json=update)
        get = await client.get(url)
    assert good.status_code == 200 and good.json() == {"ok": True}
    assert [wrong.status_code, prefix.status_code, missing.status_code] == [401, 401, 401]
    assert get.status_code == 405
    assert received == [update]  # only the authenticated request reached the handler


@pytest.mark.parametrize("secret", ["", "has space", "x" * 257, "ünïcode"])
def test_webhook_secret_must_be_one_telegram_accepts(secret: str) -> None:
    async def handler(request: web.Request) -> web.Response:
        return web.Response()

    with pytest.raises(ValueError):
        add_webhook_route(web.Application(), "/hook", handler, secret)


def test_web_and_log_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuradar.settings import Settings

    monkeypatch.setenv("WEB__PORT", "9191")
    monkeypatch.setenv("WEB__HOST", "127.0.0.1")
    monkeypatch.setenv("LOG__JSON_LINES", "false")
    settings = Settings(_env_file=None)
    assert (settings.web.host, settings.web.port) == ("127.0.0.1", 9191)
    assert settings.log.json_lines is False
    monkeypatch.setenv("WEB__PORT", "70000")
    with pytest.raises(ValueError):
        Settings(_env_file=None)


async def test_slow_headers_and_slow_bodies_are_cut_off() -> None:
    """400 connections that never finish their headers and 200 authenticated ones that never finish their body
    are all closed by the server (a 408 for the bodies) while a normal request is still answered. The timeouts
    are short here; what is checked is that the server ends them, not how fast."""
    async def handler(request: web.Request) -> web.Response:
        return web.json_response(await request.json())

    app = create_app(metrics=Metrics(process=False))
    add_webhook_route(app, "/hook", handler, "s3cr3t-Token_1", body_timeout=0.5)
    server = await start_server(app, "127.0.0.1", 0, header_timeout=0.5)
    try:
        async def slow(head: bytes) -> bytes:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(head)
            await writer.drain()
            try:  # everything the server sends until it closes; the client never sends the rest
                return await asyncio.wait_for(reader.read(), timeout=30)
            finally:
                writer.close()

        headers = b"POST /hook HTTP/1.1\r\nHost: x\r\nX-Slow: "
        body = (f"POST /hook HTTP/1.1\r\nHost: x\r\n{SECRET_HEADER}: s3cr3t-Token_1\r\n"
                "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"update_id\":").encode()
        answers = asyncio.gather(*(slow(headers) for _ in range(400)), *(slow(body) for _ in range(200)))
        async with httpx.AsyncClient() as client:
            ok = await client.post(f"{server.url}/hook", json={"update_id": 1},
                                   headers={SECRET_HEADER: "s3cr3t-Token_1"})
        assert ok.status_code == 200 and ok.json() == {"update_id": 1}
        got = await answers  # every slow connection ended by the server (a TimeoutError here would fail the test)
        assert all(a == b"" for a in got[:400])
        assert all(a.startswith(b"HTTP/1.1 408") for a in got[400:])
    finally:
        await server.close()


def test_web_timeouts_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuradar.settings import Settings

    monkeypatch.setenv("WEB__HEADER_TIMEOUT", "7")
    monkeypatch.setenv("WEB__BODY_TIMEOUT", "9.5")
    web_settings = Settings().web
    assert (web_settings.header_timeout, web_settings.body_timeout) == (7.0, 9.5)
