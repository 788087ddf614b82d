"""The market matrix: catalog cards (grouped by family) x providers, a cell being the cheapest in-stock offer per
GPU-hour with its count, region and spot mark, or when the card was last seen at that provider.

Built from the offer cache (the in-stock set the bot answers from) once per cache version and language, and kept
as the JSON bytes the API sends: a page load costs a dictionary look-up, not a database scan. "Last seen" of what is
out of stock is not in the cache; `LastSeen` reads it with one grouped query, at most once a minute.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.formatting import money
from bot.names import provider_name, region_name
from bot.offer_cache import CachedOffer, OfferCache
from core.gpus import GPU, get_gpu
from storage.offer_tables import CurrentOffer

LAST_SEEN_TTL = 60.0  # seconds a reading of out-of-stock "last seen" times is reused


def card(gpu_id: str) -> GPU | None:
    try:
        return get_gpu(gpu_id)
    except KeyError:
        return None


class LastSeen:
    """(card, provider) -> when an offer of that card was last listed there, for cells with nothing in stock."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession] | None, ttl: float = LAST_SEEN_TTL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._sm = sessionmaker
        self._ttl = ttl
        self._clock = clock
        self._at: float | None = None
        self._value: dict[tuple[str, str], datetime] = {}
        self._lock = asyncio.Lock()
        self.reads = 0  # database readings made (tests: page loads do not add any)

    async def get(self) -> dict[tuple[str, str], datetime]:
        if self._sm is None:
            return {}
        if self._at is not None and self._clock() - self._at < self._ttl:
            return self._value
        async with self._lock:
            if self._at is None or self._clock() - self._at >= self._ttl:
                async with self._sm() as session:
                    q = (select(CurrentOffer.gpu, CurrentOffer.provider, func.max(CurrentOffer.last_seen))
                         .where(CurrentOffer.gpu.is_not(None)).group_by(CurrentOffer.gpu, CurrentOffer.provider))
                    self._value = {(g, p): at for g, p, at in (await session.execute(q)).all() if g is not None}
                self._at = self._clock()
                self.reads += 1
        return self._value

    @property
    def stamp(self) -> float | None:
        return self._at


def _cell(best: CachedOffer, offers: int, lang: str) -> dict[str, Any]:
    return {
        "in_stock": True,
        "offers": offers,
        "count": best.gpu_count,
        "fraction": best.fraction,
        "region": best.location,
        "region_name": region_name(lang, best.location, best.provider) if best.location else "",
        "spot": best.billing == "spot",
        "per_gpu_hour": {"RUB": best.price_per_gpu_hour_rub, "USD": best.price_per_gpu_hour_usd},
        "text": {"RUB": money(best.price_per_gpu_hour_rub, "RUB"), "USD": money(best.price_per_gpu_hour_usd, "USD")},
    }


def _cheaper(a: CachedOffer, b: CachedOffer) -> bool:
    """Per GPU-hour in roubles (the unit every offer has once rated), unknown prices last; then the key."""
    ka = (a.price_per_gpu_hour_rub is None, a.price_per_gpu_hour_rub or 0.0, a.key)
    kb = (b.price_per_gpu_hour_rub is None, b.price_per_gpu_hour_rub or 0.0, b.key)
    return ka < kb


