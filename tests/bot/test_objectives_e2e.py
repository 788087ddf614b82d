"""A preference objective said in chat is the workload the answer and the alerts are about: through the real bot
(aiogram against the stand-in Bot API server), the app's ingest and a migrated database, in both languages."""

from __future__ import annotations

import re
from datetime import timedelta

from bot.estimates import Estimate, Estimator
from gpuradar.app import App
from testkit.fake_telegram import FakeTelegram
from testkit.market import NOW, RATES, offer, poll, said

# An H200 (139.8 GiB usable) holds Llama 3 8B's full fine-tune (~125 GiB) but not its DPO (~141 GiB: the frozen
# reference copy beside the trained weights), unless the reference's log-probs are precomputed; a B200 holds all.
MARKET = {"runpod": [offer("runpod", "h200", "h200", "H200 SXM", 1, 3.59),
                     offer("runpod", "b200", "b200", "B200", 1, 5.99)]}
SFT, DPO = "llama 3 8b full", "llama 3 8b full dpo"
PRECOMPUTED = "llama 3 8b full dpo precomputed reference"


def plain(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


async def reply(tg: FakeTelegram, text: str, user_id: int, lang: str = "en") -> str:
    return plain((await said(tg, text, user_id, lang)).text)


def need(text: str) -> float:
    result = Estimator().get(text)
    assert isinstance(result, Estimate)
    return result.memory.need_gib


async def test_a_dpo_estimate_is_sized_and_said_in_both_languages(tg: FakeTelegram, app: App) -> None:
    assert need(SFT) < 139.8 < need(DPO) < 178 and need(PRECOMPUTED) < 139.8  # what the test's market stands on
    en = await reply(tg, f"{DPO} 10k pairs", 1)
    assert "Llama 3 8B · full fine-tune DPO ·" in en
    assert "Time for 10,240,000 training tokens, both answers of 10,000 pairs:" in en
    assert "H200" not in en.split("Cheapest")[1] and "B200" in en.split("Cheapest")[1]
    ru = await reply(tg, "лама 3 8b полное дообучение дпо, 10к пар", 2, "ru")
    assert "полное дообучение DPO" in ru and "H200" not in ru.split("Дешевле")[1]
    assert "на 10 240 000 токенов обучения, оба ответа в 10 000 парах:" in ru.replace("\u00a0", " ")
    sft = await reply(tg, SFT, 3)
    assert "DPO" not in sft and "H200" in sft.split("Cheapest")[1]
    precomputed = await reply(tg, PRECOMPUTED, 6)
    assert "full fine-tune DPO" in precomputed and "H200" in precomputed.split("Cheapest")[1]
    grpo = await reply(tg, "llama 3 8b grpo", 4)
    assert "not sized yet" in grpo and "«7B LoRA DPO»" in grpo
    grpo_ru = await reply(tg, "лама 3 8b grpo", 5, "ru")
    assert "пока не оценивается" in grpo_ru


async def test_a_dpo_watch_hears_only_of_cards_that_hold_the_pair(tg: FakeTelegram, app: App) -> None:
    """The same price drops reach a full fine-tune's watch as the H200 and a DPO watch as the B200 only."""
    await said(tg, f"/subscribe {SFT}", 11)
    await said(tg, f"/subscribe {DPO}", 12, "ru")
    cheaper = [offer("runpod", "h200", "h200", "H200 SXM", 1, 2.99),
               offer("runpod", "b200", "b200", "B200", 1, 4.99)]
    await app.ingest(poll("runpod", cheaper, NOW - timedelta(minutes=5)), RATES)
    sft = await tg.wait_for("sendMessage", chat_id=11, predicate=lambda c: "Order at" in c.text)
    dpo = await tg.wait_for("sendMessage", chat_id=12, predicate=lambda c: "Заказать" in c.text)
    assert "H200" in sft.text and "$2.99" in sft.text
    assert "B200" in dpo.text and "H200" not in dpo.text and f"{DPO}: нужно" in dpo.text


async def test_an_inline_dpo_answer_is_the_pair_and_its_reference(tg: FakeTelegram, app: App) -> None:
    for uid, lang in ((21, "en"), (22, "ru")):
        qid = tg.inline_query(DPO, user_id=uid, lang=lang)
        inline = await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))
        results = inline.params["results"]
        shown = " ".join(f"{r.get('title', '')} {r.get('description', '')}" for r in results)
        assert "DPO" in shown
        assert "H200" not in shown and "B200" in shown  # only cards that hold the pair and its reference
