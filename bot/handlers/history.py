"""/history <GPU> [period]: a PNG chart of the cheapest in-stock price per provider over time, sent as a photo.

A family name covers its variants ('H100': SXM, PCIe and NVL), each variant a series of its own. The period is the
last 30 days unless the user names one (`7d`, `2w`, `3m`, `1y`; `7д`, `2н`, `3м`, `1г`). The data is an indexed
range, aggregated to a bounded number of points per series (storage.queries.price_history); the chart is drawn off
the event loop within a time limit, and kept a few minutes per GPU, period, currency and language, so a flood of the
same request draws it once.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import OrderedDict
from datetime import UTC, datetime, timedelta

from aiogram import Router
from aiogram.filters import Command, CommandObject
from aiogram.types import BufferedInputFile, Message
from sqlalchemy.ext.asyncio import AsyncSession

from bot.chart import cheapest_now, current_price, is_drawable, priced_points, render_history_png
from bot.formatting import esc, money
from bot.handlers.common import argument
from bot.names import provider_name
from bot.texts import t
from core.gpus import resolve_gpus
from storage.queries import HistorySeries, price_history

router = Router(name="history")

DEFAULT_DAYS = 30
MAX_DAYS = 730  # the daily history retention keeps (storage/retention.py)
POINTS = 240  # per series: about a pixel column each on the chart
RENDER_LIMIT = 15.0  # seconds to draw a chart before the user is told to try again
CACHE_TTL = 300.0
CACHE_SIZE = 32  # charts of ~50 KB each
_PERIOD = re.compile(r"^(\d{1,3})\s*([dwmyдднмг])$", re.IGNORECASE)
_UNIT_DAYS = {"d": 1, "д": 1, "w": 7, "н": 7, "m": 30, "м": 30, "y": 365, "г": 365}
_charts: OrderedDict[tuple[object, ...], tuple[float, bytes]] = OrderedDict()


def split_period(text: str) -> tuple[str, int]:
    """'H100 7d' -> ('H100', 7); no period named: the default."""
    words = text.split()
    if len(words) > 1:
        m = _PERIOD.match(words[-1])
        if m:
            days = int(m.group(1)) * _UNIT_DAYS[m.group(2).lower()]
            return " ".join(words[:-1]), max(1, min(MAX_DAYS, days))
    return text, DEFAULT_DAYS


def _cached(key: tuple[object, ...]) -> bytes | None:
    hit = _charts.get(key)
    if hit is None or hit[0] < time.monotonic():
        _charts.pop(key, None)
        return None
    _charts.move_to_end(key)
    return hit[1]


def _keep(key: tuple[object, ...], png: bytes) -> None:
    _charts[key] = (time.monotonic() + CACHE_TTL, png)
    while len(_charts) > CACHE_SIZE:
        _charts.popitem(last=False)


@router.message(Command("history"), flags={"rate": "history"})
async def history(message: Message, command: CommandObject, session: AsyncSession, lang: str,
                  currency: str) -> None:
    text = await argument(message, command, lang)
    if not text:
        await message.answer(t(lang, "history_usage"))
        return
    name, days = split_period(text)
    gpus = resolve_gpus(name)
    if not gpus:
        await message.answer(t(lang, "unknown_gpu", name=esc(name)))
        return
    label = gpus[0].family if len(gpus) > 1 else gpus[0].name
    caption = t(lang, "history_caption", gpu=label, currency=currency)
    key = (tuple(g.id for g in gpus), days, currency, lang)
    png = _cached(key)
    if png is not None:
        await message.answer_photo(BufferedInputFile(png, filename=f"{gpus[0].id}-history.png"), caption=esc(caption))
        return
    since = datetime.now(UTC) - timedelta(days=days)
    series: list[HistorySeries] = []
    for gpu in gpus:
        for s in await price_history(session, gpu.id, currency=currency, since=since, buckets=POINTS):
            if any(p.price is not None for p in s.points):
                provider = f"{provider_name(s.provider)} · {gpu.name}" if len(gpus) > 1 else provider_name(s.provider)
                if s.spot:  # its own line, labelled: a spot price is never read as the on-demand one
                    provider += t(lang, "history_spot")
                series.append(HistorySeries(provider=provider, points=s.points, spot=s.spot))
    if not series:
        await message.answer(t(lang, "history_empty", gpu=esc(label)))
        return
    labels = {s.provider: s.provider for s in series}
    if not is_drawable(series, since):  # one moment with a price: say it, a single dot is not a chart
        at, price = priced_points(series)[0]
        where = next(labels[s.provider] for s in series if any(p.price is not None for p in s.points))
        await message.answer(t(lang, "history_one_point", gpu=esc(label), price=money(price, currency, lang),
                               provider=esc(where), date=at.strftime("%d.%m.%Y %H:%M UTC")))
        return
    cheapest = cheapest_now(series)  # on-demand before spot, as the chart's thick line
    if cheapest is not None and current_price(cheapest) is not None:
        caption += "\n" + t(lang, "history_cheapest_now", provider=labels[cheapest.provider],
                             price=money(current_price(cheapest), currency, lang))
    # Drawing takes tens of milliseconds: off the event loop so other chats are not held up, and never for ever.
    try:
        png = await asyncio.wait_for(asyncio.to_thread(
            render_history_png, series, title=label, ylabel=t(lang, "chart_y", currency=currency),
            xlabel=t(lang, "chart_x"), labels=labels, until=datetime.now(UTC), currency=currency,
            lang=lang), RENDER_LIMIT)
    except TimeoutError:
        await message.answer(t(lang, "history_slow", gpu=esc(label)))
        return
    _keep(key, png)
    await message.answer_photo(BufferedInputFile(png, filename=f"{gpus[0].id}-history.png"), caption=esc(caption))
