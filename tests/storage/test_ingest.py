"""record_poll on a real migrated database: runs, verdicts, state, history, events, health, hooks, restarts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from core.changes import EventKind, OfferEvent
from core.offers import Offer, Period, Rates
from core.polls import PollResult, PollStatus
from storage.db import make_engine, make_sessionmaker
from storage.ingest import record_poll
from storage.offer_tables import CurrentOffer, OfferEventRow, PricePoint, ProviderHealth, ScrapeRun

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
RATES = Rates(rub_per={"USD": 80.0, "EUR": 90.0})


def offer(sku: str, price: float = 2.0, *, in_stock: bool = True, available: int | None = None,
          provider: str = "runpod", currency: str = "USD", period: Period = Period.HOUR, count: int = 1) -> Offer:
    return Offer(provider=provider, sku=sku, gpu="h100-sxm", gpu_name="H100 SXM", gpu_count=count, price=price,
                 currency=currency, period=period, in_stock=in_stock, available=available, location="US",
                 url=f"https://example.test/{sku}")


class Poller:
    """Builds successive PollResults a minute apart, as a scheduler would."""

    def __init__(self, provider: str = "runpod") -> None:
        self.provider = provider
        self.n = 0

    def __call__(self, offers: list[Offer] | None = None, status: PollStatus = PollStatus.OK,
                 error: str | None = None) -> PollResult:
        self.n += 1
        start = T0 + timedelta(minutes=self.n)
        return PollResult(provider=self.provider, status=status, offers=offers or [], error=error,
                          started_at=start, finished_at=start + timedelta(seconds=2))


@pytest.fixture
async def sm(migrated_database_url: str) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    engine = make_engine(migrated_database_url)
    yield make_sessionmaker(engine)
    await engine.dispose()


def kinds(events: list[OfferEvent]) -> list[tuple[str, str]]:
    return [(e.kind.value, e.offer.sku) for e in events]


async def count(sm: async_sessionmaker[AsyncSession], model: type) -> int:
    async with sm() as s:
        return int(await s.scalar(select(func.count()).select_from(model)) or 0)


async def test_baseline_then_events_with_prices_and_ids(sm: async_sessionmaker[AsyncSession]) -> None:
    poll = Poller()
    assert await record_poll(sm, poll([offer("a", 2.0), offer("b", 3.0)]), rates=RATES) == []
    events = await record_poll(sm, poll([offer("a", 1.5), offer("b", 3.0), offer("c", 4.0)]), rates=RATES)
    assert kinds(events) == [("appeared", "c"), ("price_drop", "a")]
    drop = events[1]
    assert (drop.old_price, drop.new_price, drop.new_price_rub) == (2.0, 1.5, 120.0)
    async with sm() as s:
        rows = (await s.scalars(select(OfferEventRow).order_by(OfferEventRow.id))).all()
        assert [(r.kind, r.offer["sku"]) for r in rows] == [("appeared", "c"), ("price_drop", "a")]
        assert [e.id for e in events] == [r.id for r in rows]
        a = await s.get(CurrentOffer, offer("a").key)
        assert (a.price, a.ref_price, a.price_per_gpu_hour_rub, a.price_per_gpu_hour_usd) == (1.5, 1.5, 120.0, 1.5)
        assert a.last_seen == T0 + timedelta(minutes=2, seconds=2)
        run = (await s.scalars(select(ScrapeRun).order_by(ScrapeRun.id.desc()))).first()
        assert (run.status, run.offer_count, run.event_count) == ("ok", 3, 2)


async def test_monthly_rub_offer_normalised_per_gpu_hour(sm: async_sessionmaker[AsyncSession]) -> None:
    poll = Poller("selectel")
    o = offer("s1", 146000, provider="selectel", currency="RUB", period=Period.MONTH, count=2)
    await record_poll(sm, poll([o]), rates=RATES)
    async with sm() as s:
        row = await s.get(CurrentOffer, o.key)
        assert row.price_per_gpu_hour_rub == pytest.approx(100.0)
        assert row.price_per_gpu_hour_usd == pytest.approx(1.25)


async def test_without_rates_only_the_own_currency_is_known(sm: async_sessionmaker[AsyncSession]) -> None:
    await record_poll(sm, Poller()([offer("a", 2.0)]))
    async with sm() as s:
        row = await s.get(CurrentOffer, offer("a").key)
        assert (row.price_per_gpu_hour_rub, row.price_per_gpu_hour_usd) == (None, 2.0)


async def test_failed_and_suspect_polls_keep_state_and_degrade_health(sm: async_sessionmaker[AsyncSession]) -> None:
    poll = Poller()
    await record_poll(sm, poll([offer("a"), offer("b")]), rates=RATES)
    async with sm() as s:
        before = {r.key: (r.in_stock, r.missing, r.price) for r in (await s.scalars(select(CurrentOffer))).all()}

    assert await record_poll(sm, poll(status=PollStatus.FAILED, error="HTTP 500")) == []
    assert await record_poll(sm, poll(status=PollStatus.SUSPECT, error="HTML where JSON was expected")) == []
    # trusted by the scraper but empty after non-empty: the shrink verdict makes it suspect
    assert await record_poll(sm, poll([])) == []
    assert await record_poll(sm, poll([])) == []

    async with sm() as s:
        after = {r.key: (r.in_stock, r.missing, r.price) for r in (await s.scalars(select(CurrentOffer))).all()}
        assert after == before
        health = await s.get(ProviderHealth, "runpod")
        assert health.status == "degraded"
        assert "empty result" in health.reason
        assert health.consecutive_failures == 4
        assert health.last_success == T0 + timedelta(minutes=1, seconds=2)
        assert health.since == T0 + timedelta(minutes=2, seconds=2)  # degraded since the first failure
        runs = (await s.execute(select(ScrapeRun.reported_status, ScrapeRun.status, ScrapeRun.shrink)
                                .order_by(ScrapeRun.id))).all()
        assert [tuple(r) for r in runs] == [("ok", "ok", False), ("failed", "failed", False),
                                            ("suspect", "suspect", False), ("ok", "suspect", True),
                                            ("ok", "suspect", True)]
    assert await count(sm, OfferEventRow) == 0

    # recovery clears the mark and nothing was lost: b went missing for real now
    events = await record_poll(sm, poll([offer("a")]))
    assert events == []  # one miss is within hysteresis
    events = await record_poll(sm, poll([offer("a")]))
    assert kinds(events) == [("sold_out", "b")]
    async with sm() as s:
        health = await s.get(ProviderHealth, "runpod")
        assert (health.status, health.reason, health.consecutive_failures) == ("ok", None, 0)
        assert health.last_error == "empty result after 2 offers in the last trusted poll"


async def test_recording_the_same_poll_twice_is_a_no_op(sm: async_sessionmaker[AsyncSession]) -> None:
    poll = Poller()
    await record_poll(sm, poll([offer("a")]))
    second = poll([offer("a"), offer("b")])
    assert kinds(await record_poll(sm, second)) == [("appeared", "b")]
    assert await record_poll(sm, second) == []
    assert await count(sm, ScrapeRun) == 2
    assert await count(sm, OfferEventRow) == 1


async def test_restart_on_the_same_database_replays_nothing(migrated_database_url: str) -> None:
    poll = Poller()
    engine = make_engine(migrated_database_url)
    sm = make_sessionmaker(engine)
    await record_poll(sm, poll([offer("a", 2.0), offer("b")]))
    assert kinds(await record_poll(sm, poll([offer("a", 1.0)]))) == [("price_drop", "a")]
    await engine.dispose()

    engine = make_engine(migrated_database_url)  # a new process: nothing in memory
    sm = make_sessionmaker(engine)
    try:
        # same snapshot again: no price event again; b's missing counter survived the restart
        assert kinds(await record_poll(sm, poll([offer("a", 1.0)]))) == [("sold_out", "b")]
        assert await record_poll(sm, poll([offer("a", 1.0)])) == []
        assert await count(sm, OfferEventRow) == 2
    finally:
        await engine.dispose()


async def test_price_history_points_only_on_change(sm: async_sessionmaker[AsyncSession]) -> None:
    poll = Poller()
    await record_poll(sm, poll([offer("a", 2.0)]))
    await record_poll(sm, poll([offer("a", 2.0)]))
    await record_poll(sm, poll([offer("a", 2.01)]))  # below threshold: no event, but a history point
    await record_poll(sm, poll([offer("a", 2.01, available=0)]))
    await record_poll(sm, poll([]))  # empty after non-empty: suspect, so no point either
    async with sm() as s:
        pts = (await s.execute(select(PricePoint.price, PricePoint.in_stock).order_by(PricePoint.id))).all()
        assert [tuple(p) for p in pts] == [(2.0, True), (2.01, True), (2.01, False)]


async def test_hook_runs_inside_the_transaction(sm: async_sessionmaker[AsyncSession]) -> None:
    poll = Poller()
    await record_poll(sm, poll([offer("a")]))
    seen: list[list[int | None]] = []

    async def hook(session: AsyncSession, events: list[OfferEvent]) -> None:
        seen.append([e.id for e in events])
        # the events are visible in the same transaction
        n = await session.scalar(select(func.count()).select_from(OfferEventRow))
        assert n == len(events)

    events = await record_poll(sm, poll([offer("a"), offer("b")]), on_events=hook)
    assert seen == [[events[0].id]]

    async def failing(session: AsyncSession, events: list[OfferEvent]) -> None:
        await session.execute(text("SELECT 1"))
        raise RuntimeError("outbox write failed")

    with pytest.raises(RuntimeError):
        await record_poll(sm, poll([offer("a"), offer("b"), offer("c")]), on_events=failing)
    # rolled back together: no run, no event, no state for c; the next poll announces c again
    assert await count(sm, ScrapeRun) == 2
    async with sm() as s:
        assert await s.get(CurrentOffer, offer("c").key) is None
    assert kinds(await record_poll(sm, poll([offer("a"), offer("b"), offer("c")]))) == [("appeared", "c")]


async def test_providers_are_independent(sm: async_sessionmaker[AsyncSession]) -> None:
    rp, vast = Poller("runpod"), Poller("vastai")
    await record_poll(sm, rp([offer("a")]))
    # first poll of another provider is its own baseline even though the store is not empty
    assert await record_poll(sm, vast([offer("v", provider="vastai")])) == []
    assert kinds(await record_poll(sm, vast([offer("v", provider="vastai"), offer("w", provider="vastai")]))) == [
        ("appeared", "w")]
    async with sm() as s:
        assert (await s.get(CurrentOffer, offer("a").key)).missing == 0


async def test_first_trusted_poll_empty_still_sets_baseline(sm: async_sessionmaker[AsyncSession]) -> None:
    poll = Poller()
    await record_poll(sm, poll(status=PollStatus.FAILED, error="timeout"))
    assert await record_poll(sm, poll([])) == []
    assert kinds(await record_poll(sm, poll([offer("a")]))) == [("appeared", "a")]
    assert kinds(await record_poll(sm, poll([offer("a"), offer("z", in_stock=False)]))) == []
    assert [e.kind for e in await record_poll(sm, poll([offer("a"), offer("z")]))] == [EventKind.BACK_IN_STOCK]


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_incremental_ingest_equals_change_detection_over_every_configuration(
        sm: async_sessionmaker[AsyncSession], seed: int) -> None:
    """Ingest diffs only the configurations that changed (unchanged ones are skipped before change detection and
    never written). Over random polls — price moves, listings at zero, vanished and returning configurations, new
    ones, an exchange-rate move — its events and stored state equal those of `detect_changes` run over every
    configuration, with the worker's state cache and without it (each poll loaded from the database)."""
    import random

    from core.changes import detect_changes
    from storage.ingest import StateCache, normalised

    rng = random.Random(seed)
    names = [f"s{i}" for i in range(40)]

    def shape(name: str) -> dict[str, object]:
        """Counts of 1-4 GPUs; some priced per month in euros (the normalised prices divide and convert)."""
        i = sum(map(ord, name))
        return {"count": 1 + i % 4, **({"currency": "EUR", "period": Period.MONTH} if i % 5 == 0 else {})}
    prices = {n: round(rng.uniform(1, 4), 2) for n in names}
    cache = StateCache()
    paths = {"cached": Poller("cached"), "cold": Poller("cold")}
    reference: dict[str, object] = {}
    rates = RATES
    for n in range(14):
        if n == 7:
            rates = Rates(rub_per={"USD": 95.0, "EUR": 90.0})  # the dollar moves: every stored RUB price with it
        listing = []
        for name in names:
            r = rng.random()
            if n and r < 0.06:
                continue  # not listed this time
            if n and r < 0.2:
                prices[name] = round(prices[name] * rng.choice((0.7, 0.99, 1.3)), 2)
            listing.append((name, prices[name], 0 if n and rng.random() < 0.05 else None))
        if n in (4, 9):
            names.append(f"new{n}")
            prices[f"new{n}"] = 2.5
        results = {}
        for path, poll in paths.items():
            offers = [offer(name, price, available=avail, provider=path, **shape(name))
                      for name, price, avail in listing]
            events = await record_poll(sm, poll(offers), rates=rates, cache=cache if path == "cached" else None)
            results[path] = [(e.kind, e.offer.sku, e.old_price, e.new_price, e.new_price_rub, e.new_price_usd)
                             for e in events]
        ref_offers = [offer(name, price, available=avail, **shape(name)) for name, price, avail in listing]
        states, ref_events = detect_changes(reference, ref_offers, baseline=n == 0, rates=rates)  # type: ignore[arg-type]
        reference = dict(states)
        expected = [(e.kind, e.offer.sku, e.old_price, e.new_price, e.new_price_rub, e.new_price_usd)
                    for e in ref_events]
        assert results["cached"] == expected, f"poll {n}"
        assert results["cold"] == expected, f"poll {n}"

    for path in paths:
        async with sm() as s:
            stored = {row.sku: (row.ref_price, row.in_stock, row.missing, row.price, row.available,
                                row.price_per_gpu_hour_rub, row.price_per_gpu_hour_usd)
                      for row in (await s.scalars(select(CurrentOffer).where(CurrentOffer.provider == path))).all()}
        assert stored == {state.offer.sku: (state.price, state.in_stock, state.missing, state.offer.price,
                                            state.offer.available, *normalised(state.offer, rates))
                          for state in reference.values()}, path  # type: ignore[attr-defined]


