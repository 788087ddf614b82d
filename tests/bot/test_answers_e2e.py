"""Issue 19, the rest of "Words and numbers", through the real bot (aiogram against the stand-in Bot API server), the
app's own ingest and a migrated database, in both languages: the /start and bare /estimate buttons, assumptions
behind a button, human place names, order links to the offer's own page, remedies said with what they changed."""

from __future__ import annotations

from datetime import timedelta

import pytest

from gpuradar.app import App
from testkit.fake_telegram import FakeTelegram
from testkit.market import NOW, RATES, offer, poll, said

WHOLE = [offer("runpod", "a100", "a100-80gb", "A100 SXM 80GB", 1, 1.64, location="secure"),
         offer("runpod", "4090", "rtx-4090", "RTX 4090", 1, 0.34, location="community"),
         offer("runpod", "h100x8", "h100-sxm", "H100 80GB HBM3", 8, 19.9, location="secure")]
VULTR = [offer("vultr", "vcg-a100-1c-6g-4vram", "a100-80gb", "NVIDIA_A100", 1, 0.123, memory=4, fraction=0.05,
               location="ewr")]


MARKET = {"runpod": WHOLE, "vultr": VULTR}


async def test_start_and_a_bare_estimate_offer_examples_subscriptions_and_language_as_buttons(
        tg: FakeTelegram, app: App) -> None:
    for uid, lang, example, header, subs, language, empty, choose in (
            (101, "en", "70B QLoRA ctx 8k", "70B · QLoRA", "My subscriptions", "Language",
             "no subscriptions", "Choose the language"),
            (102, "ru", "инференс 70B int4, контекст 32k", "70B · инференс", "Мои подписки", "Язык",
             "Подписок нет", "Выберите язык")):
        for command in ("/start", "/estimate"):
            welcome = await said(tg, command, uid, lang)
            labels = [b["text"] for b in welcome.buttons()]
            assert any(example in x for x in labels) and subs in " ".join(labels) and language in " ".join(labels)
            if command == "/estimate":
                assert example not in welcome.text  # the examples are shown once: as the buttons
            tg.press(welcome, example, user_id=uid, lang=lang)
            est = await tg.wait_for("sendMessage", chat_id=uid, predicate=lambda c: c.text.startswith("🧮"))
            assert header in est.text, est.text[:200]
        tg.press(welcome, subs, user_id=uid, lang=lang)
        assert empty in (await tg.wait_for("sendMessage", chat_id=uid,
                                           predicate=lambda c, e=empty: e in c.text)).text
        tg.press(welcome, language, user_id=uid, lang=lang)
        chooser = await tg.wait_for("sendMessage", chat_id=uid, predicate=lambda c, w=choose: w in c.text)
        assert chooser.button("English") and chooser.button("Русский")


# A large phone shows about 45 lines of about 40 characters of a Telegram message (6.7" screen, default text size).
PHONE_LINES, PHONE_WIDTH = 45, 40


def screen_lines(html_text: str) -> int:
    import html
    import math
    import re

    plain = html.unescape(re.sub(r"<[^>]+>", "", html_text))
    return sum(max(1, math.ceil(len(line) / PHONE_WIDTH)) for line in plain.splitlines())


