"""The Mini App's JSON API on the real server `gpuradar run` starts (App with its web server on 127.0.0.1), against
the stand-in Bot API, a migrated database and offers recorded by the real ingest: each endpoint, initData refused
when missing, forged or expired, the limits, and the bot's Mini App buttons."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from bot.offer_cache import CachedOffer, OfferCache
from bot.ratelimit import Rate
from gpuradar.app import App
from gpuradar.settings import Settings
from gpuradar.webapp.api import SERVICES_KEY
from gpuradar.webapp.auth import INIT_DATA_HEADER, InitDataError, verify_init_data
from gpuradar.webapp.guard import CSP
from gpuradar.webapp.matrix import LastSeen, MatrixCache
from storage.subscriptions import list_subscriptions
from testkit.fake_telegram import FakeTelegram
from tests.support.webapp import RATES, market, poll, seed_market, sign_init_data

TOKEN = "123456:TEST-token"
PUBLIC = "https://market.example/app"
STATIC = Path(__file__).resolve().parents[2] / "gpuradar" / "webapp" / "static"


@pytest.fixture
async def tg():
    async with FakeTelegram(TOKEN) as server:
        yield server


@pytest.fixture
async def app(tg, migrated_database_url):
    settings = Settings(database_url=migrated_database_url, bot_token=TOKEN, telegram_api_url=tg.base_url,
                        web={"host": "127.0.0.1", "port": 0, "public_url": PUBLIC})
    application = App(settings, scrape=False, polling_timeout=1, serve_web=True)
    await application.start()
    await seed_market(application)
    yield application
    await application.stop()


@pytest.fixture
async def client(app):
    async with httpx.AsyncClient(base_url=app.web.url, timeout=20) as c:
        yield c


def signed(user_id: int = 501, lang: str = "en", **kw) -> dict[str, str]:
    return {INIT_DATA_HEADER: sign_init_data(TOKEN, user_id, lang=lang, **kw)}


# ------------------------------------------------------------------------------------------------------ identity

def test_init_data_checked_with_the_bot_token_and_a_day_old_at_most():
    good = sign_init_data(TOKEN, 42, lang="ru")
    who = verify_init_data(good, TOKEN)
    assert (who.id, who.language_code) == (42, "ru")
    for bad, reason in ((sign_init_data("654321:OTHER-token", 42), "forged"),
                        (good.replace("42", "43"), "forged"),
                        (sign_init_data(TOKEN, 42, auth_date=time.time() - 86_400 - 60), "expired"),
                        (sign_init_data(TOKEN, 42, auth_date=time.time() + 3600), "expired"),
                        ("", "missing"), ("x" * 5000, "malformed")):
        with pytest.raises(InitDataError) as err:
            verify_init_data(bad, TOKEN)
        assert err.value.reason == reason
    almost = sign_init_data(TOKEN, 42, auth_date=time.time() - 86_400 + 60)  # a day old less a minute: still good
    assert verify_init_data(almost, TOKEN).id == 42


async def test_matrix_built_once_per_cache_version_and_the_previous_one_served_meanwhile():
    rows = [CachedOffer(key="a", provider="runpod", gpu="a100-80gb", gpu_name="A100", gpu_count=1, location="us",
                        billing="hourly", price_per_gpu_hour_rub=131.2, price_per_gpu_hour_usd=1.64, url="")]

    async def load() -> list[CachedOffer]:
        return list(rows)

    cache = OfferCache(load)
    await cache.refresh()
    matrix = MatrixCache(cache, LastSeen(None))
    first = await asyncio.gather(*(matrix.json("en") for _ in range(50)))
    assert matrix.builds == 1 and len(set(first)) == 1  # fifty viewers at once: one build
    rows.append(CachedOffer(key="b", provider="vastai", gpu="a100-80gb", gpu_name="A100", gpu_count=1, location="eu",
                            billing="hourly", price_per_gpu_hour_rub=80.0, price_per_gpu_hour_usd=1.0, url=""))
    await cache.refresh()
    assert await matrix.json("en") == first[0]  # the new one is being built: the previous poll's meanwhile
    for _ in range(1000):  # the build finishing (a thread): bounded, never a hung test
        if matrix.builds == 2:
            break
        await asyncio.sleep(0.01)
    newer = json.loads(await matrix.json("en"))
    assert newer["offers"] == 2 and "vastai" in newer["families"][0]["cells"]


# -------------------------------------------------------------------------------------------------- page, reads

async def test_page_and_assets_are_served_small_with_a_strict_policy(client):
    page = await client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    csp = page.headers["content-security-policy"]
    assert csp == CSP and "unsafe-inline" not in csp and "script-src 'self'" in csp
    assert "<script>" not in page.text and "src=\"http" not in page.text  # no inline script, no CDN
    total = len(page.content)
    for asset in ("/static/app.js", "/static/app.css"):
        r = await client.get(asset)
        assert r.status_code == 200
        total += len(r.content)
    assert total < 250 * 1024
    assert sum(p.stat().st_size for p in STATIC.iterdir()) < 250 * 1024
    assert TOKEN not in page.text + (await client.get("/static/app.js")).text


def test_the_page_ships_in_the_wheel():
    """Every file the server sends from static/ is package data of gpuradar.webapp (the image installs the wheel)."""
    import fnmatch
    import tomllib

    data = tomllib.loads((STATIC.parents[2] / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    patterns = data["gpuradar.webapp"]
    for path in STATIC.iterdir():
        assert any(fnmatch.fnmatch(f"static/{path.name}", p) for p in patterns), path.name


async def test_texts_come_from_the_catalog_in_both_languages(client):
    en = (await client.get("/api/texts", params={"lang": "en"})).json()
    ru = (await client.get("/api/texts", params={"lang": "ru"})).json()
    assert en["texts"].keys() == ru["texts"].keys() and "web_subscribe" in en["texts"]
    assert en["texts"]["web_history"] == "Price history" and ru["texts"]["web_history"] == "История цен"
    # no language asked: the browser's
    auto = (await client.get("/api/texts", headers={"Accept-Language": "ru-RU,ru;q=0.9"})).json()
    assert auto["lang"] == "ru"


async def test_matrix_shows_cheapest_in_stock_per_gpu_hour_and_last_seen_from_the_cache(app, client):
    answer = await client.get("/api/matrix", params={"lang": "en"})
    assert answer.headers["content-encoding"] == "gzip"  # compressed once per build for clients that take it
    body = answer.json()
    plain = await client.get("/api/matrix", params={"lang": "en"}, headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers and plain.json() == body
    providers = [p["id"] for p in body["providers"]]
    assert {"runpod", "selectel", "vastai"} <= set(providers)
    fams = {f["family"]: f for f in body["families"]}
    h100 = fams["H100"]
    assert {v["id"] for v in h100["variants"]} == {"h100-sxm", "h100-pcie"}
    sxm = next(v for v in h100["variants"] if v["id"] == "h100-sxm")
    cell = sxm["cells"]["runpod"]  # the spot H100 at 1.20 $/GPU-h is the cheapest of runpod's three
    assert cell["in_stock"] and cell["spot"] and cell["offers"] == 3 and cell["count"] == 1
    assert cell["per_gpu_hour"]["USD"] == pytest.approx(1.20) and cell["per_gpu_hour"]["RUB"] == pytest.approx(96)
    assert cell["text"]["USD"] == "$1.20"
    vast = sxm["cells"]["vastai"]
    assert vast["count"] == 2 and vast["per_gpu_hour"]["USD"] == pytest.approx(2.15) and vast["region"] == "eu"
    assert h100["cells"]["selectel"]["gpu"] == "h100-pcie"  # the family row: its cheapest variant there
    l40s = fams["L40S"]["variants"][0]["cells"]["vastai"]
    assert l40s["in_stock"] is False and l40s["last_seen"]  # sold out: when it was last listed
    # a second load (and the other language) costs no database reading
    services = app.web.runner.app[SERVICES_KEY]
    reads = services.matrix.last_seen.reads
    for lang in ("en", "ru", "en"):
        assert (await client.get("/api/matrix", params={"lang": lang})).status_code == 200
    assert services.matrix.last_seen.reads == reads


async def test_cell_offers_whole_configuration_per_hour_and_month_in_both_currencies(client):
    body = (await client.get("/api/offers", params={"gpu": "h100-sxm", "provider": "runpod", "lang": "en",
                                                      "currency": "USD"})).json()
    rows = body["offers"]
    assert [r["count"] for r in rows] == [1, 8, 1] and [r["spot"] for r in rows] == [False, False, True]
    eight = rows[1]
    assert eight["prices"]["USD"]["per_hour"] == pytest.approx(19.9)
    assert eight["prices"]["USD"]["per_month"] == pytest.approx(19.9 * 730)
    assert eight["prices"]["RUB"]["per_hour"] == pytest.approx(19.9 * 80)
    assert eight["url"] == "https://runpod.example/h100x8" and eight["billing"] == "hourly"
    ru = (await client.get("/api/offers", params={"gpu": "a100-80gb", "provider": "selectel", "lang": "ru"})).json()
    assert ru["vat"] and "НДС" in ru["vat"]  # the bot's own VAT line, as plain text
    assert (await client.get("/api/offers", params={"gpu": "no-such-card"})).status_code == 400
    page = (await client.get("/api/offers", params={"gpu": "h100-sxm", "offset": "1"})).json()
    assert page["count"] == 4 and page["offset"] == 1 and len(page["offers"]) == 3 and page["next_offset"] is None


async def until_built(kept, builds: int) -> None:
    for _ in range(1000):  # a build in a thread finishing: bounded, never a hung test
        if kept.builds > builds:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("no build finished")


async def test_page_data_built_once_per_poll_and_key_and_revalidated_by_etag(app, client):
    s = app.web.runner.app[SERVICES_KEY]
    matrix = await client.get("/api/matrix", params={"lang": "ru"})
    tag = matrix.headers["etag"]
    again = await client.get("/api/matrix", params={"lang": "ru"}, headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == tag
    assert again.headers["cache-control"] == "no-cache"  # kept by the browser, asked again: prices move
    assert (await client.get("/api/matrix", params={"lang": "en"}, headers={"If-None-Match": tag})).status_code == 200
    builds = s.matrix.builds
    await app.offers.refresh()  # a new cache version with nothing changed: rebuilt once, same bytes, same ETag
    await client.get("/api/matrix", params={"lang": "ru"})
    await until_built(s.matrix, builds)
    assert (await client.get("/api/matrix", params={"lang": "ru"}, headers={"If-None-Match": tag})).status_code == 304
    # twenty viewers opening one cell at once: one build of that page; the other language is a page of its own
    runpod = {"gpu": "h100-sxm", "provider": "runpod", "lang": "en", "currency": "USD"}
    builds = s.cells.builds
    answers = await asyncio.gather(*(client.get("/api/offers", params=runpod) for _ in range(20)))
    assert {a.status_code for a in answers} == {200} and s.cells.builds == builds + 1
    assert len({a.content for a in answers}) == 1
    cell_tag = answers[0].headers["etag"]
    assert (await client.get("/api/offers", params=runpod, headers={"If-None-Match": cell_tag})).status_code == 304
    assert (await client.get("/api/offers", params={**runpod, "lang": "ru"})).json()["offers"][0]["region_name"]
    assert s.cells.builds == builds + 2
    vast = {**runpod, "provider": "vastai"}
    vast_before = (await client.get("/api/offers", params=vast)).json()
    # a workload typed again, by anyone, is the answer kept for this poll
    phrase = {"text": "70B QLoRA ctx 4k"}
    first = await client.post("/api/estimate", params={"lang": "en"}, json=phrase)
    built = s.estimates.builds
    second = await client.post("/api/estimate", params={"lang": "en"}, json=phrase, headers=signed(user_id=88))
    assert second.content == first.content and s.estimates.builds == built
    # a poll: vastai's H100 pair gets cheaper; runpod's page lists the very same offers, so its ETag holds
    offers = market(2)["vastai"]
    offers[-1] = offers[-1].model_copy(update={"price": 3.9})
    await app.ingest(poll("vastai", offers, datetime.now(UTC)), RATES)
    builds = s.cells.builds
    stale = await client.get("/api/offers", params=vast)  # the previous poll's page while the new one is built
    assert stale.json() == vast_before
    await until_built(s.cells, builds)
    fresh = await client.get("/api/offers", params=vast)
    assert fresh.json()["offers"][0]["prices"]["USD"]["per_hour"] == pytest.approx(3.9)
    assert fresh.headers["etag"] != stale.headers["etag"]
    builds = s.cells.builds
    await client.get("/api/offers", params=runpod)
    await until_built(s.cells, builds)
    assert (await client.get("/api/offers", params=runpod, headers={"If-None-Match": cell_tag})).status_code == 304
    made = s.rows.made
    await client.get("/api/offers", params={**runpod, "currency": "RUB"})  # the same offers in another order
    assert s.rows.made == made  # rows already made are joined, not formatted again


async def test_last_seen_read_again_in_the_background_while_the_held_reading_is_served(app):
    now = [0.0]
    seen = LastSeen(app.sessionmaker, ttl=60, clock=lambda: now[0])
    first = await seen.get()
    assert seen.reads == 1 and first[("l40s", "vastai")]  # the first reading is waited for
    assert await seen.get() is first and seen.reads == 1
    now[0] = 61.0
    assert await seen.get() is first and seen.reads == 1  # old: served at once, the next one under way
    for _ in range(1000):
        if seen.reads == 2:
            break
        await asyncio.sleep(0.01)
    assert seen.reads == 2 and seen.stamp == 61.0


async def test_estimate_narrows_to_fitting_configurations_cheapest_first(client):
    body = (await client.post("/api/estimate", params={"lang": "en", "currency": "USD"},
                              json={"text": "70B QLoRA ctx 4k"})).json()
    assert body["ok"] and body["fits"] and body["assumptions"]
    prices = [r["prices"]["USD"]["per_hour"] for r in body["offers"] if not r["spot"]]
    assert prices == sorted(prices) and prices
    assert all(r["per_gpu_gib"] > 0 for r in body["offers"])
    assert "rtx-3090" not in body["cells"] and "rtx-4090" not in body["cells"]  # 24 GB cards cannot hold it
    assert "h100-sxm" in body["cells"]
    ru = (await client.post("/api/estimate", params={"lang": "ru"}, json={"text": "запустить 7B, 4к контекст"})).json()
    assert ru["ok"] and ru["currency"] == "RUB" and "rtx-4090" in ru["cells"]
    bad = (await client.post("/api/estimate", params={"lang": "ru"}, json={"text": "погода в Москве"})).json()
    assert bad["ok"] is False and bad["message"]
    huge = (await client.post("/api/estimate", json={"text": "405B full fine-tune ctx 128k"})).json()
    assert huge["ok"] and not huge["fits"] and huge["remedies"]
    assert (await client.post("/api/estimate", content=b"not json")).status_code == 400


async def test_an_estimate_said_with_filters_lists_only_what_they_let_through_and_says_them(client):
    """The workload box reads what the bot reads: "70B QLoRA ctx 4k on runpod" is the estimate of the workload whose
    offers are RunPod's alone, said so in the user's language; "x2" is the count the answer is about; the query
    kept for "Subscribe" is the text as said, filters and all."""
    plain = (await client.post("/api/estimate", params={"lang": "en", "currency": "USD"},
                               json={"text": "70B QLoRA ctx 4k"})).json()
    assert {r["provider"] for r in plain["offers"]} - {"runpod"} and plain["filters"] is None
    body = (await client.post("/api/estimate", params={"lang": "en", "currency": "USD"},
                              json={"text": "70B QLoRA ctx 4k on runpod"})).json()
    assert body["ok"] and body["offers"] and {r["provider"] for r in body["offers"]} == {"runpod"}, body["offers"]
    assert set(body["cells"]) and all(set(c) == {"runpod"} for c in body["cells"].values()), body["cells"]
    assert body["filters"] == "Only offers you asked for: on RunPod." and body["query"] == "70B QLoRA ctx 4k on runpod"
    assert body["memory"] == plain["memory"] and body["fits"] == plain["fits"]
    ru = (await client.post("/api/estimate", params={"lang": "ru"}, json={"text": "70B QLoRA ctx 4k x2"})).json()
    assert ru["filters"] == "Только предложения, о которых вы просили: × 2 GPU." and ru["fits"], ru
    assert {f["count"] for f in ru["fits"]} == {2} and {r["count"] for r in ru["offers"]} <= {2}, ru
    assert ru["memory"]["per_gpu_gib"] < plain["memory"]["per_gpu_gib"]  # shared by two


async def test_history_has_spot_and_on_demand_apart_with_availability(client):
    body = (await client.get("/api/history", params={"gpu": "h100-sxm", "range": "7d", "currency": "USD"})).json()
    assert set(body["series"]) == {"on_demand", "spot"}
    on_demand = [p["price"] for p in body["series"]["on_demand"] if p["price"] is not None]
    spot = [p["price"] for p in body["series"]["spot"] if p["price"] is not None]
    # the cheapest on-demand card of any provider after each poll: vastai's pair at 2.20, 2.30, then 2.15 per card
    assert min(on_demand) == pytest.approx(2.15) and max(on_demand) == pytest.approx(2.30)
    assert min(spot) == pytest.approx(1.20)
    assert any(p["in_stock"] for p in body["series"]["on_demand"])
    sold = (await client.get("/api/history", params={"gpu": "l40s", "range": "24h", "currency": "USD"})).json()
    strip = [p["in_stock"] for p in sold["series"]["on_demand"]]
    assert strip[0] > 0 and strip[-1] == 0  # in stock until it sold out an hour ago
    assert "stats" in body
    cell = (await client.get("/api/history", params={"gpu": "h100-sxm", "range": "7d", "currency": "USD",
                                                     "provider": "vastai"})).json()
    assert cell["providers"] == ["vastai"] and set(cell["series"]) == {"on_demand"}  # one cell: vastai's pair
    assert min(p["price"] for p in cell["series"]["on_demand"] if p["price"] is not None) == pytest.approx(2.15)
    assert (await client.get("/api/history", params={"gpu": "h100-sxm", "range": "1y"})).status_code == 400


# --------------------------------------------------------------------------------------------------- acting for one

async def test_writes_refuse_missing_forged_and_expired_init_data(client, app):
    attempts = [{}, {INIT_DATA_HEADER: sign_init_data("654321:OTHER-token", 501)},
                signed(auth_date=time.time() - 2 * 86_400),
                {INIT_DATA_HEADER: sign_init_data(TOKEN, 501).replace("501", "502")}]
    for headers in attempts:
        r = await client.post("/api/subscriptions", json={"text": "H100"}, headers=headers)
        assert r.status_code == 403, headers
        assert (await client.get("/api/subscriptions", headers=headers)).status_code == 403
        assert (await client.delete("/api/subscriptions/1", headers=headers)).status_code == 403
    async with app.sessionmaker() as session:
        assert await list_subscriptions(session, 501) == [] and await list_subscriptions(session, 502) == []
    me = (await client.get("/api/me", headers=attempts[1])).json()
    assert me["signed_in"] is False and me["refused"] == "forged"
    assert (await client.get("/api/me", headers=attempts[2])).json()["refused"] == "expired"
    nobody = (await client.get("/api/me")).json()
    assert nobody["signed_in"] is False and nobody["user"] is None and "refused" not in nobody
    who = (await client.get("/api/me", headers=signed(user_id=501, lang="ru"))).json()
    assert who == {"user": 501, "signed_in": True, "lang": "ru"}  # the language from Telegram's language_code


async def test_subscribe_is_what_subscribe_makes_confirmed_in_chat_and_listed_in_subs(client, app, tg):
    r = await client.post("/api/subscriptions", json={"text": "70B QLoRA ctx 4k"}, headers=signed(lang="ru"))
    assert r.status_code == 201, r.text
    body = r.json()
    sub = body["subscription"]
    assert sub["kind"] == "workload" and body["confirmed_in_chat"]
    confirmation = await tg.wait_for("sendMessage", chat_id=501)
    assert "70B QLoRA" in confirmation.text and "Слежу" in confirmation.text  # /subscribe's own answer
    async with app.sessionmaker() as session:
        stored = await list_subscriptions(session, 501)
    assert [s.id for s in stored] == [sub["id"]] and stored[0].min_gib_by_count
    mine = await client.get("/api/subscriptions", headers=signed(lang="ru"))
    assert mine.status_code == 200 and [x["id"] for x in mine.json()["subscriptions"]] == [sub["id"]]
    # the bot's /subs lists it
    tg.message("/subs", user_id=501, lang="ru")
    listing = await tg.wait_for("sendMessage", chat_id=501)
    assert "70B QLoRA" in listing.text
    # the same text again: the one subscription, 200
    again = await client.post("/api/subscriptions", json={"text": "70B QLoRA ctx 4k"}, headers=signed(lang="ru"))
    assert again.status_code == 200 and len(again.json()["subscriptions"]) == 1
    # pause, someone else cannot touch it, delete
    paused = await client.post(f"/api/subscriptions/{sub['id']}/pause", json={"paused": True}, headers=signed())
    assert paused.status_code == 200 and paused.json()["subscriptions"][0]["paused"] is True
    other = signed(user_id=777)
    assert (await client.delete(f"/api/subscriptions/{sub['id']}", headers=other)).status_code == 404
    assert (await client.post(f"/api/subscriptions/{sub['id']}/pause", json={"paused": False},
                              headers=other)).status_code == 404
    gone = await client.delete(f"/api/subscriptions/{sub['id']}", headers=signed())
    assert gone.status_code == 200 and gone.json()["subscriptions"] == []
    refused = await client.post("/api/subscriptions", json={"text": "sunny weather"}, headers=signed())
    assert refused.status_code == 422 and refused.json()["text"]


async def test_limits_per_user_and_per_address(client, app):
    codes = [(await client.post("/api/estimate", json={"text": "7B LoRA"}, headers=signed(user_id=9))).status_code
             for _ in range(14)]
    assert codes[:12] == [200] * 12 and codes[-1] == 429
    other = await client.post("/api/estimate", json={"text": "7B LoRA"}, headers=signed(user_id=10))
    assert other.status_code == 200  # one user's allowance is theirs alone
    writes = [(await client.post("/api/subscriptions/999/pause", json={"paused": True},
                                 headers=signed(user_id=11))).status_code for _ in range(12)]
    assert writes[0] == 404 and writes[-1] == 429
    # charts: a chart not drawn in the last minute takes from the address's allowance (made 2 here); drawn ones do not
    limiter = app.web.runner.app[SERVICES_KEY].limits.limiter
    limiter.rates = {**limiter.rates, "history": Rate(burst=2, per=3600.0)}
    charts = [(await client.get("/api/history", params={"gpu": gpu, "range": "24h"})).status_code
              for gpu in ("a100-80gb", "rtx-4090", "l40s", "a100-80gb")]
    assert charts == [200, 200, 429, 200]
    # the per-address allowance, made small here (a burst of 5, one more an hour) so no clock is involved
    limiter.rates = {**limiter.rates, "ip": Rate(burst=5, per=3600.0)}
    limiter._buckets.clear()
    flood = [(await client.get("/api/texts")) for _ in range(7)]
    assert [r.status_code for r in flood] == [200] * 5 + [429] * 2
    assert int(flood[-1].headers["Retry-After"]) >= 1
    assert (await client.get("/healthz")).status_code == 200  # the replica's own endpoints are not the API's
    # X-Forwarded-For is not trusted unless WEB__FORWARDED_FOR says a proxy of ours sets it
    spoofed = await client.get("/api/texts", headers={"X-Forwarded-For": "198.51.100.7"})
    assert spoofed.status_code == 429
    app.web.runner.app[SERVICES_KEY].limits.forwarded_for = True
    behind = [(await client.get("/api/texts", headers={"X-Forwarded-For": f"10.0.0.1, 198.51.100.{i % 2}"})).status_code
              for i in range(12)]
    assert behind.count(200) == 10 and behind.count(429) == 2  # two clients, five each


# -------------------------------------------------------------------------------------------------- in the bot

async def test_menu_button_and_open_the_market_under_offers_and_estimate(tg, app):
    menu = tg.calls_of("setChatMenuButton")
    assert menu and menu[-1].params["menu_button"]["type"] == "web_app"
    assert menu[-1].params["menu_button"]["web_app"]["url"].startswith(PUBLIC)
    for lang, label in (("en", "Open the market"), ("ru", "Открыть рынок")):
        for text in ("/offers H100", "/estimate 70B QLoRA ctx 4k"):
            tg.message(text, user_id=601, lang=lang)
            answer = await tg.wait_for("sendMessage", chat_id=601)
            button = next(b for row in answer.reply_markup["inline_keyboard"] for b in row if "web_app" in b)
            assert label in button["text"] and button["web_app"]["url"].startswith(PUBLIC)
    # a workload said with filters opens the page with them: it answers what the bot answered
    from urllib.parse import parse_qs, urlsplit

    for text in ("/estimate 70B QLoRA ctx 4k on runpod", "/offers 70B QLoRA ctx 4k on runpod", "70B QLoRA x2"):
        tg.message(text, user_id=603, lang="en")
        answer = await tg.wait_for("sendMessage", chat_id=603)
        button = next(b for row in answer.reply_markup["inline_keyboard"] for b in row if "web_app" in b)
        asked = parse_qs(urlsplit(button["web_app"]["url"]).query)["q"]
        assert asked == [text.removeprefix("/estimate ").removeprefix("/offers ")], (text, asked)
    # a group gets no web_app button (Telegram refuses them there)
    tg.message("/offers H100", user_id=602, chat_id=-100, lang="en", chat_type="supergroup")
    group = await tg.wait_for("sendMessage", chat_id=-100)
    assert not any("web_app" in b for row in (group.reply_markup or {}).get("inline_keyboard", []) for b in row)


async def test_menu_button_in_each_chat_users_language_set_on_start_and_language_change(tg, app):
    default = tg.menu_buttons[None]
    assert default["text"] == "Market"  # no chat_id: the default, for chats without a button of their own

    async def chat_button(chat: int) -> dict:
        call = await tg.wait_for("setChatMenuButton", chat_id=chat)
        button = call.params["menu_button"]
        assert button["type"] == "web_app" and button["web_app"]["url"].startswith(PUBLIC)
        return button

    tg.message("/start", user_id=611, lang="ru")
    ru = await chat_button(611)
    assert ru["text"] == "Рынок" and "lang=ru" in ru["web_app"]["url"]  # and the page opens in Russian
    tg.message("/start", user_id=612, lang="en")
    en = await chat_button(612)
    assert en["text"] == "Market" and "lang=en" in en["web_app"]["url"]
    # what Telegram then shows in each chat (getChatMenuButton answers that chat's own button)
    async with httpx.AsyncClient(base_url=tg.base_url) as telegram:
        shown = await telegram.post(f"/bot{TOKEN}/getChatMenuButton", json={"chat_id": 611})
        assert shown.json()["result"]["text"] == "Рынок"
    # /lang en: the Russian user's button turns English; the language keyboard's "Русский" turns it back
    tg.message("/lang en", user_id=611, lang="ru")
    assert (await chat_button(611))["text"] == "Market"
    tg.message("/lang", user_id=611, lang="ru")
    chooser = await tg.wait_for("sendMessage", chat_id=611,  # the chooser, not /start's own buttons
                                 predicate=lambda c: any("Русский" in b.get("text", "") for b in c.buttons()))
    tg.press(chooser, "Русский", user_id=611, lang="ru")
    assert (await chat_button(611))["text"] == "Рынок"
    # a group keeps the default: Telegram sets menu buttons of private chats only
    before = len(tg.calls_of("setChatMenuButton"))
    tg.message("/start", user_id=613, chat_id=-200, lang="ru", chat_type="supergroup")
    await tg.wait_for("sendMessage", chat_id=-200)
    assert len(tg.calls_of("setChatMenuButton")) == before


async def test_without_a_public_url_the_bot_shows_no_mini_app(tg, migrated_database_url):
    settings = Settings(database_url=migrated_database_url, bot_token=TOKEN, telegram_api_url=tg.base_url)
    application = App(settings, scrape=False, polling_timeout=1)
    await application.start()
    try:
        await seed_market(application)
        tg.message("/offers H100", user_id=603)
        answer = await tg.wait_for("sendMessage", chat_id=603)
        assert not any("web_app" in b for row in (answer.reply_markup or {}).get("inline_keyboard", []) for b in row)
        assert tg.calls_of("setChatMenuButton") == []
    finally:
        await application.stop()