async def test_the_state_cache_loads_nothing_between_own_polls_and_never_serves_another_writers_state(
        sm: async_sessionmaker[AsyncSession]) -> None:
    """What the ingest process keeps between its polls (`StateCache`): its second poll diffs against its own state,
    loading nothing; after another writer (a previous leader) recorded a poll of the same provider it reloads and
    reports exactly what changed since that poll, nothing twice; a sell-out after the hysteresis goes through it."""
    from storage.ingest import StateCache

    cache = StateCache()
    poll = Poller()
    many = [offer(f"s{i}", 2.0 + i / 1000) for i in range(300)]
    assert await record_poll(sm, poll(many), rates=RATES, cache=cache) == []  # the baseline
    changed = [offer("s0", 1.0), *many[1:], offer("new", 3.0)]
    events = await record_poll(sm, poll(changed), rates=RATES, cache=cache)
    assert kinds(events) == [("appeared", "new"), ("price_drop", "s0")]
    assert cache.hits == 1
    async with sm() as s:
        s0 = await s.get(CurrentOffer, offer("s0").key)
        assert s0 is not None and s0.price == 1.0

    foreign = [*changed, offer("other", 5.0)]
    assert kinds(await record_poll(sm, poll(foreign), rates=RATES)) == [("appeared", "other")]  # another writer
    events = await record_poll(sm, poll([*foreign, offer("third", 6.0)]), rates=RATES, cache=cache)
    assert kinds(events) == [("appeared", "third")]
    assert cache.hits == 1  # reloaded, not served from the stale copy

    rest = [o for o in [*foreign, offer("third", 6.0)] if o.sku != "s5"]
    assert await record_poll(sm, poll(rest), rates=RATES, cache=cache) == []
    events = await record_poll(sm, poll(rest), rates=RATES, cache=cache)
    assert [(e.kind, e.offer.sku) for e in events] == [(EventKind.SOLD_OUT, "s5")]
    async with sm() as s:
        s5 = (await s.scalars(select(CurrentOffer).where(CurrentOffer.sku == "s5"))).one()
        assert s5.in_stock is False


