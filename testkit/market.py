"""Little builders for the markets end-to-end tests ingest, and the one way a test asks the bot something."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.offers import Billing, Offer, Rates
from core.polls import PollResult, PollStatus
from testkit.fake_telegram import Call, FakeTelegram

RATES = Rates(rub_per={"USD": 80.0, "EUR": 90.0})
NOW = datetime.now(UTC)


def offer(provider: str, sku: str, gpu: str | None, name: str, count: int, price: float, *, location: str = "us",
          memory: float | None = None, fraction: float | None = None, billing: Billing = Billing.HOURLY,
          url: str | None = None) -> Offer:
    """A whole-card (or, with `memory`/`fraction`, sliced) USD offer in stock."""
    return Offer(provider=provider, sku=sku, gpu=gpu, gpu_name=name, gpu_count=count, gpu_memory_gb=memory,
                 gpu_fraction=fraction, location=location, billing=billing, price=price, currency="USD",
                 in_stock=True, url=url or f"https://{provider}.example/{sku}")


def poll(provider: str, offers: list[Offer], at: datetime) -> PollResult:
    return PollResult(provider=provider, status=PollStatus.OK, offers=offers, started_at=at,
                      finished_at=at + timedelta(seconds=1))


async def said(tg: FakeTelegram, text: str, user_id: int, lang: str = "en") -> Call:
    """Send `text` as the user and wait for the bot's reply to that chat."""
    tg.message(text, user_id=user_id, lang=lang)
    return await tg.wait_for("sendMessage", chat_id=user_id)
