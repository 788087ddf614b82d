"""End to end through the real stack: the App (migrations, offer cache, aiogram dispatcher polling) against the
stand-in Bot API server on 127.0.0.1, a migrated database (a SQLite file, or PostgreSQL with TEST_DATABASE_URL), offers
recorded by storage's real ingest."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from core.offers import Billing, Offer, Period, Rates
from core.polls import PollResult, PollStatus
from gpuradar.app import App
from gpuradar.settings import Settings
from storage.subscriptions import list_subscriptions
from testkit.fake_telegram import FakeTelegram

ADMIN = 999
RATES = Rates(rub_per={"USD": 80.0, "EUR": 90.0})
T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def offer(provider: str, sku: str, gpu: str | None, name: str, count: int, price: float, currency: str = "USD",
          period: Period = Period.HOUR, location: str = "us") -> Offer:
    return Offer(provider=provider, sku=sku, gpu=gpu, gpu_name=name, gpu_count=count, location=location,
                 billing=Billing.MONTHLY if period is Period.MONTH else Billing.HOURLY, price=price,
                 currency=currency, period=period, in_stock=True, url=f"https://{provider}.example/{sku}")


def poll(provider: str, offers: list[Offer], at: datetime) -> PollResult:
    return PollResult(provider=provider, status=PollStatus.OK, offers=offers, started_at=at,
                      finished_at=at + timedelta(seconds=1))


RUNPOD = [offer("runpod", "h100", "h100-sxm", "H100 80GB HBM3", 1, 2.49),
          offer("runpod", "a100", "a100-80gb", "A100 SXM 80GB", 1, 1.64),
          offer("runpod", "4090", "rtx-4090", "RTX 4090", 1, 0.34),
          offer("runpod", "h100x8", "h100-sxm", "H100 80GB HBM3", 8, 19.9)]
SELECTEL = [offer("selectel", "a100-srv", "a100-80gb", "A100 80GB", 1, 150_000, "RUB", Period.MONTH, "ru-1"),
            offer("selectel", "4090-srv", "rtx-4090", "RTX 4090", 2, 60_000, "RUB", Period.MONTH, "ru-2")]
VAST = [offer("vastai", f"3090-{i}", "rtx-3090", "RTX 3090", 1, 0.15 + i * 0.01, location=f"eu-{i}")
        for i in range(20)]


@pytest.fixture
async def tg():
    async with FakeTelegram() as server:
        yield server


@pytest.fixture
async def app(tg, migrated_database_url):
    settings = Settings(database_url=migrated_database_url, bot_token="123456:TEST-token",
                        telegram_api_url=tg.base_url, admin_ids=[ADMIN])
    application = App(settings, scrape=False, polling_timeout=1)
    await application.start()
    for provider, offers in (("runpod", RUNPOD), ("selectel", SELECTEL), ("vastai", VAST)):
        await application.ingest(poll(provider, offers, T0), RATES)
    yield application
    await application.stop()


async def say(tg: FakeTelegram, text: str, user_id: int = 7, lang: str = "en") -> str:
    tg.message(text, user_id=user_id, lang=lang)
    return (await tg.wait_for("sendMessage", chat_id=user_id)).text


async def test_menu_registered_in_both_languages(tg, app):
    calls = tg.calls_of("setMyCommands")
    assert {c.params.get("language_code") for c in calls} == {None, "ru"}
    ru = next(c for c in calls if c.params.get("language_code") == "ru")
    assert any(cmd["command"] == "estimate" and "GPU" in cmd["description"] for cmd in ru.params["commands"])


async def test_onboarding_in_both_languages(tg, app):
    assert "GPU Radar" in await say(tg, "/start", user_id=1, lang="en")
    assert "/estimate" in tg.calls_of("sendMessage")[-1].text
    ru = await say(tg, "/start", user_id=2, lang="ru")
    assert "видеопамяти" in ru
    # /lang pins a language over the client's
    await say(tg, "/lang ru", user_id=1, lang="en")
    assert "видеопамяти" in await say(tg, "/start", user_id=1, lang="en")


async def test_estimate_good_lists_fitting_offers_cheapest_first(tg, app):
    text = await say(tg, "/estimate 70B QLoRA ctx 4k")
    assert "VRAM per GPU" in text and "Breakdown" in text
    assert "A100 80GB × 1" in text  # a configuration that fits
    # fitting offers in stock, cheapest first: the 1x A100 at runpod ($1.64) before the 1x H100 ($2.49)
    assert text.index("$1.64") < text.index("$2.49")
    assert "RTX 3090" not in text.split("Cheapest in stock")[1]  # 24 GB cards cannot hold it
    assert "per month" in text or "/mo" in text
    call = tg.calls_of("sendMessage")[-1]
    assert call.button("Notify")
    assert not any("More offers" in b["text"] for b in call.buttons())  # every fitting offer is already shown


async def test_estimate_partial_states_assumptions_and_time(tg, app):
    text = await say(tg, "/estimate 13B LoRA 10k примеров 3 эпохи", lang="ru")
    assert "Время" in text and " ч" in text
    call = tg.calls_of("sendMessage")[-1]
    tg.press(call, "Допущения", lang="ru")  # the assumptions are one tap away (the answer fits a phone screen)
    assert "Допущения:" in (await tg.wait_for("editMessageText", chat_id=call.chat_id)).text


async def test_estimate_nonsense_and_empty_answer_politely(tg, app):
    text = await say(tg, "/estimate hello there")
    assert "hello" in text and "13B LoRA" in text  # says what it did not understand and gives examples
    assert "Traceback" not in text
    assert "13B LoRA" in await say(tg, "/estimate")
    assert "/help" in await say(tg, "what is this?")


async def test_plain_workload_text_is_estimated(tg, app):
    assert "VRAM per GPU" in await say(tg, "7B LoRA")


async def test_long_input_is_cut_politely(tg, app):
    tg.message("/estimate 13B LoRA " + "x" * 3000, user_id=7)
    first = await tg.wait_for("sendMessage", chat_id=7)
    assert "first 500 characters" in first.text


async def test_subscribe_by_text_says_what_and_what_matches(tg, app):
    text = await say(tg, "/subscribe 13B LoRA под 300 ₽/ч", user_id=6, lang="ru")
    assert "Слежу" in text and "13B LoRA" in text and "300 ₽" in text
    text = await say(tg, "/subscribe B200")
    assert "Now watching" in text and "B200" in text and "Nothing matches right now" in text
    text = await say(tg, "/subscribe A100 80GB under $2/h on runpod")
    assert "Already matching now" in text and "$1.64" in text
    assert "150" not in text  # selectel's A100 is filtered out by the provider filter
    async with app.sessionmaker() as session:
        (lora,) = await list_subscriptions(session, 6)
        subs = await list_subscriptions(session, 7)
    assert [s.kind for s in subs] == ["gpu", "gpu"]
    assert lora.max_price == 300 and lora.price_currency == "RUB"
    assert lora.workload_json["method"] == "lora" and float(lora.min_gib_by_count["1"]) > 20
    assert subs[1].providers == ["runpod"] and subs[1].gpu_ids == ["a100-80gb"]
    # the same again is not a duplicate
    assert "already watch" in await say(tg, "/subscribe B200")


async def test_cap_per_hour_is_the_whole_configuration_unless_per_gpu_is_said(tg, app):
    """A cap "per hour" bounds what the whole configuration costs per hour; per GPU-hour only when the text says so.
    Runpod sells H100 × 1 at $2.49/h and H100 × 8 at $19.90/h ($2.49 per GPU-hour)."""
    text = await say(tg, "/subscribe H100 under $3/h", user_id=30)
    matching = text.split("Already matching now")[1]
    assert "$2.49" in matching and "$19.90" not in matching  # × 8 costs $19.90/h, over a $3/h cap
    assert "Cap read as $3.00/h for the whole configuration" in text and "/GPU-h" in text  # the other reading beside
    text = await say(tg, "/subscribe H100 under $3 per GPU-hour", user_id=30)
    assert "$19.90" in text.split("Already matching now")[1]  # $2.49 per GPU-hour is under $3 per GPU-hour
    assert "Cap read as $3.00 per GPU-hour" in text and "for the whole configuration" in text
    text = await say(tg, "/subscribe H100 до 250 ₽ в час", user_id=31, lang="ru")
    matching = text.split("Уже подходит сейчас")[1]
    assert "× 8" not in matching and "H100 SXM × 1" in matching  # × 1 = 199.2 ₽/ч under 250 ₽/ч; × 8 is not
    assert "за всю конфигурацию" in text and "/GPU-ч" in text
    text = await say(tg, "/subscribe H100 до 250 ₽ за карту", user_id=31, lang="ru")
    assert "H100 SXM × 8" in text.split("Уже подходит сейчас")[1] and "Порог понят как 250 ₽ за GPU-час" in text
    async with app.sessionmaker() as session:
        en = await list_subscriptions(session, 30)
        ru = await list_subscriptions(session, 31)
    assert [(s.max_price, s.price_basis) for s in en] == [(3, "total"), (3, "gpu")]
    assert [(s.max_price, s.price_currency, s.price_basis) for s in ru] == [(250, "RUB", "total"), (250, "RUB", "gpu")]
    listing = await say(tg, "/subs", user_id=30)
    assert "up to $3.00/h for the whole configuration" in listing and "up to $3.00/GPU-h" in listing
    listing = await say(tg, "/subs", user_id=31, lang="ru")
    assert "до 250 ₽/ч за всю конфигурацию" in listing and "до 250 ₽/GPU-ч" in listing


async def test_a_subscription_in_a_country_holds_only_offers_there(tg, app):
    """"в России" / "US only" are countries: Selectel's A100 ('ru-1', a Saint Petersburg pool) is in Russia,
    RunPod's ('us') in the United States; the filter is said back by name in the user's language."""
    text = await say(tg, "/subscribe A100 80GB в России", user_id=43, lang="ru")
    matching = text.split("Уже подходит сейчас")[1]
    assert "Selectel" in matching and "RunPod" not in matching and "регион Россия" in text
    text = await say(tg, "/subscribe A100 80GB, US only", user_id=44)
    matching = text.split("Already matching now")[1]
    assert "$1.64" in matching and "Selectel" not in matching and "region United States" in text
    async with app.sessionmaker() as session:
        (ru,) = await list_subscriptions(session, 43)
        (us,) = await list_subscriptions(session, 44)
    assert (ru.region, us.region) == ("@RU", "@US")
    assert "регион Россия" in await say(tg, "/subs", user_id=43, lang="ru")


async def test_subscribe_unknown_gpu(tg, app):
    assert "do not know a GPU" in await say(tg, "/subscribe Z9000")


async def test_subscribe_through_the_wizard(tg, app):
    tg.message("/subscribe", user_id=8)
    ask = await tg.wait_for("sendMessage", chat_id=8)
    tg.press(ask, "GPU model", user_id=8)
    gpus = await tg.wait_for("editMessageText", chat_id=8)
    tg.press(gpus, "A100 80GB", user_id=8)
    price = await tg.wait_for("editMessageText", chat_id=8)
    tg.press(price, "$2", user_id=8)
    basis = await tg.wait_for("editMessageText", chat_id=8)  # two buttons: the whole configuration, or each GPU
    assert basis.button("for the whole configuration") and basis.button("per GPU-hour")
    tg.press(basis, "for the whole configuration", user_id=8)
    providers = await tg.wait_for("editMessageText", chat_id=8)
    tg.press(providers, "All providers", user_id=8)
    done = await tg.wait_for("editMessageText", chat_id=8)
    assert "Now watching" in done.text and "A100 80GB" in done.text and "$2" in done.text
    assert "$2.00/h for the whole configuration" in done.text
    assert "$1.64" in done.text  # runpod's A100 already matches
    async with app.sessionmaker() as session:
        (sub,) = await list_subscriptions(session, 8)
    assert sub.gpu_ids == ["a100-80gb"] and sub.max_price == 2 and sub.price_currency == "USD"
    assert sub.price_basis == "total"


async def test_wizard_cap_per_gpu_hour_in_russian(tg, app):
    tg.message("/subscribe", user_id=18, lang="ru")
    ask = await tg.wait_for("sendMessage", chat_id=18)
    tg.press(ask, "За моделью GPU", user_id=18, lang="ru")
    gpus = await tg.wait_for("editMessageText", chat_id=18)
    tg.press(gpus, "H100", user_id=18, lang="ru")
    price = await tg.wait_for("editMessageText", chat_id=18)
    tg.press(price, "200", user_id=18, lang="ru")
    basis = await tg.wait_for("editMessageText", chat_id=18)
    assert "всей конфигурации или каждой GPU" in basis.text
    tg.press(basis, "за GPU-час", user_id=18, lang="ru")
    providers = await tg.wait_for("editMessageText", chat_id=18)
    tg.press(providers, "Все провайдеры", user_id=18, lang="ru")
    done = await tg.wait_for("editMessageText", chat_id=18)
    assert "за GPU-час" in done.text and "Слежу" in done.text
    # H100 × 8 at $19.90/h is $2.49 per GPU-hour = 199.2 ₽: under a 200 ₽ per-GPU-hour cap, listed
    assert "H100" in done.text.split("Уже подходит сейчас")[1]
    async with app.sessionmaker() as session:
        (sub,) = await list_subscriptions(session, 18)
    assert sub.price_basis == "gpu" and sub.max_price == 200 and sub.price_currency == "RUB"


async def test_wizard_offers_only_polled_providers(tg, app):
    """Only providers this bot polls are buttons to choose; the others are greyed, with why, and pressing one says
    so without subscribing (the default settings poll neither Hyperstack, which needs a key, nor immers.cloud)."""
    for uid, lang, labels in ((19, "en", ("GPU model", "H100", "$2", "per GPU-hour", "needs an API key", "not polled")),
                              (20, "ru", ("моделью GPU", "H100", "200", "за GPU-час", "нужен ключ API",
                                          "не опрашивает"))):
        gpu_kind, gpu, price_label, basis_label, needs_key, refused = labels
        tg.message("/subscribe", user_id=uid, lang=lang)
        ask = await tg.wait_for("sendMessage", chat_id=uid)
        tg.press(ask, gpu_kind, user_id=uid, lang=lang)
        gpus = await tg.wait_for("editMessageText", chat_id=uid)
        tg.press(gpus, gpu, user_id=uid, lang=lang)
        price = await tg.wait_for("editMessageText", chat_id=uid)
        tg.press(price, price_label, user_id=uid, lang=lang)
        basis = await tg.wait_for("editMessageText", chat_id=uid)
        tg.press(basis, basis_label, user_id=uid, lang=lang)
        providers = await tg.wait_for("editMessageText", chat_id=uid)
        assert "Hyperstack" in providers.text and "immers" in providers.text  # named, greyed
        greyed = providers.button("Hyperstack")
        assert greyed["text"].startswith("⚪") and needs_key in greyed["text"]
        assert providers.button("RunPod")["text"] == "RunPod"
        tg.press(providers, "Hyperstack", user_id=uid, lang=lang)
        answer = await tg.wait_for("answerCallbackQuery",
                                   predicate=lambda c, r=refused: r in str(c.params.get("text")))
        assert answer.params.get("show_alert") is True
        tg.press(providers, "RunPod", user_id=uid, lang=lang)  # the wizard is still at this step
        done = await tg.wait_for("editMessageText", chat_id=uid)
        assert "RunPod" in done.text
        async with app.sessionmaker() as session:
            (sub,) = await list_subscriptions(session, uid)
        assert sub.providers == ["runpod"]


async def test_notify_button_under_estimate_subscribes(tg, app):
    tg.message("/estimate 70B QLoRA", user_id=9)
    est = await tg.wait_for("sendMessage", chat_id=9)
    tg.press(est, "Notify", user_id=9)
    await tg.wait_for("answerCallbackQuery")
    reply = await tg.wait_for("sendMessage", chat_id=9)
    assert "Now watching" in reply.text and "70B QLoRA" in reply.text


async def test_notify_keeps_the_answers_workload_need_and_count(tg, app):
    """The 🔔 button stores what the answer said: its per-GPU figure on its GPU count, and that count."""
    for uid, lang, text, need in ((40, "en", "/estimate 70B LoRA on 8 H100", "GiB per GPU on 8 GPUs"),
                                  (41, "ru", "/estimate 70B LoRA на 8 H100", "ГиБ на GPU при 8 GPU"),
                                  (42, "en", "/estimate 70B QLoRA on 2 A100", "GiB per GPU on 2 GPUs")):
        tg.message(text, user_id=uid, lang=lang)
        est = await tg.wait_for("sendMessage", chat_id=uid)
        said = re.search(r"(?:VRAM per GPU|на GPU): <b>([\d.,\u00a0 ]+?) (?:GiB|ГиБ)", est.text)
        assert said, est.text
        said = said.group(1)  # "VRAM per GPU: 142.3 GiB"
        tg.press(est, "🔔", user_id=uid, lang=lang)
        reply = await tg.wait_for("sendMessage", chat_id=uid)
        assert f"{said} {need}" in reply.text, (said, reply.text)
        async with app.sessionmaker() as session:
            (sub,) = await list_subscriptions(session, uid)
        count = int(need.split(" GPU")[-2].split()[-1])
        assert sub.gpu_count == count and sub.workload_json["gpus"] == count
        assert f"{sub.answer_gib:.1f}".replace(".", ",") in said.replace(".", ",")
        listing = await say(tg, "/subs", user_id=uid, lang=lang)
        assert f"{said} {need}" in listing


async def test_subs_pause_resume_delete_and_unsubscribe(tg, app):
    await say(tg, "/subscribe H100", user_id=10)
    await say(tg, "/subscribe 13B LoRA", user_id=10)
    tg.message("/subs", user_id=10)
    listing = await tg.wait_for("sendMessage", chat_id=10)
    assert "1. H100" in listing.text and "2. 13B LoRA" in listing.text
    tg.press(listing, "⏸ 1", user_id=10)
    paused = await tg.wait_for("editMessageText", chat_id=10)
    assert "paused" in paused.text.split("\n")[1]
    tg.press(paused, "▶️ 1", user_id=10)
    resumed = await tg.wait_for("editMessageText", chat_id=10)
    assert "paused" not in resumed.text
    tg.press(resumed, "🗑 2", user_id=10)
    confirm = await tg.wait_for("editMessageText", chat_id=10)  # asks first
    assert "Delete subscription 2: 13B LoRA" in confirm.text
    tg.press(confirm, "Keep", user_id=10)
    kept = await tg.wait_for("editMessageText", chat_id=10)
    assert "2. 13B LoRA" in kept.text
    tg.press(kept, "🗑 2", user_id=10)
    confirm = await tg.wait_for("editMessageText", chat_id=10)
    tg.press(confirm, "Delete", user_id=10)
    after = await tg.wait_for("editMessageText", chat_id=10)
    assert "13B LoRA" not in after.text and "1. H100" in after.text
    assert "Delete subscription 1: H100" in await say(tg, "/unsubscribe 1", user_id=10)
    tg.press(tg.calls_of("sendMessage")[-1], "Delete", user_id=10)
    for _ in range(2):  # the first "Deleted." answered the press in the list above; the second is this one
        await tg.wait_for("answerCallbackQuery", predicate=lambda c: c.params.get("text") == "Deleted.")
    assert "no subscriptions" in await say(tg, "/subs", user_id=10)


async def test_someone_elses_subscription_is_untouchable(tg, app):
    await say(tg, "/subscribe H100", user_id=11)
    async with app.sessionmaker() as session:
        (sub,) = await list_subscriptions(session, 11)
    await say(tg, "/start", user_id=12)  # user 12 exists and has a message to press on
    tg.callback(f"s:delete:{sub.id}", user_id=12)
    answer = await tg.wait_for("answerCallbackQuery")
    assert "no longer exists" in answer.params["text"]
    async with app.sessionmaker() as session:
        assert len(await list_subscriptions(session, 11)) == 1


async def test_subscription_limit(tg, app):
    gpus = ["T4", "L4", "A10", "RTX 3090", "RTX 4090", "RTX A5000", "RTX 5090", "V100 32GB", "A100 40GB", "L40S",
            "RTX A6000", "A100 80GB", "H100 SXM", "H100 PCIe", "H100 NVL", "H200", "B200", "RTX 3060", "RTX 4080",
            "RTX A4000"]
    for name in gpus:
        await say(tg, f"/subscribe {name}", user_id=13)
    assert "maximum" in await say(tg, "/subscribe MI300X", user_id=13) or "know" in tg.calls_of("sendMessage")[-1].text
    assert "maximum" in await say(tg, "/subscribe 7B LoRA", user_id=13)


async def test_offers_paging(tg, app):
    tg.message("/offers RTX 3090", user_id=14)
    page1 = await tg.wait_for("sendMessage", chat_id=14)
    assert "page 1/3" in page1.text and page1.text.count("• Vast.ai") == 8
    tg.press(page1, "Next", user_id=14)
    page2 = await tg.wait_for("editMessageText", chat_id=14)
    assert "page 2/3" in page2.text
    assert page2.button("Back") and page2.button("Next")
    tg.press(page2, "Back", user_id=14)
    again = await tg.wait_for("editMessageText", chat_id=14)
    assert "page 1/3" in again.text
    all_offers = await say(tg, "/offers", user_id=14)
    assert "page 1/" in all_offers and "$0.15" in all_offers  # cheapest overall first
    assert "page 1/1" in await say(tg, "/offers 70B QLoRA", user_id=14)


async def test_history_sends_a_real_png(tg, app):
    later = [offer("runpod", "a100", "a100-80gb", "A100 SXM 80GB", 1, 1.39)]
    await app.ingest(poll("runpod", RUNPOD[:1] + later + RUNPOD[2:], T0 + timedelta(hours=6)), RATES)
    tg.message("/history A100 80GB", user_id=15)
    photo = await tg.wait_for("sendPhoto", chat_id=15)
    assert photo.photo is not None and photo.photo.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(photo.photo) > 10_000
    assert "A100 80GB" in photo.text
    assert "No price history" in await say(tg, "/history B200", user_id=15)
    assert "do not know" in await say(tg, "/history Voodoo 5", user_id=15)


async def test_providers_and_settings(tg, app):
    text = await say(tg, "/providers", user_id=16)
    assert "✅ RunPod" in text and "✅ Selectel" in text  # display names from the one provider catalog
    assert "🔑 Lambda" in text and "PROVIDERS__LAMBDA__API_KEY" in text  # keyed and not configured: says so
    assert "PROVIDERS__VERDA__CLIENT_SECRET" in text
    assert "⏸ immers.cloud" in text  # shipped switched off until an operator checks its selectors
    text_ru = await say(tg, "/providers", user_id=18, lang="ru")
    assert "✅ RunPod" in text_ru and "🔑 Lambda — нужен ключ API" in text_ru and "⏸ immers.cloud — выключен" in text_ru
    assert "runpod" not in text
    tg.message("/settings", user_id=16)
    s = await tg.wait_for("sendMessage", chat_id=16)
    assert "Currency: USD" in s.text
    assert s.buttons()[0]["text"] == "Switch prices to RUB"  # the action, not a state that is not
    tg.press(s, "Switch prices to RUB", user_id=16)
    changed = await tg.wait_for("editMessageText", chat_id=16)
    assert "Currency: RUB" in changed.text and changed.button("Switch prices to USD")
    assert "23:00–08:00" in await say(tg, "/settings quiet 23-8", user_id=16)
    assert "quiet 23-8" in await say(tg, "/settings quiet banana", user_id=16)
    a100 = await say(tg, "/offers A100 80GB", user_id=16)
    assert "₽" in a100  # prices follow the chosen currency
    assert a100.count("VAT") == 1  # Selectel's price carries НДС: said once, under the list
    assert "VAT" not in await say(tg, "/offers RTX 3090", user_id=16)  # only Vast.ai: no VAT to mention


async def test_admin_commands_refused_to_others(tg, app):
    for command in ("/stats", "/health", "/testalert"):
        assert "do not know that command" in await say(tg, command, user_id=17)
    stats = await say(tg, "/stats", user_id=ADMIN)
    assert "Users:" in stats and "In-stock offers cached: 26" in stats
    assert "Test alert" in await say(tg, "/testalert", user_id=ADMIN)
    assert "RunPod" in await say(tg, "/health", user_id=ADMIN)


async def test_inline_empty_good_unparseable(tg, app):
    qid = tg.inline_query("", user_id=18)
    empty = await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))
    titles = [r["title"] for r in empty.params["results"]]
    assert "13B LoRA" in titles

    qid = tg.inline_query("24B LoRA", user_id=18)
    good = await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))
    results = good.params["results"]
    ids = [r["id"] for r in results]
    assert len(ids) == len(set(ids)) <= 50
    assert "GiB per GPU" in results[0]["title"]
    assert any("RTX 3090" in r["title"] for r in results[1:]) is False  # 24B LoRA needs more than 24 GB
    url = results[0]["reply_markup"]["inline_keyboard"][0][0]["url"]
    assert url.startswith("https://t.me/gpuradar_test_bot?start=sub_")

    qid = tg.inline_query("gibberish words", user_id=18)
    bad = await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))
    (only,) = bad.params["results"]
    assert only["id"] == "syntax" and "gibberish" in only["title"]


async def test_inline_family_without_its_size_answers_each_of_its_models(tg, app):
    qid = tg.inline_query("gpt-oss inference 8k", user_id=20)
    answer = await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))
    titles = [r["title"] for r in answer.params["results"]]
    assert len(titles) == 2 and all("GiB per GPU" in t for t in titles), titles
    assert [t.split(" ")[0].lower() for t in titles] == ["gpt-oss-20b", "gpt-oss-120b"], titles
    urls = [r["reply_markup"]["inline_keyboard"][0][0]["url"] for r in answer.params["results"]]
    assert len(set(urls)) == 2 and all(u.startswith("https://t.me/gpuradar_test_bot?start=sub_") for u in urls)
    qid = tg.inline_query("gpt-oss", user_id=20)  # no method: each would be a question, so the one that asks it
    (only,) = (await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))).params["results"]
    assert only["id"] == "syntax" and "gpt-oss-120B" in only["input_message_content"]["message_text"]


async def test_inline_contradiction_answers_either_reading(tg, app):
    qid = tg.inline_query("70B LoRA vs QLoRA", user_id=21)
    answer = await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))
    titles = [r["title"] for r in answer.params["results"]]
    assert len(titles) == 2 and " LoRA " in titles[0] + " " and "QLoRA" in titles[1], titles
    assert all("GiB per GPU" in t for t in titles)


async def test_inline_paging_and_deep_link_subscribes(tg, app):
    qid = tg.inline_query("1B inference", user_id=19)
    first = await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))
    assert first.params["next_offset"] == "20" and len(first.params["results"]) == 21
    qid = tg.inline_query("1B inference", user_id=19, offset="20")
    second = await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))
    assert not second.params.get("next_offset")
    ids = {r["id"] for r in first.params["results"]} | {r["id"] for r in second.params["results"]}
    assert len(ids) == len(first.params["results"]) + len(second.params["results"])
    url = first.params["results"][0]["reply_markup"]["inline_keyboard"][0][0]["url"]
    payload = url.split("start=")[1]
    text = await say(tg, f"/start {payload}", user_id=20)
    assert "Now watching" in text and "1B inference" in text


async def test_inline_pages_are_kept_as_text_bounded_and_answered_the_same(tg, app, monkeypatch):
    """The inline page cache keeps each page's text (never aiogram objects or rankings), stays within its bound, and
    a page answered from it is the same answer, in the asker's language, as the one built the first time."""
    from bot.handlers import inline

    monkeypatch.setattr(inline, "PAGES_KEPT", 3)
    inline._PAGES.clear()
    answers = {}
    for i, phrase in enumerate(["1B inference", "7B LoRA", "13B LoRA", "8B QLoRA", "1B inference"]):
        qid = tg.inline_query(phrase, user_id=30 + i % 2, lang=("en", "ru")[i % 2])
        answers.setdefault(phrase, []).append((await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))).params)
        assert len(inline._PAGES) <= 3
    first, again = answers["1B inference"]  # user 30 (en) both times; the page was evicted and built again
    assert first["results"] == again["results"] and first["next_offset"] == again["next_offset"] == "20"
    qid = tg.inline_query("1B inference", user_id=30)  # now kept: answered from the text, the same again
    assert (await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))).params["results"] == first["results"]
    ru = answers["7B LoRA"][0]["results"]
    assert ru[0]["reply_markup"]["inline_keyboard"][0][0]["text"] != first["results"][0]["reply_markup"][
        "inline_keyboard"][0][0]["text"]  # the button in Russian for the Russian user
    for page in inline._PAGES.values():
        assert isinstance(page, inline.Page) and page.articles
        for article in page.articles:
            assert all(isinstance(getattr(article, f), str) for f in ("id", "title", "description", "text"))


