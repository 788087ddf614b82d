"""/history <GPU> [period]: a PNG chart of the cheapest in-stock price per provider over time, sent as a photo.

A family name covers its variants ('H100': SXM, PCIe and NVL), each variant a series of its own. Under the chart, an
availability strip per provider from the availability statistics (storage.availability.provider_strips: any of the
cards, any GPU count, on-demand or monthly) over the period's observed time, the last 30 days at most (what the
statistics keep), and the caption says each provider's share of that time in stock. The period is the
last 30 days unless the user names one (`7d`, `2w`, `3m`, `1y`; `7д`, `2н`, `3м`, `1г`). The data is an indexed
range, aggregated to a bounded number of points per series (storage.queries.price_history); the chart is drawn off
the event loop within a time limit, and kept a few minutes per GPU, period, filters, currency and language, so a
flood of the same request draws it once.

The filters /subscribe reads narrow the chart and the strip to the configurations they hold ("H100 x8 on runpod",
"spot", "in Germany"), said after the card in the caption; a price cap is no question for a chart of every price,
and the answer points to /when, which answers it.
"""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from aiogram import Router
from aiogram.filters import Command, CommandObject
from aiogram.types import BufferedInputFile, Message
from sqlalchemy.ext.asyncio import AsyncSession

from bot.availability_view import duration, percent
from bot.chart import StripRow, StripTexts, cheapest_now, current_price, is_drawable, priced_points, render_history_png
from bot.chart_cache import ChartCache
from bot.formatting import esc, money
from bot.handlers.common import argument
from bot.names import provider_name
from bot.offers_asked import offers_asked
from bot.subscribing import limits_problem
from bot.texts import t
from core.availability import DAY
from core.gpus import resolve_gpus
from storage.availability import DEFAULT_BILLINGS, ProviderStrip, provider_strips
from storage.availability_cache import ChangeCache
from storage.queries import HistorySeries, price_history

router = Router(name="history")

DEFAULT_DAYS = 30
MAX_DAYS = 730  # the daily history retention keeps (storage/retention.py)
POINTS = 240  # per series: about a pixel column each on the chart
RENDER_LIMIT = 15.0  # seconds to draw a chart before the user is told to try again
STRIP_ROWS = 8  # providers in the availability strip (the caption has room for their shares)
_PERIOD = re.compile(r"^(\d{1,3})\s*([dwmyдднмг])$", re.IGNORECASE)
_UNIT_DAYS = {"d": 1, "д": 1, "w": 7, "н": 7, "m": 30, "м": 30, "y": 365, "г": 365}


def split_period(text: str) -> tuple[str, int]:
    """'H100 7d' -> ('H100', 7); no period named: the default."""
    words = text.split()
    if len(words) > 1:
        m = _PERIOD.match(words[-1])
        if m:
            days = int(m.group(1)) * _UNIT_DAYS[m.group(2).lower()]
            return " ".join(words[:-1]), max(1, min(MAX_DAYS, days))
    return text, DEFAULT_DAYS


def strip_rows(lang: str, strips: Sequence[ProviderStrip]) -> tuple[list[StripRow], str | None]:
    """The strip's rows (providers observed in the period, at most STRIP_ROWS) and the caption's line on them:
    each provider's share of its observed time in stock, with how long that was when it is not the whole period."""
    rows: list[StripRow] = []
    shares: list[str] = []
    for strip in strips:
        w = strip.window
        if w.share is None or not strip.stretches or len(rows) == STRIP_ROWS:
            continue
        name = provider_name(strip.provider)
        rows.append(StripRow(name, [(_utc(a), _utc(b), flag) for a, b, flag in strip.stretches]))
        share = percent(w.share)
        if w.observed < 0.9 * w.days * DAY:
            share = t(lang, "history_strip_share_of", share=share, observed=duration(lang, w.observed))
        shares.append(f"{name} {share}")  # the caption is escaped as a whole
    if not rows:
        return [], None
    return rows, t(lang, "history_strip_line", days=strips[0].window.days, shares=", ".join(shares))


def _utc(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, UTC)


@router.message(Command("history"), flags={"rate": "history"})
async def history(message: Message, command: CommandObject, session: AsyncSession, lang: str,
                  currency: str, availability: ChangeCache, charts: ChartCache) -> None:
    text = await argument(message, command, lang)
    if not text:
        await message.answer(t(lang, "history_usage"))
        return
    name, days = split_period(text)
    asked = offers_asked(name, currency)  # "H100 x8 on runpod": the card and its filters
    if asked.keep is not None:
        name, days = split_period(asked.target) if days == DEFAULT_DAYS else (asked.target, days)
    gpus = resolve_gpus(name)
    if not gpus:
        await message.answer(t(lang, "unknown_gpu", name=esc(name)))
        return
    req = asked.req
    if problem := limits_problem(req, lang):
        await message.answer(problem)
        return
    if req.max_price is not None:  # every price is on the chart: a cap is a question for /when
        await message.answer(t(lang, "history_no_cap", text=esc(req.text)))
        return
    label = gpus[0].family if len(gpus) > 1 else gpus[0].name
    if asked.keep is not None:  # the filters, as /subs says them (the caption is escaped as a whole)
        label += t(lang, "when_filters", filters=html.unescape(asked.said(lang, currency)))
    caption = t(lang, "history_caption", gpu=label, currency=currency)
    providers = tuple(req.providers) if req.providers else None
    key = (tuple(g.id for g in gpus), days, currency, lang, req.gpu_count, providers, req.billing, req.region)
    hit = charts.get(key)
    if hit is not None:  # the chart and its caption as drawn (the cheapest provider and shares of that moment)
        await message.answer_photo(BufferedInputFile(hit[0], filename=f"{gpus[0].id}-history.png"),
                                   caption=esc(hit[1]))
        return
    since = datetime.now(UTC) - timedelta(days=days)
    series: list[HistorySeries] = []
    for gpu in gpus:
        for s in await price_history(session, gpu.id, currency=currency, since=since, buckets=POINTS,
                                     gpu_count=req.gpu_count, providers=providers, billing=req.billing,
                                     region=req.region):
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
    now = datetime.now(UTC)
    strips = await provider_strips(session, [g.id for g in gpus], days=days, now=now, cache=availability,
                                   billings=(req.billing,) if req.billing else DEFAULT_BILLINGS,
                                   gpu_count=req.gpu_count, providers=providers, region=req.region)
    rows, line = strip_rows(lang, strips)
    if line:
        caption += "\n" + line
    texts = StripTexts(t(lang, "history_strip_title"), t(lang, "history_strip_in"), t(lang, "history_strip_out"))
    # Drawing takes tens of milliseconds: off the event loop so other chats are not held up, and never for ever.
    try:
        png = await asyncio.wait_for(asyncio.to_thread(
            render_history_png, series, title=label, ylabel=t(lang, "chart_y", currency=currency),
            xlabel=t(lang, "chart_x"), labels=labels, until=now, currency=currency, strips=rows,
            strip_texts=texts, lang=lang), RENDER_LIMIT)
    except TimeoutError:
        await message.answer(t(lang, "history_slow", gpu=esc(label)))
        return
    charts.keep(key, png, caption)
    await message.answer_photo(BufferedInputFile(png, filename=f"{gpus[0].id}-history.png"), caption=esc(caption))
