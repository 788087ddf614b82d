"""Poll verdicts through the real fetch code, the real httpx client and the loopback provider server: OK only
for a sane answer; every fault becomes SUSPECT or FAILED with its reason."""

from __future__ import annotations

import json
import random

import httpx
import pytest

from core.polls import PollStatus
from scrapers.http import PoliteClient, RetryPolicy, make_client
from scrapers.poller import poll
from testkit.provider_server import (
    CLOUDRIFT_PATH,
    HOSTKEY_PATH,
    RUNPOD_PATH,
    SELECTEL_SERVERS_PATH,
    VAST_PATH,
    VULTR_PLANS_PATH,
    Fault,
    ProviderServer,
    load_fixture,
    vultr_availability_path,
)

ALL = ["selectel", "hostkey", "vastai", "runpod", "cloudrift", "vultr"]


@pytest.fixture
async def client() -> PoliteClient:  # type: ignore[misc]
    # Real waits, scaled down a thousandfold; no Vast rate limit so tests do not queue behind it.
    c = make_client(retry=RetryPolicy(attempts=3, scale=0.001), rng=random.Random(7), rate_limits={"vastai": None})
    yield c
    await c.aclose()


@pytest.mark.parametrize("name", ALL)
async def test_every_provider_polls_ok_at_the_live_paths(name: str, provider_server: ProviderServer,
                                                         client: PoliteClient) -> None:
    result = await poll(name, provider_server.providers_settings(), client)
    assert result.status is PollStatus.OK, result.error
    assert result.error is None and result.offers
    assert all(o.provider == name for o in result.offers)
    assert len({o.key for o in result.offers}) == len(result.offers)
    assert result.started_at <= result.finished_at
    assert all(r.answered in (200, 304) for r in provider_server.requests)


async def test_requests_match_the_live_api(provider_server: ProviderServer, client: PoliteClient) -> None:
    settings = provider_server.providers_settings()
    for name in ALL:
        await poll(name, settings, client)
    vast = provider_server.requests_to(VAST_PATH)[0]
    assert vast.method == "POST" and vast.json()["order"] == [["dph_total", "asc"]]
    runpod = provider_server.requests_to(RUNPOD_PATH)[0]
    assert runpod.method == "POST" and "gpuTypes" in runpod.json()["query"]
    assert provider_server.requests_to(CLOUDRIFT_PATH)[0].json()["data"]["selector"]
    discovery, *hostkey = provider_server.requests_to(HOSTKEY_PATH)
    assert discovery.query == {"action": "list"}  # the unfiltered list names every location sold in
    listed = {loc for p in load_fixture("hostkey.sample.json")["presets"] if p["name"].startswith("gpu")
              for loc in p["price"]}
    assert {r.query["location"] for r in hostkey} == set(settings.hostkey.locations) | listed
    assert all(r.query["filter"] == "yes" and r.query["action"] == "list" for r in hostkey)
    assert provider_server.requests_to(VULTR_PLANS_PATH)[0].query["type"] == "all"
    assert provider_server.requests_to(vultr_availability_path("ewr"))


async def test_unknown_gpus_are_reported(provider_server: ProviderServer, client: PoliteClient) -> None:
    # a card the catalog does not carry (here a made-up successor) is reported by the provider's own spelling
    payload = load_fixture("cloudrift.sample.json")
    renamed = json.loads(json.dumps(payload).replace('"brand_short": "MI350X"', '"brand_short": "MI999X"'))
    assert renamed != payload
    provider_server.serve(CLOUDRIFT_PATH, renamed)
    result = await poll("cloudrift", provider_server.providers_settings(), client)
    assert result.unknown_gpus == ["MI999X"]
    provider_server.serve(CLOUDRIFT_PATH, payload)
    assert (await poll("cloudrift", provider_server.providers_settings(), client)).unknown_gpus == []


async def test_transient_500s_are_retried_to_success(provider_server: ProviderServer, client: PoliteClient) -> None:
    provider_server.inject(VAST_PATH, Fault.SERVER_ERROR, times=2)
    result = await poll("vastai", provider_server.providers_settings(), client)
    assert result.status is PollStatus.OK
    assert [r.answered for r in provider_server.requests_to(VAST_PATH)] == ["500", "500", 200]


async def test_persistent_500_is_failed(provider_server: ProviderServer, client: PoliteClient) -> None:
    provider_server.inject(VAST_PATH, Fault.SERVER_ERROR, times=None)
    result = await poll("vastai", provider_server.providers_settings(), client)
    assert result.status is PollStatus.FAILED and "HTTP 500" in (result.error or "")
    assert result.offers == [] and len(provider_server.requests_to(VAST_PATH)) == 3


async def test_429_retry_after_is_honoured_then_ok(provider_server: ProviderServer, client: PoliteClient) -> None:
    provider_server.inject(RUNPOD_PATH, Fault.RATE_LIMITED, retry_after=4)
    result = await poll("runpod", provider_server.providers_settings(), client)
    assert result.status is PollStatus.OK
    assert [(w.provider, w.reason, w.seconds) for w in client.waits] == [("runpod", "retry-after", 4.0)]


async def test_timeout_is_failed(provider_server: ProviderServer, client: PoliteClient) -> None:
    provider_server.inject(CLOUDRIFT_PATH, Fault.TIMEOUT, times=None, delay=2.0)
    settings = provider_server.providers_settings(cloudrift={"timeout": 0.2})
    result = await poll("cloudrift", settings, client)
    assert result.status is PollStatus.FAILED and "timeout" in (result.error or "")
    assert len(provider_server.requests_to(CLOUDRIFT_PATH)) == 3  # retried


