"""Shared by the Mini App's tests, its browser test and bench/webapp.py: Telegram-signed initData (the algorithm
of https://core.telegram.org/bots/webapps#validating-data-received-via-the-web-app, independent of aiogram's
checker it is tested against), and a market seeded through the real ingest: several providers and cards, a spot
offer, an offer that sold out, and price changes over the last days so the chart has history."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from core.offers import Billing, Offer, Period, Rates
from core.polls import PollResult, PollStatus

RATES = Rates(rub_per={"USD": 80.0, "EUR": 90.0})


def sign_init_data(token: str, user_id: int, *, lang: str = "en", auth_date: float | None = None,
                   first_name: str = "Ann") -> str:
    """initData as Telegram builds it for `user_id`, signed with the bot `token`."""
    user = json.dumps({"id": user_id, "first_name": first_name, "language_code": lang}, separators=(",", ":"))
    fields = {"auth_date": str(int(time.time() if auth_date is None else auth_date)), "query_id": "AAE-test",
              "user": user}
    check = "\n".join(f"{k}={v}" for k, v in sorted(fields.items()))
    secret = hmac.new(b"WebAppData", token.encode(), hashlib.sha256).digest()
    fields["hash"] = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    return urlencode(fields)


def offer(provider: str, sku: str, gpu: str | None, name: str, count: int, price: float, currency: str = "USD", *,
          period: Period = Period.HOUR, location: str = "us", billing: Billing | None = None,
          in_stock: bool = True) -> Offer:
    bill = billing or (Billing.MONTHLY if period is Period.MONTH else Billing.HOURLY)
    return Offer(provider=provider, sku=sku, gpu=gpu, gpu_name=name, gpu_count=count, location=location,
                 billing=bill, price=price, currency=currency, period=period, in_stock=in_stock,
                 url=f"https://{provider}.example/{sku}")


def market(step: int = 0) -> dict[str, list[Offer]]:
    """The offers each provider lists at poll `step` (0, 1, 2: prices move, the L40S at vastai sells out at 2)."""
    drift = [0.0, 0.2, -0.1][step]
    return {
        "runpod": [offer("runpod", "h100", "h100-sxm", "H100 80GB HBM3", 1, 2.49 + drift),
                   offer("runpod", "h100x8", "h100-sxm", "H100 80GB HBM3", 8, 19.9),
                   offer("runpod", "a100", "a100-80gb", "A100 SXM 80GB", 1, 1.64),
                   offer("runpod", "4090", "rtx-4090", "RTX 4090", 1, 0.34),
                   offer("runpod", "h100-spot", "h100-sxm", "H100 80GB HBM3", 1, 1.25 + drift / 2,
                         billing=Billing.SPOT)],
        "selectel": [offer("selectel", "a100-srv", "a100-80gb", "A100 80GB", 1, 150_000, "RUB",
                           period=Period.MONTH, location="ru-1"),
                     offer("selectel", "4090-srv", "rtx-4090", "RTX 4090", 2, 60_000, "RUB", period=Period.MONTH,
                           location="ru-2"),
                     offer("selectel", "h100-pcie", "h100-pcie", "H100 PCIe", 1, 290.0, "RUB", location="ru-1")],
        "vastai": [offer("vastai", "3090", "rtx-3090", "RTX 3090", 1, 0.15, location="eu"),
                   offer("vastai", "l40s", "l40s", "L40S", 1, 0.79, location="eu", in_stock=step < 2),
                   offer("vastai", "h100x2", "h100-sxm", "H100 SXM", 2, 4.4 + drift, location="eu")],
    }


def poll(provider: str, offers: list[Offer], at: datetime) -> PollResult:
    return PollResult(provider=provider, status=PollStatus.OK, offers=offers, started_at=at,
                      finished_at=at + timedelta(seconds=1))


async def seed_market(app: Any, now: datetime | None = None) -> None:
    """Three polls of every provider through `App.ingest`: 3 days, 20 hours and 1 hour ago."""
    now = now or datetime.now(UTC)
    for step, ago in enumerate((timedelta(days=3), timedelta(hours=20), timedelta(hours=1))):
        for provider, offers in market(step).items():
            await app.ingest(poll(provider, offers, now - ago), RATES)
