"""`gpuradar export [--since 30d] [--format csv|jsonl|parquet] [--out FILE] [--what all|snapshots|events]`: open data.

Offer SNAPSHOTS (a row each time a configuration's price or availability changed: price history as ingest writes it,
thinned by retention after `RETENTION__RAW_DAYS`) and change EVENTS (appeared, back in stock, sold out, price
drop/rise), since a moment, streamed from the database a batch at a time: memory stays constant however large the
store. The columns are fixed and documented in docs/open-data.md (`COLUMNS`, in this order); new columns are only
ever appended. Times are UTC ISO 8601 with "Z".

Parquet (`--format parquet --out FILE`, the optional extra `gpuradar[parquet]`: pyarrow, the Apache Arrow project's
reference implementation) holds the same columns in the same order with their types (`PARQUET_TYPES`), written a row
group per batch of rows (pyarrow.parquet.ParquetWriter): memory stays constant as for the text formats.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import re
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import IO, Any

from texts.i18n import t

COLUMNS = ("record", "at", "event", "provider", "card", "gpu_name", "gpu_count", "region", "billing",
           "price", "currency", "period", "price_per_gpu_hour_usd", "price_per_gpu_hour_rub", "price_per_hour_usd",
           "price_per_hour_rub", "rub_per_usd", "vat_rate", "vat_included", "in_stock", "available", "offer_key")
# The Parquet type of each column (docs/open-data.md): `at` a UTC timestamp (milliseconds; whole seconds, as the text
# formats' ISO string).
PARQUET_TYPES = {"record": "string", "at": "timestamp", "event": "string", "provider": "string", "card": "string",
                 "gpu_name": "string", "gpu_count": "int32", "region": "string", "billing": "string",
                 "price": "float64", "currency": "string", "period": "string", "price_per_gpu_hour_usd": "float64",
                 "price_per_gpu_hour_rub": "float64", "price_per_hour_usd": "float64",
                 "price_per_hour_rub": "float64", "rub_per_usd": "float64", "vat_rate": "float64",
                 "vat_included": "bool", "in_stock": "bool", "available": "int32", "offer_key": "string"}
PARQUET_BATCH = 10_000  # rows per row group: what the export holds at a time
_SINCE = re.compile(r"^\s*(\d{1,5})\s*([hdw])\s*$", re.IGNORECASE)
_UNIT = {"h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("export", help=t("en", "cli_export_help"), description=t("en", "cli_export_help"))
    parser.add_argument("--since", default="30d", help="how far back: 30d, 12h, 2w (default 30d)")
    parser.add_argument("--format", choices=("csv", "jsonl", "parquet"), default="csv",
                        help="csv, jsonl, or parquet (needs --out and the extra gpuradar[parquet])")
    parser.add_argument("--out", help="file to write (default: standard output)")
    parser.add_argument("--what", choices=("all", "snapshots", "events"), default="all")
    parser.add_argument("--lang", choices=("en", "ru"), default="en")
    parser.set_defaults(handler=run)


def parse_since(text: str, now: datetime) -> datetime | None:
    m = _SINCE.match(text)
    if m is None:
        return None
    return now - int(m.group(1)) * _UNIT[m.group(2).lower()]


def _iso(at: datetime) -> str:
    at = at if at.tzinfo is not None else at.replace(tzinfo=UTC)
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _rate(rub: float | None, usd: float | None) -> float | None:
    return round(rub / usd, 4) if rub is not None and usd else None


def _whole(per_gpu: float | None, count: int) -> float | None:
    return None if per_gpu is None else round(per_gpu * count, 4)


async def records(session: Any, since: datetime, what: str) -> AsyncIterator[dict[str, Any]]:
    """The export's rows, oldest first within each kind (snapshots, then events)."""
    from sqlalchemy import select

    from core.providers import vat_terms
    from storage.availability import stream_rows
    from storage.offer_tables import CurrentOffer, OfferEventRow, PricePoint

    if what in ("all", "snapshots"):
        p, o = PricePoint, CurrentOffer
        stmt = (select(p.at, p.provider, p.gpu, p.gpu_count, p.price, p.currency, p.period, p.price_per_gpu_hour_usd,
                       p.price_per_gpu_hour_rub, p.in_stock, p.available, p.offer_key, o.gpu_name, o.location,
                       o.billing)
                .outerjoin(o, o.key == p.offer_key).where(p.at >= since).order_by(p.at, p.id))
        async for r in stream_rows(session, stmt):
            vat_rate, vat_included = vat_terms(r.provider, r.currency)
            yield {"record": "snapshot", "at": _iso(r.at), "event": "", "provider": r.provider, "card": r.gpu,
                   "gpu_name": r.gpu_name, "gpu_count": r.gpu_count, "region": r.location, "billing": r.billing,
                   "price": r.price, "currency": r.currency, "period": r.period,
                   "price_per_gpu_hour_usd": r.price_per_gpu_hour_usd,
                   "price_per_gpu_hour_rub": r.price_per_gpu_hour_rub,
                   "price_per_hour_usd": _whole(r.price_per_gpu_hour_usd, r.gpu_count),
                   "price_per_hour_rub": _whole(r.price_per_gpu_hour_rub, r.gpu_count),
                   "rub_per_usd": _rate(r.price_per_gpu_hour_rub, r.price_per_gpu_hour_usd), "vat_rate": vat_rate,
                   "vat_included": vat_included, "in_stock": bool(r.in_stock), "available": r.available,
                   "offer_key": r.offer_key}
    if what in ("all", "events"):
        e = OfferEventRow
        events = (select(e.at, e.kind, e.provider, e.gpu, e.gpu_count, e.currency, e.new_price_usd, e.new_price_rub,
                         e.old_price_usd, e.old_price_rub, e.offer, e.offer_key)
                  .where(e.at >= since).order_by(e.at, e.id))
        async for r in stream_rows(session, events):
            offer = r.offer or {}
            sold = r.kind == "sold_out"
            usd = r.old_price_usd if sold else r.new_price_usd
            rub = r.old_price_rub if sold else r.new_price_rub
            vat_rate, vat_included = vat_terms(r.provider, r.currency)
            if offer.get("vat_rate") is not None:
                vat_rate = offer["vat_rate"]
            if offer.get("vat_included") is not None:
                vat_included = offer["vat_included"]
            yield {"record": "event", "at": _iso(r.at), "event": r.kind, "provider": r.provider, "card": r.gpu,
                   "gpu_name": offer.get("gpu_name"), "gpu_count": r.gpu_count, "region": offer.get("location"),
                   "billing": offer.get("billing"), "price": offer.get("price"), "currency": r.currency,
                   "period": offer.get("period"), "price_per_gpu_hour_usd": usd, "price_per_gpu_hour_rub": rub,
                   "price_per_hour_usd": _whole(usd, r.gpu_count), "price_per_hour_rub": _whole(rub, r.gpu_count),
                   "rub_per_usd": _rate(rub, usd), "vat_rate": vat_rate, "vat_included": vat_included,
                   "in_stock": not sold, "available": offer.get("available"), "offer_key": r.offer_key}


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


