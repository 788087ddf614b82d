"""`gpuradar sender`: only the alert sender, from the same settings as `gpuradar run` (BOT_TOKEN, TELEGRAM_API_URL,
DATABASE_URL, SENDER__*). Another replica's worth of sending without the bot or the scrapers: it takes its equal part
of Telegram's overall limit with the replicas (`rate_shares`) and its share of the users to match (`sender_shares`).
SIGTERM / SIGINT stop it cleanly (the message in flight is finished and recorded)."""

from __future__ import annotations

import argparse
import asyncio

from gpuradar.commands.run import start_settings


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("sender", help="run only the alert sender (drains the alert queue into Telegram)")
    p.add_argument("--log-level", default=None, choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                   help="overrides LOG__LEVEL")
    p.set_defaults(handler=handle)


async def _run(settings: object) -> int:
    from bot.sender import run_standalone
    from gpuradar.app import make_bot, make_pacer
    from gpuradar.metrics import METRICS
    from gpuradar.settings import Settings
    from storage.db import make_engine, make_sessionmaker

    assert isinstance(settings, Settings)
    engine = make_engine(settings.database_url)
    pacer = make_pacer(settings)
    bot = make_bot(settings, pacer)
    try:
        s = settings.sender
        return await run_standalone(bot, make_sessionmaker(engine), claim_ttl=s.claim_ttl, metrics=METRICS,
                                    pacer=pacer, share_ttl=s.share_ttl, paid_broadcast=s.paid_broadcast,
                                    paid_rate=s.paid_broadcast_rate,
                                    paid_budget_stars=s.paid_broadcast_budget_stars,
                                    paid_budget_period=s.paid_broadcast_budget_period,
                                    digest_messages=s.digest_messages)
    finally:
        await bot.session.close()
        await engine.dispose()


def handle(args: argparse.Namespace) -> int:
    settings = start_settings(args)
    if settings is None:
        return 2
    return asyncio.run(_run(settings))
