"""Availability statistics through the real bot (App, aiogram over HTTP, the stand-in Telegram server) on a migrated
database (SQLite, or PostgreSQL with TEST_DATABASE_URL) whose history was recorded by storage's real ingest: /when
and "когда", the alert's line, the short-lived mark, in both languages with their plurals."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from bot.availability_view import duration
from bot.offer_cache import CachedOffer
from core.offers import Billing, Offer, Rates
from core.polls import PollResult, PollStatus
from gpuradar.app import App
from gpuradar.settings import Settings
from storage.db import make_engine, make_sessionmaker
from storage.ingest import StateCache, record_poll
from testkit.fake_telegram import FakeTelegram

RATES = Rates(rub_per={"USD": 80.0})
STEP = timedelta(minutes=20)
POLLS = 90  # 30 hours


def offers(k: int) -> list[Offer]:
    """Poll k: an H100 that is in stock for one poll in nine (gone within 20 minutes, back 2 h 40 min later), and
    an A100 that never leaves."""
    return [Offer(provider="runpod", sku="h100", gpu="h100-sxm", gpu_name="H100", gpu_count=1, price=2.0,
                  currency="USD", in_stock=k % 9 == 3, location="US", url="https://runpod.example/h100"),
            Offer(provider="runpod", sku="a100", gpu="a100-80gb", gpu_name="A100", gpu_count=1, price=1.2,
                  currency="USD", in_stock=True, location="US", url="https://runpod.example/a100")]


def cached(sku: str, gpu: str, name: str) -> CachedOffer:
    """An offer of `offers` as the bot's offer cache holds it (what the ⚡ marks are asked about)."""
    return CachedOffer(key=f"runpod|{sku}|1|US|hourly", provider="runpod", gpu=gpu, gpu_name=name, gpu_count=1,
                       location="US", billing=Billing.HOURLY, price_per_gpu_hour_rub=None,
                       price_per_gpu_hour_usd=2.0, url=f"https://runpod.example/{sku}")


async def record_history(url: str, end: datetime) -> None:
    engine = make_engine(url)
    sm = make_sessionmaker(engine)
    cache = StateCache()
    for k in range(POLLS):
        at = end - (POLLS - 1 - k) * STEP
        await record_poll(sm, PollResult(provider="runpod", status=PollStatus.OK, offers=offers(k), started_at=at,
                                         finished_at=at), rates=RATES, hysteresis=1, cache=cache)
    await engine.dispose()


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as server:
        yield server


@pytest.fixture
async def app(tg: FakeTelegram, migrated_database_url: str) -> AsyncIterator[App]:
    settings = Settings(database_url=migrated_database_url, bot_token="123456:TEST-token",
                        telegram_api_url=tg.base_url)
    application = App(settings, scrape=False, polling_timeout=1)
    await application.start()
    # The last poll 5 s ago; the H100 sold out at poll 85, four polls (80 minutes) before it.
    await record_history(migrated_database_url, datetime.now(UTC) - timedelta(seconds=5))
    yield application
    await application.stop()


async def say(tg: FakeTelegram, text: str, user_id: int, lang: str) -> str:
    tg.message(text, user_id=user_id, lang=lang)
    return (await tg.wait_for("sendMessage", chat_id=user_id)).text


