"""/history <GPU>: a PNG chart of the cheapest in-stock price per provider over time, sent as a photo.

A family name covers its variants ('H100': SXM, PCIe and NVL), each variant a series of its own."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from aiogram import Router
from aiogram.filters import Command, CommandObject
from aiogram.types import BufferedInputFile, Message
from sqlalchemy.ext.asyncio import AsyncSession

from bot.chart import current_price, is_drawable, priced_points, render_history_png
from bot.formatting import esc, money
from bot.handlers.common import argument
from bot.names import provider_name
from bot.texts import t
from core.gpus import resolve_gpus
from storage.queries import HistorySeries, price_history

router = Router(name="history")


@router.message(Command("history"), flags={"rate": "history"})
async def history(message: Message, command: CommandObject, session: AsyncSession, lang: str,
                  currency: str) -> None:
    name = await argument(message, command, lang)
    if not name:
        await message.answer(t(lang, "history_usage"))
        return
    gpus = resolve_gpus(name)
    if not gpus:
        await message.answer(t(lang, "unknown_gpu", name=esc(name)))
        return
    label = gpus[0].family if len(gpus) > 1 else gpus[0].name
    series: list[HistorySeries] = []
    for gpu in gpus:
        for s in await price_history(session, gpu.id, currency=currency):
            if any(p.price is not None for p in s.points):
                provider = f"{provider_name(s.provider)} · {gpu.name}" if len(gpus) > 1 else s.provider
                series.append(HistorySeries(provider=provider, points=s.points))
    if not series:
        await message.answer(t(lang, "history_empty", gpu=esc(label)))
        return
    labels = {s.provider: provider_name(s.provider) for s in series}
    if not is_drawable(series):  # one moment with a price: say it, a single dot is not a chart
        at, price = priced_points(series)[0]
        where = next(labels[s.provider] for s in series if any(p.price is not None for p in s.points))
        await message.answer(t(lang, "history_one_point", gpu=esc(label), price=money(price, currency),
                               provider=esc(where), date=at.strftime("%d.%m.%Y %H:%M UTC")))
        return
    cheapest = min((s for s in series if current_price(s) is not None), key=current_price, default=None)
    caption = t(lang, "history_caption", gpu=label, currency=currency)
    if cheapest is not None:
        caption += "\n" + t(lang, "history_cheapest_now", provider=labels[cheapest.provider],
                             price=money(current_price(cheapest), currency))
    # Drawing takes tens of milliseconds: off the event loop so other chats are not held up.
    png = await asyncio.to_thread(render_history_png, series, title=label,
                                  ylabel=t(lang, "chart_y", currency=currency), xlabel=t(lang, "chart_x"),
                                  labels=labels, until=datetime.now(UTC), currency=currency)
    await message.answer_photo(BufferedInputFile(png, filename=f"{gpus[0].id}-history.png"), caption=esc(caption))
