"""The README's transcript is what the bot says today: regenerated through the stand-in Telegram server and compared."""

from __future__ import annotations

from tests.support.transcript import README, generate, readme_section


async def test_readme_transcript_is_current() -> None:
    produced = await generate()
    assert "/start" in produced and "/estimate" in produced and "/subscribe" in produced and "alert" in produced
    en, ru = produced.split("### По-русски")
    assert "Available: L40S at CloudRift (Seoul)" in en and "В наличии: L40S у CloudRift (Сеул)" in ru  # display names
    assert "ap_northeast" not in produced and "cloudrift" not in produced
    assert readme_section(README.read_text(encoding="utf-8")) == produced, \
        "README transcript is stale: run `python -m tests.support.transcript --write`"
