"""Issue 19, "Meaning": every list and alert says what the user asked for, through the real bot (aiogram against the
stand-in Bot API server), the app's own ingest and a migrated database, in both languages; and the CLI."""

from __future__ import annotations

import asyncio
import html
import os
import re
from datetime import timedelta
from pathlib import Path

import pytest

from core.offers import Billing, Offer, Period
from gpuradar.app import App
from storage.subscriptions import list_subscriptions
from testkit.fake_telegram import FakeTelegram
from testkit.market import NOW, RATES, offer, poll

# A 4 GB vGPU slice of an A100 for $0.123/h (Vultr sells them so), cheaper than any whole card; one whose card the
# catalog knows by its memory share, and one the provider said the share of.
SLICE = offer("vultr", "vcg-a100-1c-6g-4vram", "a100-80gb", "NVIDIA_A100", 1, 0.123, memory=4, fraction=0.05)
A16_SLICE = offer("vultr", "vcg-a16-2c-8g-2vram", "a16", "NVIDIA_A16", 1, 0.059, memory=2)
WHOLE = [offer("runpod", "a100", "a100-80gb", "A100 SXM 80GB", 1, 1.64),
         offer("runpod", "4090", "rtx-4090", "RTX 4090", 1, 0.34),
         offer("runpod", "h100x8", "h100-sxm", "H100 80GB HBM3", 8, 19.9)]


MARKET = {"runpod": WHOLE, "vultr": [SLICE, A16_SLICE]}


async def say(tg: FakeTelegram, text: str, user_id: int, lang: str = "en") -> str:
    tg.message(text, user_id=user_id, lang=lang)
    return (await tg.wait_for("sendMessage", chat_id=user_id)).text


def lines_with(text: str, needle: str) -> list[str]:
    return [line for line in text.splitlines() if needle in line]


async def test_a_slice_is_labelled_as_a_share_of_the_card_and_never_first(tg: FakeTelegram, app: App) -> None:
    for uid, lang, mem in ((1, "en", "4 GB"), (2, "ru", "4 ГБ")):
        listing = await say(tg, "/offers", uid, lang)
        rows = [line for line in listing.splitlines() if line.startswith("•")]
        (slice_row,) = lines_with(listing, "1/20")
        assert f"1/20 A100 80GB · {mem}" in slice_row and "× 1" not in slice_row
        assert "1/8 A16 · 2" in listing  # the share read from the memory the provider listed
        assert "1/" not in rows[0] and rows.index(slice_row) > max(i for i, r in enumerate(rows) if "1/" not in r)
        a100 = await say(tg, "/offers A100", uid, lang)
        a100_rows = [line for line in a100.splitlines() if line.startswith("•")]
        assert "A100 80GB × 1" in a100_rows[0] and "1/20" in a100_rows[-1]


async def test_a_slice_is_never_alerted_as_the_card(tg: FakeTelegram, app: App) -> None:
    """Someone watching A100s hears about the whole card, not about a 4 GB share of one; a workload that fits in
    the share hears about the slice, labelled as one."""
    await say(tg, "/subscribe A100", 3)
    await say(tg, "/subscribe 1B inference", 4, "ru")
    cheaper = [offer("vultr", "vcg-a100-1c-6g-4vram", "a100-80gb", "NVIDIA_A100", 1, 0.099, memory=4, fraction=0.05),
               A16_SLICE]
    await app.ingest(poll("vultr", cheaper, NOW - timedelta(minutes=5)), RATES)
    await app.ingest(poll("runpod", [*WHOLE[1:], offer("runpod", "a100", "a100-80gb", "A100 SXM 80GB", 1, 1.49)],
                          NOW - timedelta(minutes=4)), RATES)
    a100 = await tg.wait_for("sendMessage", chat_id=3, predicate=lambda c: "Order at" in c.text)
    assert "A100 80GB" in a100.text and "1/20" not in a100.text and "$1.49" in a100.text
    ru = await tg.wait_for("sendMessage", chat_id=4, predicate=lambda c: "Заказать" in c.text and "1/20" in c.text)
    assert "1/20 A100 80GB · 4 ГБ" in ru.text and "за GPU-час" not in ru.text.split("\n")[1]


