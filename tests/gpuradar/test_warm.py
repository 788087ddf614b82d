"""gpuradar/warm.py: the start-up's one-time builds run in a worker thread while the loop keeps turning, and leave
the Telegram classes the bot uses built (each would otherwise be built on the loop at its first use)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A fresh interpreter: this test process built aiogram's classes long ago. It imports what `gpuradar run` imports,
# then runs the warm-up as App.start does, with a loop task ticking meanwhile.
SCRIPT = r"""
import asyncio, gc, json, sys, threading
import gpuradar.app  # what `gpuradar run` imports first
import aiogram.methods as M
import aiogram.types as T
from bot.response_types import kept
from gpuradar import warm

out = {"before": [n for n in warm.USED_TYPES + warm.CALLED_METHODS
                  if getattr(T, n, None) is not None and T.__dict__[n].__pydantic_complete__
                  or getattr(M, n, None) is not None and M.__dict__[n].__pydantic_complete__],
       "not_imported_before": [m for m in warm.WEB_IMPORTS + warm.SCRAPING_IMPORTS if m not in sys.modules]}

async def main():
    ticks = []
    stop = asyncio.Event()

    async def ticker():
        while not stop.is_set():
            ticks.append(threading.current_thread() is threading.main_thread())
            await asyncio.sleep(0)

    seen = {}

    def estimates():
        seen["main_thread"] = threading.current_thread() is threading.main_thread()
        seen["collector_on"] = gc.isenabled()
        seen["handlers"] = sorted(m for m in sys.modules if m.startswith("bot.handlers."))
        seen["ticks_at_estimates"] = len(ticks)
        import time
        until = time.monotonic() + 0.3
        while time.monotonic() < until:  # CPU work, as the real warm-up is: the loop must still turn
            sum(range(1000))
        seen["ticks_during_estimates"] = len(ticks) - seen["ticks_at_estimates"]

    task = asyncio.create_task(ticker())
    await warm.warm_up_off_loop(estimates, warm.WEB_IMPORTS + warm.SCRAPING_IMPORTS, menu_button=True)
    stop.set()
    await task
    return seen

out["seen"] = asyncio.run(main())
out["collector_on_after"] = gc.isenabled()
out["frozen_after"] = gc.get_freeze_count()
out["types"] = {n: getattr(T, n).__pydantic_complete__ for n in warm.USED_TYPES}
out["methods"] = {n: getattr(M, n).__pydantic_complete__
                  for n in warm.CALLED_METHODS + ("DeleteWebhook", "SetChatMenuButton")}
out["responses"] = sorted(repr(k) for k in kept())
out["wanted"] = list(warm.WEB_IMPORTS + warm.SCRAPING_IMPORTS)
out["missing_after"] = [m for m in out["wanted"] if m not in sys.modules]
print(json.dumps(out))
"""


def test_warm_up_builds_the_used_telegram_classes_in_a_thread_while_the_loop_turns() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, cwd=ROOT, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["before"] == []  # deferred at import (bot/lazy_aiogram.py): what follows is the warm-up's doing
    assert out["seen"]["main_thread"] is False
    assert out["seen"]["ticks_during_estimates"] > 0  # the loop ran while the warm-up worked
    # With the collector paused (its collections were full ones, in the thread, the loop waiting), on again after;
    # what it built left in the oldest generation, nothing frozen (this process never froze its heap).
    assert out["seen"]["collector_on"] is False and out["collector_on_after"] is True
    assert out["frozen_after"] == 0
    # The handler modules the dispatcher imports next are imported already (bot.handlers.routers).
    assert {"bot.handlers.start", "bot.handlers.inline", "bot.handlers.fallback"} <= set(out["seen"]["handlers"])
    assert all(out["types"].values()), out["types"]
    assert all(out["methods"].values()), out["methods"]
    # Each called method's response type is built and held (Message, bool, list[Update], User).
    assert any("Message" in r for r in out["responses"]) and "<class 'bool'>" in out["responses"]
    assert any("Update" in r for r in out["responses"]) and any("User" in r for r in out["responses"])
    # The later imports are the warm-up's doing: most were not imported by `gpuradar.app`, and all are after.
    assert {"gpuradar.web", "scrapers.scheduler", "apscheduler.executors.asyncio"} <= set(out["not_imported_before"])
    assert out["missing_after"] == []