async def write(url: str, since: datetime, what: str, fmt: str, out: IO[str]) -> int:
    from storage.db import make_engine, make_sessionmaker

    engine = make_engine(url)
    n = 0
    try:
        async with make_sessionmaker(engine)() as session:
            writer = csv.writer(out, lineterminator="\n") if fmt == "csv" else None
            if writer is not None:
                writer.writerow(COLUMNS)
            async for row in records(session, since, what):
                if writer is not None:
                    writer.writerow([_csv_value(row[c]) for c in COLUMNS])
                else:
                    out.write(json.dumps({c: row[c] for c in COLUMNS}, ensure_ascii=False) + "\n")
                n += 1
    finally:
        await engine.dispose()
    return n


def _parquet_schema(pa: Any) -> Any:
    types = {"string": pa.string(), "timestamp": pa.timestamp("ms", tz="UTC"), "int32": pa.int32(),
             "float64": pa.float64(), "bool": pa.bool_()}
    return pa.schema([pa.field(c, types[PARQUET_TYPES[c]]) for c in COLUMNS])


async def write_parquet(url: str, since: datetime, what: str, path: str, *, batch: int = PARQUET_BATCH) -> int:
    """The export as a Parquet file at `path`: the same rows as `write`, typed, a row group per `batch` rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from storage.db import make_engine, make_sessionmaker

    schema = _parquet_schema(pa)
    engine = make_engine(url)
    n = 0
    try:
        with pq.ParquetWriter(path, schema) as out:
            columns: dict[str, list[Any]] = {c: [] for c in COLUMNS}

            def flush() -> None:
                out.write_table(pa.table(columns, schema=schema))
                for values in columns.values():
                    values.clear()

            async with make_sessionmaker(engine)() as session:
                async for row in records(session, since, what):
                    for c in COLUMNS:
                        columns[c].append(row[c])
                    columns["at"][-1] = datetime.fromisoformat(row["at"])
                    n += 1
                    if n % batch == 0:
                        flush()
            if n % batch or n == 0:
                flush()
    finally:
        await engine.dispose()
    return n


def run(args: argparse.Namespace) -> int:
    from gpuradar.settings import Settings
    from storage import migrate

    since = parse_since(args.since, datetime.now(UTC))
    if since is None:
        print(t(args.lang, "cli_export_bad_since"), file=sys.stderr)
        return 2
    if args.format == "parquet":
        if not args.out:
            print(t(args.lang, "cli_export_parquet_out"), file=sys.stderr)
            return 2
        try:
            import pyarrow.parquet  # noqa: F401  (the optional extra)
        except ImportError:
            print(t(args.lang, "cli_export_no_parquet"), file=sys.stderr)
            return 1
    url = Settings().database_url
    try:
        migrate.upgrade(url)
        if args.format == "parquet":
            n = asyncio.run(write_parquet(url, since, args.what, args.out))
        elif args.out:
            with open(args.out, "w", encoding="utf-8", newline="") as f:
                n = asyncio.run(write(url, since, args.what, args.format, f))
        else:
            n = asyncio.run(write(url, since, args.what, args.format, sys.stdout))
    except Exception as exc:  # a broken DATABASE_URL or file: one clear line
        print(t(args.lang, "cli_offers_db_error", error=f"{type(exc).__name__}: {exc}"), file=sys.stderr)
        return 1
    if args.out:
        print(t(args.lang, "cli_export_done", n=n, out=args.out), file=sys.stderr)
    return 0