async def test_when_in_both_languages(tg: FakeTelegram, app: App) -> None:
    en = await say(tg, "/when H100 under $2.5/GPU-h", 1, "en")
    assert en == ("In the 1 day 6 hours observed so far H100 × 1 under $2.50/GPU-hour was in stock 11\u00a0% of the "
                  "time; after selling out it came back within a median 2 hours 40 minutes; it usually stayed a "
                  "median 20 minutes; right now: sold out for 1 hour 20 minutes.")
    ru = await say(tg, "когда H100 до 2.5$/ч", 2, "ru")
    assert ru == ("За 1 день 6 часов наблюдений H100 × 1 дешевле $2,50 в час за всю конфигурацию была в наличии "
                  "11\u00a0% времени; после распродажи снова появлялась в среднем через 2 часа 40 минут; "
                  "обычно держалась в среднем 20 минут; сейчас: нет в наличии уже 1 час 20 минут.")
    # Under a cap nothing met: never in stock, and said so.
    assert "was in stock 0\u00a0% of the time" in await say(tg, "/when H100 under $1.5", 3, "en")
    # A card never seen, a workload, no argument, a text that is neither.
    assert "No availability history for B200 × 1" in await say(tg, "/when B200", 4, "en")
    assert "a configuration that fits 7B LoRA" in await say(tg, "/when 7B LoRA", 5, "en")
    assert "Name a GPU or a workload" in await say(tg, "/when", 6, "en")
    # A cap is the hourly price of the whole configuration unless said to be per GPU (store test: the figures).
    assert "H100 × 2 under $5.00/hour for the whole configuration" in await say(tg, "/when H100 x2 under $5", 8, "en")
    assert "H100 × 2 under $3.00/GPU-hour" in await say(tg, "/when H100 x2 under $3 per GPU-hour", 9, "en")
    assert "fits 7B LoRA under $3.00/hour for the whole configuration" in await say(tg, "/when 7B LoRA under $3", 10,
                                                                                   "en")
    assert "в час за всю конфигурацию" in await say(tg, "когда 7B LoRA до 300 ₽", 11, "ru")
    assert "× 2 дешевле $3,00 за GPU-час" in await say(tg, "когда H100 x2 до $3 за GPU-час", 12, "ru")
    assert "Не знаю GPU или задачу «абракадабра»" in await say(tg, "/when абракадабра", 7, "ru")
    # A month's cap is said back per month, as typed (it is compared as its hourly equal)
    assert "H100 × 1 under $1,500 per GPU per month" in await say(tg, "/when H100 under $1,500 per GPU per month", 13,
                                                                     "en")
    assert "дешевле 150\u00a0000 ₽ в месяц за всю конфигурацию" in await say(tg, "когда H100 до 150 000 ₽ в месяц", 14,
                                                                              "ru")


async def test_when_reads_each_filter_and_says_it(tg: FakeTelegram, app: App) -> None:
    """The figures go through every filter said (providers, a region, a count with a workload) and the answer says
    them: the H100 is RunPod's, in the US; at another provider or in Germany nothing was seen."""
    runpod = await say(tg, "/when H100 on runpod", 21, "en")
    assert "H100 × 1 (on RunPod) was in stock 11\u00a0% of the time" in runpod, runpod
    assert "No availability history for H100 × 1 (on Vast.ai)" in await say(tg, "/when H100 on vastai", 22, "en")
    us = await say(tg, "когда H100 в США", 23, "ru")
    assert "H100 × 1 (регион Соединенные Штаты) была в наличии 11\u00a0%" in us, us
    assert "Истории наличия пока нет (H100 × 1 (регион Германия))" in await say(tg, "когда H100 в Германии", 24, "ru")
    two = await say(tg, "/when 7B LoRA x2", 25, "en")
    assert "No availability history for a configuration that fits 7B LoRA (× 2 GPUs)" in two, two
    one = await say(tg, "/when 7B LoRA x1 under $3 spot", 26, "en")
    assert "fits 7B LoRA under $3.00/hour for the whole configuration (× 1 GPU · spot)" in one, one


async def test_a_question_of_how_long_or_how_often_is_answered_as_when(tg: FakeTelegram, app: App) -> None:
    """Asked in plain words, in either language, with filters or a cap: the answer /when gives to what the question
    is about. A time question of a workload stays the estimate's, and "is it in stock?" the offers'."""
    for uid, lang, question, same in (
            (41, "en", "How long does an H100 usually stay in stock?", "/when H100"),
            (42, "en", "how often is H100 available on runpod under $2.5/GPU-h",
             "/when H100 on runpod under $2.5/GPU-h"),
            (43, "en", "when will an H100 be back in stock?", "/when H100"),
            (44, "ru", "как долго держится H100 в наличии у runpod?", "/when H100 у runpod"),
            (45, "ru", "сколько обычно висит H100?", "/when H100"),
            (46, "ru", "когда появится H100 дешевле 2,5$ за GPU-час", "/when H100 дешевле 2,5$ за GPU-час")):
        asked = await say(tg, question, uid, lang)
        assert asked == await say(tg, same, uid + 100, lang) and "H100 × 1" in asked, (question, asked)
    assert "Time" in await say(tg, "how long will 7B LoRA take on 10000 examples", 47, "en")
    assert "in stock for H100 right now" in await say(tg, "is H100 in stock?", 48, "en")  # the offers (none now)


