"""Provider answers as they come from the live APIs, odd ones included, through the real fetch code, the real httpx
client and the loopback provider server: one bad record is skipped and counted, values out of bounds are records
out of bounds, bodies are bounded, invalid UTF-8 is a clean failure, redirects stay on the provider's host, and the
politeness layer keeps no process-lifetime lists."""

from __future__ import annotations

import copy
import html
import random
from typing import Any

import pytest
from pydantic import SecretStr

from core.offers import Offer
from core.polls import PollStatus
from scrapers.http import RECENT, PoliteClient, RetryPolicy, make_client
from scrapers.poller import poll
from scrapers.providers import declarative, runpod
from scrapers.settings import DeclarativeProviderSettings
from testkit.provider_server import (
    HOSTKEY_PATH,
    RUNPOD_PATH,
    VAST_PATH,
    Fault,
    ProviderServer,
    load_fixture,
)


@pytest.fixture
async def client() -> PoliteClient:  # type: ignore[misc]
    c = make_client(retry=RetryPolicy(attempts=2, scale=0.001), rng=random.Random(5), rate_limits={"vastai": None})
    yield c
    await c.aclose()


def vast_listings() -> list[dict[str, Any]]:
    return copy.deepcopy(load_fixture("vastai.sample.json")["offers"])


# -- one bad record ---------------------------------------------------------------------------------------------------
async def test_one_null_listing_is_skipped_and_counted_not_a_void_poll(provider_server: ProviderServer,
                                                                       client: PoliteClient) -> None:
    listings = vast_listings()
    good = await poll("vastai", provider_server.providers_settings(), client)
    many = [copy.deepcopy(row) | {"id": row["id"] * 10 + i} for i in range(5) for row in listings]
    many[0]["num_gpus"] = None  # the live API's null
    many[8]["dph_total"] = "a string where a number belongs"
    provider_server.serve(VAST_PATH, {"offers": many})  # 2 bad of 35: a normal share
    result = await poll("vastai", provider_server.providers_settings(), client)
    assert result.status is PollStatus.OK, result.error
    assert result.skipped == 2 and result.records == 5 * len(listings)
    assert result.offers and {o.gpu for o in result.offers} >= {o.gpu for o in good.offers} - {None}


