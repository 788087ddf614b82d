"""`gpuradar run`: the bot, the scrapers and the alert sender in one process (migrations first)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from pydantic import ValidationError

from gpuradar.settings import Settings

MESSAGES = {
    "no_token": "BOT_TOKEN is not set: get one from @BotFather and run `BOT_TOKEN=... gpuradar run`.",
    "bad_settings": "The settings are not valid: {error}",
}


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("run", help="run the Telegram bot, the scrapers and the alert sender")
    p.add_argument("--no-scrape", action="store_true", help="do not poll providers (bot only)")
    p.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from gpuradar.app import App, alert_hook

    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        settings = Settings()
    except ValidationError as e:
        print(MESSAGES["bad_settings"].format(error=e), file=sys.stderr)
        return 2
    if settings.bot_token is None:
        print(MESSAGES["no_token"], file=sys.stderr)
        return 2
    asyncio.run(App(settings, alerts=alert_hook(), scrape=not args.no_scrape).run())
    return 0
