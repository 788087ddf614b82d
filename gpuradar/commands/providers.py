"""`gpuradar providers [--json] [--lang ru|en]`: each configured provider's health, last success and last error."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from datetime import datetime
from typing import TYPE_CHECKING

from bot.i18n import has, t
from gpuradar.commands.offers import add_lang, table

if TYPE_CHECKING:
    from storage.queries import HealthView


def _t(lang: str, key: str, **values: object) -> str:
    return t(lang, f"cli_providers_{key}", **values)


def _word(lang: str, value: str) -> str:
    """A status or billing word in the language, or the value itself when the catalog has no word for it."""
    return t(lang, f"cli_providers_{value}") if has(lang, f"cli_providers_{value}") else value


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("providers", help=_t("en", "help"), description=_t("en", "help"))
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_lang(parser)
    parser.set_defaults(handler=run)


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value else "—"


async def _load(url: str) -> list[HealthView]:
    from storage.db import make_engine, make_sessionmaker
    from storage.queries import provider_health

    engine = make_engine(url)
    try:
        async with make_sessionmaker(engine)() as session:
            return await provider_health(session)
    finally:
        await engine.dispose()


def run(args: argparse.Namespace) -> int:
    # Heavy imports (settings, SQLAlchemy, Alembic) here rather than at the top: see gpuradar.commands.db.run.
    from gpuradar.settings import Settings
    from scrapers.settings import ProviderSettings
    from storage import migrate

    lang = args.lang = args.lang or "en"
    settings = Settings()
    try:
        migrate.upgrade(settings.database_url)
        health = {h.provider: h for h in asyncio.run(_load(settings.database_url))}
    except Exception as exc:
        print(_t(lang, "db_error", error=f"{type(exc).__name__}: {exc}"), file=sys.stderr)
        return 1
    configured = {name: cfg for name, cfg in settings.providers if isinstance(cfg, ProviderSettings)}
    names = list(configured) + sorted(set(health) - set(configured))  # a provider since removed still shows

    if args.json:
        out = []
        for name in names:
            h = health.get(name)
            cfg = configured.get(name)
            out.append({
                "name": name, "enabled": bool(cfg and cfg.enabled), "status": h.status if h else None,
                "reason": h.reason if h else None, "since": h.since.isoformat() if h else None,
                "last_success": h.last_success.isoformat() if h and h.last_success else None,
                "last_error": h.last_error if h else None,
                "last_error_at": h.last_error_at.isoformat() if h and h.last_error_at else None,
                "consecutive_failures": h.consecutive_failures if h else 0,
                "offers": h.last_offer_count if h else None,
            })
        print(json.dumps({"providers": out}, ensure_ascii=False, indent=2))
        return 0

    rows = []
    for name in names:
        h = health.get(name)
        cfg = configured.get(name)
        enabled = _t(lang, "yes") if cfg and cfg.enabled else _t(lang, "no")
        if h is None:
            rows.append([name, enabled, _t(lang, "never"), "—", "—", "—"])
            continue
        status = _word(lang, h.status)
        error = f"{_when(h.last_error_at)}: {h.last_error}" if h.last_error else "—"
        rows.append([name, enabled, status, _when(h.since), _when(h.last_success), error])
    print(table(_t(lang, "headers").split("|"), rows))
    return 0
