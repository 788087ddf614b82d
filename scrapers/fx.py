"""Exchange rates from the Central Bank of Russia's daily file (`Settings.fx_url`, XML_daily.asp).

The file is windows-1251 XML with comma decimals and a `Nominal` (rates are quoted per 10 or 100 units for some
currencies): `<ValCurs Date="02.03.2024"><Valute><CharCode>USD</CharCode><Nominal>1</Nominal><Value>91,6359</Value>`.
Rates are cached in memory (for `ttl` seconds) and in a small JSON file, so a restart or an unreachable CBR still
has yesterday's rates; with neither, the configured fallback (`Settings.fx_fallback_rub_per`) is used. The result
says which one it is (`Rates.source`: cbr | cache | fallback).
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from core.offers import Rates
from scrapers.errors import PayloadValidationError, ScrapeError

log = logging.getLogger(__name__)

DEFAULT_CACHE = Path(".cache") / "cbr_rates.json"
DEFAULT_TTL = 6 * 3600.0  # CBR publishes once a day; a few refreshes a day catch the new file early enough
# After a failed fetch, polls use what is at hand (memory, file, fallback) for this long before asking again: every
# provider's poll needs rates before it is recorded, so asking a failing (or hanging: up to `timeout`) CBR on each
# poll would delay every alert behind it, and hammer CBR besides.
DEFAULT_RETRY_AFTER = 300.0


def parse_cbr(content: bytes) -> Rates:
    """Roubles per unit of each currency from the CBR XML (bytes: the XML declares its own encoding)."""
    try:
        root = ET.fromstring(content)
    except ET.ParseError as exc:
        raise PayloadValidationError(f"CBR rates: not XML ({exc})") from exc
    if root.tag != "ValCurs":
        raise PayloadValidationError(f"CBR rates: unexpected root <{root.tag}>")
    rub_per: dict[str, float] = {}
    for valute in root.iter("Valute"):
        code = (valute.findtext("CharCode") or "").strip().upper()
        value = (valute.findtext("Value") or "").strip().replace(",", ".").replace("\u00a0", "")
        nominal = (valute.findtext("Nominal") or "1").strip().replace(",", ".")
        try:
            rate = float(value) / float(nominal)
        except ValueError:
            continue  # one unreadable row does not spoil the others
        if code and rate > 0:
            rub_per[code] = round(rate, 6)
    if "USD" not in rub_per:
        raise PayloadValidationError("CBR rates: no USD rate in the file")
    as_of = root.get("Date", "")
    with contextlib.suppress(ValueError):  # keep the file's own spelling when it is not dd.mm.yyyy
        as_of = datetime.strptime(as_of, "%d.%m.%Y").date().isoformat()
    return Rates(rub_per=rub_per, as_of=as_of, source="cbr")


class RatesProvider:
    """Cached access to the CBR rates with a fallback; one instance per application."""

    def __init__(self, url: str, fallback_rub_per: Mapping[str, float], *, cache_path: Path | None = DEFAULT_CACHE,
                 ttl: float = DEFAULT_TTL, clock: Callable[[], float] = time.time, timeout: float = 15.0,
                 retry_after: float = DEFAULT_RETRY_AFTER) -> None:
        self.url = url
        self.fallback = Rates(rub_per=dict(fallback_rub_per), source="fallback")
        self.cache_path = cache_path
        self.ttl = ttl
        self.clock = clock
        self.timeout = timeout
        self.retry_after = retry_after
        self._rates: Rates | None = None
        self._fetched_at = 0.0
        self._failed_at: float | None = None
        self._stand_in: Rates | None = None  # what the last failure settled on, until `retry_after` has passed
        self.last_error: str | None = None

    @classmethod
    def from_settings(cls, settings: Any, **kwargs: Any) -> RatesProvider:
        return cls(settings.fx_url, settings.fx_fallback_rub_per, **kwargs)

    async def get(self, client: httpx.AsyncClient | Any) -> Rates:
        """Fresh in-memory rates, else the CBR file, else the cache file, else the fallback. Never raises."""
        if self._rates is not None and self.clock() - self._fetched_at < self.ttl:
            return self._rates
        if self._stand_in is not None and self._failed_at is not None \
                and self.clock() - self._failed_at < self.retry_after:
            return self._stand_in
        http = getattr(client, "http", client)  # a scrapers.http.PoliteClient or a plain httpx client
        try:
            resp = await http.get(self.url, timeout=self.timeout)
            if resp.status_code != 200:
                raise ScrapeError(f"CBR rates: HTTP {resp.status_code}")
            rates = parse_cbr(resp.content)
        except (httpx.HTTPError, ScrapeError) as exc:
            self.last_error = str(exc) or type(exc).__name__
            log.warning("exchange rates: %s; using %s", self.last_error, "cache" if self._cached() else "fallback")
            cached = self._rates or self._cached()
            stand_in = cached.model_copy(update={"source": "cache"}) if cached is not None \
                else self._with_fallback_gaps(self.fallback)
            self._stand_in, self._failed_at = stand_in, self.clock()
            return stand_in
        self.last_error = None
        self._stand_in = self._failed_at = None
        rates = self._with_fallback_gaps(rates)
        self._rates, self._fetched_at = rates, self.clock()
        self._store(rates)
        return rates

    def _with_fallback_gaps(self, rates: Rates) -> Rates:
        # A currency the file lacks (or the fallback itself) still converts with the configured rate.
        merged = {**self.fallback.rub_per, **rates.rub_per}
        return rates.model_copy(update={"rub_per": merged})

    def _cached(self) -> Rates | None:
        if self.cache_path is None or not self.cache_path.exists():
            return None
        try:
            return Rates.model_validate(json.loads(self.cache_path.read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            log.warning("exchange rates: unreadable cache %s (%s)", self.cache_path, exc)
            return None

    def _store(self, rates: Rates) -> None:
        if self.cache_path is None:
            return
        try:
            self.cache_path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.cache_path.with_suffix(".tmp")
            tmp.write_text(rates.model_dump_json(), encoding="utf-8")
            tmp.replace(self.cache_path)  # atomic: a crash mid-write never leaves half a file
        except OSError as exc:
            log.warning("exchange rates: cannot write cache %s (%s)", self.cache_path, exc)


async def fetch_rates(client: httpx.AsyncClient | Any, settings: Any, *,
                      cache_path: Path | None = DEFAULT_CACHE) -> Rates:
    """One-shot rates for a command-line run (`gpuradar scrape --once`): CBR, else cache file, else fallback."""
    return await RatesProvider.from_settings(settings, cache_path=cache_path).get(client)
