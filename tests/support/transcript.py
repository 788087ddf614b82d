"""The README's transcript: /start, /estimate, /subscribe and an alert, in English and in Russian, exactly as the bot
answers them — produced by driving the real application against the stand-in Telegram server, so it stays true.

    python -m tests.support.transcript            # print the transcript (Markdown)
    python -m tests.support.transcript --write    # replace the README's section between the transcript markers

tests/gpuradar/test_transcript.py regenerates it and fails when the README's copy differs.
"""

from __future__ import annotations

import argparse
import asyncio
import html
import re
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from core.offers import Billing, Offer, Period, Rates
from core.polls import PollResult, PollStatus
from gpuradar.app import App, alert_hook
from gpuradar.settings import Settings
from testkit.fake_telegram import Call, FakeTelegram

README = Path(__file__).resolve().parents[2] / "README.md"
START, END = "<!-- transcript:start -->", "<!-- transcript:end -->"
RATES = Rates(rub_per={"USD": 80.0, "EUR": 90.0})
T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def _offer(provider: str, sku: str, gpu: str, name: str, count: int, price: float, location: str,
           currency: str = "USD", period: Period = Period.HOUR) -> Offer:
    return Offer(provider=provider, sku=sku, gpu=gpu, gpu_name=name, gpu_count=count, location=location,
                 billing=Billing.MONTHLY if period is Period.MONTH else Billing.HOURLY, price=price,
                 currency=currency, period=period, in_stock=True, url=f"https://{provider}.example/{sku}")


BEFORE = {
    "runpod": [_offer("runpod", "h100", "h100-sxm", "H100 80GB HBM3", 1, 2.49, "secure"),
               _offer("runpod", "a100", "a100-80gb", "A100 SXM 80GB", 1, 1.64, "secure"),
               _offer("runpod", "4090", "rtx-4090", "RTX 4090", 1, 0.34, "secure")],
    "vastai": [_offer("vastai", "3090", "rtx-3090", "RTX 3090", 1, 0.19, "FI"),
               _offer("vastai", "a6000", "rtx-a6000", "RTX A6000", 1, 0.45, "US")],
    "selectel": [_offer("selectel", "a100-srv", "a100-80gb", "A100 80GB", 1, 150_000, "Moscow", "RUB",
                        Period.MONTH)],
    "cloudrift": [_offer("cloudrift", "4090", "rtx-4090", "RTX 4090", 1, 0.39, "ap_northeast_kr_se_1")],
    # A 4 GB vGPU slice of an A100, the cheapest "A100" on sale: listed as the share of the card it is.
    "vultr": [Offer(provider="vultr", sku="vcg-a100-1c-6g-4vram", gpu="a100-80gb", gpu_name="NVIDIA_A100",
                    gpu_count=1, gpu_memory_gb=4, gpu_fraction=0.05, location="ewr", price=0.123, currency="USD",
                    in_stock=True, url="https://vultr.example/vcg-a100-1c-6g-4vram")],
}
# The next poll: an L40S appears at CloudRift in Seoul, cheap enough for both subscriptions.
NEW = {"cloudrift": [*BEFORE["cloudrift"],
                     _offer("cloudrift", "l40s", "l40s", "L40S", 1, 0.89, "ap_northeast_kr_se_1")]}


def _plain(text: str) -> str:
    """Telegram HTML as a reader sees it: tags gone, entities decoded."""
    text = re.sub(r"<a href=\"([^\"]*)\">([^<]*)</a>", r"\2", text)
    return html.unescape(re.sub(r"<[^>]+>", "", text))


def _block(call: Call) -> list[str]:
    lines = [f"    {line}" if line else "" for line in _plain(call.text).splitlines()]
    buttons = [b["text"] for b in call.buttons()]
    if buttons:
        lines.append("    " + "  ".join(f"[{b}]" for b in buttons))
    return lines


async def _converse(tg: FakeTelegram, user: int, lang: str, text: str) -> list[str]:
    tg.message(text, user_id=user, lang=lang)
    reply = await tg.wait_for("sendMessage", chat_id=user, timeout=15)
    return [f"> **{text}**", "", *_block(reply), ""]


def _poll(provider: str, offers: list[Offer], at: datetime) -> PollResult:
    return PollResult(provider=provider, status=PollStatus.OK, offers=offers, started_at=at,
                      finished_at=at + timedelta(seconds=1))


async def generate() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        async with FakeTelegram() as tg:
            settings = Settings(database_url=f"sqlite+aiosqlite:///{Path(tmp) / 'transcript.sqlite3'}",
                                bot_token=tg.token, telegram_api_url=tg.base_url)
            app = App(settings, alerts=alert_hook(poll_interval=0.05), scrape=False, polling_timeout=1)
            await app.start()
            try:
                for provider, offers in BEFORE.items():
                    await app.ingest(_poll(provider, offers, T0), RATES)
                scripts = {
                    "en": (7, ["/start", "/estimate 32B LoRA ctx 4k", "/estimate 70B full fine-tune on 8 H100",
                               "/offers A100", "/subscribe 13B LoRA under $1/h"]),
                    "ru": (8, ["/start", "/estimate инференс 7B, контекст 32k, 8 пользователей",
                               "/estimate 32B QLoRA ctx 32k batch 4", "/offers A100", "/subscribe 13B LoRA до 80 ₽/ч"]),
                }
                sections: dict[str, list[str]] = {}
                for lang, (user, messages) in scripts.items():
                    lines: list[str] = []
                    for text in messages:
                        lines += await _converse(tg, user, lang, text)
                    sections[lang] = lines
                await app.ingest(_poll("cloudrift", NEW["cloudrift"], T0 + timedelta(hours=1)), RATES)
                for lang, (user, _) in scripts.items():
                    alert = await tg.wait_for("sendMessage", chat_id=user, timeout=15,
                                              predicate=lambda c: "L40S" in c.text)
                    later = "*(an hour later, an alert)*" if lang == "en" else "*(через час — уведомление)*"
                    sections[lang] += [f"> {later}", "", *_block(alert), ""]
            finally:
                await app.stop()
    out = ["### English", "", *sections["en"], "### По-русски", "", *sections["ru"]]
    return "\n".join(out).rstrip() + "\n"


def readme_section(readme: str) -> str:
    start, end = readme.index(START) + len(START), readme.index(END)
    return readme[start:end].strip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="replace the README's transcript section")
    args = parser.parse_args(argv)
    text = asyncio.run(generate())
    if not args.write:
        sys.stdout.write(text)
        return 0
    readme = README.read_text(encoding="utf-8")
    start, end = readme.index(START) + len(START), readme.index(END)
    README.write_text(readme[:start] + "\n" + text + readme[end:], encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
