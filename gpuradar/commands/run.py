"""`gpuradar run`: the bot, the scrapers (on the lease holder) and the alert sender in one process (migrations
first), with /healthz and /metrics on WEB__HOST:WEB__PORT. `--webhook` (or WEBHOOK__URL) takes updates by webhook.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuradar.settings import Settings


def said(key: str, **values: object) -> str:
    """A start-up problem in one line, in the operator's language (the locale: LANG and the like)."""
    from texts.i18n import locale_lang, t

    return t(locale_lang(), key, **values)


def start_settings(args: argparse.Namespace) -> Settings | None:
    """What every long-running command does first: read the settings (a problem is printed in the operator's language;
    None means exit 2), then configure logging so that no line can carry a configured secret (the bot token, the webhook
    secret, provider keys, the database password) in a message, a URL or a traceback."""
    from pydantic import ValidationError

    from gpuradar.logs import configure_logging
    from gpuradar.settings import Settings

    try:
        settings = Settings()
    except ValidationError as e:
        # one line: which setting and why, never the value given (it may be a secret)
        problems = "; ".join(f"{'__'.join(str(p) for p in err['loc']).upper() or '?'}: {err['msg']}"
                             for err in e.errors())
        print(said("run_bad_settings", error=problems), file=sys.stderr)
        return None
    if settings.bot_token is None or not settings.bot_token.get_secret_value().strip():  # BOT_TOKEN= is unset too
        print(said("run_no_token"), file=sys.stderr)
        return None
    configure_logging(args.log_level or settings.log.level, json_lines=settings.log.json_lines,
                      secrets=settings.secret_values())
    return settings


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("run", help="run the Telegram bot, the scrapers and the alert sender")
    p.add_argument("--no-scrape", action="store_true", help="do not poll providers (bot only)")
    p.add_argument("--webhook", action="store_true",
                   help="receive updates by webhook (needs WEBHOOK__URL and WEBHOOK__SECRET) instead of polling")
    p.add_argument("--log-level", default=None, choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                   help="overrides LOG__LEVEL")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from gpuradar.app import App, WebhookSettingsError, alert_hook
    from gpuradar.startup import StartupError

    settings = start_settings(args)
    if settings is None:
        return 2
    try:
        sender = settings.sender
        alerts = alert_hook(batch=sender.batch, poll_interval=sender.poll_interval, claim_ttl=sender.claim_ttl,
                            paid_broadcast=sender.paid_broadcast, paid_rate=sender.paid_broadcast_rate,
                            paid_budget_stars=sender.paid_broadcast_budget_stars,
                            paid_budget_period=sender.paid_broadcast_budget_period,
                            digest_messages=sender.digest_messages)
        app = App(settings, alerts=alerts, scrape=not args.no_scrape, serve_web=True,
                  webhook=True if args.webhook else None)
    except WebhookSettingsError as e:
        print(e, file=sys.stderr)
        return 2
    try:
        asyncio.run(app.run())
    except StartupError as e:
        print(e.text(), file=sys.stderr)
        return 2
    return 0
