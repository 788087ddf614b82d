"""/history <GPU>: a PNG chart of the cheapest in-stock price per provider over time, sent as a photo."""

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
from core.gpus import find_gpu
from storage.queries import price_history

router = Router(name="history")


@router.message(Command("history"))
async def history(message: Message, command: CommandObject, session: AsyncSession, lang: str,
                  currency: str) -> None:
    name = await argument(message, command, lang)
    if not name:
        await message.answer(t(lang, "history_usage"))
        return
    gpu = find_gpu(name)
    if gpu is None:
        await message.answer(t(lang, "unknown_gpu", name=esc(name)))
        return
    series = [s for s in await price_history(session, gpu.id, currency=currency)
              if any(p.price is not None for p in s.points)]
    if not series:
        await message.answer(t(lang, "history_empty", gpu=esc(gpu.name)))
        return
    labels = {s.provider: provider_name(s.provider) for s in series}
    if not is_drawable(series):  # one moment with a price: say it, a single dot is not a chart
        at, price = priced_points(series)[0]
        where = next(labels[s.provider] for s in series if any(p.price is not None for p in s.points))
        await message.answer(t(lang, "history_one_point", gpu=esc(gpu.name), price=money(price, currency),
                               provider=esc(where), date=at.strftime("%d.%m.%Y %H:%M UTC")))
        return
    cheapest = min((s for s in series if current_price(s) is not None), key=current_price, default=None)
    caption = t(lang, "history_caption", gpu=gpu.name, currency=currency)
    if cheapest is not None:
        caption += "\n" + t(lang, "history_cheapest_now", provider=labels[cheapest.provider],
                             price=money(current_price(cheapest), currency))
    # Drawing takes tens of milliseconds: off the event loop so other chats are not held up.
    png = await asyncio.to_thread(render_history_png, series, title=gpu.name,
                                  ylabel=t(lang, "chart_y", currency=currency), xlabel=t(lang, "chart_x"),
                                  labels=labels, until=datetime.now(UTC), currency=currency)
    await message.answer_photo(BufferedInputFile(png, filename=f"{gpu.id}-history.png"), caption=esc(caption))
