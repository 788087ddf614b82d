"""Conversations that do what people expect (issue 12), through the real aiogram stack and the stand-in Telegram
server: plain text read as /estimate with method buttons, the subscribe wizard checking each answer and giving way
to any command, paging that edits and never repeats, delete confirmation, settings buttons, time zones, display
names instead of ids, localised provider reasons, /history that says when one point is all there is."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from bot.chart import is_drawable, render_history_png
from bot.names import model_name, region_name
from bot.sender import quiet_until
from core.gpus import get_gpu
from core.polls import PollResult, PollStatus
from storage.queries import HistoryPoint, HistorySeries
from storage.subscriptions import get_user, list_subscriptions
from tests.bot.test_bot_e2e import RATES, T0, app, offer, poll, say, tg

__all__ = ["app", "tg"]


async def test_plain_text_workload_is_an_estimate_in_a_private_chat(tg, app):
    text = await say(tg, "70B QLoRA ctx 8k", user_id=30)
    assert "VRAM per GPU" in text and "Llama 3.1 70B · QLoRA" in text
    assert "70b" not in text.split("\n")[0] and "qlora ·" not in text  # display names, not ids
    ru = await say(tg, "инференс 7B, контекст 8k", user_id=31, lang="ru")
    assert "Видеопамять на GPU" in ru and "инференс" in ru


async def test_plain_text_in_a_group_is_not_answered(tg, app):
    await say(tg, "/start", user_id=32)  # the user exists before two of their updates arrive at once
    tg.message("70B QLoRA", user_id=32, chat_id=-100500, chat_type="group")
    tg.message("/help", user_id=32, chat_id=-100500, chat_type="group")
    help_call = await tg.wait_for("sendMessage", chat_id=-100500)
    assert "/estimate" in help_call.text  # the command was answered, the chatter before it was not
    assert len([c for c in tg.calls_of("sendMessage") if c.chat_id == -100500]) == 1


async def test_missing_method_is_asked_with_buttons(tg, app):
    tg.message("mistral 7b", user_id=33)
    ask = await tg.wait_for("sendMessage", chat_id=33)
    assert "What should I estimate" in ask.text and "mistral 7b" in ask.text
    assert [b["text"] for b in ask.buttons()] == ["Inference", "LoRA", "QLoRA", "Full fine-tune"]
    tg.press(ask, "QLoRA", user_id=33)
    est = await tg.wait_for("editMessageText", chat_id=33)
    assert est.params["message_id"] == ask.params["_result_message_id"]
    assert "Mistral 7B" in est.text and "· QLoRA ·" in est.text and "VRAM per GPU" in est.text
    tg.message("/estimate Qwen2.5-32B", user_id=34, lang="ru")
    ask = await tg.wait_for("sendMessage", chat_id=34)
    assert "Что посчитать" in ask.text and ask.button("Инференс") and ask.button("Полное дообучение")


async def test_training_without_a_method_is_asked_the_ways_to_train_with_buttons(tg, app):
    """"fine-tune X" is asked LoRA / QLoRA / full / freeze (not inference); a button answers with that way."""
    for uid, lang, phrase, buttons, freeze, said in (
            (39, "en", "fine-tune mistral 7b on 5k examples", ["LoRA", "QLoRA", "Full fine-tune", "Freeze layers"],
             "Freeze layers", "· freeze"),
            (40, "ru", "дообучить mistral 7b", ["LoRA", "QLoRA", "Полное дообучение", "Заморозка слоёв"],
             "Заморозка слоёв", "· заморозка")):
        tg.message(phrase, user_id=uid, lang=lang)
        ask = await tg.wait_for("sendMessage", chat_id=uid)
        assert phrase in ask.text and ("which way to fine-tune?" in ask.text or "как дообучать?" in ask.text), ask.text
        assert [b["text"] for b in ask.buttons()] == buttons
        tg.press(ask, freeze, user_id=uid, lang=lang)
        est = await tg.wait_for("editMessageText", chat_id=uid)
        assert "Mistral 7B" in est.text and said in est.text, est.text[:300]


async def test_a_family_without_its_size_offers_its_models_as_buttons(tg, app):
    """"qwen3 inference 8k": the family's models as buttons; one pressed answers with that model's estimate. Without
    a method, the model picked is then asked its method (with the method buttons)."""
    tg.message("/estimate qwen3 inference 8k", user_id=41)
    ask = await tg.wait_for("sendMessage", chat_id=41)
    assert "Which one?" in ask.text and [b["text"] for b in ask.buttons()][:2] == ["Qwen3-0.6B", "Qwen3-1.7B"]
    tg.press(ask, "Qwen3-8B", user_id=41)
    est = await tg.wait_for("sendMessage", chat_id=41)
    assert "Qwen3 8B" in est.text and "VRAM per GPU" in est.text, est.text[:200]
    tg.message("квен3", user_id=42, lang="ru")  # a plain message that is only a family name
    ask = await tg.wait_for("sendMessage", chat_id=42)
    assert "Какая из них?" in ask.text and ask.button("Qwen3-32B")
    tg.press(ask, "Qwen3-32B", user_id=42, lang="ru")
    method = await tg.wait_for("sendMessage", chat_id=42)
    assert "Что посчитать" in method.text and "Qwen3-32B" in method.text and method.button("QLoRA")


async def test_a_contradiction_offers_either_reading_as_buttons(tg, app):
    """"70B LoRA or QLoRA": what contradicts is said, and each reading is a button answering with its estimate."""
    for uid, lang, phrase, picked, said in ((43, "en", "/estimate 70B LoRA or QLoRA ctx 4k", "70B QLoRA ctx 4k",
                                             "· QLoRA ·"),
                                            (44, "ru", "13B или 70B лора", "13B лора", "13B")):
        tg.message(phrase, user_id=uid, lang=lang)
        ask = await tg.wait_for("sendMessage", chat_id=uid)
        assert ("contradicts" in ask.text or "противоречит" in ask.text) and len(ask.buttons()) == 2, ask.text
        tg.press(ask, picked, user_id=uid, lang=lang)
        est = await tg.wait_for("sendMessage", chat_id=uid)
        assert said in est.text and ("VRAM per GPU" in est.text or "Видеопамять на GPU" in est.text), est.text[:200]


async def test_a_misspelt_phrase_offers_itself_put_right(tg, app):
    """"lamma 3 8b lroa": the answer says what was not understood and asks "Did you mean «llama 3 8b lora»?" with
    that phrase as a button answering with its estimate; inline mode answers with that estimate at once."""
    for uid, lang, phrase, meant in ((45, "en", "lamma 3 8b lroa", "llama 3 8b lora"),
                                     (46, "ru", "лама 3 8b инференс 20 пользоватлей",
                                      "лама 3 8b инференс 20 пользователей")):
        tg.message(phrase, user_id=uid, lang=lang)
        ask = await tg.wait_for("sendMessage", chat_id=uid)
        assert f"«{meant}»?" in ask.text and [b["text"] for b in ask.buttons()] == [meant], ask.text
        tg.press(ask, meant, user_id=uid, lang=lang)
        est = await tg.wait_for("sendMessage", chat_id=uid)
        assert "Llama 3 8B" in est.text and ("VRAM per GPU" in est.text or "Видеопамять на GPU" in est.text)
        qid = tg.inline_query(phrase, user_id=uid, lang=lang)
        inline = await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))
        assert any("Llama 3 8B" in r.get("title", "") for r in inline.params["results"]), inline.params["results"]


async def test_a_misspelt_subscription_gives_the_command_put_right_with_its_filters(tg, app):
    """"/subscribe lamma 3 8b lroa до 100 ₽/ч у runpod": nothing is stored; the answer gives the whole command back
    put right, its cap and provider as typed, and that command, sent, is watched."""
    for uid, lang, typed, meant in (
            (47, "ru", "/subscribe lamma 3 8b lroa до 100 ₽/ч у runpod",
             "/subscribe llama 3 8b lora до 100 ₽/ч у runpod"),
            (48, "en", "/subscribe mistrall 7b infrence under $1/h", "/subscribe mistral 7b inference under $1/h")):
        sub = await suggested_then_watched(tg, app, uid, lang, typed, meant)
        assert sub.max_price is not None and sub.kind == "workload"


async def suggested_then_watched(tg, app, uid: int, lang: str, typed: str, command: str):
    """`typed` stores nothing and its answer suggests `command`; `command`, sent, is the one watch stored."""
    reply = await say(tg, typed, user_id=uid, lang=lang)
    assert command in reply, reply
    async with app.sessionmaker() as session:
        assert await list_subscriptions(session, uid) == []
    stored = await say(tg, command, user_id=uid, lang=lang)
    assert "Now watching" in stored or "Слежу" in stored, stored
    async with app.sessionmaker() as session:
        (sub,) = await list_subscriptions(session, uid)
    return sub


async def test_a_phrase_with_words_of_prose_offers_itself_without_them(tg, app):
    """"7b lora for a chatbot": the answer says what was not understood and which words leaving out gives a
    workload, with that phrase as a button answering its estimate; inline mode answers that estimate; /subscribe
    stores nothing and gives the command without those words, its filters kept, which then is watched."""
    for uid, lang, phrase, shorter, command in (
            (49, "en", "7b lora for a chatbot", "7b lora", "/subscribe 7b lora x2"),
            (50, "ru", "13B LoRA для бота техподдержки", "13B LoRA", "/subscribe 13B LoRA x2")):
        tg.message(phrase, user_id=uid, lang=lang)
        ask = await tg.wait_for("sendMessage", chat_id=uid)
        assert f"«{shorter}»." in ask.text and [b["text"] for b in ask.buttons()] == [shorter], ask.text
        tg.press(ask, shorter, user_id=uid, lang=lang)
        est = await tg.wait_for("sendMessage", chat_id=uid)
        assert "VRAM per GPU" in est.text or "Видеопамять на GPU" in est.text, est.text[:200]
        qid = tg.inline_query(phrase, user_id=uid, lang=lang)
        inline = await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))
        assert any("LoRA" in r.get("title", "") for r in inline.params["results"]), inline.params["results"]
        sub = await suggested_then_watched(tg, app, uid, lang, f"/subscribe {phrase} x2", command)
        assert sub.gpu_count == 2 and sub.kind == "workload"


async def test_partly_understood_text_says_what_was_understood(tg, app):
    text = await say(tg, "13B LoRA frobnicate", user_id=35)
    assert "Understood" in text and "frobnicate" in text


async def test_more_offers_edits_the_estimate_and_never_repeats_page_one(tg, app):
    tg.message("/estimate 1B inference", user_id=36)
    est = await tg.wait_for("sendMessage", chat_id=36)
    shown = [line for line in est.text.splitlines() if line.startswith("• Vast.ai") or line.startswith("• RunPod")]
    assert len(shown) == 5
    tg.press(est, "More offers", user_id=36)
    page = await tg.wait_for("editMessageText", chat_id=36)
    assert page.params["message_id"] == est.params["_result_message_id"]  # the same message, edited
    assert "page 1/" in page.text
    assert not any(line in page.text for line in shown)  # page 1 starts after the offers already shown
    tg.press(page, "Next", user_id=36)
    page2 = await tg.wait_for("editMessageText", chat_id=36)
    assert "page 2/" in page2.text
    tg.press(page2, "Back", user_id=36)
    page1 = await tg.wait_for("editMessageText", chat_id=36)
    assert "page 1/" in page1.text
    tg.press(page1, "Back", user_id=36)
    again = await tg.wait_for("editMessageText", chat_id=36)
    assert "VRAM per GPU" in again.text and again.button("More offers")
    assert len([c for c in tg.calls_of("sendMessage") if c.chat_id == 36]) == 1  # never a second message


async def test_wizard_refuses_a_nonsense_workload_at_that_step(tg, app):
    tg.message("/subscribe", user_id=37)
    ask = await tg.wait_for("sendMessage", chat_id=37)
    tg.press(ask, "A workload", user_id=37)
    await tg.wait_for("editMessageText", chat_id=37)
    refused = await say(tg, "banana phone", user_id=37)
    assert "banana" in refused and "13B LoRA" in refused  # what was not understood, and examples
    assert "price" not in refused.lower()
    asked_price = await say(tg, "13B LoRA", user_id=37)
    assert "Highest price per hour" in asked_price
    refused_price = await say(tg, "cheap", user_id=37)
    assert "Send a number" in refused_price


async def test_wizard_refuses_an_unknown_gpu(tg, app):
    tg.message("/subscribe", user_id=38)
    ask = await tg.wait_for("sendMessage", chat_id=38)
    tg.press(ask, "A GPU model", user_id=38)
    await tg.wait_for("editMessageText", chat_id=38)
    assert "do not know a GPU" in await say(tg, "Voodoo 5", user_id=38)
    assert "Highest price" in await say(tg, "H100", user_id=38)


async def test_any_command_cancels_the_wizard(tg, app):
    tg.message("/subscribe", user_id=39)
    ask = await tg.wait_for("sendMessage", chat_id=39)
    tg.press(ask, "A GPU model", user_id=39)
    gpus = await tg.wait_for("editMessageText", chat_id=39)
    tg.press(gpus, "H100", user_id=39)
    await tg.wait_for("editMessageText", chat_id=39)  # now asking the price
    tg.message("/help", user_id=39)
    cancelled = await tg.wait_for("sendMessage", chat_id=39)
    assert "Cancelled" in cancelled.text
    help_text = await tg.wait_for("sendMessage", chat_id=39)
    assert "/estimate" in help_text.text
    after = await say(tg, "300", user_id=39)  # no longer the price answer
    assert "Highest price" not in after and "Now watching" not in after
    async with app.sessionmaker() as session:
        assert await list_subscriptions(session, 39) == []


async def test_unsubscribe_all_asks_first(tg, app):
    await say(tg, "/subscribe H100", user_id=40)
    await say(tg, "/subscribe B200", user_id=40)
    ask = await say(tg, "/unsubscribe all", user_id=40)
    assert "Delete all 2 subscriptions?" in ask
    async with app.sessionmaker() as session:
        assert len(await list_subscriptions(session, 40)) == 2  # nothing deleted yet
    tg.press(tg.calls_of("sendMessage")[-1], "Delete", user_id=40)
    done = await tg.wait_for("editMessageText", chat_id=40)
    assert "All 2 subscriptions deleted" in done.text
    ru = await say(tg, "/subscribe H100", user_id=41, lang="ru")
    assert "Слежу" in ru
    assert "Удалить 1 подписку?" in await say(tg, "/unsubscribe все", user_id=41, lang="ru")


async def test_time_zone_by_offset_or_city_and_quiet_hours_in_it(tg, app):
    text = await say(tg, "/settings tz Novosibirsk", user_id=42)
    assert "UTC+7" in text
    assert "UTC+5:30" in await say(tg, "/settings tz +5:30", user_id=42)
    assert "UTC+7" in await say(tg, "/settings tz Новосибирск", user_id=42, lang="ru")
    assert "do not know the time zone" in await say(tg, "/settings tz Atlantis", user_id=42)
    await say(tg, "/settings quiet 23-8", user_id=42)
    async with app.sessionmaker() as session:
        user = await get_user(session, 42)
    assert user is not None and user.tz_offset_minutes == 420  # not the language's default (UTC for English)
    # 17:30 UTC is 00:30 in Novosibirsk: quiet until 08:00 there, 01:00 UTC
    now = T0.replace(hour=17, minute=30)
    until = quiet_until(now, user.quiet_start, user.quiet_end, user.tz_offset_minutes)
    assert until == (now + timedelta(days=1)).replace(hour=1, minute=0)
    assert quiet_until(T0.replace(hour=3), user.quiet_start, user.quiet_end, user.tz_offset_minutes) is None


async def test_providers_show_display_names_and_short_localised_reasons(tg, app):
    broken = PollResult(provider="vastai", status=PollStatus.FAILED, offers=[], started_at=T0 + timedelta(hours=1),
                        finished_at=T0 + timedelta(hours=1, seconds=5),
                        error="HTTP 503 from https://console.vast.ai/api/v0/bundles/?q=internal")
    await app.ingest(broken, RATES)
    en = await say(tg, "/providers", user_id=43)
    line = next(x for x in en.splitlines() if "Vast.ai" in x)
    assert "the provider's server has errors" in line
    assert "http" not in en.lower() and "vastai" not in en and "503" not in en
    ru = await say(tg, "/providers", user_id=44, lang="ru")
    assert "у провайдера ошибка сервера" in ru


async def test_history_of_one_point_says_so_and_a_longer_one_is_drawn(tg, app):
    now = datetime.now(UTC)
    b200 = [offer("cloudrift", "b200", "b200", "B200", 1, 5.2, location="ap_northeast_kr_se_1")]
    await app.ingest(poll("cloudrift", b200, now - timedelta(hours=2)), RATES)
    one = await say(tg, "/history B200", user_id=45)
    assert "only one price seen so far" in one and "CloudRift" in one and "$5.20" in one
    cheaper = [offer("cloudrift", "b200", "b200", "B200", 1, 4.9, location="ap_northeast_kr_se_1")]
    await app.ingest(poll("cloudrift", cheaper, now - timedelta(hours=1)), RATES)
    tg.message("/history B200 7d", user_id=45)
    photo = await tg.wait_for("sendPhoto", chat_id=45)
    assert photo.photo is not None and photo.photo.startswith(b"\x89PNG")
    assert "Cheapest now: CloudRift, $4.90" in photo.text
    # a price that has held since before the window is a flat line, drawn
    tg.message("/history RTX 4090", user_id=46)
    flat = await tg.wait_for("sendPhoto", chat_id=46)
    assert flat.photo is not None


def test_chart_renders_steps_per_provider_with_dates(tmp_path):
    series = [HistorySeries(provider="runpod", points=[HistoryPoint(at=T0, price=2.5),
                                                       HistoryPoint(at=T0 + timedelta(days=1), price=2.1)]),
              HistorySeries(provider="vastai", points=[HistoryPoint(at=T0 + timedelta(hours=5), price=1.9),
                                                       HistoryPoint(at=T0 + timedelta(days=2), price=None)])]
    assert is_drawable(series)
    assert not is_drawable([HistorySeries(provider="runpod", points=[HistoryPoint(at=T0, price=2.5)])])
    png = render_history_png(series, title="H100", ylabel="$ per GPU-hour", xlabel="date (UTC)",
                             labels={"runpod": "RunPod", "vastai": "Vast.ai"}, until=T0 + timedelta(days=3),
                             currency="USD")
    assert png.startswith(b"\x89PNG") and len(png) > 10_000
    (tmp_path / "history.png").write_bytes(png)


def test_display_names_for_models_regions_and_alerts():
    assert model_name("llama-3.1-70b") == "Llama 3.1 70B"
    # upstream configs that spell a family in lower case are shown as the catalog spells it elsewhere
    assert model_name("gemma-3-27b") == "Gemma 3 27B"
    assert model_name("glm-4-9b") == "GLM 4 9B"
    assert model_name("acme/llama-ft") == "acme/llama-ft"  # a Hub repo is shown as given
    assert region_name("en", "ap_northeast_kr_se_1") == "Seoul, KR"
    assert region_name("ru", "ap_northeast_kr_se_1") == "Сеул"
    assert region_name("ru", "FI") == "Финляндия"


async def test_a_card_and_nothing_else_is_a_price_question_answered_with_its_offers(tg, app):
    """"h100 price per hour" / "сколько стоит арендовать RTX 3090 в час": the card's offers as /offers lists them,
    not "which method?" (whose buttons would lead on to "which model?")."""
    offers_page = await say(tg, "/offers RTX 3090", user_id=41)
    asked = await say(tg, "how much is an rtx 3090 per hour", user_id=41)
    assert asked == offers_page and "page 1/" in asked and "Vast.ai" in asked
    ru = await say(tg, "сколько стоит арендовать 3090 в час?", user_id=42, lang="ru")
    assert "1/" in ru.splitlines()[0]
    assert "Vast.ai" in ru and "Какой метод" not in ru and "Что посчитать" not in ru
    # the paging buttons of that answer turn its pages as /offers' own do
    call = tg.calls_of("sendMessage")[-1]
    tg.press(call, next(b["text"] for b in call.buttons() if "›" in b["text"] or "Дальше" in b["text"]
                        or "Next" in b["text"]), user_id=42, lang="ru")
    page2 = await tg.wait_for("editMessageText", chat_id=42)
    assert "2/" in page2.text.splitlines()[0]
    # a card with anything of a workload is still an estimate
    assert "Llama 3.1 70B · QLoRA" in await say(tg, "70B QLoRA on RTX 3090", user_id=41)


async def test_cards_said_as_alternatives_are_each_answered_and_watched(tg, app):
    """"7B LoRA on 5090 or 4090" asks about either card: the fits of both, no "which did you mean?", and the 🔔
    under it watches both; "3090 или 4090" alone is the price question of both cards, as /offers lists them."""
    answer = await say(tg, "/estimate 7B LoRA on 5090 or 4090", user_id=51)
    assert "contradicts" not in answer
    fits = answer.split("Fits")[1]
    assert "RTX 5090 × 1" in fits and "RTX 4090 × 1" in fits
    assert not any(card in fits for card in ("RTX 3090", "A100", "H100"))
    tg.press(tg.calls_of("sendMessage")[-1], "🔔", user_id=51)
    watching = await tg.wait_for("sendMessage", chat_id=51, predicate=lambda c: "Now watching" in c.text)
    assert "5090" in watching.text and "4090" in watching.text
    async with app.sessionmaker() as session:
        (sub,) = await list_subscriptions(session, 51)
    assert sub.gpu_ids is not None and set(sub.gpu_ids) == {"rtx-5090", "rtx-4090"}
    both = await say(tg, "/offers RTX 3090, RTX 4090", user_id=52, lang="ru")
    assert "Vast.ai" in both and "RTX 3090" in both
    assert await say(tg, "3090 или 4090", user_id=52, lang="ru") == both


async def test_a_workload_watched_on_cards_too_small_for_one_says_how_many_hold_it(tg, app):
    """"13B LoRA on 4090": no one 4090 holds it, so the subscription watches two or more; it says so, with the need
    per GPU at the fewest count that fits the card (as matching reads it), not the one-card figure over 24 GB."""
    usable = get_gpu("rtx-4090").usable_gib
    for uid, lang, text, said in ((61, "en", "/subscribe 13B LoRA on 4090", "one such card cannot hold it"),
                                  (62, "ru", "/subscribe 13B LoRA на 4090", "на одной такой карте не помещается")):
        reply = await say(tg, text, user_id=uid, lang=lang)
        async with app.sessionmaker() as session:
            (sub,) = await list_subscriptions(session, uid)
        needs = {int(k): v for k, v in (sub.min_gib_by_count or {}).items()}
        assert needs[1] > usable  # the premise: one card is too small
        fewest = min(c for c, v in needs.items() if v <= usable)
        figure = f"{needs[fewest]:.1f}".replace(".", "," if lang == "ru" else ".")
        assert said in reply and f"{figure} " in reply, reply
        assert (f"on {fewest} GPUs or more" if lang == "en" else f"при {fewest} GPU и больше") in reply
        assert said in await say(tg, "/subs", user_id=uid, lang=lang)
    # a card that holds it alone keeps the plain figure
    reply = await say(tg, "/subscribe 13B LoRA on A100 80GB", user_id=63)
    assert "cannot hold" not in reply and "GiB per GPU" in reply


async def test_an_estimate_at_a_count_lists_offers_of_that_count_as_its_watch_does(tg, app):
    """"7B LoRA on 2x 4090" is about two 4090s: the fit table, the 🔔 and /subscribe are, and so is the list of offers
    in stock under it (and /offers of that workload): RunPod's single 4090 holds 7B LoRA too, but is not what was
    asked. Without a count every count that holds it is listed."""
    for uid, lang, text in ((71, "en", "/estimate 7B LoRA on 2x 4090"), (72, "ru", "/estimate 7B LoRA на двух 4090")):
        answer = await say(tg, text, user_id=uid, lang=lang)
        offers = answer.split("Cheapest in stock now" if lang == "en" else "Дешевле всего в наличии")[1]
        assert "Selectel" in offers and "RTX 4090 × 2" in offers, answer
        assert "RunPod" not in offers and "RTX 4090 × 1" not in offers, answer
        listed = await say(tg, text.replace("/estimate", "/offers"), user_id=uid, lang=lang)
        assert "Selectel" in listed and "RunPod" not in listed, listed
    anycount = await say(tg, "/estimate 7B LoRA on 4090", user_id=73)
    assert "RunPod" in anycount and "Selectel" in anycount, anycount
    # the watch under it is about the same count, and says nothing is missed that the list showed
    reply = await say(tg, "/subscribe 7B LoRA on 2x 4090", user_id=74)
    async with app.sessionmaker() as session:
        (sub,) = await list_subscriptions(session, 74)
    assert sub.gpu_count == 2, reply


async def test_a_workload_no_watched_configuration_holds_is_said_not_stored(tg, app):
    """"13B LoRA on one 4090": no offer could ever be one for it. The estimate says what would hold it and offers no
    🔔 and no "I will write when one appears"; /subscribe (the count in the phrase or as a filter) stores nothing and
    says how many of those cards would hold it; nothing fitting at up to 8 GPUs is said as that."""
    for uid, lang, said in ((81, "en", "Nothing fits on RTX 4090 × 1"),
                            (82, "ru", "RTX 4090 × 1 ничего не помещается")):
        tg.message("/estimate 13B LoRA on one 4090", user_id=uid, lang=lang)
        est = await tg.wait_for("sendMessage", chat_id=uid)
        assert said in est.text, est.text
        assert est.buttons() and not any("🔔" in b["text"] for b in est.buttons()) and "Notify me" not in est.text \
            and "Сообщить" not in est.text, est.text
        for text in ("/subscribe 13B LoRA on one 4090", "/subscribe 13B LoRA on 4090 x1"):
            reply = await say(tg, text, user_id=uid, lang=lang)
            assert ("No RTX 4090 × 1 holds" if lang == "en" else "конфигурация RTX 4090 × 1 не вмещает") in reply, reply
            assert ("fits on 2 such GPUs" if lang == "en" else "помещается на 2 таких GPU") in reply, reply
        async with app.sessionmaker() as session:
            assert await list_subscriptions(session, uid) == []
    # the same workload on two of them is watched, and so is one card that holds it
    for text in ("/subscribe 13B LoRA on 2x 4090", "/subscribe 13B LoRA on one A100 80GB"):
        assert "Now watching" in await say(tg, text, user_id=83), text
    nowhere = await say(tg, "/subscribe 405B full fine-tune on H100", user_id=84)
    assert "No H100 holds this workload, even 8 to a server" in nowhere, nowhere
    assert "Nothing fits on H100, even 8 to a server" in await say(tg, "/estimate 405B full fine-tune on H100",
                                                                   user_id=84)
    async with app.sessionmaker() as session:
        assert await list_subscriptions(session, 84) == []


async def test_a_total_too_big_for_the_cards_named_names_them(tg, app):
    """"8B inference for 50 users on 4090": 42 GiB on one device is too much for one 4090, not for every GPU (an
    A100 80GB holds it); the answer says whose memory it exceeds. /when's "no history yet" reads in Russian whatever
    it is about (a card or a configuration)."""
    for uid, lang, text, said in (
            (91, "en", "/estimate llama 3 8b inference 50 users on 4090", "no single RTX 4090 holds it"),
            (92, "ru", "/estimate llama 3 8b инференс 50 пользователей на 4090",
             "ни одна RTX 4090 столько не вмещает")):
        answer = await say(tg, text, user_id=uid, lang=lang)
        assert said in answer and "RTX 4090 × 4" in answer, answer
        assert "no single GPU" not in answer and "ни одна GPU" not in answer
    whole = await say(tg, "/estimate 405B full fine-tune", user_id=93)
    assert "no single GPU holds it" in whole, whole
    none = await say(tg, "/when 13B LoRA на двух 4090", user_id=94, lang="ru")
    assert none.startswith("Истории наличия пока нет (конфигурация под 13B LoRA на двух 4090)"), none


async def test_offers_reads_the_filters_subscribe_reads(tg, app):
    """/offers takes the filters /subscribe and /when take: a count ("x8", "8x", "2 карты"), a price cap, providers,
    a region; the list holds only what they let through, on every page, and a count out of bounds is said."""
    eight = await say(tg, "/offers H100 x8", user_id=101)
    assert "RunPod: H100 SXM × 8" in eight and "× 1" not in eight, eight
    assert await say(tg, "/offers H100 8x", user_id=101) == eight.replace("H100 x8", "H100 8x")
    two = await say(tg, "/offers 4090 2 карты", user_id=102, lang="ru")
    assert "Selectel: RTX 4090 × 2" in two and "RunPod" not in two, two
    capped = await say(tg, "/offers RTX 3090 under $0.20/h", user_id=103)
    prices = [float(p) for p in re.findall(r"\$(\d+\.\d+)/h", capped)]
    assert prices and max(prices) <= 0.20 and "page 1/1" in capped, capped
    on_runpod = await say(tg, "/offers 7B LoRA on runpod", user_id=104)
    assert "RunPod" in on_runpod and "Vast.ai" not in on_runpod and "Selectel" not in on_runpod, on_runpod
    # filters alone, over two pages: the next page keeps them
    tg.message("/offers under $0.25/h", user_id=105)
    page1 = await tg.wait_for("sendMessage", chat_id=105)
    assert "page 1/2" in page1.text, page1.text
    tg.press(page1, "Next", user_id=105)
    page2 = await tg.wait_for("editMessageText", chat_id=105)
    later = [float(p) for p in re.findall(r"\$(\d+\.\d+)/h", page2.text)]
    assert "page 2/2" in page2.text and later and max(later) <= 0.25 and "RunPod" not in page2.text, page2.text
    assert "must be between 1 and" in await say(tg, "/offers H100 x0", user_id=106)


async def test_filters_said_with_a_workload_or_cards_are_read_where_they_apply(tg, app):
    """A plain "H100 x8" is the price question of eight H100s (the offers, as /offers reads it); a workload said
    with filters is its estimate, whose offers are only those the filters let through, said so in the user's
    language. "$1/h" is a price, never read as the Hugging Face repository "1/h"."""
    plain = await say(tg, "H100 x8", user_id=111)
    assert "RunPod: H100 SXM × 8" in plain and "× 1" not in plain, plain
    for uid, lang, text, said in (
            (112, "en", "/estimate 13B LoRA under $1/h on runpod",
             "Only offers you asked for: up to $1.00/h for the whole configuration · on RunPod."),
            (113, "ru", "13B LoRA до 100 ₽/ч",
             "Только предложения, о которых вы просили: до 100 ₽/ч за всю конфигурацию.")):
        reply = await say(tg, text, user_id=uid, lang=lang)
        assert said in reply and "model: 1/h" not in reply and "модель: 1/h" not in reply, reply
        assert "Not understood" not in reply and "Не понял" not in reply, reply
    # a phrase without filters gets no such line
    assert "Only offers" not in await say(tg, "/estimate 13B LoRA", user_id=114)
    # a filter out of bounds is said with its bounds
    assert "must be above 0" in await say(tg, "/estimate 13B LoRA under $0/h", user_id=114)


async def test_an_estimate_said_with_filters_keeps_them_through_every_button(tg, app):
    """"7B LoRA under $0.22/h": the estimate ranks only offers under the cap; "More offers", "‹ Back", "Assumptions"
    and a remedy keep the cap, and "Notify me" watches the workload with it."""
    uid = 115
    tg.message("7B LoRA under $0.22/h", user_id=uid)
    est = await tg.wait_for("sendMessage", chat_id=uid)
    prices = [float(p) for p in re.findall(r"\$(\d+\.\d+)</b>/h", est.text)]
    assert "up to $0.22/h" in est.text and len(prices) == 5 and max(prices) <= 0.22, est.text
    tg.press(est, "More offers", user_id=uid)
    more = await tg.wait_for("editMessageText", chat_id=uid)
    later = [float(p) for p in re.findall(r"\$(\d+\.\d+)</b>/h", more.text)]
    assert later and max(later) <= 0.22 and "page 1/1" in more.text, more.text
    tg.press(more, "Back", user_id=uid)
    back = await tg.wait_for("editMessageText", chat_id=uid)
    assert "up to $0.22/h" in back.text and "VRAM per GPU" in back.text, back.text
    tg.press(back, "Assumptions", user_id=uid)
    shown = await tg.wait_for("editMessageText", chat_id=uid)
    assert "up to $0.22/h" in shown.text and "Assumed" in shown.text, shown.text
    tg.press(est, "Notify me", user_id=uid)
    watching = await tg.wait_for("sendMessage", chat_id=uid)
    assert "Now watching" in watching.text, watching.text
    async with app.sessionmaker() as session:
        (sub,) = await list_subscriptions(session, uid)
    assert sub.max_price == 0.22 and sub.kind == "workload"
    # a remedy re-estimates with the change and the cap
    tg.message("70B LoRA on 4090 under $5/h", user_id=117)
    nothing = await tg.wait_for("sendMessage", chat_id=117)
    tg.press(nothing, "QLoRA", user_id=117)
    qlora = await tg.wait_for("sendMessage", chat_id=117)
    assert "QLoRA" in qlora.text and "up to $5.00/h" in qlora.text, qlora.text
    # inline: the same estimate, its offers through the cap, and "Subscribe" watching with it
    qid = tg.inline_query("7B LoRA under $0.22/h", user_id=119)
    results = (await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))).params["results"]
    assert "GiB per GPU" in results[0]["title"], results[0]
    assert "up to $0.22/h" in results[0]["input_message_content"]["message_text"], results[0]
    titled = [float(m.group(1)) for r in results[1:] if (m := re.search(r"\$(\d+\.\d+)/h", r["title"]))]
    assert len(titled) == len(results) - 1 >= 5 and max(titled) <= 0.22, [r["title"] for r in results]
    url = results[0]["reply_markup"]["inline_keyboard"][0][0]["url"]
    assert "Now watching" in await say(tg, f"/start {url.split('start=')[1]}", user_id=119)
    async with app.sessionmaker() as session:
        (sub,) = await list_subscriptions(session, 119)
    assert sub.max_price == 0.22 and sub.kind == "workload"
    # a count no configuration holds the workload at: said, and no 🔔 that could never ring
    tg.message("405B inference x1 spot", user_id=120)
    never = await tg.wait_for("sendMessage", chat_id=120)
    assert "Nothing fits on 1 GPU of any card, the count asked for." in never.text, never.text
    assert "The smallest configuration that fits:" in never.text, never.text
    assert "Notify me" not in never.text and not any("Notify" in b["text"] for b in never.buttons()), never.text
    # a count and a billing said as filters are the watch's, not dropped as the workload's own count would be
    tg.message("70B QLoRA x2 spot", user_id=118)
    counted = await tg.wait_for("sendMessage", chat_id=118)
    assert "× 2 GPUs · spot" in counted.text, counted.text
    tg.press(counted, "Notify me", user_id=118)
    assert "Now watching" in (await tg.wait_for("sendMessage", chat_id=118)).text
    async with app.sessionmaker() as session:
        (sub,) = await list_subscriptions(session, 118)
    assert (sub.gpu_count, sub.billing, sub.kind) == (2, "spot", "workload")


async def test_a_count_said_as_a_filter_is_the_count_the_estimate_is_about(tg, app):
    """"70B QLoRA x2" is answered as "70B QLoRA on 2 GPUs" is: the memory per GPU of two, and a fit table of
    two-GPU configurations only, as its offers are (in chat and inline, in both languages)."""
    for uid, lang, filtered, said in ((131, "en", "70B QLoRA x2", "70B QLoRA on 2 GPUs"),
                                      (132, "ru", "70B QLoRA x2", "70B QLoRA на 2 GPU")):
        reply = await say(tg, filtered, user_id=uid, lang=lang)
        plain = await say(tg, said, user_id=uid, lang=lang)
        head = reply.split("\n\n")[0]
        assert head == plain.split("\n\n")[0] and "2 GPU" in head.split("\n")[0], (reply, plain)
        counts = re.findall(r"^• .+ × (\d+): ", reply, flags=re.M)
        assert counts and set(counts) == {"2"}, reply
    firsts = []
    for query in ("70B QLoRA x2", "70B QLoRA on 2 GPUs"):
        qid = tg.inline_query(query, user_id=133)
        firsts.append((await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))).params["results"][0])
    assert firsts[0]["title"] == firsts[1]["title"] and "2 GPUs" in firsts[0]["title"], firsts
    assert "×2" in firsts[0]["description"] and "×1" not in firsts[0]["description"], firsts[0]


async def test_a_card_watch_with_its_count_after_it_says_the_count_once(tg, app):
    """"/subscribe H100 8x до $20/ч": the cap's check suggests a command with the count said once ("H100 x8", not
    "H100 8x x8"), and the watch is listed by the family asked for, not its three variants."""
    reply = await say(tg, "/subscribe H100 8x до 20 $/ч", user_id=121, lang="ru")
    assert "/subscribe H100 x8 до $20,00/GPU-ч" in reply and "8x x8" not in reply, reply
    async with app.sessionmaker() as session:
        (sub,) = await list_subscriptions(session, 121)
    assert sub.gpu_count == 8 and set(sub.gpu_ids or ()) == {"h100-sxm", "h100-pcie", "h100-nvl"}
    assert "1. H100 · до $20,00/ч" in await say(tg, "/subs", user_id=121, lang="ru")


async def test_inline_cards_alone_answer_their_offers_in_stock(tg, app):
    """"@bot h100 x8" is a price question, as in a chat: that card's offers in stock at that count, cheapest first,
    each an article whose message is the /offers line; cards with none in stock get one article saying so, whose
    button watches them; a filter out of bounds is said, not answered with offers."""
    qid = tg.inline_query("h100 x8", user_id=51, lang="en")
    results = (await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))).params["results"]
    assert results and all("H100" in r["title"] and "× 8" in r["title"] for r in results), results
    texts = [r["input_message_content"]["message_text"] for r in results]
    assert all("h100 x8</b>, in stock now" in x for x in texts), texts
    qid = tg.inline_query("a100", user_id=52, lang="ru")
    results = (await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))).params["results"]
    assert {r["title"].split(" у ")[-1].split()[0] for r in results} >= {"RunPod", "Selectel"}, results
    assert all("A100" in r["title"] and "/мес" in r["description"] for r in results), results
    prices = [float(re.sub(r"[^\d,]", "", r["title"].split(" — ")[1].split("/")[0]).replace(",", "."))
              for r in results]
    assert prices == sorted(prices), prices  # the whole configuration per hour, cheapest first
    qid = tg.inline_query("b200", user_id=53, lang="en")
    (none,) = (await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))).params["results"]
    assert "No B200 in stock" in none["title"], none
    url = none["reply_markup"]["inline_keyboard"][0][0]["url"]
    watched = await say(tg, f"/start {url.split('start=')[1]}", user_id=53, lang="en")
    assert "Now watching" in watched and "B200" in watched, watched
    qid = tg.inline_query("h100 x5000", user_id=54, lang="en")
    (said,) = (await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))).params["results"]
    assert said["id"] == "syntax" and "between 1 and 4096" in said["input_message_content"]["message_text"], said
