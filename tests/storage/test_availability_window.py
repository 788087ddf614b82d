"""`storage.availability_cache.read_window`, the one read of a window of availability changes (series_stats, /when's
held changes, the ⚡ marks): the rows it returns against a reference computed from every stored row, and the loop
let run while a long read is converted (issue 26: a week of fifty churning groups held the bot's loop 0.5 s)."""

from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from core.availability import Change
from storage import availability_cache
from storage.availability_cache import CHUNK, PART, read_window
from storage.availability_tables import AvailabilityChange
from storage.db import make_engine, make_sessionmaker

T0 = datetime(2026, 11, 1, tzinfo=UTC)


@pytest.fixture
async def sm(migrated_database_url: str) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    engine = make_engine(migrated_database_url)
    yield make_sessionmaker(engine)
    await engine.dispose()


async def store(sm: async_sessionmaker[AsyncSession], rows: list[dict[str, object]]) -> None:
    async with sm() as s, s.begin():
        for i in range(0, len(rows), 5000):
            await s.execute(insert(AvailabilityChange), rows[i:i + 5000])


def expected(stored: list[tuple[int, str, datetime, bool, float | None]], keys: list[str], since: datetime
             ) -> dict[str, tuple[list[Change], list[int]]]:
    """From every stored row: the one in force at `since` (the largest id stamped before it), then the rows from
    `since` on, by time then id."""
    out: dict[str, tuple[list[Change], list[int]]] = {}
    for key in keys:
        mine = [r for r in stored if r[1] == key]
        before = [r for r in mine if r[2] < since]
        rows = ([max(before, key=lambda r: r[0])] if before else []) + sorted(
            (r for r in mine if r[2] >= since), key=lambda r: (r[2], r[0]))
        out[key] = ([Change(r[2].timestamp(), r[3], r[4], None) for r in rows], [r[0] for r in rows])
    return out


async def test_the_window_is_the_rows_in_force_and_after_in_order(sm: async_sessionmaker[AsyncSession]) -> None:
    rng = random.Random(7)
    keys = [f"cloudx|h100-sxm|{i}|r{i}|hourly" for i in range(CHUNK + 40)]  # two chunks of keys
    long = keys[3]  # more rows than a partition: the read comes in several
    rows: list[dict[str, object]] = []
    for key in keys:
        n = PART + 300 if key == long else rng.choice((0, 1, 2, 5, 9))
        for _ in range(n):
            # whole minutes over two days, so stamps tie within a series and ids then decide the order
            when = T0 + timedelta(minutes=rng.randrange(0, 2 * 24 * 60, 7))
            in_stock = rng.random() < 0.5
            rows.append({"series_key": key, "at": when, "in_stock": in_stock,
                         "price_usd": round(rng.uniform(1, 3), 2) if in_stock else None, "price_rub": None})
    rng.shuffle(rows)  # ids in no relation to the stamps: "in force" is the largest id, not the latest stamp
    await store(sm, rows)
    async with sm() as s:
        got_rows = (await s.execute(select(AvailabilityChange.id, AvailabilityChange.series_key, AvailabilityChange.at,
                                           AvailabilityChange.in_stock, AvailabilityChange.price_usd))).all()
    stored = [(r[0], r[1], r[2], bool(r[3]), r[4]) for r in got_rows]
    asked = [*keys, "cloudx|nothing|1|x|hourly"]  # a series with no rows at all
    # before every row (the long series in several partitions), inside the history, after every row (each series
    # only its row in force)
    for since, long_rows in ((T0 - timedelta(days=1), PART + 300), (T0 + timedelta(hours=20), None),
                             (T0 + timedelta(days=3), 1)):
        async with sm() as s:
            got = await read_window(s, asked, since)
        want = expected(stored, asked, since)
        assert got == want, since
        assert long_rows is None or len(got[long][1]) == long_rows
        assert got["cloudx|nothing|1|x|hourly"] == ([], [])


async def test_the_loop_runs_while_a_long_window_is_read(sm: async_sessionmaker[AsyncSession],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    key = "cloudx|h100-sxm|1|US|hourly"
    n = 10 * PART + 1
    await store(sm, [{"series_key": key, "at": T0 + timedelta(minutes=i), "in_stock": i % 2 == 0,
                      "price_usd": 2.0, "price_rub": None} for i in range(n)])
    converted = 0

    def counted(*fields: Any) -> Change:
        nonlocal converted
        converted += 1
        return Change(*fields)

    monkeypatch.setattr(availability_cache, "Change", counted)  # counts the rows converted, nothing else
    seen: list[int] = []  # rows converted so far, at each turn another task had

    async def ticking() -> None:
        while True:
            seen.append(converted)
            await asyncio.sleep(0)

    ticker = asyncio.create_task(ticking())
    await asyncio.sleep(0)
    async with sm() as s:
        got = await read_window(s, [key], T0)
    seen.append(converted)
    ticker.cancel()
    assert len(got[key][1]) == n == converted
    # The rows are converted a partition at a time with the loop let run between two: never more than a partition
    # without another task's turn (one read converted all 20,001 at once).
    assert max(b - a for a, b in itertools.pairwise(seen)) <= PART
