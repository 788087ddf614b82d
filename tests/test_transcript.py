"""The README's transcript is what the bot says today: regenerated through the stand-in Telegram server and compared."""

from __future__ import annotations

from tests.support.transcript import README, generate, readme_section


async def test_readme_transcript_is_current() -> None:
    produced = await generate()
    assert "/start" in produced and "/estimate" in produced and "/subscribe" in produced and "alert" in produced
    assert "L40S" in produced.split("### По-русски")[0] and "L40S" in produced.split("### По-русски")[1]
    assert readme_section(README.read_text(encoding="utf-8")) == produced, \
        "README transcript is stale: run `python -m tests.support.transcript --write`"
