"""A preference objective said in chat is the workload the answer and the alerts are about: through the real bot
(aiogram against the stand-in Bot API server), the app's ingest and a migrated database, in both languages."""

from __future__ import annotations

import re
from datetime import timedelta

from bot.estimates import Estimate, Estimator
from gpuradar.app import App
from testkit.fake_telegram import FakeTelegram
from testkit.market import NOW, RATES, offer, poll, said

# An RTX 4090 (23.6 GiB usable) holds Llama 3 8B LoRA (~21 GiB) but not its DPO (~28 GiB: the pair and the
# reference's forward); an A100 80GB holds both.
MARKET = {"runpod": [offer("runpod", "4090", "rtx-4090", "RTX 4090", 1, 0.44),
                     offer("runpod", "a100", "a100-80gb", "A100 SXM 80GB", 1, 1.64)]}
SFT, DPO = "llama 3 8b lora", "llama 3 8b lora dpo"


def plain(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


async def reply(tg: FakeTelegram, text: str, user_id: int, lang: str = "en") -> str:
    return plain((await said(tg, text, user_id, lang)).text)


def need(text: str) -> float:
    result = Estimator().get(text)
    assert isinstance(result, Estimate)
    return result.memory.need_gib


async def test_a_dpo_estimate_is_sized_and_said_in_both_languages(tg: FakeTelegram, app: App) -> None:
    assert need(SFT) < 23.58 < need(DPO) < 79  # what the test's market stands on
    en = await reply(tg, f"{DPO} 10k pairs", 1)
    assert "Llama 3 8B · LoRA DPO ·" in en and "Time for 10,240,000 training tokens" in en
    assert "RTX 4090" not in en.split("Cheapest")[1] and "A100 80GB" in en
    ru = await reply(tg, "лама 3 8b лора дпо", 2, "ru")
    assert "LoRA DPO" in ru and "RTX 4090" not in ru.split("Дешевле")[1]
    sft = await reply(tg, SFT, 3)
    assert "LoRA DPO" not in sft and "RTX 4090" in sft.split("Cheapest")[1]
    grpo = await reply(tg, "llama 3 8b grpo", 4)
    assert "not sized yet" in grpo and "«7B LoRA DPO»" in grpo
    grpo_ru = await reply(tg, "лама 3 8b grpo", 5, "ru")
    assert "пока не оценивается" in grpo_ru


async def test_a_dpo_watch_hears_only_of_cards_that_hold_the_pair(tg: FakeTelegram, app: App) -> None:
    """The same price drops reach a LoRA watch as the RTX 4090 and a DPO watch as the A100 only."""
    await said(tg, f"/subscribe {SFT}", 11)
    await said(tg, f"/subscribe {DPO}", 12, "ru")
    cheaper = [offer("runpod", "4090", "rtx-4090", "RTX 4090", 1, 0.29),
               offer("runpod", "a100", "a100-80gb", "A100 SXM 80GB", 1, 1.19)]
    await app.ingest(poll("runpod", cheaper, NOW - timedelta(minutes=5)), RATES)
    sft = await tg.wait_for("sendMessage", chat_id=11, predicate=lambda c: "Order at" in c.text)
    dpo = await tg.wait_for("sendMessage", chat_id=12, predicate=lambda c: "Заказать" in c.text)
    assert "RTX 4090" in sft.text and "$0.29" in sft.text
    assert "A100 80GB" in dpo.text and "RTX 4090" not in dpo.text and f"{DPO}: нужно 28 ГиБ" in dpo.text


async def test_an_inline_dpo_answer_is_the_pair_and_its_reference(tg: FakeTelegram, app: App) -> None:
    for uid, lang in ((21, "en"), (22, "ru")):
        qid = tg.inline_query(DPO, user_id=uid, lang=lang)
        inline = await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))
        results = inline.params["results"]
        shown = " ".join(f"{r.get('title', '')} {r.get('description', '')}" for r in results)
        assert "LoRA DPO" in shown
        assert "RTX 4090" not in shown and "A100" in shown  # only cards that hold the pair and its reference
