"""`gpuradar offers [--gpu NAME] [--fits WORKLOAD] [--provider NAME] [--min-count N] [--json] [--lang ru|en]`:
stored in-stock offers, cheapest whole configuration per hour first (on-demand before spot; with --fits, the
workload's job cost first when its dataset is known). A family name covers its variants (--gpu H100: SXM, PCIe,
NVL). Also the offer table / JSON rendering that `scrape` shares."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from core.gpus import family_ids, get_gpu
from texts.i18n import has, lang_for, number, render, t
from texts.regions import region_name

if TYPE_CHECKING:  # the rest is imported where used: every `gpuradar` command imports this module at start-up
    from core.answer import Answer
    from core.offers import Offer
    from storage.queries import OfferFilter, StoredOffer

LANGS = ("en", "ru")
LISTED_SHOWN = 5  # the price-only sources' rows under the in-stock table: a short section, not a second list


def _t(lang: str, key: str, **values: object) -> str:
    return t(lang, f"cli_offers_{key}", **values)


def _word(lang: str, value: str) -> str:
    """A status or billing word in the language, or the value itself when the catalog has no word for it."""
    return t(lang, f"cli_offers_{value}") if has(lang, f"cli_offers_{value}") else value


# -- shared rendering ------------------------------------------------------------------------------------------------
def offer_json(offer: Offer, rub: float | None, usd: float | None) -> dict[str, Any]:
    """One offer exactly as `scrape --json` and `offers --json` print it."""
    return {
        "provider": offer.provider, "gpu": offer.gpu, "gpu_count": offer.gpu_count,
        "gpu_memory_gb": offer.gpu_memory_gb, "location": offer.location, "billing": offer.billing.value,
        "price": offer.price, "currency": offer.currency, "period": offer.period.value,
        "price_per_gpu_hour_rub": rub, "price_per_gpu_hour_usd": usd,
        # the whole configuration, what the user pays
        "price_per_hour_rub": None if rub is None else round(rub * offer.gpu_count, 4),
        "price_per_hour_usd": None if usd is None else round(usd * offer.gpu_count, 4),
        "fraction": offer.fraction, "in_stock": offer.in_stock, "available": offer.available, "url": offer.url,
    }


def _money(value: float | None, lang: str = "en") -> str:
    if value is None:
        return "—"
    return number(value, 0 if value >= 100 else 2, lang)  # the language's number style (texts.i18n)


def gpu_label(offer: Offer, lang: str = "en") -> str:
    if offer.gpu is None:
        return f"? {offer.gpu_name}"  # an unknown spelling is shown as received, never guessed
    try:
        name = get_gpu(offer.gpu).name
    except KeyError:
        return offer.gpu
    fraction = offer.fraction
    if fraction is None:
        return name
    from core.offers import slice_label  # "1/20 A100 80GB · 4 GB": a slice is never listed as the card

    return render(lang, slice_label(name, offer.gpu, fraction, offer.gpu_memory_gb))


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines)


def offers_table(items: Sequence[tuple[Offer, float | None, float | None]], lang: str) -> str:
    return table(_t(lang, "headers").split("|"), _table_rows(items, lang))


def _table_rows(items: Sequence[tuple[Offer, float | None, float | None]], lang: str) -> list[list[str]]:
    """One row per offer, in the headers' order (the last column: how many are available)."""
    return [[o.provider, gpu_label(o, lang), _count(o),
             region_name(lang, o.location, o.provider) if o.location else "—", _word(lang, o.billing.value),
             _money(None if rub is None else rub * o.gpu_count, lang),
             _money(None if usd is None else usd * o.gpu_count, lang),
             _money(rub, lang), _money(usd, lang), "—" if o.available is None else str(o.available)]
            for o, rub, usd in items]


def _count(offer: Offer) -> str:
    """'8', or '1/20' for a slice of one card (never shown as a whole card)."""
    fraction = offer.fraction
    if fraction is None:
        return str(offer.gpu_count)
    from core.offers import share_ratio

    ratio = share_ratio(fraction)
    return f"{ratio[0]}/{ratio[1]}" if ratio else f"{fraction:.2f}"


def add_lang(parser: argparse.ArgumentParser, *, from_input: bool = False) -> None:
    """--lang; with `from_input` the default is Russian for Cyrillic input (resolved by the command), else English."""
    if from_input:
        parser.add_argument("--lang", choices=LANGS, default=None,
                            help="output language / язык вывода (default: Russian for Cyrillic input, else English)")
    else:
        parser.add_argument("--lang", choices=LANGS, default="en", help="output language / язык вывода (en)")


def gpu_ids(name: str) -> list[str]:
    """Catalog ids a user's GPU name means: a family covers its variants ('H100' -> SXM, PCIe, NVL)."""
    return family_ids(name)