async def test_cli_offers_label_slices_and_list_them_after_whole_cards(
        app: App, migrated_database_url: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from gpuradar.cli import main

    monkeypatch.setenv("DATABASE_URL", migrated_database_url)
    for lang, mem in (("en", "4 GB"), ("ru", "4 ГБ")):
        capsys.readouterr()
        assert await asyncio.to_thread(main, ["offers", "--lang", lang]) == 0
        rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith(("runpod", "vultr"))]
        (a100_slice,) = [r for r in rows if "1/20" in r]
        assert f"1/20 A100 80GB · {mem}" in a100_slice
        slices = [i for i, r in enumerate(rows) if "1/" in r]
        assert slices == [len(rows) - 2, len(rows) - 1]  # the two slices come after every whole card


async def test_a_tight_fit_is_marked_wherever_that_configuration_is_shown(tg: FakeTelegram, app: App) -> None:
    """32B LoRA at 4k context fits one A100 80GB only without its safety margin: the fit table says "tight", and so
    does every list and alert that shows that configuration; eight H100s hold it comfortably, unmarked."""
    for uid, lang, mark in ((5, "en", "tight: no safety margin"), (6, "ru", "впритык: без запаса")):
        est = await say(tg, "/estimate 32B LoRA ctx 4k", uid, lang)
        (a100,) = [line for line in est.splitlines() if line.startswith("•") and "A100 80GB × 1" in line]
        assert mark in a100 and "RunPod" in a100
        assert all(mark not in line for line in est.splitlines() if line.startswith("•") and "× 8" in line)
        sub = await say(tg, "/subscribe 32B LoRA ctx 4k", uid, lang)
        (matching,) = [line for line in sub.splitlines() if "A100 80GB × 1" in line]
        assert mark in matching
        qid = tg.inline_query("32B LoRA ctx 4k", user_id=uid, lang=lang)
        inline = await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))
        titles = [r["title"] for r in inline.params["results"] if "A100 80GB" in r["title"]]
        assert titles and all(("(tight)" if lang == "en" else "(впритык)") in x for x in titles)
    await app.ingest(poll("runpod", [*WHOLE, offer("runpod", "a100b", "a100-80gb", "A100 PCIe 80GB", 1, 1.39)],
                          NOW - timedelta(minutes=3)), RATES)
    en = await tg.wait_for("sendMessage", chat_id=5, predicate=lambda c: "Order at" in c.text)
    ru = await tg.wait_for("sendMessage", chat_id=6, predicate=lambda c: "Заказать" in c.text)
    assert "— fits (⚠️ tight: no safety margin)" in en.text
    assert "подходит (⚠️ впритык: без запаса)" in ru.text


