"""bot/chart.py: matplotlib (and numpy under it, ~40 MB of RSS) is imported by the first chart drawn, not when the
bot starts; that first chart still draws."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A fresh interpreter: this test process may have drawn charts already.
SCRIPT = r"""
import json, sys
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace as NS
import gpuradar.app
import bot.handlers  # every handler module, /history's included: what the dispatcher is built from
from bot.chart import render_history_png
out = {"at_start": [m for m in ("matplotlib", "numpy") if m in sys.modules]}
t0 = datetime(2025, 1, 1, tzinfo=UTC)
series = [NS(provider="vastai", points=[NS(at=t0, price=100.0), NS(at=t0 + timedelta(hours=5), price=90.0)])]
png = render_history_png(series, title="H100", ylabel="RUB", xlabel="time", currency="RUB",
                         until=t0 + timedelta(hours=8))
out["png"] = png[:8].hex()
out["after_chart"] = [m for m in ("matplotlib", "numpy") if m in sys.modules]
print(json.dumps(out))
"""


def test_matplotlib_is_imported_by_the_first_chart_not_at_start() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["at_start"] == []
    assert out["png"] == "89504e470d0a1a0a"  # a PNG
    assert out["after_chart"] == ["matplotlib", "numpy"]
