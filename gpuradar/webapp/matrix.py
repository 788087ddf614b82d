"""The market matrix: catalog cards (grouped by family) x providers, a cell being the cheapest in-stock offer per
GPU-hour with its count, region and spot mark, or when the card was last seen at that provider.

Built from the offer cache (the in-stock set the bot answers from) once per cache version, aggregated once for
every language, and kept as the bytes the API sends (JSON, gzip, ETag): a page load costs a dictionary look-up, not
a database scan nor a pass over the offers. "Last seen" of what is
out of stock is not in the cache; `LastSeen` reads it with one grouped query, at most once a minute.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.formatting import money
from bot.names import provider_name, region_name
from bot.offer_cache import CachedOffer, OfferCache
from core.gpus import GPU, get_gpu
from gpuradar.webapp.responses import Body, Built, body_from
from storage.offer_tables import CurrentOffer
from texts.i18n import LANGS

LAST_SEEN_TTL = 60.0  # seconds a reading of out-of-stock "last seen" times is reused


def card(gpu_id: str) -> GPU | None:
    try:
        return get_gpu(gpu_id)
    except KeyError:
        return None


class LastSeen:
    """(card, provider) -> when an offer of that card was last listed there, for cells with nothing in stock.

    Read at most once a `ttl`; only the very first reading is waited for: after that a viewer gets the reading held
    while the next one is made in the background (a grouped query over every offer row, which under an ingest can
    take a while, must not hold the page's answers)."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession] | None, ttl: float = LAST_SEEN_TTL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._sm = sessionmaker
        self._ttl = ttl
        self._clock = clock
        self._at: float | None = None
        self._value: dict[tuple[str, str], datetime] = {}
        self._lock = asyncio.Lock()
        self._next: asyncio.Task[None] | None = None
        self.reads = 0  # database readings made (tests: page loads do not add any)

    async def get(self) -> dict[tuple[str, str], datetime]:
        if self._sm is None:
            return {}
        if self._at is not None and self._clock() - self._at < self._ttl:
            return self._value
        if self._at is not None:  # held but old: the next reading in the background, the held one now
            if self._next is None or self._next.done():
                self._next = asyncio.create_task(self._read())
            return self._value
        await self._read()
        return self._value

    async def _read(self) -> None:
        assert self._sm is not None
        async with self._lock:
            if self._at is not None and self._clock() - self._at < self._ttl:
                return
            async with self._sm() as session:
                q = (select(CurrentOffer.gpu, CurrentOffer.provider, func.max(CurrentOffer.last_seen))
                     .where(CurrentOffer.gpu.is_not(None)).group_by(CurrentOffer.gpu, CurrentOffer.provider))
                self._value = {(g, p): at for g, p, at in (await session.execute(q)).all() if g is not None}
            self._at = self._clock()
            self.reads += 1

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


Aggregate = tuple[dict[tuple[str, str], CachedOffer], dict[tuple[str, str], int]]


def aggregate(groups: Iterable[Sequence[CachedOffer]]) -> Aggregate:
    """(card, provider) -> its cheapest in-stock offer per GPU-hour, and how many it has: the language-free part of
    the matrix, worked out once per offer-cache version.

    `groups` as the offer cache gives them (`OfferCache.groups`): each one card and GPU count, cheapest first, so the
    first offer of a provider in a group is that group's cheapest there and only it is compared with the others."""
    best: dict[tuple[str, str], CachedOffer] = {}
    counts: dict[tuple[str, str], int] = {}
    named: dict[str, bool] = {}  # card id -> the catalog names it (one look-up per card, not per offer)
    for group in groups:
        seen: set[tuple[str, str]] = set()
        for o in group:
            gpu = o.gpu
            if gpu is None:
                continue
            ok = named.get(gpu)
            if ok is None:
                ok = named[gpu] = card(gpu) is not None
            if not ok:
                continue  # a card the catalog cannot name has no row
            k = (gpu, o.provider)
            counts[k] = counts.get(k, 0) + 1
            if k in seen:
                continue
            seen.add(k)
            cur = best.get(k)
            if cur is None or _cheaper(o, cur):
                best[k] = o
    return best, counts


def build_matrix(offers: Iterable[CachedOffer], last_seen: dict[tuple[str, str], datetime], lang: str,
                 providers: list[str], aggregated: Aggregate | None = None) -> dict[str, Any]:
    """The matrix as the API sends it. `providers`: columns to show even when they list nothing now."""
    best, counts = aggregated if aggregated is not None else aggregate([(o,) for o in offers])
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


class MatrixCache:
    """The matrix in every language, built once per offer-cache version (and last-seen reading) in one thread job:
    the aggregation once, then each language's JSON, gzip and ETag (`gpuradar.webapp.responses.Body`).

    One build per change however many viewers ask meanwhile (the first ever awaits it; later ones get the previous
    matrix until it is done), and off the loop: with ten thousand offers a build is tens of milliseconds of Python,
    which in a thread gives the loop its turn every few milliseconds (the interpreter's switch interval) instead of
    holding every inline answer for the whole build. The offer cache hands over immutable groups (tuples), taken on
    the loop, so the thread reads a consistent snapshot."""

    def __init__(self, offers: OfferCache, last_seen: LastSeen, providers: list[str] | None = None) -> None:
        self.offers = offers
        self.last_seen = last_seen
        self.providers = list(providers or [])
        self._built: Built[str, dict[str, Body]] = Built(cap=1)

    @property
    def builds(self) -> int:
        return self._built.builds

    async def json(self, lang: str) -> bytes:
        return (await self.payload(lang)).raw

    async def payload(self, lang: str) -> Body:
        seen = await self.last_seen.get()
        stamp = (self.offers.version, self.last_seen.stamp or 0.0)
        hit = self._built.current("matrix", stamp)
        if hit is None:
            groups = self.offers.groups("RUB")  # a list of immutable tuples: the snapshot the thread reads
            hit = await self._built.get("matrix", stamp, lambda: asyncio.to_thread(self._build, stamp, groups, seen))
        return hit.get(lang) or hit[LANGS[0]]

    def _build(self, stamp: tuple[int, float], groups: list[tuple[CachedOffer, ...]],
               seen: dict[tuple[str, str], datetime]) -> dict[str, Body]:
        aggregated = aggregate(groups)
        before = self._built.latest("matrix") or {}
        out = {}
        for lang in LANGS:
            raw = json.dumps(build_matrix((), seen, lang, self.providers, aggregated), ensure_ascii=False,
                             separators=(",", ":")).encode()
            kept = before.get(lang)
            # A poll that changed nothing the matrix shows keeps its bytes and ETag: a repeat viewer gets a 304.
            out[lang] = kept if kept is not None and kept.raw == raw else body_from(raw)
        return out