async def test_a_listing_with_its_own_vat_terms_is_not_rewritten_from_loaded_rows(
        sm: async_sessionmaker[AsyncSession]) -> None:
    """With the state loaded from the database each poll (no state cache), a listing with its own VAT terms (which
    its row's columns cannot hold) is not written again while it stays the same; its terms changing writes its
    new prices, and so does losing them (the provider's terms then: HOSTKEY adds 22 %)."""
    from storage.ingest import normalised

    poll = Poller("hostkey")
    own = offer("own-vat", 300.0, provider="hostkey", currency="RUB").model_copy(
        update={"vat_rate": 0.1, "vat_included": False})
    plain = offer("plain", 250.0, provider="hostkey", currency="RUB")

    async def stored_prices() -> tuple[float | None, float | None]:
        async with sm() as s:
            row = await s.scalar(select(CurrentOffer).where(CurrentOffer.key == own.key))
        assert row is not None
        return row.price_per_gpu_hour_rub, row.price_per_gpu_hour_usd

    await record_poll(sm, poll([own, plain]), rates=RATES)
    for _ in range(3):
        written: dict[int, set[str]] = {}
        assert await record_poll(sm, poll([own, plain]), rates=RATES, written=written) == []
        assert list(written.values()) == [set()]
    assert await stored_prices() == normalised(own, RATES)
    for listing in (own.model_copy(update={"vat_rate": 0.2}), own.model_copy(update={"vat_rate": None,
                                                                                          "vat_included": None})):
        written = {}
        await record_poll(sm, poll([listing, plain]), rates=RATES, written=written)
        assert list(written.values()) == [{own.key}]
        assert await stored_prices() == normalised(listing, RATES)
        written = {}
        assert await record_poll(sm, poll([listing, plain]), rates=RATES, written=written) == []
        assert list(written.values()) == [set()]


