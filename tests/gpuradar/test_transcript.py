"""The README's transcript is what the bot says today: regenerated through the stand-in Telegram server and compared."""

from __future__ import annotations

from tests.support.transcript import README, generate, readme_section


async def test_readme_transcript_is_current() -> None:
    produced = await generate()
    assert "/start" in produced and "/estimate" in produced and "/subscribe" in produced and "alert" in produced
    en, ru = produced.split("### По-русски")
    assert "Available: L40S at CloudRift (Seoul, KR)" in en  # display names
    assert "В наличии: L40S у CloudRift (Сеул)" in ru
    assert "ap_northeast" not in produced and "cloudrift" not in produced
    # what issue 19 asks the README to show: a cap per hour, a slice labelled, a tight offer, remedies
    assert "up to $1.00/h for the whole configuration" in en and "до 80,00 ₽/ч за всю конфигурацию" in ru
    assert "1/20 A100 80GB · 4 GB" in en and "1/20 A100 80GB · 4 ГБ" in ru
    assert any("A100 80GB × 1" in line and "tight" in line for line in en.splitlines() if line.strip().startswith("•"))
    assert "Try:" in en and "[🛠 Offload optimizer]" in en and "Попробуйте:" in ru
    assert readme_section(README.read_text(encoding="utf-8")) == produced, \
        "README transcript is stale: run `python -m tests.support.transcript --write`"