async def test_an_estimate_keeps_its_assumptions_behind_a_button_and_fits_a_phone_screen(
        tg: FakeTelegram, app: App) -> None:
    # five more fitting offers in stock, so each answer lists as many as it shows (OFFERS_SHOWN)
    await app.ingest(poll("vastai", [offer("vastai", f"h100-{i}", "h100-sxm", "H100 SXM", 1, 2.0 + i / 10,
                                           location="FI") for i in range(3)]
                          + [offer("vastai", f"a100-{i}", "a100-80gb", "A100 SXM4 80GB", 2, 2.5 + i / 10,
                                   location="US") for i in range(3)], NOW - timedelta(minutes=9)), RATES)
    for uid, lang, phrase, assumed, show, hide in (
            (111, "en", "/estimate 70B QLoRA ctx 4k", "Assumed:", "Assumptions", "Hide assumptions"),
            (112, "ru", "/estimate 13B LoRA 10k примеров 3 эпохи", "Допущения:", "Допущения", "Скрыть допущения"),
            (113, "en", "/estimate qwen3-8b inference input 1k output 2k 8 users", "Assumed:", "Assumptions",
             "Hide assumptions")):
        est = await said(tg, phrase, uid, lang)
        assert assumed not in est.text and screen_lines(est.text) <= PHONE_LINES, (screen_lines(est.text), est.text)
        listed = [line for line in est.text.splitlines()
                  if line.startswith("•") and ("/h · " in line or "/ч · " in line)]
        assert len(listed) == 5, est.text
        tg.press(est, show, user_id=uid, lang=lang)
        shown = await tg.wait_for("editMessageText", chat_id=uid)
        assert assumed in shown.text and shown.text.replace(shown.text.split(assumed)[1].split("\n")[0], "")
        assert est.text.split("\n")[0] == shown.text.split("\n")[0] and shown.button(hide)
        assert shown.button("Notify" if lang == "en" else "Сообщить")  # the other buttons stay
        tg.press(shown, hide, user_id=uid, lang=lang)
        hidden = await tg.wait_for("editMessageText", chat_id=uid)
        assert hidden.text == est.text and hidden.button(show)


async def test_places_are_said_as_people_say_them_in_lists_inline_and_alerts(tg: FakeTelegram, app: App) -> None:
    for uid, lang, jersey, secure, community in (
            (121, "en", "New Jersey, US", "Secure Cloud", "Community Cloud"),
            (122, "ru", "Нью-Джерси", "защищённое облако (Secure Cloud)", "облако сообщества (Community Cloud)")):
        listing = (await said(tg, "/offers", uid, lang)).text
        assert f"({jersey})" in listing and f"({secure})" in listing and f"({community})" in listing, listing
        assert "ewr" not in listing and "(secure)" not in listing
        qid = tg.inline_query("1B inference", user_id=uid, lang=lang)
        inline = await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))
        descriptions = " ".join(r.get("description", "") for r in inline.params["results"])
        assert jersey in descriptions and "ewr" not in descriptions
        await said(tg, "/subscribe RTX 4090", uid, lang)
    cheaper = [*WHOLE[:1], offer("runpod", "4090", "rtx-4090", "RTX 4090", 1, 0.29, location="community"),
               WHOLE[2]]
    await app.ingest(poll("runpod", cheaper, NOW - timedelta(minutes=5)), RATES)
    en = await tg.wait_for("sendMessage", chat_id=121, predicate=lambda c: "Order at" in c.text)
    ru = await tg.wait_for("sendMessage", chat_id=122, predicate=lambda c: "Заказать" in c.text)
    assert "Community Cloud" in en.text and "облако сообщества" in ru.text and "community)" not in ru.text.lower()