# -- the command -----------------------------------------------------------------------------------------------------
def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("offers", help=_t("en", "help"), description=_t("en", "help"))
    parser.add_argument("--gpu", help="GPU name, e.g. 'H100' or 'RTX 4090'")
    parser.add_argument("--fits", metavar="WORKLOAD", help="keep configurations that fit, e.g. '70B QLoRA'")
    parser.add_argument("--provider", action="append", help="only this provider (repeatable)")
    parser.add_argument("--min-count", type=int, help="at least this many GPUs")
    parser.add_argument("--limit", type=int, default=50, help="at most this many rows (default 50)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_lang(parser, from_input=True)
    parser.set_defaults(handler=run)


def _workload(text: str, lang: str) -> tuple[Answer | None, str | None]:
    """(the workload's answer, error message). Parse errors come back as the parser's own bilingual message."""
    from core.answer import answer
    from core.defaults import complete
    from core.parser import ParseError, parse_workload

    try:
        workload, assumptions = complete(parse_workload(text))
    except ParseError as exc:
        return None, render(lang, exc.explain())
    return answer(workload, assumptions), None


def ranked_rows(rows: list[StoredOffer], fitting: Answer | None, limit: int | None) -> list[StoredOffer]:
    """Stored offers ranked by what the user pays (`core.ranking`), the fitting ones only when a workload is given;
    with a dataset, by the job's cost on each configuration."""
    from core.ranking import rank
    from gpuradar.estimate_view import OfferRow

    items = [OfferRow(r.offer, r.price_per_gpu_hour_rub, r.price_per_gpu_hour_usd) for r in rows]
    back = {id(item): row for item, row in zip(items, rows, strict=True)}
    hours = None
    if fitting is not None:
        items = [o for o in items if o.gpu is not None and fitting.suits(o.gpu, o.gpu_count, o.fraction)]
        if fitting.has_time:
            def hours(gpu: str, count: int) -> float | None:
                row = fitting.config_time(gpu, count)
                return None if row is None else row.hours
    ranked = [back[id(r.offer)] for r in rank(items, "RUB", hours)]
    return ranked[:limit] if limit is not None else ranked


def run(args: argparse.Namespace) -> int:
    from gpuradar.settings import Settings
    from storage import migrate

    lang = args.lang = lang_for(args.lang, args.gpu, args.fits)
    gpus: list[str] | None = None
    if args.gpu:
        gpus = gpu_ids(args.gpu)
        if not gpus:
            print(_t(lang, "unknown_gpu", name=args.gpu), file=sys.stderr)
            return 2
    fitting = None
    if args.fits:
        fitting, error = _workload(args.fits, args.lang)
        if error:
            print(error, file=sys.stderr)
            return 2
    url = Settings().database_url
    try:
        migrate.upgrade(url)
        rows = asyncio.run(_load(url, gpus, args.provider, args.min_count, None, None))
    except Exception as exc:  # a broken DATABASE_URL or file: one clear line
        print(_t(lang, "db_error", error=f"{type(exc).__name__}: {exc}"), file=sys.stderr)
        return 1
    rows = ranked_rows(rows, fitting, args.limit)
    listed: list[StoredOffer] = []
    if gpus or fitting is not None:  # the same cards' listed prices (issue 20); the whole list has no "same card"
        try:
            listed = asyncio.run(_load_listed(url, gpus, args.provider, args.min_count))
        except Exception as exc:
            print(_t(lang, "db_error", error=f"{type(exc).__name__}: {exc}"), file=sys.stderr)
            return 1
        listed = ranked_rows(listed, fitting, LISTED_SHOWN)
    if args.json:
        doc: dict[str, Any] = {"offers": [offer_json(r.offer, r.price_per_gpu_hour_rub, r.price_per_gpu_hour_usd)
                                          for r in rows]}
        if gpus or fitting is not None:  # never in stock: "listed price, availability unknown"
            doc["listed_prices"] = [offer_json(r.offer, r.price_per_gpu_hour_rub, r.price_per_gpu_hour_usd)
                                    for r in listed]
        print(json.dumps(doc, ensure_ascii=False, indent=2))
        return 0
    if args.fits:
        print(_t(lang, "fits", workload=args.fits))
    if not rows:
        print(_t(lang, "none"))
    else:
        print(offers_table([(r.offer, r.price_per_gpu_hour_rub, r.price_per_gpu_hour_usd) for r in rows], args.lang))
        print(_t(lang, "count", n=len(rows)))
    if listed:
        print()
        print(_t(lang, "listed_title"))
        print(table(_t(lang, "listed_headers").split("|"),
                    [row[:-1] for row in _table_rows([(r.offer, r.price_per_gpu_hour_rub, r.price_per_gpu_hour_usd)
                                                      for r in listed], lang)]))
    return 0


async def _load_listed(url: str, gpus: list[str] | None, providers: list[str] | None,
                       min_count: int | None) -> list[StoredOffer]:
    """The price-only sources' current listed prices of these cards (`storage.queries.listed_prices`)."""
    from core.providers import price_only_names
    from storage.db import make_engine, make_sessionmaker
    from storage.queries import listed_prices

    names = [p for p in price_only_names() if providers is None or p in providers]
    engine = make_engine(url)
    try:
        async with make_sessionmaker(engine)() as session:
            rows = await listed_prices(session, names, gpu=gpus)
    finally:
        await engine.dispose()
    return [r for r in rows if min_count is None or r.offer.gpu_count >= min_count]


async def _load(url: str, gpus: list[str] | None, providers: list[str] | None, min_count: int | None,
                where: OfferFilter | None, limit: int | None) -> list[StoredOffer]:
    from storage.db import make_engine, make_sessionmaker
    from storage.queries import in_stock_offers

    engine = make_engine(url)
    try:
        async with make_sessionmaker(engine)() as session:
            return await in_stock_offers(session, gpu=gpus, provider=providers, min_count=min_count, where=where,
                                         limit=limit)
    finally:
        await engine.dispose()
