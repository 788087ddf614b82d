"""The /history chart: cheapest in-stock price per GPU-hour per provider over time, as PNG bytes.

Matplotlib with the Agg backend (no display), figure objects rather than pyplot's global state, so charts drawn
from concurrent handlers (in a worker thread) never share a figure.

How it reads: one price step line per provider (a price holds until it changes, and the last one until `until`,
now), the provider that is cheapest now drawn thick and named first in the legend, the others thin; gaps where
nothing was in stock; the date axis in day.month / hours (numbers, so it reads the same in Russian and English), and
prices with the currency symbol. A history of a single point is not drawn (see `is_drawable`): the handler says so
in words instead. Under the chart, on the same time axis, an availability strip (when the availability statistics
have history): a row per provider, green where one was in stock, pale red where sold out, blank where the provider
was not observed (nothing is claimed there).
"""

from __future__ import annotations

import functools
import io
import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from types import ModuleType
from typing import Any, NamedTuple

from texts.i18n import number

SYMBOL = {"RUB": "₽", "USD": "$"}
# day.month and 24-hour times: no month names, so no locale decides the language of the axis
DATE_FORMATS = ["%Y", "%d.%m", "%d.%m", "%H:%M", "%H:%M", "%H:%M:%S"]
ZERO_FORMATS = ["", "%Y", "%d.%m.%Y", "%d.%m", "%H:%M", "%H:%M"]
OFFSET_FORMATS = ["", "%Y", "%Y", "%d.%m.%Y", "%d.%m.%Y", "%d.%m.%Y %H:%M"]


@functools.cache
def _matplotlib() -> tuple[ModuleType, ModuleType, ModuleType]:
    """Matplotlib (Agg), imported by the first chart drawn, not with the bot: with numpy it is ~40 MB of a replica's
    RSS (bench/memory.py), and most replicas draw no chart for hours. That first chart pays ~1 s of import, in the
    worker thread that draws it (within RENDER_LIMIT). Returns (matplotlib.dates, .figure, .ticker)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import dates, figure, ticker

    return dates, figure, ticker


def priced_points(series: Sequence[Any]) -> list[tuple[datetime, float]]:
    return [(p.at, p.price) for s in series for p in s.points if p.price is not None]


def is_drawable(series: Sequence[Any], since: datetime | None = None) -> bool:
    """Two moments with a price, or a price that already held when the window began (`since`: a flat line is a
    fact worth drawing). A single observation inside the window is stated in words, not drawn as a dot."""
    moments = {at for at, _ in priced_points(series)}
    if len(moments) >= 2:
        return True
    return bool(moments) and since is not None and min(moments) <= since


def cheapest_now(series: Sequence[Any]) -> Any | None:
    """What the caption names as cheapest now: the thick line."""
    return _cheapest_now(series)


def current_price(s: Any) -> float | None:
    return s.points[-1].price if s.points else None


def _cheapest_now(series: Sequence[Any]) -> Any | None:
    """The series drawn thick: the cheapest now, on-demand before spot (as lists rank them)."""
    on_demand = [s for s in series if not getattr(s, "spot", False)]
    if any(current_price(s) is not None for s in on_demand):
        series = on_demand
    priced = [s for s in series if current_price(s) is not None]
    if priced:
        return min(priced, key=lambda s: current_price(s) or 0.0)  # all priced: never the 0.0
    with_any = [s for s in series if any(p.price is not None for p in s.points)]
    return min(with_any, key=lambda s: min(p.price for p in s.points if p.price is not None)) if with_any else None


def _money(value: float, currency: str, lang: str = "en", decimals: int | None = None) -> str:
    """A price in the language's number style; `decimals` fixed for an axis (every tick alike), else by size."""
    symbol = SYMBOL.get(currency, currency)
    text = number(value, decimals if decimals is not None else (0 if value >= 100 else 2), lang)
    return f"${text}" if symbol == "$" else f"{text} {symbol}"


class StripRow(NamedTuple):
    """One row of the availability strip: a provider's observed stretches (start, end, in stock?), UTC."""

    label: str
    stretches: Sequence[tuple[datetime, datetime, bool]]


class StripTexts(NamedTuple):
    title: str  # what the strip is, and that a blank means not observed
    in_stock: str
    sold_out: str


IN_STOCK_COLOR, SOLD_OUT_COLOR = "#2ca02c", "#d62728"


