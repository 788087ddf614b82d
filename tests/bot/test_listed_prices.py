"""Listed prices of the price-only sources (issue 20: hyperscalers' public price lists, `ProviderInfo.stock_known`
False) beside the marketplaces: through the real App (migrations, ingest, offer cache, aiogram against the stand-in
Bot API server on 127.0.0.1, the alert sender) and the real command line, on a migrated database.

A price-only offer is shown under /offers as "listed price, availability unknown", cheapest first, a few at most,
in the in-stock list's price style, and never in the in-stock list, an alert, "already matching" or the estimate's
"Cheapest in stock now" — even when a poll reaching storage says it is in stock.
"""

from __future__ import annotations

import asyncio
import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from core.offers import Billing, Offer, Period, Rates
from core.polls import PollResult, PollStatus
from gpuradar.app import App, alert_hook
from gpuradar.cli import main
from gpuradar.settings import Settings
from storage.alert_tables import AlertDelivery
from storage.offer_tables import CurrentOffer
from testkit.fake_telegram import FakeTelegram

RATES = Rates(rub_per={"USD": 80.0})
T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
LISTED_EN = "Listed prices (availability unknown)"
LISTED_RU = "Цены по прайс-листам (наличие неизвестно)"


def offer(provider: str, sku: str, gpu: str, name: str, count: int, price: float, currency: str = "USD",
          location: str = "us", in_stock: bool = True) -> Offer:
    return Offer(provider=provider, sku=sku, gpu=gpu, gpu_name=name, gpu_count=count, location=location,
                 billing=Billing.HOURLY, price=price, currency=currency, period=Period.HOUR, in_stock=in_stock,
                 url=f"https://{provider}.example/{sku}")


def poll(provider: str, offers: list[Offer], at: datetime) -> PollResult:
    return PollResult(provider=provider, status=PollStatus.OK, offers=offers, started_at=at,
                      finished_at=at + timedelta(seconds=1))


RUNPOD = [offer("runpod", "a100", "a100-80gb", "A100 SXM 80GB", 1, 1.64),
          offer("runpod", "4090", "rtx-4090", "RTX 4090", 1, 0.34)]
# Azure's price list: seven A100 configurations (more than the section shows), marked in stock the way a careless
# parser might: storage must still never treat them as in stock. Per hour, whole VM: 3.10 ... 9.10 USD.
AZURE = [offer("azure", f"nc-a100-{i}", "a100-80gb", "A100 80GB PCIe", 1, 3.10 + i, location=f"region-{i}")
         for i in range(7)] + [offer("azure", "nc-4090", "rtx-4090", "RTX 4090", 1, 0.20)]
# Yandex Cloud (RUB, VAT included): one A100, cheaper per hour than every Azure one.
YANDEX = [offer("yandex", "gpu-a100", "a100-80gb", "A100 80GB", 1, 200.0, currency="RUB", location="ru-central1-a",
                in_stock=False)]


@pytest.fixture
async def tg():
    async with FakeTelegram() as server:
        yield server


@pytest.fixture
async def app(tg, migrated_database_url):
    settings = Settings(database_url=migrated_database_url, bot_token="123456:TEST-token",
                        telegram_api_url=tg.base_url)
    application = App(settings, alerts=alert_hook(poll_interval=0.05), scrape=False, polling_timeout=1)
    await application.start()
    for provider, offers in (("runpod", RUNPOD), ("azure", AZURE), ("yandex", YANDEX)):
        await application.ingest(poll(provider, offers, T0), RATES)
    yield application
    await application.stop()


async def say(tg: FakeTelegram, text: str, user_id: int = 7, lang: str = "en") -> str:
    tg.message(text, user_id=user_id, lang=lang)
    return (await tg.wait_for("sendMessage", chat_id=user_id)).text


def sections(text: str, title: str) -> tuple[str, str]:
    """(the in-stock part, the listed-prices part) of an /offers answer."""
    assert text.count(title) == 1, text
    head, tail = text.split(title)
    return head, tail


