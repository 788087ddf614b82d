"""How a Bot's calls are paced and parsed, wherever the Bot lives: the replica's own (gpuradar/app.py) and the alert
sender child's (gpuradar/sender_process.py). A module of its own so the child does not import the application
(its handlers, web server and estimator: ~20 MB of the child's RSS) to install two middlewares."""

from __future__ import annotations

from typing import Any

from aiogram import Bot

from bot.pacing import Pacer, RateLimitedSession
from bot.response_types import KeepResponseTypes
from gpuradar.metrics import METRICS


def install_pacing(bot: Bot, pacer: Pacer, metrics: Any = METRICS) -> None:
    """Every call this bot makes goes through the limiter (replies first) and survives a 429; and the response type
    each call is parsed with stays built (bot/response_types.py: else a garbage collection costs a 60-100 ms rebuild
    on the loop)."""
    bot.session.middleware(KeepResponseTypes())
    bot.session.middleware(RateLimitedSession(pacer, on_retry_after=metrics.telegram_rate_limited,
                                              time_scale=pacer.window))
