"""`gpuradar stats [--gpu NAME] [--provider NAME] [--days N] [--families] [--currency USD|RUB] [--json]`: the
availability figures of each offer group (provider, card, GPU count, region, billing) — or provider family — over
the last N days (1-30, default 30), from the aggregates ingest keeps (storage/availability.py). JSON prints each
series with its figures as `storage.availability.SeriesStats` (durations in seconds, times as epoch seconds UTC)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any

from gpuradar.commands.offers import add_lang, gpu_ids, table
from texts.i18n import lang_for, number, t
from texts.regions import region_name

if TYPE_CHECKING:
    from core.availability import WindowStats
    from storage.availability import SeriesStats

MAX_DAYS = 30


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("stats", help=t("en", "cli_stats_help"), description=t("en", "cli_stats_help"))
    parser.add_argument("--gpu", help="GPU name, e.g. 'H100' (a family covers its variants)")
    parser.add_argument("--provider", help="only this provider")
    parser.add_argument("--days", type=int, default=MAX_DAYS, help=f"window in days, 1-{MAX_DAYS} (default 30)")
    parser.add_argument("--families", action="store_true", help="provider families (all regions) instead of groups")
    parser.add_argument("--currency", choices=("USD", "RUB"), default="USD")
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_lang(parser, from_input=True)
    parser.set_defaults(handler=run)


def _dur(seconds: float | None, lang: str) -> str:
    """A table cell's duration in the language's short units ("35m", "1.5h" / "35 мин", "1,5 ч")."""
    if seconds is None:
        return "—"
    if seconds < 3600:
        return t(lang, "cli_stats_minutes", n=number(seconds / 60, 0, lang))
    if seconds < 86400:
        return t(lang, "cli_stats_hours", n=number(seconds / 3600, 1, lang))
    return t(lang, "cli_stats_days", n=number(seconds / 86400, 1, lang))


def _price(value: float | None, lang: str) -> str:
    return "—" if value is None else number(value, 0 if value >= 100 else 2, lang)


def _row(s: SeriesStats, w: WindowStats, lang: str) -> list[str]:
    share = w.share
    now = "?" if w.now_in_stock is None else ("+" if w.now_in_stock else "-")
    region = region_name(lang, s.region, s.provider) if s.region else "—"
    return [s.provider, s.card, str(s.gpu_count), region, s.billing,
            "—" if share is None else f"{number(share * 100, 0, lang)}\u00a0%", str(w.appeared),
            f"{_dur(w.median_stay, lang)}/{_dur(w.p90_stay, lang)} ({w.episodes})", _dur(w.median_comeback, lang), now,
            f"{_price(w.price_now, lang)}/{_price(w.price_min, lang)}/{_price(w.price_median, lang)}",
            "—" if s.trend is None else t(lang, f"trend_{s.trend.value}"), _dur(w.observed, lang)]


def as_json(s: SeriesStats, days: int) -> dict[str, Any]:
    w = s.window(days)
    out = s.model_dump(mode="json", exclude={"windows"})
    out["window"] = {**w.model_dump(mode="json"), "share": w.share}
    return out


def run(args: argparse.Namespace) -> int:
    from gpuradar.settings import Settings
    from storage import migrate

    lang = args.lang = lang_for(args.lang, args.gpu)
    if not 1 <= args.days <= MAX_DAYS:
        print(t(lang, "cli_stats_bad_days", high=MAX_DAYS), file=sys.stderr)
        return 2
    cards = None
    if args.gpu:
        cards = gpu_ids(args.gpu)
        if not cards:
            print(t(lang, "cli_offers_unknown_gpu", name=args.gpu), file=sys.stderr)
            return 2
    url = Settings().database_url
    try:
        migrate.upgrade(url)
        stats = asyncio.run(_load(url, cards, args.provider, args.families, args.currency, args.days))
    except Exception as exc:  # a broken DATABASE_URL or file: one clear line
        print(t(lang, "cli_offers_db_error", error=f"{type(exc).__name__}: {exc}"), file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"days": args.days, "currency": args.currency,
                          "series": [as_json(s, args.days) for s in stats]}, ensure_ascii=False, indent=2))
        return 0
    if not stats:
        print(t(lang, "cli_stats_none"))
        return 0
    print(t(lang, "cli_stats_title", days=args.days, currency=args.currency))
    print(table(t(lang, "cli_stats_headers").split("|"), [_row(s, s.window(args.days), lang) for s in stats]))
    return 0


async def _load(url: str, cards: list[str] | None, provider: str | None, families: bool, currency: str,
                days: int) -> list[SeriesStats]:
    from storage.availability import series_stats
    from storage.db import make_engine, make_sessionmaker

    engine = make_engine(url)
    try:
        async with make_sessionmaker(engine)() as session:
            return await series_stats(session, cards=cards, provider=provider, families=families,
                                      currency=currency, days=sorted({days, 7}))
    finally:
        await engine.dispose()
