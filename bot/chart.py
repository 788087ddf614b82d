"""The /history chart: cheapest in-stock price per GPU-hour per provider over time, as PNG bytes.

Matplotlib with the Agg backend (no display), figure objects rather than pyplot's global state, so charts drawn
from concurrent handlers (in a worker thread) never share a figure.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")

from matplotlib.figure import Figure


def render_history_png(series: Sequence[Any], *, title: str, ylabel: str, xlabel: str) -> bytes:
    """`series`: objects with `.provider` and `.points` (each `.at`, `.price` or None = nothing in stock).
    Steps are drawn "post" because a price holds until the next change; gaps where nothing was in stock."""
    fig = Figure(figsize=(8, 4.5), dpi=100)
    ax = fig.add_subplot()
    for s in series:
        xs = [p.at for p in s.points]
        ys = [p.price if p.price is not None else float("nan") for p in s.points]
        if xs:
            ax.step(xs, ys, where="post", label=s.provider, marker="o", markersize=3)
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.set_xlabel(xlabel)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    fig.autofmt_xdate()
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()
