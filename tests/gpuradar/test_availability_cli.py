"""`gpuradar stats` and `gpuradar export` on a migrated database (SQLite, or PostgreSQL with TEST_DATABASE_URL)
filled by storage's real ingest."""

from __future__ import annotations

import asyncio
import csv
import json
import re
import tracemalloc
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.offers import Billing, Offer, Period, Rates
from core.polls import PollResult, PollStatus
from gpuradar.cli import main
from gpuradar.commands.export import COLUMNS, parse_since
from storage.db import make_engine, make_sessionmaker
from storage.ingest import record_poll

RATES = Rates(rub_per={"USD": 80.0})


def snapshot(k: int) -> list[Offer]:
    return [Offer(provider="runpod", sku="h100", gpu="h100-sxm", gpu_name="H100 SXM", gpu_count=2, price=5.0,
                  currency="USD", in_stock=k % 4 == 1, location="US", url="https://runpod.example/h100"),
            Offer(provider="selectel", sku="a100", gpu="a100-80gb", gpu_name="A100", gpu_count=1, price=146_000,
                  currency="RUB", period=Period.MONTH, billing=Billing.MONTHLY, in_stock=True, location="ru-1")]


async def fill(url: str, end: datetime, polls: int = 12) -> None:
    engine = make_engine(url)
    sm = make_sessionmaker(engine)
    for k in range(polls):
        at = end - (polls - 1 - k) * timedelta(minutes=10)
        for provider in ("runpod", "selectel"):
            offers = [o for o in snapshot(k) if o.provider == provider]
            await record_poll(sm, PollResult(provider=provider, status=PollStatus.OK, offers=offers, started_at=at,
                                             finished_at=at), rates=RATES, hysteresis=1)
    await engine.dispose()