def build_matrix(offers: tuple[CachedOffer, ...], last_seen: dict[tuple[str, str], datetime], lang: str,
                 providers: list[str]) -> dict[str, Any]:
    """The matrix as the API sends it. `providers`: columns to show even when they list nothing now."""
    best: dict[tuple[str, str], CachedOffer] = {}
    counts: dict[tuple[str, str], int] = {}
    for o in offers:
        if o.gpu is None or card(o.gpu) is None:
            continue  # a card the catalog cannot name has no row
        k = (o.gpu, o.provider)
        counts[k] = counts.get(k, 0) + 1
        cur = best.get(k)
        if cur is None or _cheaper(o, cur):
            best[k] = o
    # Providers listing something now first, then those with only past sightings, then the silent ones.
    listing, seen_before = {p for _, p in best}, {p for _, p in last_seen}
    columns = sorted(listing | seen_before | set(providers),
                     key=lambda p: (p not in listing, p not in seen_before, provider_name(p).lower()))
    cards = {g for g, _ in best} | {g for g, _ in last_seen if card(g) is not None}
    families: dict[str, list[GPU]] = {}
    for gid in cards:
        gpu = card(gid)
        assert gpu is not None
        families.setdefault(gpu.family or gpu.name, []).append(gpu)
    rows = []
    for family, gpus in families.items():
        gpus.sort(key=lambda g: (g.memory_gb, g.name))
        variants = []
        for gpu in gpus:
            cells: dict[str, Any] = {}
            for p in columns:
                if (gpu.id, p) in best:
                    cells[p] = _cell(best[gpu.id, p], counts[gpu.id, p], lang)
                elif (gpu.id, p) in last_seen:
                    cells[p] = {"in_stock": False, "last_seen": last_seen[gpu.id, p].isoformat()}
            variants.append({"id": gpu.id, "name": gpu.name, "memory_gb": gpu.memory_gb, "cells": cells})
        summary: dict[str, Any] = {}
        for p in columns:  # the family row: the cheapest of its variants, else the latest sighting
            stocked = [best[g.id, p] for g in gpus if (g.id, p) in best]
            if stocked:
                top = min(stocked, key=lambda o: (o.price_per_gpu_hour_rub is None, o.price_per_gpu_hour_rub or 0.0))
                cell = _cell(top, sum(counts[g.id, p] for g in gpus if (g.id, p) in counts), lang)
                cell["gpu"] = top.gpu
                summary[p] = cell
            else:
                seen = [last_seen[g.id, p] for g in gpus if (g.id, p) in last_seen]
                if seen:
                    summary[p] = {"in_stock": False, "last_seen": max(seen).isoformat()}
        rows.append({"family": family, "memory_gb": max(g.memory_gb for g in gpus), "cells": summary,
                     "variants": variants})
    rows.sort(key=lambda r: (r["memory_gb"], r["family"]))
    return {"providers": [{"id": p, "name": provider_name(p)} for p in columns], "families": rows,
            "offers": sum(counts.values())}


class Payload(NamedTuple):
    """The matrix as sent: the JSON, and the same gzipped once (a tenth of the size, for phones on mobile data)."""

    raw: bytes
    gz: bytes


@dataclass
class MatrixCache:
    """The matrix per language, rebuilt when the offer cache (or the last-seen reading) has changed.

    One build per change however many viewers ask meanwhile (the first ever awaits it; later ones get the previous
    matrix until it is done), and off the loop: with ten
    thousand offers a build is tens of milliseconds of Python, which in a thread gives the loop its turn every few
    milliseconds (the interpreter's switch interval) instead of holding every inline answer for the whole build.
    The offer cache hands over an immutable tuple, so the thread reads a consistent snapshot."""

    offers: OfferCache
    last_seen: LastSeen
    providers: list[str] = field(default_factory=list)
    _built: dict[str, tuple[tuple[int, float | None], Payload]] = field(default_factory=dict)
    _building: dict[tuple[str, tuple[int, float | None]], asyncio.Task[Payload]] = field(default_factory=dict)
    builds: int = 0

    async def json(self, lang: str) -> bytes:
        return (await self.payload(lang)).raw

    async def payload(self, lang: str) -> Payload:
        seen = await self.last_seen.get()
        stamp = (self.offers.version, self.last_seen.stamp)
        hit = self._built.get(lang)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        task = self._building.get((lang, stamp))
        if task is None:
            task = asyncio.create_task(self._build(lang, stamp, self.offers.all(), seen))
            self._building[(lang, stamp)] = task
            task.add_done_callback(lambda _: self._building.pop((lang, stamp), None))
        if hit is not None:
            # The previous poll's matrix while the new one is built: a glance a poll old beats a wait behind the
            # build (the leader ingests a poll every few seconds; the next load gets the new one).
            return hit[1]
        return await asyncio.shield(task)  # a viewer who leaves does not cancel the others' build

    async def _build(self, lang: str, stamp: tuple[int, float | None], offers: tuple[CachedOffer, ...],
                     seen: dict[tuple[str, str], datetime]) -> Payload:
        def build() -> Payload:
            body = build_matrix(offers, seen, lang, self.providers)
            body["version"] = stamp[0]
            raw = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
            return Payload(raw, gzip.compress(raw, compresslevel=6, mtime=0))

        data = await asyncio.to_thread(build)
        current = self._built.get(lang)
        if current is None or current[0][0] <= stamp[0]:
            self._built[lang] = (stamp, data)
        self.builds += 1
        return data