async def test_offers_shows_listed_prices_apart_cheapest_first_at_most_five(tg, app):
    text = await say(tg, "/offers A100", user_id=11)
    in_stock, listed = sections(text, LISTED_EN)
    assert "RunPod" in in_stock and "Azure" not in in_stock and "Yandex" not in in_stock
    lines = [line for line in listed.splitlines() if line.startswith("•")]
    assert len(lines) == 5  # seven listed A100 configurations and one more: a short section, the cheapest
    assert "Yandex Cloud" in lines[0]  # 200 ₽/h (2.50 $/h) beats Azure's 3.10 $/h
    assert all("Microsoft Azure" in line for line in lines[1:])
    assert "region-0" in lines[1] and "region-3" in lines[4] and "region-4" not in listed
    # the same price style as the list above: the whole configuration per hour and per month
    assert "<b>$3.10</b>/h" in lines[1] and "/mo" in lines[1] and "<b>$2.50</b>/h" in lines[0]
    assert "in stock" not in listed.lower()
    assert "Prices include Russian VAT (22%)" in listed  # Yandex's price carries it; the in-stock part has none
    assert "RTX 4090" not in listed  # only the card asked for


async def test_listed_prices_in_russian_and_for_a_workload(tg, app):
    text = await say(tg, "/offers A100", user_id=13, lang="ru")
    in_stock, listed = sections(text, LISTED_RU)
    assert "Microsoft Azure" in listed and "/ч" in listed and "/мес" in listed and "Azure" not in in_stock
    assert "в наличии" not in listed.lower()
    assert listed.index("Yandex") < listed.index("Azure")
    # a workload: the listed configurations that fit it (a 24 GB card does not fit 70B QLoRA)
    fits = await say(tg, "/offers 70B QLoRA", user_id=14)
    _, listed = sections(fits, LISTED_EN)
    assert "A100" in listed and "RTX 4090" not in listed
    # the whole list names no card: no section
    assert LISTED_EN not in await say(tg, "/offers", user_id=15)


async def test_listed_prices_go_through_the_filters_said(tg, app):
    """/offers with filters shows the listed prices those filters let through, as its in-stock part: a cap leaves
    out the dearer Azure configurations, a provider the other price lists."""
    capped = await say(tg, "/offers A100 under $4.50/h", user_id=16)
    in_stock, listed = sections(capped, LISTED_EN)
    assert "RunPod" in in_stock and "region-1" in listed and "region-2" not in listed, listed
    assert [float(p) for p in re.findall(r"\$(\d+\.\d+)</b>/h", listed)] == [2.50, 3.10, 4.10], listed
    azure = await say(tg, "/offers A100 on azure", user_id=17)
    _, listed = sections(azure, LISTED_EN)
    assert "Yandex" not in listed and "Microsoft Azure" in listed, listed
    # a workload with a filter: the listed configurations that fit it and pass it
    fits = await say(tg, "/offers 70B QLoRA on yandex", user_id=18)
    _, listed = sections(fits, LISTED_EN)
    assert "Yandex Cloud" in listed and "Azure" not in listed, listed


