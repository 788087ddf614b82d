"""A serving target through the real bot (aiogram against the stand-in Bot API server, the app's own ingest and a
migrated database), in both languages: the answer says the target and which configurations keep up, its offers are
only those, and a subscription watches and alerts only the cards that keep up."""

from __future__ import annotations

from datetime import timedelta

from gpuradar.app import App
from testkit.fake_telegram import FakeTelegram
from testkit.market import NOW, RATES, offer, poll

# Llama-3.1-8B at 1,000 requests a minute with 1k-token prompts: one H100 SXM keeps up (core.speed), one L40S or one
# A100 80GB holds it but prefills too slowly; both are cheaper, so a memory-only list would put them first.
PHRASE = "llama 3.1 8b 1000 requests per minute input 1k"
H100 = offer("runpod", "h100", "h100-sxm", "H100 80GB HBM3", 1, 2.99)
SLOW = [offer("runpod", "l40s", "l40s", "L40S", 1, 0.79),
        offer("runpod", "a100", "a100-80gb", "A100 SXM 80GB", 1, 1.64)]
MARKET = {"runpod": [H100, *SLOW]}


async def say(tg: FakeTelegram, text: str, user_id: int, lang: str = "en") -> str:
    tg.message(text, user_id=user_id, lang=lang)
    return (await tg.wait_for("sendMessage", chat_id=user_id)).text


async def test_the_answer_says_the_target_and_lists_only_offers_that_keep_up(tg: FakeTelegram, app: App) -> None:
    for uid, lang, target, slow in ((1, "en", "🎯 Target: 1,000 requests a minute", "too slow for the target"),
                                    (2, "ru", "🎯 Цель: 1\xa0000 запросов в минуту", "не успевает за целью")):
        reply = await say(tg, PHRASE if lang == "en" else "llama 3.1 8b 1000 запросов в минуту вход 1k", uid, lang)
        assert target in reply
        speed = reply[reply.index(target):]
        assert "✓" in speed.splitlines()[1] and "H100 SXM" in speed  # the configurations that keep up come first
        assert slow not in speed  # six of them keep up: the speed table shows those
        fit_rows = [line for line in reply.splitlines() if line.startswith("•") and line.endswith("%)")]
        # the fit list too: by memory alone an A100 40GB comes first; the configurations that keep up lead instead
        assert fit_rows and fit_rows[0].startswith("• H100 SXM × 1") and slow not in "".join(fit_rows)
        offers = [line for line in reply.splitlines() if line.startswith("• RunPod:")]
        assert offers and all("H100" in line for line in offers), offers
        assert "L40S" not in "".join(offers) and "A100" not in "".join(offers)


async def test_a_subscription_with_a_target_alerts_only_configurations_that_keep_up(tg: FakeTelegram,
                                                                                    app: App) -> None:
    sub = await say(tg, f"/subscribe {PHRASE}", 5)
    # one A100 80GB is too slow, four keep up: the card is watched from four
    watched = sub.split("cards that keep up with the target: ", 1)[1].split("\n", 1)[0]
    assert watched.startswith("H100 SXM, GH200, H200")  # those that keep up alone first, eight named
    assert "A100 80GB" not in watched and watched.endswith("more).")  # four A100s keep up: past the eighth
    assert "$2.99" in sub and "$0.79" not in sub and "$1.64" not in sub  # what matches now is what would alert
    cheaper_slow = [offer("runpod", "l40s", "l40s", "L40S", 1, 0.59), offer("runpod", "a100", "a100-80gb",
                                                                          "A100 SXM 80GB", 1, 1.29)]
    await app.ingest(poll("runpod", [*cheaper_slow, H100], NOW - timedelta(minutes=5)), RATES)
    await app.ingest(poll("runpod", [*cheaper_slow, offer("runpod", "h100", "h100-sxm", "H100 80GB HBM3", 1, 2.49),
                                     offer("runpod", "a100x4", "a100-80gb", "A100 SXM 80GB", 4, 1.49)],
                          NOW - timedelta(minutes=4)), RATES)
    # one alert carries both (grouping is on by default); had a slow card matched it would be in it, or before it
    alert = await tg.wait_for("sendMessage", chat_id=5, predicate=lambda c: "$2.49" in c.text)
    assert "A100 80GB ×4" in alert.text and "keeps up with the target" in alert.text
    sent = "\n".join(c.text for c in tg.calls_of("sendMessage") if c.chat_id == 5 and c is not None)
    assert "L40S" not in sent.split("Now watching", 1)[1].split("\n", 3)[-1] and "$1.29" not in sent
    assert "$0.59" not in sent


async def test_a_target_no_card_keeps_up_with_is_refused_not_stored(tg: FakeTelegram, app: App) -> None:
    for uid, lang, words in ((7, "en", "No card keeps up"), (8, "ru", "Ни одна карта не успевает")):
        reply = await say(tg, "/subscribe llama 3.1 8b 9000 tok/s per user", uid, lang)
        assert words in reply
        listing = await say(tg, "/subs", uid, lang)
        assert "9000" not in listing


async def test_an_answer_nothing_keeps_up_with_says_so_and_offers_no_alert(tg: FakeTelegram, app: App) -> None:
    for uid, lang, words in ((9, "en", "No configuration keeps up"), (10, "ru", "Ни одна конфигурация не успевает")):
        tg.message("llama 3.1 8b 9000 tok/s per user", user_id=uid, lang=lang)
        reply = await tg.wait_for("sendMessage", chat_id=uid)
        assert words in reply.text and "🎯" in reply.text
        assert not any(b.get("callback_data", "").startswith("est:notify") or "Notify" in b.get("text", "")
                       or "Сообщить" in b.get("text", "") for b in reply.buttons())
        tg.message("llama 3.1 8b 1000 requests per minute input 1k", user_id=uid, lang=lang)
        kept = await tg.wait_for("sendMessage", chat_id=uid)
        assert any("Notify" in b.get("text", "") or "Сообщить" in b.get("text", "") for b in kept.buttons())


async def test_inline_says_the_target_and_names_the_configurations_that_keep_up(tg: FakeTelegram, app: App) -> None:
    for uid, lang in ((11, "en"), (12, "ru")):
        qid = tg.inline_query(PHRASE, user_id=uid, lang=lang)
        inline = await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))
        first = inline.params["results"][0]
        # by memory alone the first would be an A100 40GB
        assert first.get("description", "").split(": ", 1)[1].startswith("H100 SXM×1"), first
        assert "🎯" in first["input_message_content"]["message_text"]