async def test_history_caption_prefers_on_demand_and_labels_spot(tg: FakeTelegram, app: App) -> None:
    """A spot H100 at $0.18 is not "the cheapest H100 now" while on-demand costs $0.33: the caption names the
    on-demand price; where only spot is in stock, it says spot."""
    spot = [offer("vastai", f"h100-spot-{i}", "h100-sxm", "H100 SXM", 1, 0.18, billing=Billing.SPOT) for i in (1, 2)]
    on_demand = offer("vastai", "h100-od", "h100-sxm", "H100 SXM", 1, 0.33)
    for minutes in (30, 20):
        await app.ingest(poll("vastai", [*spot, on_demand], NOW - timedelta(minutes=minutes)), RATES)
    for uid, lang, spot_word, od, sp in ((7, "en", "spot", "$0.33", "0.18"), (8, "ru", "спот", "26", "14")):
        tg.message("/history H100 SXM 7d", user_id=uid, lang=lang)
        photo = await tg.wait_for("sendPhoto", chat_id=uid)
        caption = photo.text.splitlines()[1]  # the "cheapest now" line (the availability strip's follows)
        assert od in caption and sp not in caption and spot_word not in caption, caption
    for minutes in (10, 9, 8):  # every on-demand H100 sells out (confirmed over polls)
        await app.ingest(poll("vastai", spot, NOW - timedelta(minutes=minutes)), RATES)
        await app.ingest(poll("runpod", WHOLE[:2], NOW - timedelta(minutes=minutes)), RATES)
    for uid, lang, spot_word, price in ((9, "en", "· spot", "$0.18"), (10, "ru", "· спот", "14")):
        tg.message("/history H100 SXM 1d", user_id=uid, lang=lang)
        photo = await tg.wait_for("sendPhoto", chat_id=uid)
        caption = photo.text.splitlines()[1]  # the "cheapest now" line (the availability strip's follows)
        assert price in caption and spot_word in caption, caption


async def test_history_reads_the_filters_said_with_its_card(tg: FakeTelegram, app: App) -> None:
    """"/history H100 on vastai", "x1", "spot", "in Germany": the chart and its caption are of the configurations
    the filters hold, said after the card; a price cap is a question for /when, and is said so."""
    for minutes, less in ((30, 0.02), (20, 0.0)):  # each price a step lower: two points, a line to draw
        h100s = [offer("vastai", "h100-od", "h100-sxm", "H100 SXM", 1, 0.33 + less),
                 offer("vastai", "h100-spot", "h100-sxm", "H100 SXM", 1, 0.18 + less, billing=Billing.SPOT),
                 offer("vastai", "h100x8-de", "h100-sxm", "H100 SXM", 8, 8 * (0.29 + less), location="DE")]
        await app.ingest(poll("vastai", h100s, NOW - timedelta(minutes=minutes)), RATES)

    async def caption(text: str, uid: int, lang: str = "en") -> list[str]:
        tg.message(text, user_id=uid, lang=lang)
        return (await tg.wait_for("sendPhoto", chat_id=uid)).text.splitlines()

    vast = await caption("/history H100 on vastai 7d", 31)
    assert vast[0].startswith("H100 (on Vast.ai): cheapest") and "$0.29" in vast[1] and "RunPod" not in vast[2], vast
    one = await caption("/history H100 x1 7d", 32)  # the eight in Germany, cheaper per GPU, left out
    assert one[0].startswith("H100 (× 1 GPU)") and "$0.33" in one[1], one
    spot = await caption("/history H100 7d spot", 33)
    assert "(spot)" in spot[0] and "$0.18" in spot[1], spot
    de = await caption("/history H100 в Германии", 34, "ru")
    assert de[0].startswith("H100 (регион Германия)") and "0,29" not in de[1] and "23" in de[1], de
    us = await caption("/history H100 region us 7d", 35)
    assert "$0.33" in us[1] and "$0.29" not in us[1], us
    capped = await say(tg, "/history H100 under $2", 36)
    assert "takes no price cap" in capped and "/when H100 under $2" in capped, capped
    assert "must be between 1 and" in await say(tg, "/history H100 x0", 37)