def _draw_strip(ax: Any, rows: Sequence[StripRow], texts: StripTexts, mdates: ModuleType) -> None:
    """Bars per row: green in stock, pale red sold out, nothing where the provider was not observed."""
    from matplotlib.patches import Patch

    for i, row in enumerate(rows):
        for in_stock in (True, False):
            bars = [(mdates.date2num(a), mdates.date2num(b) - mdates.date2num(a))
                    for a, b, flag in row.stretches if flag is in_stock]
            if bars:
                ax.broken_barh(bars, (i - 0.35, 0.7), facecolors=IN_STOCK_COLOR if in_stock else SOLD_OUT_COLOR,
                               alpha=0.85 if in_stock else 0.35, linewidth=0)
    ax.set_yticks(range(len(rows)), [r.label for r in rows], fontsize="small")
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_title(texts.title, fontsize="small", loc="left")
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(handles=[Patch(color=IN_STOCK_COLOR, alpha=0.85, label=texts.in_stock),
                       Patch(color=SOLD_OUT_COLOR, alpha=0.35, label=texts.sold_out)],
              loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="x-small", frameon=False)
def _axis_decimals(ax: Any) -> int:
    """One precision for every tick of the price axis: whole units once the axis reaches 100, else what its step
    needs: whole units when every tick is one (so '50.00 ₽' and '100 ₽' never share an axis)."""
    ticks = [v for v in ax.get_yticks() if v >= 0]
    if not ticks or max(ticks) >= 100:
        return 0
    return 0 if all(float(v).is_integer() for v in ticks) else 2


def render_history_png(series: Sequence[Any], *, title: str, ylabel: str, xlabel: str,
                       labels: Mapping[str, str] | None = None, until: datetime | None = None,
                       currency: str = "", strips: Sequence[StripRow] = (),
                       strip_texts: StripTexts | None = None, lang: str = "en") -> bytes:
    """`series`: objects with `.provider` and `.points` (each `.at`, `.price` or None = nothing in stock).
    `labels`: display names by provider id; `until`: where the last price stops (now); `currency` for the ticks.
    `strips` (with `strip_texts`): the availability strip drawn under the chart on the same time axis."""
    mdates, figure, ticker = _matplotlib()
    strip_height = 0.35 * len(strips) + 0.5 if strips and strip_texts is not None else 0.0
    # constrained layout fits the strip's outside legend and shared axis (tight_layout does not handle those)
    fig = figure.Figure(figsize=(9, 4.8 + strip_height), dpi=100, layout="constrained" if strip_height else None)
    if strip_height:
        grid = fig.add_gridspec(2, 1, height_ratios=[4.8, strip_height])
        ax = fig.add_subplot(grid[0])
        strip_ax = fig.add_subplot(grid[1], sharex=ax)
    else:
        ax = fig.add_subplot()
        strip_ax = None
    cheapest = _cheapest_now(series)
    ordered = sorted(series, key=lambda s: (s is not cheapest, current_price(s) is None, current_price(s) or 0.0))
    for s in ordered:
        xs = [p.at for p in s.points]
        ys = [p.price if p.price is not None else math.nan for p in s.points]
        if not xs:
            continue
        if until is not None and until > xs[-1]:
            xs.append(until)  # the last price holds until now
            ys.append(ys[-1])
        name = (labels or {}).get(s.provider, s.provider)
        price = current_price(s)
        label = f"{name} — {_money(price, currency, lang)}" if price is not None and currency else name
        if s is cheapest:
            ax.step(xs, ys, where="post", label=label, linewidth=3.0, zorder=3)
        else:
            ax.step(xs, ys, where="post", label=label, linewidth=1.2, alpha=0.75, zorder=2)
    locator = mdates.AutoDateLocator(minticks=3, maxticks=8)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, formats=DATE_FORMATS,
                                                             zero_formats=ZERO_FORMATS,
                                                             offset_formats=OFFSET_FORMATS))
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    if strip_ax is not None and strip_texts is not None:
        _draw_strip(strip_ax, strips, strip_texts, mdates)
        ax.tick_params(labelbottom=False)
        strip_ax.set_xlabel(xlabel)
    else:
        ax.set_xlabel(xlabel)
    ax.grid(True, alpha=0.3)
    ax.set_ylim(bottom=0)
    if currency:
        decimals = _axis_decimals(ax)
        ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _pos: _money(v, currency, lang, decimals)))
    ax.legend(loc="best", fontsize="small")
    if not strip_height:
        fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()