async def test_an_abnormal_share_of_invalid_records_is_suspect(provider_server: ProviderServer,
                                                               client: PoliteClient) -> None:
    listings = vast_listings()
    for listing in listings[: len(listings) // 2 + 1]:
        listing["num_gpus"] = None
    provider_server.serve(VAST_PATH, {"offers": listings})
    result = await poll("vastai", provider_server.providers_settings(), client)
    assert result.status is PollStatus.SUSPECT and "records invalid" in (result.error or "")
    assert result.offers == [] and result.skipped == len(listings) // 2 + 1
    # the share that counts as abnormal is a setting
    lenient = provider_server.providers_settings(vastai={"max_skipped_share": 0.9})
    assert (await poll("vastai", lenient, client)).status is PollStatus.OK


@pytest.mark.parametrize("field,value", [("num_gpus", 10**9), ("dph_total", 1e30), ("num_gpus", -3)])
async def test_values_out_of_bounds_are_skipped_like_invalid_records(field: str, value: Any,
                                                                     provider_server: ProviderServer,
                                                                     client: PoliteClient) -> None:
    listings = vast_listings()
    monster = copy.deepcopy(listings[0]) | {"id": 999_999, "machine_id": 999_999, field: value}
    provider_server.serve(VAST_PATH, {"offers": [*listings, monster]})
    result = await poll("vastai", provider_server.providers_settings(), client)
    assert result.status is PollStatus.OK and result.skipped == 1
    assert all(o.gpu_count <= 128 and o.price < 1e8 for o in result.offers)
    assert not [o for o in result.offers if o.price == 0 and o.in_stock]


def test_the_offer_model_itself_refuses_absurd_values() -> None:
    base = dict(provider="x", sku="s", gpu=None, gpu_name="G", gpu_count=1, price=1.0, currency="USD",
                in_stock=True)
    Offer(**base)  # type: ignore[arg-type]
    for bad in ({"gpu_count": 10**9}, {"price": 1e30}, {"price": float("inf")}, {"price": float("nan")},
                {"available": 10**12}, {"gpu_count": 0}):
        with pytest.raises(ValueError):
            Offer(**(base | bad))  # type: ignore[arg-type]


# -- bounded bodies, clean failures -----------------------------------------------------------------------------------
async def test_a_body_over_the_limit_is_not_read_and_the_poll_is_suspect(provider_server: ProviderServer,
                                                                         client: PoliteClient) -> None:
    listings = vast_listings() * 400  # ~1 MB
    provider_server.serve(VAST_PATH, {"offers": listings})
    settings = provider_server.providers_settings(vastai={"max_body_mb": 0.25})
    result = await poll("vastai", settings, client)
    assert result.status is PollStatus.SUSPECT and "exceeds the limit" in (result.error or "")
    ok = await poll("vastai", provider_server.providers_settings(vastai={"max_body_mb": 8}), client)
    assert ok.status is PollStatus.OK


async def test_invalid_utf8_is_a_clean_poll_failure(provider_server: ProviderServer, client: PoliteClient) -> None:
    provider_server.serve(VAST_PATH, body=b'{"offers": [{"gpu_name": "RTX \xff\xfe 4090"}]}')
    result = await poll("vastai", provider_server.providers_settings(), client)
    assert result.status is PollStatus.SUSPECT and "not UTF-8" in (result.error or "")


async def test_deeply_nested_json_is_a_clean_poll_failure(provider_server: ProviderServer,
                                                          client: PoliteClient) -> None:
    provider_server.serve(VAST_PATH, body=b'{"offers": ' + b"[" * 200_000 + b"]" * 200_000 + b"}")
    result = await poll("vastai", provider_server.providers_settings(), client)
    assert result.status is PollStatus.SUSPECT and result.error


async def test_json_labelled_text_html_is_read_by_its_body_a_real_page_is_not(provider_server: ProviderServer,
                                                                             client: PoliteClient) -> None:
    sample = load_fixture("hostkey.sample.json")
    provider_server.serve(HOSTKEY_PATH, sample, content_type="text/html")  # what a PHP endpoint may send
    for loc in ("NL", "FI"):
        presets = [p for p in sample["presets"] if loc in (p.get("price") or {})]
        provider_server.serve(HOSTKEY_PATH, {"result": "OK", "presets": presets}, content_type="text/html",
                              query={"filter": "yes", "location": loc})
    result = await poll("hostkey", provider_server.providers_settings(), client)
    assert result.status is PollStatus.OK and result.offers, result.error
    provider_server.inject(HOSTKEY_PATH, Fault.CAPTCHA, times=None)
    assert (await poll("hostkey", provider_server.providers_settings(), client)).status is PollStatus.SUSPECT


# -- redirects --------------------------------------------------------------------------------------------------------
async def test_a_redirect_on_the_same_host_is_followed(provider_server: ProviderServer,
                                                       client: PoliteClient) -> None:
    provider_server.serve("/moved/bundles/", load_fixture("vastai.sample.json"))
    provider_server.serve(VAST_PATH, status=308, body=b"", headers={"Location": "/moved/bundles/"})
    result = await poll("vastai", provider_server.providers_settings(), client)
    assert result.status is PollStatus.OK and result.offers
    moved = provider_server.requests_to("/moved/bundles/")[0]
    assert moved.method == "POST" and moved.json()["order"] == [["dph_total", "asc"]]  # 308 keeps the body


async def test_a_redirect_to_another_host_is_refused(provider_server: ProviderServer, client: PoliteClient) -> None:
    elsewhere = f"http://localhost:{provider_server.port}/steal"
    provider_server.serve(VAST_PATH, status=307, body=b"", headers={"Location": elsewhere})
    settings = provider_server.providers_settings(vastai={"api_key": SecretStr("va-secret")})
    result = await poll("vastai", settings, client)
    assert result.status is PollStatus.SUSPECT and "refused" in (result.error or "")
    assert not provider_server.requests_to("/steal")
    # even an allowed host never gets the POST body re-sent, nor the key
    allowed = provider_server.providers_settings(vastai={"api_key": SecretStr("va-secret"),
                                                         "redirect_hosts": ["localhost"]})
    result = await poll("vastai", allowed, client)
    assert result.status is PollStatus.SUSPECT and "re-send the request body" in (result.error or "")
    assert not provider_server.requests_to("/steal")
    provider_server.serve("/steal", load_fixture("vastai.sample.json"))
    provider_server.serve(VAST_PATH, status=303, body=b"", headers={"Location": elsewhere})
    await poll("vastai", allowed, client)
    stolen = provider_server.requests_to("/steal")
    assert stolen and stolen[0].method == "GET" and stolen[0].body == b""
    assert "authorization" not in {k.lower() for k in stolen[0].headers}


# -- keys in headers, RunPod stock ------------------------------------------------------------------------------------
async def test_runpod_key_goes_in_the_authorization_header_never_the_url(provider_server: ProviderServer,
                                                                         client: PoliteClient) -> None:
    settings = provider_server.providers_settings(runpod={"api_key": SecretStr("rp-secret-key")})
    assert (await poll("runpod", settings, client)).status is PollStatus.OK
    request = provider_server.requests_to(RUNPOD_PATH)[0]
    assert request.headers.get("Authorization") == "Bearer rp-secret-key"
    assert "rp-secret-key" not in str(request.query) and "api_key" not in request.query


def test_runpod_stock_follows_stock_status_when_the_count_is_null_or_absent() -> None:
    payload = load_fixture("runpod.sample.json")
    types = payload["data"]["gpuTypes"]
    for gt in types:
        (gt.get("lowestPrice") or {}).pop("maxUnreservedGpuCount", None)  # what anonymous callers ask for
    types[0]["lowestPrice"]["maxUnreservedGpuCount"] = None
    offers = {o.sku: o for o in runpod.parse(payload)}
    for gt in types:
        if gt["id"] not in offers:
            continue
        status = (gt.get("lowestPrice") or {}).get("stockStatus")
        assert offers[gt["id"]].in_stock is (status in ("High", "Medium", "Low")), gt["id"]
        assert offers[gt["id"]].available is None  # unknown, not zero
    assert any(o.in_stock for o in offers.values()) and not all(o.in_stock for o in offers.values())
    # with the count present it still decides: Low with 0 free is not in stock
    types[1]["lowestPrice"] |= {"stockStatus": "Low", "maxUnreservedGpuCount": 0}
    assert not {o.sku: o for o in runpod.parse(payload)}[types[1]["id"]].in_stock


# -- declarative links ------------------------------------------------------------------------------------------------
def test_declarative_links_are_https_on_the_providers_own_hosts() -> None:
    cfg = DeclarativeProviderSettings(base_url="https://immers.cloud", path="/prices/", rows="div.card",
                                      fields={"sku": "i", "gpu": "h3", "price": ".p", "url": "a@href"},
                                      redirect_hosts=["panel.immers.io"])
    page_url = "https://immers.cloud/prices/"
    rows = [("javascript:alert(document.cookie)", page_url),
            ("/order/h100", "https://immers.cloud/order/h100"),
            ("data:text/html,<script>", page_url),
            ('https://immers.cloud/x"><script>', page_url),
            ("https://immers.cloud/order?gpu=4090&n=1", "https://immers.cloud/order?gpu=4090&n=1"),
            ("//immers.cloud/p", "https://immers.cloud/p"),
            ("https://www.immers.cloud/a", "https://www.immers.cloud/a"),
            ("https://panel.immers.io/new", "https://panel.immers.io/new"),  # the operator's listed host
            ("//evil.example/p", page_url),
            ("http://127.0.0.1/admin", page_url),
            ("http://immers.cloud/plain", page_url),
            ("https://127.0.0.1/x", page_url),
            ("https://immers.cloud.evil.example/", page_url),
            ("https://notimmers.cloud/", page_url),
            ("https://immers.cloud@evil.example/", page_url),
            ("https://immers.cloud:8443/", page_url),
            ("https://immers.cloud:abc/", page_url),
            ("HTTPS://IMMERS.CLOUD/UP", "HTTPS://IMMERS.CLOUD/UP"),
            ("https://immers.cloud/a\\b", page_url)]
    page = "".join(f"<div class='card'><i>plan-{i}</i><h3>RTX 4090</h3><span class='p'>98 ₽/ч</span>"
                   f"<a href='{html.escape(href, quote=True)}'>x</a></div>" for i, (href, _) in enumerate(rows))
    offers = declarative.parse(page, cfg, name="immers")
    assert [o.url for o in offers] == [want for _, want in rows]  # a refused link: the provider's page instead


def _row(sku: str, count: str, available: str = "1", vcpu: str = "8") -> str:
    return (f"<div class='card'><i>{sku}</i><h3>RTX 4090</h3><span class='p'>98 ₽/ч</span><b>{count}</b>"
            f"<u>{available}</u><s>{vcpu}</s></div>")


def test_declarative_counts_must_be_whole_and_positive_and_skus_unique() -> None:
    cfg = DeclarativeProviderSettings(base_url="https://immers.cloud", rows="div.card", fields={
        "sku": "i", "gpu": "h3", "price": ".p", "gpu_count": "b", "available": "u", "vcpu": "s"})
    page = "".join([
        _row("ok-1", "1"), _row("ok-2", "2 GPU", "0", ""),
        _row("zero", "0"), _row("neg", "-2"), _row("half", "1.5"),
        _row("neg-stock", "1", "-3"), _row("neg-cpu", "1", "1", "-8"), _row("part-cpu", "1", "1", "7.5"),
        _row("ok-1", "1", "5"), _row("ok-1", "1", "2"),  # the same configuration twice more
    ])
    offers = declarative.parse(page, cfg, name="immers")
    assert [(o.sku, o.gpu_count, o.available, o.vcpu) for o in offers] == [("ok-1", 1, 1, 8), ("ok-2", 2, 0, None)]
    assert (offers.records, offers.skipped) == (10, 8)
    assert all("whole number" in p for p in offers.problems)  # the first five reasons kept
    twice = declarative.parse(_row("a", "1") + _row("b", "1") + _row("a", "1", "9"), cfg, name="immers")
    assert [o.sku for o in twice] == ["a", "b"] and twice[0].available == 1  # the first row, not the last
    assert (twice.records, twice.skipped, twice.problems) == (3, 1, ["a: listed twice"])


# -- no process-lifetime lists ----------------------------------------------------------------------------------------
async def test_politeness_records_are_bounded(provider_server: ProviderServer) -> None:
    c = make_client(retry=RetryPolicy(attempts=2, scale=0.0), rate_limits={"runpod": 6000})
    try:
        provider_server.inject(RUNPOD_PATH, Fault.SERVER_ERROR, times=None)
        settings = provider_server.providers_settings()
        for _ in range(RECENT + 5):
            await poll("runpod", settings, c)
        limiter = c.limiter("runpod")
        assert limiter is not None
        assert len(c.waits) <= RECENT and len(limiter.waited) <= RECENT
        assert len(c.waits) == RECENT  # it did record: a window of the most recent
    finally:
        await c.aclose()



# -- Vast.ai: every configuration seen, quota respected ---------------------------------------------------------------
def _marketplace() -> list[dict[str, Any]]:
    base = vast_listings()[0]
    rows = [copy.deepcopy(base) | {"id": i, "machine_id": i, "num_gpus": 1, "gpu_name": "RTX 4090",
                                   "dph_total": round(0.2 + i / 100, 4), "min_bid": None} for i in range(14)]
    rows.append(copy.deepcopy(base) | {"id": 100, "machine_id": 100, "num_gpus": 8, "gpu_name": "H200",
                                       "gpu_ram": 143771, "dph_total": 25.0, "min_bid": None})
    rows.append(copy.deepcopy(base) | {"id": 101, "machine_id": 101, "num_gpus": 8, "gpu_name": "B200",
                                       "gpu_ram": 183359, "dph_total": 40.0, "min_bid": None})
    return rows


def _search(rows: list[dict[str, Any]]) -> Any:
    def answer(request: Any) -> dict[str, Any]:
        body = request.json()
        floor = (body.get("dph_total") or {}).get("gte", 0)
        matching = sorted((r for r in rows if r["dph_total"] >= floor), key=lambda r: r["dph_total"])
        return {"offers": matching[: body["limit"]], "truncated": len(matching) > body["limit"]}
    return answer


async def test_vast_pages_a_truncated_search_so_expensive_bundles_are_seen(provider_server: ProviderServer,
                                                                           client: PoliteClient) -> None:
    provider_server.serve(VAST_PATH, answer=_search(_marketplace()))
    result = await poll("vastai", provider_server.providers_settings(vastai={"limit": 5}), client)
    assert result.status is PollStatus.OK, result.error
    eights = {o.gpu for o in result.offers if o.gpu_count == 8}
    assert eights == {"h200", "b200"}  # the 8x bundles beyond the first page are not read as sold out
    assert len(provider_server.requests_to(VAST_PATH)) >= 4
    assert {o.key for o in result.offers if o.gpu == "rtx-4090"} and result.skipped == 0


async def test_vast_still_truncated_after_every_page_is_suspect(provider_server: ProviderServer,
                                                                client: PoliteClient) -> None:
    counter = iter(range(10**6))

    def endless(request: Any) -> dict[str, Any]:
        base = vast_listings()[0]
        return {"truncated": True, "offers": [copy.deepcopy(base) | {"id": (n := next(counter)),
                                                                     "dph_total": 0.1 + n / 1000}]}

    provider_server.serve(VAST_PATH, answer=endless)
    result = await poll("vastai", provider_server.providers_settings(vastai={"limit": 1}), client)
    assert result.status is PollStatus.SUSPECT and "still truncated" in (result.error or "")


async def test_a_long_retry_after_pauses_the_provider_in_the_scheduler(provider_server: ProviderServer,
                                                                       client: PoliteClient) -> None:
    from apscheduler.schedulers.asyncio import AsyncIOScheduler

    from scrapers.scheduler import ScrapeScheduler

    received: list[Any] = []

    async def sink(result: Any) -> None:
        received.append(result)

    provider_server.inject(VAST_PATH, Fault.RATE_LIMITED, retry_after=6 * 3600)  # the daily row quota
    settings = provider_server.providers_settings()
    sched = ScrapeScheduler(settings, client, sink, providers=["vastai"], scheduler=AsyncIOScheduler(),
                            run_now=False)
    sched.start()
    try:
        first = await sched.run_provider("vastai")
        assert first.status is PollStatus.FAILED and first.retry_after == pytest.approx(6 * 3600)
        asked = len(provider_server.requests_to(VAST_PATH))
        assert asked == 1  # a Retry-After longer than a poll may wait is not waited for, nor retried
        job = sched.jobs()["vastai"]
        assert (job.next_run_time - sched.paused_until["vastai"]).total_seconds() == pytest.approx(0, abs=1)
        again = await sched.run_provider("vastai")  # a run inside the pause does not poll
        assert again.status is PollStatus.FAILED and "paused until" in (again.error or "")
        assert len(provider_server.requests_to(VAST_PATH)) == asked and len(received) == 1
    finally:
        sched.shutdown()


def test_skipped_records_are_counted_in_the_metrics() -> None:
    from prometheus_client import CollectorRegistry

    from gpuradar.metrics import Metrics

    m = Metrics(CollectorRegistry(), process=False)
    m.observe_scrape("vastai", 0.5, "ok", offers=40, skipped=3)
    m.observe_scrape("vastai", 0.5, "ok", offers=40, skipped=2)
    m.observe_scrape("runpod", 0.5, "ok", offers=8)
    text = m.render().decode()
    assert 'gpuradar_scrape_records_skipped_total{provider="vastai"} 5.0' in text
    assert 'gpuradar_scrape_records_skipped_total{provider="runpod"}' not in text


async def test_large_answers_are_decoded_and_parsed_off_the_event_loop(provider_server: ProviderServer,
                                                                       client: PoliteClient,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses
    import threading

    from scrapers import http, registry
    from scrapers.providers import vastai

    threads: dict[str, str] = {}
    real_decode, real_parse = http.decode_json, vastai.parse

    def decode(*args: Any) -> Any:
        threads["decode"] = threading.current_thread().name
        return real_decode(*args)

    def parse(*args: Any, **kwargs: Any) -> Any:
        threads["parse"] = threading.current_thread().name
        return real_parse(*args, **kwargs)

    monkeypatch.setattr(http, "decode_json", decode)
    monkeypatch.setitem(registry.PROVIDERS, "vastai", dataclasses.replace(vastai.PROVIDER, parse=parse))
    listings = [copy.deepcopy(row) | {"id": row["id"] * 1000 + i} for i in range(300) for row in vast_listings()]
    provider_server.serve(VAST_PATH, {"offers": listings})  # ~600 KB: over the off-loop threshold
    result = await poll("vastai", provider_server.providers_settings(vastai={"limit": 10_000}), client)
    assert result.status is PollStatus.OK
    loop_thread = threading.current_thread().name
    assert threads["decode"] != loop_thread and threads["parse"] != loop_thread


@pytest.mark.parametrize("price", [0, 0.0, -1.5])
def test_a_price_at_or_below_zero_is_a_bad_record_skipped_and_counted(price: float) -> None:
    from scrapers.providers import lium, vastai

    base = dict(provider="x", sku="s", gpu=None, gpu_name="G", gpu_count=1, currency="USD", in_stock=True)
    with pytest.raises(ValueError):
        Offer(**(base | {"price": price}))  # type: ignore[arg-type]
    listings = vast_listings()
    free = copy.deepcopy(listings[0]) | {"id": 999_998, "machine_id": 999_998, "dph_total": price}
    out = vastai.parse({"offers": [*listings, free]})
    assert out.skipped == 1 and all(o.price > 0 for o in out)  # never the "cheapest" configuration
    feed = load_fixture("lium.sample.json")
    feed["nodes"][0]["price_per_gpu_hour"] = price
    out = lium.parse(feed)
    assert out.skipped == 1 and all(o.price > 0 for o in out)