async def test_cli_offers_name_places(app: App, migrated_database_url: str, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    import asyncio

    from gpuradar.cli import main

    monkeypatch.setenv("DATABASE_URL", migrated_database_url)
    for lang, jersey in (("en", "New Jersey, US"), ("ru", "Нью-Джерси")):
        capsys.readouterr()
        assert await asyncio.to_thread(main, ["offers", "--lang", lang]) == 0
        out = capsys.readouterr().out
        assert jersey in out and " ewr " not in out


async def test_order_links_open_the_offers_own_page(tg: FakeTelegram, app: App) -> None:
    """The providers' sample payloads, parsed and ingested as a poll would: RunPod's rows link its deploy page with
    the GPU type preselected, Vast.ai's the listing that gave the price (its offer id)."""
    import re

    from scrapers.providers import runpod, vastai
    from testkit.provider_server import load_fixture

    await app.ingest(poll("runpod", runpod.parse(load_fixture("runpod.sample.json")), NOW - timedelta(minutes=4)),
                     RATES)
    await app.ingest(poll("vastai", vastai.parse(load_fixture("vastai.sample.json")), NOW - timedelta(minutes=4)),
                     RATES)
    for uid, lang in ((131, "en"), (132, "ru")):
        listing = (await said(tg, "/offers", uid, lang)).text
        links = re.findall(r'href="([^"]+)"', listing)
        assert any(link.startswith("https://console.runpod.io/deploy?gpu=NVIDIA") and "&amp;count=1" in link
                   for link in links), links
        assert any(re.fullmatch(r"https://cloud\.vast\.ai/create/\?id=\d+", link) for link in links), links


async def test_a_remedys_answer_says_what_it_changed_and_what_it_was(tg: FakeTelegram, app: App) -> None:
    for uid, lang, phrase, button, visible, assumed in (
            (141, "en", "/estimate 70B full fine-tune on 8 H100", "Offload optimizer",
             "Changed: CPU offload: optimizer states (was: none)",
             "Assumed: CPU offload: optimizer states (was: none)"),
            (142, "ru", "/estimate 32B QLoRA ctx 32k batch 4", "Микробатч 1", "Изменено: микробатч: 1 (было: 4)",
             "Допущения: микробатч: 1 (было: 4)")):
        est = await said(tg, phrase, uid, lang)
        assert "(was:" not in est.text and "(было:" not in est.text
        tg.press(est, button, user_id=uid, lang=lang)
        again = await tg.wait_for("sendMessage", chat_id=uid, predicate=lambda c: "🛠" in c.text)
        assert visible in again.text, again.text[:400]
        tg.press(again, "Assumptions" if lang == "en" else "Допущения", user_id=uid, lang=lang)
        shown = await tg.wait_for("editMessageText", chat_id=uid)
        assert assumed in shown.text, shown.text[:600]
        assert shown.text.count("(was:" if lang == "en" else "(было:") == 2  # once changed, never "assumed" as well


async def test_a_slices_price_drop_says_what_it_was_for_the_share_of_the_card(tg: FakeTelegram, app: App) -> None:
    await said(tg, "/subscribe 1B inference", 151, "en")
    await said(tg, "/subscribe 1B инференс", 152, "ru")
    cheaper = [offer("vultr", "vcg-a100-1c-6g-4vram", "a100-80gb", "NVIDIA_A100", 1, 0.099, memory=4, fraction=0.05,
                     location="ewr")]
    await app.ingest(poll("vultr", cheaper, NOW - timedelta(minutes=5)), RATES)
    en = await tg.wait_for("sendMessage", chat_id=151, predicate=lambda c: "1/20" in c.text)
    ru = await tg.wait_for("sendMessage", chat_id=152, predicate=lambda c: "1/20" in c.text)
    (was,) = [line for line in en.text.splitlines() if "was" in line]
    assert "$0.12/h for this share of the card" in was and "GPU-hour" not in was
    (было,) = [line for line in ru.text.splitlines() if "было" in line]
    assert "/ч за эту долю карты" in было and "GPU-час" not in было


async def test_a_subscription_made_from_a_remedy_says_the_change_in_words(tg: FakeTelegram, app: App) -> None:
    for uid, lang, phrase, button, words in (
            (161, "en", "/estimate 70B full fine-tune on 8 H100", "Offload optimizer",
             "70B full fine-tune on 8 H100, with optimizer states offloaded to CPU"),
            (162, "ru", "/estimate 32B QLoRA ctx 32k batch 4", "Микробатч 1",
             "32B QLoRA ctx 32k batch 4, с изменением: микробатч 1 с накоплением градиентов")):
        est = await said(tg, phrase, uid, lang)
        tg.press(est, button, user_id=uid, lang=lang)
        again = await tg.wait_for("sendMessage", chat_id=uid, predicate=lambda c: "🛠" in c.text)
        tg.press(again, "Notify" if lang == "en" else "Сообщить", user_id=uid, lang=lang)
        saved = await tg.wait_for("sendMessage", chat_id=uid)
        assert "[+" not in saved.text and words in saved.text, saved.text
        subs = (await said(tg, "/subs", uid, lang)).text
        assert "[+" not in subs and words in subs, subs