async def test_connection_refused_is_failed(client: PoliteClient) -> None:
    async with ProviderServer() as server:
        settings = server.providers_settings()
    # the server is gone: nothing listens on that port any more
    result = await poll("selectel", settings, client)
    assert result.status is PollStatus.FAILED and "connection error" in (result.error or "")


async def test_captcha_page_is_suspect(provider_server: ProviderServer, client: PoliteClient) -> None:
    provider_server.inject(SELECTEL_SERVERS_PATH, Fault.CAPTCHA)
    result = await poll("selectel", provider_server.providers_settings(), client)
    assert result.status is PollStatus.SUSPECT and "HTML where JSON" in (result.error or "")
    assert result.offers == []


async def test_truncated_json_is_suspect(provider_server: ProviderServer, client: PoliteClient) -> None:
    provider_server.inject(VAST_PATH, Fault.TRUNCATED)
    result = await poll("vastai", provider_server.providers_settings(), client)
    assert result.status is PollStatus.SUSPECT and "truncated JSON" in (result.error or "")


async def test_validation_failure_is_suspect(provider_server: ProviderServer, client: PoliteClient) -> None:
    provider_server.serve(CLOUDRIFT_PATH, {"version": "2099-01-01", "data": {"types": []}})
    result = await poll("cloudrift", provider_server.providers_settings(), client)
    assert result.status is PollStatus.SUSPECT and "documented shape" in (result.error or "")


async def test_4xx_is_suspect(provider_server: ProviderServer, client: PoliteClient) -> None:
    provider_server.serve(VAST_PATH, {"error": "auth", "msg": "Invalid user key"}, status=401)
    result = await poll("vastai", provider_server.providers_settings(), client)
    assert result.status is PollStatus.SUSPECT and "HTTP 401" in (result.error or "")


async def test_empty_list_is_ok_with_zero_offers(provider_server: ProviderServer, client: PoliteClient) -> None:
    provider_server.inject(VAST_PATH, Fault.EMPTY)
    result = await poll("vastai", provider_server.providers_settings(), client)
    assert result.status is PollStatus.OK and result.offers == []  # the shrink check belongs to ingest


async def test_payload_replaced_between_polls(provider_server: ProviderServer, client: PoliteClient) -> None:
    settings = provider_server.providers_settings()
    first = await poll("vastai", settings, client)
    payload = {"offers": [o for o in load_fixture("vastai.sample.json")["offers"] if o["gpu_name"] != "H200"]}
    provider_server.serve(VAST_PATH, payload)
    second = await poll("vastai", settings, client)
    assert {o.gpu for o in first.offers} - {o.gpu for o in second.offers} == {"h200"}


async def test_unknown_provider_is_failed_not_raised(provider_server: ProviderServer, client: PoliteClient) -> None:
    result = await poll("nope", provider_server.providers_settings(), client)
    assert result.status is PollStatus.FAILED and "unknown provider" in (result.error or "")


async def test_hard_deadline(provider_server: ProviderServer, client: PoliteClient) -> None:
    provider_server.inject(VAST_PATH, Fault.TIMEOUT, delay=1.0)
    result = await poll("vastai", provider_server.providers_settings(), client, deadline=0.1)
    assert result.status is PollStatus.FAILED and "deadline" in (result.error or "")


async def test_plain_httpx_client_is_accepted(provider_server: ProviderServer) -> None:
    async with httpx.AsyncClient() as raw:
        result = await poll("runpod", provider_server.providers_settings(), raw)
    assert result.status is PollStatus.OK


async def test_declarative_provider_polls_html(provider_server: ProviderServer, client: PoliteClient) -> None:
    page = ("<html><body><div class='card'><h3>RTX 4090</h3><span class='price'>98 ₽/ч</span></div>"
            "<div class='card'><h3>H100 PCIe</h3><span class='price'>342 ₽/ч</span></div></body></html>")
    provider_server.serve("/prices/", body=page, content_type="text/html")
    settings = provider_server.providers_settings(
        immers={"enabled": True, "path": "/prices/", "rows": "div.card", "fields": {"gpu": "h3", "price": ".price"}})
    result = await poll("immers", settings, client)
    assert result.status is PollStatus.OK, result.error
    assert [(o.provider, o.gpu, o.price, o.currency) for o in result.offers] == [
        ("immers", "rtx-4090", 98.0, "RUB"), ("immers", "h100-pcie", 342.0, "RUB")]
    provider_server.inject("/prices/", Fault.CAPTCHA)
    suspect = await poll("immers", settings, client)
    assert suspect.status is PollStatus.SUSPECT and "no rows" in (suspect.error or "")


async def test_the_offers_in_stock_are_counted_beside_the_parse(provider_server: ProviderServer,
                                                              client: PoliteClient, caplog) -> None:
    """Counted in the parse's worker thread (100,000 offers counted on the loop were 7-15 ms of it), and what the
    poll's log line says."""
    import logging

    from scrapers.poller import attempt

    got = await attempt("vastai", provider_server.providers_settings(), client)
    assert got.stocked is not None and got.stocked == sum(o.in_stock for o in got.offers) > 0
    with caplog.at_level(logging.INFO, logger="scrapers.poller"):
        result = await poll("vastai", provider_server.providers_settings(), client)
    assert f"{len(result.offers)} offers ({got.stocked} in stock)" in caplog.text