async def test_a_one_device_total_is_said_in_all_with_the_first_fits_per_gpu_figure(
        tg: FakeTelegram, app: App) -> None:
    """A workload estimated on one device that no card holds: its figure is a total, never "per GPU"; the per-GPU
    figure given is the first fitting configuration's (as the fit table lists it)."""
    for uid, lang, phrase, total, per_gpu, wrong in (
            (11, "en", "/estimate 70B inference 32k context 16 users", "VRAM in all", "Per GPU on the first",
             "VRAM per GPU"),
            (12, "ru", "/estimate Kimi K2 инференс", "Видеопамять всего", "На GPU в первой", "Видеопамять на GPU")):
        text = await say(tg, phrase, uid, lang)
        assert total in text and per_gpu in text and wrong not in text, text
        first_fit = next(line for line in text.splitlines() if line.startswith("•") and "%" in line)
        gpu = first_fit.removeprefix("• ").split(" × ")[0]
        assert f"{gpu} × " in text.split(per_gpu)[1].split("\n")[0]
        qid = tg.inline_query(phrase.removeprefix("/estimate "), user_id=uid, lang=lang)
        inline = await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))
        title = inline.params["results"][0]["title"]
        assert ("GiB per GPU" if lang == "en" else "ГиБ на GPU") in title  # the first fit's per-GPU figure
    # A workload that fits one card keeps its per-GPU wording.
    assert "VRAM per GPU" in await say(tg, "/estimate 13B LoRA", 13)


