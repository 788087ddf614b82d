"""`gpuradar scrape --once [--provider NAME ...] [--json] [--lang ru|en]`: poll, store, print.

Without `--once` it keeps polling on the providers' schedules (APScheduler) until interrupted — the same jobs the
bot runs, for a machine that only collects. Every poll goes through storage's `record_poll`, so a command-line
scrape produces the same events, history and health as the service.

Exit status of `--once`: 0 when every polled provider's answer was trusted, 1 when any was suspect or failed,
2 for bad arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import sys
from typing import TYPE_CHECKING, Any

from gpuradar.commands.offers import add_lang, offer_json, offers_table, table
from texts.i18n import has, t

if TYPE_CHECKING:  # the rest is imported where used: every `gpuradar` command imports this module at start-up
    from core.offers import Rates
    from core.polls import PollResult
    from gpuradar.settings import Settings
    from storage.queries import RunView

log = logging.getLogger(__name__)


def _t(lang: str, key: str, **values: object) -> str:
    return t(lang, f"cli_scrape_{key}", **values)


def _word(lang: str, value: str) -> str:
    """A status or billing word in the language, or the value itself when the catalog has no word for it."""
    return t(lang, f"cli_scrape_{value}") if has(lang, f"cli_scrape_{value}") else value


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("scrape", help=_t("en", "help"), description=_t("en", "help"))
    parser.add_argument("--once", action="store_true", help="poll once and exit (default: poll on schedule)")
    parser.add_argument("--provider", action="append", metavar="NAME",
                        help="poll only this provider (repeatable; also polls a disabled one)")
    parser.add_argument("--json", action="store_true", help="print one JSON object (with --once)")
    add_lang(parser)
    parser.set_defaults(handler=run)


def _status(result: PollResult, run: RunView | None) -> tuple[str, str | None]:
    if run is None:  # the store refused the poll (it logged why): report what the scraper saw
        return result.status.value, result.error
    return run.status, run.error


def run(args: argparse.Namespace) -> int:
    from core.redaction import register
    from gpuradar.logs import configure_logging
    from gpuradar.settings import Settings
    from scrapers.settings import ProviderSettings
    from storage import migrate

    lang = args.lang = args.lang or "en"
    settings = Settings()
    # Every configured secret out of what is logged, stored and printed (a provider's error may echo its key).
    if not logging.getLogger().handlers:
        configure_logging(logging.WARNING, json_lines=False, secrets=settings.secret_values())
    else:  # logging set up by the embedding process (a test): its handlers stay, the redactor learns the secrets
        register(*settings.secret_values())
    configured = {name: cfg for name, cfg in settings.providers if isinstance(cfg, ProviderSettings)}
    for name in args.provider or ():
        if name not in configured:
            print(_t(lang, "unknown", name=name, known=", ".join(configured)), file=sys.stderr)
            return 2
    if not args.provider and not settings.providers.enabled():
        print(_t(lang, "none_enabled"), file=sys.stderr)
        return 2
    try:
        migrate.upgrade(settings.database_url)
    except Exception as exc:
        print(_t(lang, "db_error", error=f"{type(exc).__name__}: {exc}"), file=sys.stderr)
        return 1
    if not args.once:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_forever(settings, args.provider, lang))
        print(_t(lang, "stopped"))
        return 0
    return asyncio.run(_once(settings, args.provider, args.json, args.lang))


def rates_line(rates: Rates, lang: str) -> str:
    """Which exchange rates converted the prices, in words: the bank's of a date, the last ones kept, or the
    configured fallback because the bank could not be reached."""
    listed = ", ".join(f"{cur} {value:g} ₽" for cur, value in sorted(rates.rub_per.items()))
    as_of = str(rates.as_of) if rates.as_of else "?"
    return _t(lang, f"rates_{rates.source}" if has(lang, f"cli_scrape_rates_{rates.source}") else "rates_fallback",
              as_of=as_of, rates=listed)


async def _once(settings: Settings, providers: list[str] | None, as_json: bool, lang: str) -> int:
    from core.polls import PollStatus
    from scrapers.fx import RatesProvider
    from scrapers.http import make_client
    from scrapers.scheduler import poll_once
    from storage.db import make_engine, make_sessionmaker
    from storage.ingest import normalised, record_poll
    from storage.queries import recorded_run

    engine = make_engine(settings.database_url)
    sm = make_sessionmaker(engine)
    client = make_client(settings)
    try:
        rates = await RatesProvider.from_settings(settings).get(client)

        async def sink(result: PollResult) -> None:
            await record_poll(sm, result, rates=rates)

        results = await poll_once(providers, settings, client, sink=sink)
        async with sm() as session:
            runs = [await recorded_run(session, r.provider, r.started_at) for r in results]
    finally:
        await client.aclose()
        await engine.dispose()

    statuses = [_status(r, run) for r, run in zip(results, runs, strict=True)]
    offers = []
    for result, (status, _) in zip(results, statuses, strict=True):
        if status == PollStatus.OK.value:  # offers of a suspect poll are not believed, so not shown as current
            offers += [(o, *normalised(o, rates)) for o in result.offers]
    offers.sort(key=lambda x: (x[1] is None, x[1] or 0.0, x[2] or 0.0, x[0].key))

    if as_json:
        out: dict[str, Any] = {
            "providers": [{"name": r.provider, "status": status, "error": error, "offers": len(r.offers)}
                          for r, (status, error) in zip(results, statuses, strict=True)],
            "offers": [offer_json(o, rub, usd) for o, rub, usd in offers],
        }
        print(json.dumps(out, ensure_ascii=False, indent=2))
    else:
        rows = [[r.provider, _word(lang, status), str(len(r.offers)), str(run.event_count if run else 0),
                 error or "—"] for r, run, (status, error) in zip(results, runs, statuses, strict=True)]
        print(table(_t(lang, "headers").split("|"), rows))
        print(rates_line(rates, lang))
        print()
        print(offers_table(offers, lang) if offers else _t(lang, "no_offers"))
    return 0 if all(s == PollStatus.OK.value for s, _ in statuses) else 1


async def _forever(settings: Settings, providers: list[str] | None, lang: str) -> None:
    from scrapers.fx import RatesProvider
    from scrapers.http import make_client
    from scrapers.scheduler import ScrapeScheduler
    from storage.db import make_engine, make_sessionmaker
    from storage.ingest import record_poll

    engine = make_engine(settings.database_url)
    sm = make_sessionmaker(engine)
    client = make_client(settings)
    rates_provider = RatesProvider.from_settings(settings)

    async def sink(result: PollResult) -> None:
        await record_poll(sm, result, rates=await rates_provider.get(client))

    scheduler = ScrapeScheduler(settings, client, sink, providers=providers)
    print(_t(lang, "running", names=", ".join(scheduler.providers)), flush=True)
    scheduler.start()
    try:
        await asyncio.Event().wait()  # until Ctrl+C cancels the loop
    finally:
        scheduler.shutdown()
        await client.aclose()
        await engine.dispose()