@pytest.mark.parametrize(("text", "asks"), [
    ("how long does an H100 stay in stock", True), ("How often is A100 available?", True),
    ("как долго держится H100", True), ("сколько обычно висит A100 у runpod", True),
    ("как часто бывает в наличии 4090", True), ("how long will 70B QLoRA take", False),
    ("сколько времени займёт 70B QLoRA", False), ("is H100 in stock", False), ("H100 available", False),
    ("notify me when H100 is usually in stock", False), ("сообщи, когда H100 обычно в наличии", False),
    ("how long does 7B LoRA take on an H100 available on runpod", False),
    ("сколько займёт дообучение 7B на H100 в наличии", False),
])
def test_what_asks_how_long_an_offer_lasts(text: str, asks: bool) -> None:
    from bot.when_question import asks_how_long, what_is_asked

    assert asks_how_long(text) is asks
    if asks:
        assert what_is_asked(text).split()[0] in ("H100", "A100", "4090"), what_is_asked(text)


@pytest.mark.parametrize(("lang", "seconds", "text"), [
    ("ru", 35 * 60, "35 минут"), ("ru", 80 * 60, "1 час 20 минут"), ("ru", 61 * 60, "1 час 1 минуту"),
    ("ru", 2 * 3600 + 22 * 60, "2 часа 22 минуты"), ("ru", 5 * 86400, "5 дней"), ("ru", 86400 + 3 * 3600,
                                                                                   "1 день 3 часа"),
    ("en", 35 * 60, "35 minutes"), ("en", 80 * 60, "1 hour 20 minutes"), ("en", 60, "1 minute"),
    ("en", 2 * 86400 + 3600, "2 days 1 hour"), ("en", 12 * 3600 + 10 * 60, "12 hours"),
])
def test_durations_use_each_languages_plurals(lang: str, seconds: float, text: str) -> None:
    assert duration(lang, seconds) == text


@pytest.fixture
async def alerting(tg: FakeTelegram, migrated_database_url: str) -> AsyncIterator[App]:
    from gpuradar.app import alert_hook

    settings = Settings(database_url=migrated_database_url, bot_token="123456:TEST-token",
                        telegram_api_url=tg.base_url)
    application = App(settings, alerts=alert_hook(poll_interval=0.05), scrape=False, polling_timeout=1)
    await application.start()
    yield application
    await application.stop()


async def test_alert_line_and_short_lived_mark(tg: FakeTelegram, alerting: App, migrated_database_url: str) -> None:
    for uid, text, lang in ((11, "/subscribe H100", "en"), (12, "/subscribe H100", "ru"),
                            (13, "/subscribe B200", "en")):
        await say(tg, text, uid, lang)
    now = datetime.now(UTC)
    await record_history(migrated_database_url, now - timedelta(minutes=25))
    # The H100 comes back once more, and a B200 nobody has seen before appears: through the app's own ingest.
    final = [*offers(3), Offer(provider="runpod", sku="b200", gpu="b200", gpu_name="B200", gpu_count=1, price=6.0,
                               currency="USD", in_stock=True, location="US", url="https://runpod.example/b200")]
    at = now - timedelta(minutes=5)
    await alerting.ingest(PollResult(provider="runpod", status=PollStatus.OK, offers=final, started_at=at,
                                     finished_at=at), RATES)
    en = (await tg.wait_for("sendMessage", chat_id=11, predicate=lambda c: "Order at" in c.text)).text
    assert "⏱ Last 7 days: appeared 11 times, lasted a median 20 minutes — book now" in en
    ru = (await tg.wait_for("sendMessage", chat_id=12, predicate=lambda c: "Заказать" in c.text)).text
    assert "⏱ За 7 дней появлялось 11 раз, держалось в среднем 20 минут — бронируйте сразу" in ru
    # A group first seen minutes ago: nothing to say about how long it lasts.
    b200 = (await tg.wait_for("sendMessage", chat_id=13, predicate=lambda c: "Order at" in c.text)).text
    assert "B200" in b200 and "⏱" not in b200
    # /offers marks the short-lived H100, not the A100 that never left, and says what the mark means.
    listing = await say(tg, "/offers", 14, "en")
    h100 = next(line for line in listing.splitlines() if "H100" in line)
    a100 = next(line for line in listing.splitlines() if "A100" in line)
    assert "⚡" in h100 and "⚡" not in a100
    assert "⚡ — usually gone within the hour" in listing
    assert "⚡ — обычно разбирают за час" in await say(tg, "/offers H100", 15, "ru")