def test_cli_says_in_all_for_a_one_device_total(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from gpuradar.cli import main

    assert main(["estimate", "Kimi K2 inference"]) == 0
    out = capsys.readouterr().out
    assert "Memory in all" in out and "per GPU on the first configuration that fits" in out
    assert main(["estimate", "70B inference 32k 16 users", "--lang", "ru"]) == 0
    out = capsys.readouterr().out
    assert "Память всего" in out and "на GPU в первой подходящей конфигурации" in out
    assert main(["estimate", "Kimi K2 inference", "--json"]) == 0
    memory = json.loads(capsys.readouterr().out)["memory"]
    assert memory["total_on_one_device"] is True and 0 < memory["first_fit_per_gpu_gib"] < memory["per_gpu_gib"]


async def test_nothing_fits_answers_with_remedies_each_a_button_that_re_estimates(tg: FakeTelegram, app: App) -> None:
    """70B full fine-tuning on 8 H100 does not fit; offloading the optimizer does (a real re-estimate, shown with
    its per-GPU memory and where it then fits), and its button answers with that estimate. The header no longer
    says "nothing fits" next to a configuration that fits."""
    for uid, lang, phrase, title, button, fitted in (
            (21, "en", "/estimate 70B full fine-tune on 8 H100", "Try:", "Offload optimizer", "VRAM per GPU"),
            (22, "ru", "/estimate 32B QLoRA ctx 32k batch 4", "Попробуйте:", "Слитная кросс-энтропия",
             "Видеопамять на GPU")):
        tg.message(phrase, user_id=uid, lang=lang)
        est = await tg.wait_for("sendMessage", chat_id=uid)
        assert title in est.text
        remedies = [r for r in est.text.split(title)[1].split("\n\n")[0].splitlines() if r.startswith("•")]
        assert 1 <= len(remedies) <= 3 and all(("GiB per GPU" if lang == "en" else "ГиБ на GPU") in r
                                               for r in remedies)
        if lang == "en":
            assert "Nothing fits in one node" not in est.text and "Nothing fits on H100 × 8" in est.text
            assert "fits on H100 SXM × 8" in remedies[0] and "offloaded to CPU" in remedies[0]
        else:
            assert any("кросс-энтропия" in r for r in remedies) and any("микробатч 1" in r for r in remedies)
        tg.press(est, button, user_id=uid, lang=lang)
        again = await tg.wait_for("sendMessage", chat_id=uid, predicate=lambda c: "🛠" in c.text)
        assert fitted in again.text  # it fits now: a per-GPU figure, and the fit table
        said = re.search(r"<b>([\d.,]+) (?:GiB|ГиБ)</b>", again.text)
        assert said is not None and said.group(1) in remedies[0 if lang == "en" else
                                                             next(i for i, r in enumerate(remedies)
                                                                  if "кросс-энтропия" in r)]


def test_cli_try_lines_and_json_remedies(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from gpuradar.cli import main

    assert main(["estimate", "70B full fine-tune on 8 H100"]) == 0
    out = capsys.readouterr().out
    assert "Try: --offload optimizer" in out and "fits on H100 SXM × 8" in out
    assert main(["estimate", "32B QLoRA ctx 32k batch 4", "--lang", "ru"]) == 0
    assert "Попробуйте: --fused-ce" in capsys.readouterr().out
    assert main(["estimate", "32B QLoRA ctx 32k batch 4", "--json"]) == 0
    remedies = json.loads(capsys.readouterr().out)["remedies"]
    assert {"fused_ce", "micro_batch_1"} <= {r["change"] for r in remedies} and len(remedies) <= 3
    assert all(r["per_gpu_gib"] > 0 and r["smallest_fit"]["count"] >= 1 for r in remedies)
    # The option a Try: line names gives that estimate.
    assert main(["estimate", "32B QLoRA ctx 32k batch 4", "--fused-ce", "--json"]) == 0
    fused = json.loads(capsys.readouterr().out)
    assert fused["fits"][0]["per_gpu_gib"] == next(r for r in remedies if r["change"] == "fused_ce")["per_gpu_gib"]


async def test_wizard_says_what_is_wrong_with_each_typed_price(tg: FakeTelegram, app: App) -> None:
    for uid, lang, answers in (
            (31, "en", {"-5": "cannot be negative", "0": "never match", "99999999999": "more than any offer",
                        "cheap": "not a price"}),
            (32, "ru", {"-5": "не может быть отрицательным", "1e99": "Это не цена", "сто": "Это не цена",
                        "999999999": "ни одно предложение"})):
        tg.message("/subscribe", user_id=uid, lang=lang)
        ask = await tg.wait_for("sendMessage", chat_id=uid)
        pick = "кнопок" if lang == "ru" else "tap one of the buttons"
        assert pick in await say(tg, "hello", uid, lang)  # free text at a button step
        tg.press(ask, "GPU", user_id=uid, lang=lang)
        gpus = await tg.wait_for("editMessageText", chat_id=uid)
        tg.press(gpus, "H100", user_id=uid, lang=lang)
        await tg.wait_for("editMessageText", chat_id=uid)
        for typed, reason in answers.items():
            assert reason in await say(tg, typed, uid, lang), typed
        basis = await say(tg, "150,5 руб" if lang == "ru" else "$2.5", uid, lang)  # accepted, as written
        assert ("150,50 ₽" if lang == "ru" else "$2.50") in basis
        assert pick in await say(tg, "whatever", uid, lang)


async def test_settings_and_unsubscribe_say_what_was_wrong(tg: FakeTelegram, app: App) -> None:
    for uid, lang, lang_word, hours, unknown, missing in (
            (41, "en", "/settings language ru", "Hours are 0-23", "Unknown setting", "There is no subscription 7"),
            (42, "ru", "/settings язык en", "Часы — от 0 до 23", "Неизвестная настройка", "Подписки 7 нет")):
        assert "/lang" in await say(tg, lang_word, uid, lang)
        assert hours in await say(tg, "/settings quiet 25-99", uid, lang)
        assert unknown in await say(tg, "/settings colour blue", uid, lang)
        await say(tg, "/subscribe H100", uid, lang)
        before = len(tg.calls_of("sendMessage"))
        text = await say(tg, "/unsubscribe 7", uid, lang)
        assert missing in text and "H100" in text  # what is wrong and the list, in one message
        await asyncio.sleep(0.2)
        assert len([c for c in tg.calls_of("sendMessage")[before:] if c.chat_id == uid]) == 1


async def test_the_parser_understands_the_slang_people_write(tg: FakeTelegram, app: App) -> None:
    for phrase, understood in (("ллама 70б кьюлора", "Llama 3.1 70B · QLoRA"), ("квен 32б инференс", "Qwen2.5 32B"),
                               ("фулл файнтюн 7B", "полное дообучение"), ("мистраль 7б лора", "Mistral 7B")):
        text = await say(tg, f"/estimate {phrase}", 50, "ru")
        assert understood in text, (phrase, text[:200])
    for phrase in ("затюнить 7B", "зафайнтюнить 13B", "дообучить ламу 8B"):  # training, the way asked with buttons
        tg.message(f"/estimate {phrase}", user_id=51, lang="ru")
        ask = await tg.wait_for("sendMessage", chat_id=51)
        assert ask.button("QLoRA") and not any("Инференс" in b["text"] for b in ask.buttons()), phrase
    assert "DeepSeek-V3" in await say(tg, "/estimate дипсик инференс", 52, "ru")  # as "deepseek" is answered


async def test_a_subscription_asked_as_a_request_watches_what_it_names(tg: FakeTelegram, app: App) -> None:
    """"Notify me when two H100s are under $4/h" is a subscription to H100 x2 under $4/h, in both languages."""
    for uid, lang, phrase in ((54, "en", "notify me when two H100s are under $4/h"),
                              (55, "ru", "сообщи, когда две H100 будут дешевле $4/ч")):
        reply = await say(tg, f"/subscribe {phrase}", uid, lang)
        assert "H100" in reply and "× 2" in reply and "$4" in reply, reply
        assert "notify" not in reply and "сообщи" not in reply, reply
        # the command it suggests for a cap per GPU-hour watches the same count (it used to drop "x2")
        suggested = re.search(r"<code>(/subscribe [^<]+)</code>", reply)
        assert suggested is not None and "x2" in suggested.group(1), reply
        again = await say(tg, suggested.group(1).replace("&lt;", "<").replace("&gt;", ">"), uid, lang)
        assert "× 2" in again and ("GPU-h" in again or "GPU-ч" in again), again


async def test_cards_named_by_their_memory_are_every_card_of_that_size(tg: FakeTelegram, app: App) -> None:
    """"On one 80GB card" (the rental guides' classes: 24 / 48 / 80 GB) is every catalog card of 80 GB, each listed;
    a workload that fits none of them says so of the class, not of one card; a subscription watches the class."""
    text = await say(tg, "/estimate 70B QLoRA on one 80GB card", 56)
    fits = [line for line in text.splitlines() if line.startswith("• ") and "GiB" in line]
    assert {f.split(" × ")[0][2:] for f in fits} == {"A100 80GB", "H100 PCIe", "H100 SXM"}, text
    text = await say(tg, "/estimate 405B инференс на одной карте 24 ГБ", 56, "ru")
    assert "карта на 24 ГБ × 1" in text and "RTX 4090" in text, text
    # the market has a 4090 at $0.34 and an A100 80GB at $1.64: the 80 GB class matches the A100 only
    sub = await say(tg, "/subscribe 7B LoRA on an 80GB card under $2/h", 57)
    assert "Now watching" in sub and "A100 80GB" in sub and "4090" not in sub, sub
    sub = await say(tg, "/subscribe 7B LoRA under $2/h", 58)
    assert "4090" in sub, sub


async def test_the_products_own_question_is_answered_as_its_workload(tg: FakeTelegram, app: App) -> None:
    """Asked as a question, an Ollama tag, a count in words, a dataset in tokens: the answer is the workload's."""
    for phrase, lang, understood in (
            ("does 70B QLoRA fit on one A100 80GB?", "en", ("QLoRA", "A100 80GB")),
            ("влезет ли qwen2.5:32b-instruct-q4_K_M в две 4090?", "ru", ("Qwen2.5 32B", "Q4_K_M", "2 GPU")),
            ("8B LoRA on a 20M-token dataset, 2 epochs", "en", ("LoRA", "for 40,000,512 training tokens")),
            ("phi-2 inference", "en", ("2,048",))):
        text = await say(tg, f"/estimate {phrase}", 53, lang)
        assert all(u in text for u in understood), (phrase, text[:400])


def test_cli_empty_input_and_emoji_get_the_same_message_and_a_closed_pipe_exits_quietly(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import subprocess
    import sys

    from gpuradar.cli import main

    assert main(["estimate"]) == 2
    empty = capsys.readouterr().err
    assert main(["estimate", "🙂🙂"]) == 2
    assert capsys.readouterr().err == empty and "describe the workload" in empty
    # The reader of the pipe is gone before anything is written (`gpuradar offers | head` at its end).
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
           "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite3'}"}
    read, write = os.pipe()
    os.close(read)
    proc = subprocess.run([sys.executable, "-m", "gpuradar.cli", "estimate", "70B", "QLoRA"], stdout=write,
                          stderr=subprocess.PIPE, env=env, cwd=tmp_path, timeout=120, check=False)
    os.close(write)
    assert b"Traceback" not in proc.stderr and b"BrokenPipeError" not in proc.stderr, proc.stderr


async def test_alerts_state_vat_like_lists_do(tg: FakeTelegram, app: App) -> None:
    """Selectel's roubles carry Russian VAT: its alert says the price includes it, as /offers does; a foreign
    marketplace's alert says nothing of VAT."""
    await say(tg, "/subscribe A100", 60, "ru")
    await say(tg, "/subscribe RTX 4090", 61, "en")
    srv = Offer(provider="selectel", sku="a100-srv", gpu="a100-80gb", gpu_name="A100 80GB", gpu_count=1,
                location="ru-1", billing=Billing.MONTHLY, price=150_000, currency="RUB", period=Period.MONTH,
                in_stock=True, url="https://selectel.example/a100")
    other = srv.model_copy(update={"sku": "4090-srv", "gpu": "rtx-4090", "gpu_name": "RTX 4090", "price": 60_000})
    await app.ingest(poll("selectel", [other], NOW - timedelta(minutes=3)), RATES)  # the provider's baseline
    await app.ingest(poll("selectel", [other, srv], NOW - timedelta(minutes=2)), RATES)
    await app.ingest(poll("runpod", [*WHOLE[:1], WHOLE[2], offer("runpod", "4090b", "rtx-4090", "RTX 4090", 1, 0.29)],
                          NOW - timedelta(minutes=1)), RATES)
    ru = await tg.wait_for("sendMessage", chat_id=60, predicate=lambda c: "Selectel" in c.text and "Заказать" in c.text)
    assert "с НДС 22%" in ru.text
    en = await tg.wait_for("sendMessage", chat_id=61, predicate=lambda c: "Order at" in c.text)
    assert "VAT" not in en.text


async def test_subscribing_to_a_provider_nobody_polls_says_so(tg: FakeTelegram, app: App) -> None:
    """The default settings poll no Hyperstack (it needs an API key): no "I will write" for it."""
    en = await say(tg, "/subscribe H100 on hyperstack", 70)
    assert "does not poll Hyperstack (needs an API key)" in en and "I will write" not in en
    ru = await say(tg, "/subscribe H100 на hyperstack", 71, "ru")
    assert "не опрашивает Hyperstack (нужен ключ API)" in ru and "напишу" not in ru
    assert "does not poll" not in await say(tg, "/subscribe H100 on runpod", 72)


async def test_cli_estimate_lists_the_cheapest_offers_in_stock_like_the_bot(
        app: App, migrated_database_url: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from gpuradar.cli import main

    monkeypatch.setenv("DATABASE_URL", migrated_database_url)
    capsys.readouterr()
    assert await asyncio.to_thread(main, ["estimate", "32B LoRA ctx 4k"]) == 0
    out = capsys.readouterr().out.split("Cheapest in stock now")[1]
    assert "RunPod: A100 80GB × 1 — 1.64 USD/h (tight)" in out
    assert await asyncio.to_thread(main, ["estimate", "1B inference", "--lang", "ru"]) == 0
    rows = capsys.readouterr().out.split("Дешевле всего в наличии")[1].strip().splitlines()[1:]
    assert "1/20 A100 80GB · 4 ГБ" in rows[-1] or all("1/20" not in r for r in rows)  # a slice never first
    assert "1/" not in rows[0]


async def test_a_monthly_cap_is_said_back_per_month_as_typed(tg: FakeTelegram, app: App) -> None:
    """"до 200 000 ₽ в месяц" is held as its hourly equal (offers compare per hour) and said back per month, to the
    rouble, in the reply, in /subs and beside a monthly offer in its alert; the other reading's command, sent back,
    is read as that reading."""
    from bot.subscribe_query import hourly_equal

    nbsp = "\u00a0"
    ru = await say(tg, "/subscribe A100 до 200 000 ₽ в месяц", 80, "ru")
    assert f"Порог понят как 200{nbsp}000 ₽/мес за всю конфигурацию" in ru and "205" not in ru
    listing = await say(tg, "/subs", 80, "ru")
    assert f"до 200{nbsp}000 ₽/мес за всю конфигурацию" in listing and "помесячно" in listing
    async with app.sessionmaker() as session:
        (sub,) = await list_subscriptions(session, 80)
    assert sub.max_price == hourly_equal(200_000) and sub.billing == "monthly" and sub.price_basis == "total"
    assert sub.price_period == "month"
    # monthly offers with a cap said per hour: said back per hour, as typed
    hourly = await say(tg, "/subscribe H100 помесячно до 300 ₽/ч", 83, "ru")
    assert "Порог понят как 300 ₽/ч за всю конфигурацию" in hourly and "/мес" not in hourly
    assert "до 300 ₽/ч за всю конфигурацию · помесячно" in await say(tg, "/subs", 83, "ru")

    en = await say(tg, "/subscribe A100 under $1,500.50 per GPU per month", 81)
    assert "Cap read as $1,500.50 per GPU per month" in en
    other = html.unescape(re.search(r"<code>(/subscribe [^<]*)</code>", en).group(1))  # type: ignore[union-attr]
    assert "$1,500.50/month" in other
    again = await say(tg, other, 81)
    assert "Cap read as $1,500.50/month for the whole configuration" in again
    async with app.sessionmaker() as session:
        caps = [(s.max_price, s.price_basis, s.billing, s.price_period) for s in await list_subscriptions(session, 81)]
    cap = hourly_equal(1500.5)
    assert caps == [(cap, "gpu", "monthly", "month"), (cap, "total", "monthly", "month")]

    srv = Offer(provider="selectel", sku="a100-month", gpu="a100-80gb", gpu_name="A100 80GB", gpu_count=1,
                location="ru-1", billing=Billing.MONTHLY, price=150_000, currency="RUB", period=Period.MONTH,
                in_stock=True, url="https://selectel.example/a100-month")
    baseline = srv.model_copy(update={"sku": "4090-month", "gpu": "rtx-4090", "gpu_name": "RTX 4090"})
    await app.ingest(poll("selectel", [baseline], NOW - timedelta(minutes=3)), RATES)
    await app.ingest(poll("selectel", [baseline, srv], NOW - timedelta(minutes=2)), RATES)
    alert = await tg.wait_for("sendMessage", chat_id=80, predicate=lambda c: "Заказать" in c.text)
    assert f"(дешевле вашего порога 200{nbsp}000 ₽/мес за всю конфигурацию)" in alert.text


async def test_a_card_and_its_count_in_any_order_is_a_card_subscription(tg: FakeTelegram, app: App) -> None:
    """"4090 до 300 ₽/ч 2 карты": the count after the price still belongs to the card; watched as RTX 4090 × 2."""
    ru = await say(tg, "/subscribe 4090 до 300 ₽/ч 2 карты", 82, "ru")
    assert "RTX 4090" in ru and "× 2 GPU" in ru
    async with app.sessionmaker() as session:
        (sub,) = await list_subscriptions(session, 82)
    assert (sub.kind, sub.gpu_ids, sub.gpu_count, sub.max_price) == ("gpu", ["rtx-4090"], 2, 300)