async def test_broken_deep_link(tg, app):
    tg.message("/start sub_hdeadbeef", user_id=21)
    await tg.wait_for("sendMessage", chat_id=21)
    assert "broken or has expired" in (await tg.wait_for("sendMessage", chat_id=21)).text


async def test_unknown_gpu_names_reach_admins_only(tg, app):
    """A card the catalog cannot name: counted for admins on /providers (and /health), in both languages, and its
    offers shown to nobody, not even on the whole /offers list."""
    later = T0 + timedelta(hours=1)
    odd = [offer("runpod", f"odd{i}", None, "H100-80G-PCIe-NVLink-X", 1, 0.01 + i / 1000)  # cheapest of all
           for i in range(3)]
    await app.ingest(poll("runpod", RUNPOD + odd, later), RATES)
    admin = await say(tg, "/providers", user_id=ADMIN)
    assert "3 offers with unknown GPU <code>H100-80G-PCIe-NVLink-X</code>" in admin
    ru = await say(tg, "/health", user_id=ADMIN, lang="ru")
    assert "3 предложения с неизвестной GPU" in ru
    public = await say(tg, "/providers", user_id=19)
    assert "✅ RunPod" in public and "unknown GPU" not in public
    assert "H100-80G-PCIe-NVLink-X" not in await say(tg, "/offers", user_id=19)