@pytest.fixture
def filled(migrated_database_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("DATABASE_URL", migrated_database_url)
    asyncio.run(fill(migrated_database_url, datetime.now(UTC) - timedelta(minutes=1)))
    return migrated_database_url


def test_export_csv_and_jsonl(filled: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "open.csv"
    assert main(["export", "--since", "30d", "--format", "csv", "--out", str(out)]) == 0
    with out.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == COLUMNS
    snaps = [r for r in rows if r["record"] == "snapshot"]
    events = [r for r in rows if r["record"] == "event"]
    h100 = [r for r in snaps if r["card"] == "h100-sxm"]
    # the H100 flips every poll but one in four: a snapshot per change; the A100 one snapshot (it never changed)
    assert len([r for r in snaps if r["card"] == "a100-80gb"]) == 1
    assert [r["in_stock"] for r in h100[:4]] == ["false", "true", "false", "true"]
    first_in = h100[1]
    assert first_in["at"].endswith("Z") and first_in["provider"] == "runpod" and first_in["gpu_count"] == "2"
    assert first_in["region"] == "US" and first_in["billing"] == "hourly"
    assert float(first_in["price_per_gpu_hour_usd"]) == 2.5 and float(first_in["price_per_hour_usd"]) == 5.0
    assert float(first_in["price_per_gpu_hour_rub"]) == 200.0 and float(first_in["rub_per_usd"]) == 80.0
    a100 = next(r for r in snaps if r["card"] == "a100-80gb")
    assert a100["currency"] == "RUB" and a100["period"] == "month" and a100["vat_rate"] != ""
    assert {r["event"] for r in events} == {"back_in_stock", "sold_out"}
    sold = next(r for r in events if r["event"] == "sold_out")
    assert sold["in_stock"] == "false" and float(sold["price_per_gpu_hour_usd"]) == 2.5
    assert "written to" in capsys.readouterr().err

    assert main(["export", "--since", "2h", "--format", "jsonl", "--what", "events"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines and all(list(r) == list(COLUMNS) and r["record"] == "event" for r in lines)
    assert main(["export", "--since", "yesterday"]) == 2


def test_export_parquet_is_the_jsonl_export_typed(filled: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = tmp_path / "open.parquet"
    assert main(["export", "--since", "30d", "--format", "parquet", "--out", str(out)]) == 0
    assert "written to" in capsys.readouterr().err
    assert main(["export", "--since", "30d", "--format", "jsonl"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    table = pq.read_table(out)
    assert table.schema.names == list(COLUMNS)
    assert table.schema.field("at").type == pa.timestamp("ms", tz="UTC")
    assert table.schema.field("gpu_count").type == pa.int32() and table.schema.field("in_stock").type == pa.bool_()
    assert table.schema.field("price_per_gpu_hour_usd").type == pa.float64()
    rows = table.to_pylist()
    assert len(rows) == len(lines) > 10
    for row, line in zip(rows, lines, strict=True):
        assert row["at"].tzinfo is not None
        assert {**row, "at": row["at"].strftime("%Y-%m-%dT%H:%M:%SZ")} == line
    assert main(["export", "--format", "parquet"]) == 2  # a binary file needs --out
    assert "--out" in capsys.readouterr().err


async def test_parquet_is_written_a_row_group_per_batch(migrated_database_url: str, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from gpuradar.commands.export import write_parquet

    await fill(migrated_database_url, datetime.now(UTC) - timedelta(minutes=1), polls=24)
    out = tmp_path / "open.parquet"
    n = await write_parquet(migrated_database_url, datetime.now(UTC) - timedelta(days=1), "all", str(out), batch=5)
    meta = pq.ParquetFile(out).metadata
    assert meta.num_rows == n > 10 and meta.num_row_groups == -(-n // 5)  # never the whole export at once


def test_parquet_without_pyarrow_says_what_to_install(filled: str, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    code = ("import sys; sys.modules['pyarrow'] = None; sys.modules['pyarrow.parquet'] = None\n"
            "from gpuradar.cli import main; sys.exit(main(sys.argv[1:]))")
    out = tmp_path / "open.parquet"
    done = subprocess.run([sys.executable, "-c", code, "export", "--format", "parquet", "--out", str(out)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "DATABASE_URL": filled,
                               "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert done.returncode == 1 and not out.exists()
    assert done.stderr.strip().splitlines() == ["Parquet export needs pyarrow: pip install 'gpuradar[parquet]'."]


def test_since_parsing() -> None:
    now = datetime(2026, 12, 1, tzinfo=UTC)
    assert parse_since("30d", now) == now - timedelta(days=30)
    assert parse_since("12h", now) == now - timedelta(hours=12)
    assert parse_since("2w", now) == now - timedelta(weeks=2)
    assert parse_since("-1d", now) is None and parse_since("", now) is None


def test_stats_table_and_json(filled: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", "--json", "--days", "7"]) == 0
    data = json.loads(capsys.readouterr().out)
    by_key = {s["key"]: s for s in data["series"]}
    h100 = by_key["runpod|h100-sxm|2|US|hourly"]["window"]
    assert h100["appeared"] == 3 and h100["episodes"] == 3 and h100["median_stay"] == 600.0
    assert h100["observed"] == 11 * 600.0 and h100["share"] == pytest.approx(3 * 600 / (11 * 600))
    assert by_key["selectel|a100-80gb|1|ru-1|monthly"]["window"]["share"] == 1.0
    assert main(["stats", "--gpu", "H100", "--provider", "runpod"]) == 0
    text = capsys.readouterr().out
    assert "runpod" in text and "h100-sxm" in text and "selectel" not in text
    assert "10m/" in text and "1.8h" in text  # the median stay of 600 s; 11 polls 600 s apart observed
    assert main(["stats", "--gpu", "H100", "--lang", "ru"]) == 0
    ru = capsys.readouterr().out
    assert "в наличии" in ru and "10 мин/" in ru and "1,8 ч" in ru  # each language's units and decimal mark
    assert main(["stats", "--days", "31"]) == 2
    assert main(["stats", "--gpu", "nonsense-gpu"]) == 2


def test_the_documented_schema_is_the_exported_one() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "open-data.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d+) \| `(\w+)` \|", doc, re.MULTILINE)
    assert [int(n) for n, _ in rows] == list(range(1, len(COLUMNS) + 1))
    assert tuple(name for _, name in rows) == COLUMNS


class Counting:
    """A sink that keeps nothing: what the export itself holds is what is measured."""

    def __init__(self) -> None:
        self.lines = 0

    def write(self, text: str) -> int:
        self.lines += text.count("\n")
        return len(text)


async def test_export_memory_does_not_grow_with_the_store(migrated_database_url: str) -> None:
    from sqlalchemy import insert

    from gpuradar.commands.export import write
    from storage.offer_tables import PricePoint

    engine = make_engine(migrated_database_url)
    sm = make_sessionmaker(engine)
    t0 = datetime(2026, 11, 1, tzinfo=UTC)

    async def fill(n: int, start: int) -> None:
        async with sm() as s, s.begin():
            await s.execute(insert(PricePoint), [
                {"offer_key": f"vastai|m{i}|1|r|hourly", "provider": "vastai", "gpu": "h100-sxm", "gpu_count": 1,
                 "at": t0 + timedelta(seconds=i), "price": 2.0, "currency": "USD", "period": "hour",
                 "price_per_gpu_hour_rub": 160.0, "price_per_gpu_hour_usd": 2.0, "in_stock": True, "available": 1}
                for i in range(start, start + n)])

    async def peak() -> tuple[int, int]:
        sink = Counting()
        tracemalloc.start()
        try:
            await write(migrated_database_url, t0, "snapshots", "jsonl", sink)  # type: ignore[arg-type]
            return tracemalloc.get_traced_memory()[1], sink.lines
        finally:
            tracemalloc.stop()

    await fill(2_000, 0)
    small, n_small = await peak()
    await fill(18_000, 2_000)
    large, n_large = await peak()
    await engine.dispose()
    assert (n_small, n_large) == (2_000, 20_000)
    # ten times the rows, about the same memory: a batch at a time (a list of 20,000 rows would be ~10x)
    assert large < 2 * small