def png_size(data: bytes) -> tuple[int, int]:
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


async def test_history_has_an_availability_strip_in_both_languages(tg: FakeTelegram, app: App) -> None:
    tg.message("/history H100", user_id=21, lang="en")
    en = await tg.wait_for("sendPhoto", chat_id=21)
    # the share of the 29 h 40 min observed (not of the 30 days asked: the rest was not observed)
    assert ("In stock over the last 30 days (share of the observed time): RunPod 11\u00a0% (observed 1 day 6 hours)"
            in en.text)
    assert en.photo is not None
    width, height = png_size(en.photo)
    assert (width, height) == (900, 480 + 85)  # the chart's 4.8 in, then the strip: one provider row
    tg.message("/history H100 7d", user_id=22, lang="ru")
    ru = await tg.wait_for("sendPhoto", chat_id=22)
    assert ("В наличии за последние 7 дней (доля времени наблюдений): RunPod 11\u00a0% (наблюдали 1 день 6 часов)"
            in ru.text)


@pytest.mark.parametrize(("text", "price", "per_gpu"), [
    ("H100 under $2.5", 2.5, False), ("H100 under $2.5/h", 2.5, False), ("H100 x8 under $20 per hour", 20.0, False),
    ("13B LoRA до 300 ₽/ч", 300.0, False), ("H100 under $2.5 per GPU-hour", 2.5, True),
    ("H100 under $2.5/GPU/h", 2.5, True), ("H100 до 250 ₽ за GPU-час", 250.0, True), ("H100 under $2/h/GPU", 2.0, True),
    ("H100 до 200 руб в час за GPU", 200.0, True), ("H100 under $2.5/gpu-hr", 2.5, True),
])
def test_a_price_says_whether_it_is_per_gpu(text: str, price: float, per_gpu: bool) -> None:
    import gpuradar  # noqa: F401  (the provider catalog the parser reads)
    from bot.subscribe_query import parse_subscribe

    req = parse_subscribe(text)
    assert (req.max_price, req.price_per_gpu) == (price, per_gpu)
    assert req.gpu_ids is not None or req.target in ("13B LoRA",)  # the unit never left in the target


async def test_an_inline_answer_goes_without_marks_still_being_read_and_the_next_has_them(
        tg: FakeTelegram, alerting: App, migrated_database_url: str) -> None:
    now = datetime.now(UTC)
    await record_history(migrated_database_url, now - timedelta(minutes=25))
    at = now - timedelta(minutes=5)
    await alerting.ingest(PollResult(provider="runpod", status=PollStatus.OK, offers=offers(3), started_at=at,
                                     finished_at=at), RATES)  # the short-lived H100 is in stock
    # The marks' reads go through a one-connection pool that this test holds: a database that answers slowly.
    slow = make_engine(migrated_database_url, pool_size=1, max_overflow=0)
    marks = alerting.dispatcher["stay_marks"]
    marks.sessionmaker = make_sessionmaker(slow)
    try:
        held = await slow.connect()
        try:
            qid = tg.inline_query("13B LoRA", user_id=31, lang="en")
            first = await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))
        finally:
            await held.close()
        titles = [r["title"] for r in first.params["results"]]
        assert any("H100" in x for x in titles) and not any("⚡" in x for x in titles)
        # The read went on (waited for here, as /offers waits); the page made without it was not kept, so the
        # same question now shows the mark.
        assert (await marks.short([cached("h100", "h100-sxm", "H100"), cached("a100", "a100-80gb", "A100")])).complete
        qid = tg.inline_query("13B LoRA", user_id=32, lang="en")
        again = await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))
        titles = [r["title"] for r in again.params["results"]]
        h100 = next(x for x in titles if "H100" in x)
        a100 = next(x for x in titles if "A100" in x)
        assert "⚡" in h100 and "⚡" not in a100
    finally:
        await slow.dispose()