async def test_price_only_offers_never_in_stock_matching_estimate_or_alerts(tg, app):
    assert app.sessionmaker is not None and app.offers is not None
    async with app.sessionmaker() as s:
        rows = (await s.scalars(select(CurrentOffer).where(CurrentOffer.provider == "azure"))).all()
    assert rows and not any(r.in_stock or r.listed_in_stock for r in rows)  # the poll said in stock: stored as not
    assert not [o for o in app.offers.all() if o.provider in ("azure", "yandex")]

    sub = await say(tg, "/subscribe A100", user_id=21)
    assert "Already matching now" in sub and "RunPod" in sub and "Azure" not in sub and "Yandex" not in sub
    estimate = await say(tg, "/estimate 70B QLoRA", user_id=22)
    assert "Cheapest in stock now" in estimate and "Azure" not in estimate and "Yandex" not in estimate

    # A new, cheaper A100 on Azure's list and a price drop there; a new A100 on RunPod: only RunPod's is alerted.
    azure = [offer("azure", "nc-a100-new", "a100-80gb", "A100 80GB PCIe", 2, 0.50), *AZURE]
    azure[1] = offer("azure", "nc-a100-0", "a100-80gb", "A100 80GB PCIe", 1, 1.10, location="region-0")
    await app.ingest(poll("azure", azure, T0 + timedelta(hours=1)), RATES)
    await app.ingest(poll("runpod", [*RUNPOD, offer("runpod", "a100x2", "a100-80gb", "A100 SXM 80GB", 2, 3.0)],
                          T0 + timedelta(hours=1)), RATES)
    alert = await tg.wait_for("sendMessage", chat_id=21, predicate=lambda c: "Order at" in c.text)
    assert "RunPod" in alert.text and "Azure" not in alert.text
    await asyncio.sleep(0.5)  # room for a wrong alert to show up
    alerts = [c for c in tg.calls_of("sendMessage") if c.chat_id == 21 and "Order at" in c.text]
    assert len(alerts) == 1 and not any("Azure" in c.text for c in alerts)
    async with app.sessionmaker() as s:
        assert len((await s.scalars(select(AlertDelivery.user_id))).all()) == 1

    # The listed section follows Azure's latest list: the new configuration, the dropped price.
    _, listed = sections(await say(tg, "/offers A100", user_id=23), LISTED_EN)
    lines = [line for line in listed.splitlines() if line.startswith("•")]
    assert "A100 80GB × 2" in lines[0] and "<b>$0.50</b>/h" in lines[0]  # the whole 2-card VM
    assert "region-0" in lines[1] and "<b>$1.10</b>/h" in lines[1]


async def test_a_configuration_dropped_from_the_price_list_is_no_longer_shown(tg, app):
    # Azure's next list drops region-0 and keeps the rest as they were (no row changes but last_seen).
    await app.ingest(poll("azure", AZURE[1:], T0 + timedelta(hours=6)), RATES)
    _, listed = sections(await say(tg, "/offers A100", user_id=31), LISTED_EN)
    assert "region-0" not in listed
    assert all(f"region-{i}" in listed for i in (1, 2, 3, 4))  # unchanged rows of the latest list stay
    # A failed poll is not a list: what the last trusted one listed stays shown.
    failed = PollResult(provider="azure", status=PollStatus.FAILED, offers=[], error="timeout",
                        started_at=T0 + timedelta(hours=12), finished_at=T0 + timedelta(hours=12, seconds=1))
    await app.ingest(failed, RATES)
    assert "region-1" in (await say(tg, "/offers A100", user_id=32)).split(LISTED_EN)[1]


async def test_cli_offers_lists_listed_prices_after_the_in_stock_table(app, migrated_database_url, monkeypatch,
                                                                      capsys):
    monkeypatch.setenv("DATABASE_URL", migrated_database_url)

    async def cli(*args: str) -> tuple[int, str]:
        capsys.readouterr()
        rc = await asyncio.to_thread(main, list(args))
        return rc, capsys.readouterr().out

    rc, out = await cli("offers", "--gpu", "A100")
    assert rc == 0
    in_stock, listed = sections(out, "Listed prices (availability unknown)")
    assert "runpod" in in_stock and "azure" not in in_stock and "yandex" not in in_stock
    rows = [line for line in listed.splitlines()[3:] if line.strip()]
    assert len(rows) == 5 and rows[0].startswith("yandex") and all(r.startswith("azure") for r in rows[1:])
    assert re.search(r"yandex\s+A100 80GB\s+1\s+ru-central1-a\s+hourly\s+200\b", rows[0])

    rc, out = await cli("offers", "--gpu", "A100", "--lang", "ru")
    assert rc == 0 and "Цены по прайс-листам (наличие неизвестно)" in out

    rc, out = await cli("offers", "--gpu", "A100", "--json")
    doc = json.loads(out)
    assert {o["provider"] for o in doc["offers"]} == {"runpod"}
    listed_json = doc["listed_prices"]
    assert len(listed_json) == 5 and not any(o["in_stock"] for o in listed_json)
    whole = [o["price_per_hour_rub"] for o in listed_json]
    assert whole == sorted(whole)

    rc, out = await cli("offers", "--json")  # the whole list: no card, no section
    assert "listed_prices" not in json.loads(out)