async def test_unchanged_listings_are_skipped_once_their_stored_prices_are_re_checked(
        sm: async_sessionmaker[AsyncSession]) -> None:
    """After the dollar moves, every listing's normalised prices are rewritten once (no event); the next poll then
    skips each unchanged listing before change detection, its stored prices re-checked against the poll's factors:
    RUB prices with the provider's VAT (HOSTKEY adds 22 %, immers.cloud includes it), monthly, several GPUs, euros,
    and a listing with its own VAT terms (which a loaded row cannot hold: it alone takes the long way there). Both
    the rows loaded from the database and the state cache's copy."""
    from core.changes import dedupe
    from storage.ingest import StateCache, _load_stored, _Pricing, _what_changed, normalised

    def listing(provider: str) -> list[Offer]:
        return [offer("rub-month", 90_000.0, provider=provider, currency="RUB", period=Period.MONTH, count=2),
                offer("rub-hour", 251.3, provider=provider, currency="RUB"),
                offer("eur", 3.1, provider=provider, currency="EUR", count=4),
                offer("usd", 2.2, provider=provider),
                offer("own-vat", 300.0, provider=provider, currency="RUB").model_copy(
                    update={"vat_rate": 0.1, "vat_included": False})]

    moved = Rates(rub_per={"USD": 95.0, "EUR": 90.0})
    for provider, cache, vat in (("hostkey", None, (0.22, False)), ("immers", StateCache(), (0.22, True))):
        poll, offers = Poller(provider), listing(provider)
        assert [o.vat for o in offers][:2] == [vat] * 2  # the provider's terms (core.providers), no override
        await record_poll(sm, poll(offers), rates=RATES, cache=cache)
        written: dict[int, set[str]] = {}
        assert await record_poll(sm, poll(offers), rates=moved, cache=cache, written=written) == []
        assert list(written.values()) == [{o.key for o in offers}], provider  # every row's prices moved
        async with sm() as s:
            stored = {row.sku: (row.price_per_gpu_hour_rub, row.price_per_gpu_hour_usd)
                      for row in (await s.scalars(select(CurrentOffer).where(CurrentOffer.provider == provider)))}
        assert stored == {o.sku: normalised(o, moved) for o in offers}, provider

        written.clear()
        assert await record_poll(sm, poll(offers), rates=moved, cache=cache, written=written) == []
        [(run_id, keys)] = written.items()
        # Nothing written, on the cold path too: the listing with its own VAT terms, which its row's columns cannot
        # hold, matches its loaded row by the prices only its terms give.
        assert keys == set(), provider
        if cache is None:
            async with sm() as s:
                state = await _load_stored(s, provider)
        else:
            cached = cache.get(provider, run_id)
            assert cached is not None
            state = cached
        # The factors the stored prices were written with unknown: each listing's prices are re-checked.
        state.factors = None
        before_of, changed = _what_changed(dedupe(offers), state, _Pricing(moved))
        assert changed == [] and before_of == {}, provider


async def test_the_poll_writers_sqlite_page_cache_is_its_own(tmp_path: Path) -> None:
    """The ingest child's engine holds storage.ingest.WRITER_CACHE_MB of SQLite pages per connection (a poll's
    working set); every other engine keeps SQLite's default."""
    from gpuradar.ingest_process import ChildConfig, _Child
    from storage.ingest import WRITER_CACHE_MB

    url = f"sqlite+aiosqlite:///{tmp_path}/cache.db"
    plain = make_engine(url)
    child = _Child(ChildConfig(url))
    try:
        async with plain.connect() as conn:
            assert (await conn.execute(text("PRAGMA cache_size"))).scalar_one() == -2000
        async with child.engine.connect() as conn:
            assert (await conn.execute(text("PRAGMA cache_size"))).scalar_one() == -1024 * WRITER_CACHE_MB
    finally:
        await plain.dispose()
        await child.engine.dispose()
