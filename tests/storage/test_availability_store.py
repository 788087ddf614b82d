"""Availability aggregates kept by ingest (storage/availability.py through storage.ingest.record_poll) on a real
migrated database (SQLite, and PostgreSQL with TEST_DATABASE_URL): a synthetic history with a known answer, a gap
with a restart in it, a clock set back, retention's cut-off, cards merged across regions under a cap."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from core.availability import group_key
from core.offers import Offer, Rates
from core.polls import PollResult, PollStatus
from storage.availability import card_stats, offer_stats, prune_availability, series_stats
from storage.availability_tables import AvailabilityChange, AvailabilityCoverage, AvailabilitySeries
from storage.db import make_engine, make_sessionmaker
from storage.ingest import StateCache, record_poll
from storage.offer_tables import CurrentOffer

T0 = datetime(2026, 11, 1, tzinfo=UTC)
STEP = timedelta(minutes=15)
RATES = Rates(rub_per={"USD": 80.0})
M = 60.0


def offer(sku: str, *, in_stock: bool, price: float, location: str = "US", gpu: str = "h100-sxm") -> Offer:
    return Offer(provider="cloudx", sku=sku, gpu=gpu, gpu_name=gpu.upper(), gpu_count=1, price=price,
                 currency="USD", in_stock=in_stock, location=location)


def snapshot(k: int) -> list[Offer]:
    """Poll k: 'a' (H100, US) in stock for two polls of every twelve; 'b' (H100, EU, dearer) and a filler always."""
    return [offer("a", in_stock=k % 12 in (2, 3), price=2.0),
            offer("b", in_stock=True, price=3.0, location="EU"),
            offer("f", in_stock=True, price=1.0, gpu="a100-80gb")]


def at(k: float) -> datetime:
    return T0 + k * STEP


async def poll(sm: async_sessionmaker[AsyncSession], k: int, *, cache: StateCache | None,
               finished: datetime | None = None, offers: list[Offer] | None = None) -> None:
    start = at(k)
    await record_poll(sm, PollResult(provider="cloudx", status=PollStatus.OK, offers=offers or snapshot(k),
                                     started_at=start, finished_at=finished or start + timedelta(seconds=1)),
                      rates=RATES, hysteresis=1, cache=cache)


@pytest.fixture
async def sm(migrated_database_url: str) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    engine = make_engine(migrated_database_url)
    yield make_sessionmaker(engine)
    await engine.dispose()


async def history(sm: async_sessionmaker[AsyncSession]) -> None:
    """Polls every 15 min for 28 h, none from poll 60 to 79 (five hours: ingest down), then a restart."""
    first = StateCache()
    for k in range(60):
        await poll(sm, k, cache=first)
    for k in range(80, 84):
        await poll(sm, k, cache=None)  # a writer without a state cache (the command line, a replica)
    second = StateCache()
    for k in range(84, 112):
        await poll(sm, k, cache=second)


async def test_known_history(sm: async_sessionmaker[AsyncSession]) -> None:
    await history(sm)
    now = at(111) + timedelta(minutes=2)
    a = offer("a", in_stock=True, price=2.0)
    async with sm() as s:
        stats = (await offer_stats(s, [a], now=now))[a.key]
        coverage = (await s.execute(select(AvailabilityCoverage.start, AvailabilityCoverage.end)
                                    .order_by(AvailabilityCoverage.id))).all()
    assert [(c.start, c.end) for c in coverage] == [(at(0) + timedelta(seconds=1), at(59) + timedelta(seconds=1)),
                                                    (at(80) + timedelta(seconds=1), at(111) + timedelta(seconds=1))]
    w = stats.window(7)
    assert stats.key == group_key(a) and stats.region == "US"
    assert w.observed == 90 * 15 * M  # the five silent hours are not observed time
    assert w.in_stock == (7 * 30 + 15) * M  # seven whole stays and the one still going (its first 15 min)
    assert w.appeared == 8
    assert w.episodes == 7 and w.median_stay == 30 * M and w.p90_stay == 30 * M
    assert w.comebacks == 6 and w.median_comeback == 150 * M  # none measured across the gap
    assert w.now_in_stock is True and w.price_now == 2.0 and w.price_min == 2.0
    assert w.state_since == (at(110) + timedelta(seconds=1)).timestamp()
    assert stats.window(30).appeared == 8
    await incremental_equals_a_rebuild(sm)
    await cards_under_a_cap(sm)


async def incremental_equals_a_rebuild(sm: async_sessionmaker[AsyncSession]) -> None:
    async with sm() as s:
        keys = set((await s.scalars(select(AvailabilitySeries.key))).all())
        # a series' state is its latest change (by time, then id)
        stored = {r.series_key: (r.in_stock, r.price_usd) for r in (await s.execute(
            select(AvailabilityChange.series_key, AvailabilityChange.in_stock, AvailabilityChange.price_usd)
            .order_by(AvailabilityChange.at, AvailabilityChange.id))).all()}
        changes = int(await s.scalar(select(func.count()).select_from(AvailabilityChange)) or 0)
    assert stored == {"cloudx|h100-sxm|1|US|hourly": (True, 2.0), "cloudx|h100-sxm|1|EU|hourly": (True, 3.0),
                      "cloudx|h100-sxm|1|*|hourly": (True, 2.0), "cloudx|a100-80gb|1|US|hourly": (True, 1.0),
                      "cloudx|a100-80gb|1|*|hourly": (True, 1.0)}
    assert keys == set(stored)
    # one row per move only: group 'a' 1 + 2 per stay (8 stays, the last still open) ; the family's price moves
    # with it (3.0 <-> 2.0); 'b' and the filler: their first record
    assert changes == (1 + 2 * 8 - 1) + (1 + 2 * 8 - 1) + 3


async def cards_under_a_cap(sm: async_sessionmaker[AsyncSession]) -> None:
    now = at(111) + timedelta(minutes=2)
    async with sm() as s:
        capped = await card_stats(s, ["h100-sxm", "h100-pcie"], 1, cap=2.5, days=30, now=now)
        any_price = await card_stats(s, ["h100-sxm"], 1, days=30, now=now)
        rub = await card_stats(s, ["h100-sxm"], 1, cap=150.0, currency="RUB", days=30, now=now)
    assert capped.providers == ("cloudx",)
    assert capped.window.in_stock == (7 * 30 + 15) * M and capped.window.median_comeback == 150 * M
    assert any_price.window.in_stock == any_price.window.observed  # 'b' never left
    assert rub.window.in_stock == 0.0 and rub.window.price_now is None  # $2 = 160 RUB: over a 150 RUB cap
    await cards_at_places_and_providers(sm)


async def cards_at_places_and_providers(sm: async_sessionmaker[AsyncSession]) -> None:
    """A region reads the places it holds (a family is in stock wherever any of its places is): the US's H100 is
    'a', which comes and goes; the EU's is 'b', which never left. Providers keep theirs only."""
    now = at(111) + timedelta(minutes=2)
    a_stays = (7 * 30 + 15) * M
    async with sm() as s:
        for region in ("US", "@US", "@NA"):
            us = await card_stats(s, ["h100-sxm"], 1, days=30, now=now, region=region)
            assert us.window.in_stock == a_stays and us.providers == ("cloudx",), (region, us)
        eu = await card_stats(s, ["h100-sxm"], 1, days=30, now=now, region="EU")
        assert eu.window.in_stock == eu.window.observed > a_stays
        both = await card_stats(s, ["h100-sxm"], 1, days=30, now=now, region="@US,DE")  # none in Germany
        assert both.window.in_stock == a_stays
        asia = await card_stats(s, ["h100-sxm"], 1, days=30, now=now, region="@JP")
        assert asia.window.share is None and asia.providers == ()
        theirs = await card_stats(s, ["h100-sxm"], 1, days=30, now=now, providers=["cloudx"])
        assert theirs.window.in_stock == theirs.window.observed
        others = await card_stats(s, ["h100-sxm"], 1, days=30, now=now, providers=["runpod", "vastai"])
        assert others.window.share is None and others.providers == ()


async def test_clock_set_back_counts_no_time_twice(sm: async_sessionmaker[AsyncSession]) -> None:
    cache = StateCache()
    for k in range(4):
        await poll(sm, k, cache=cache)
    # poll 4 is stamped 40 minutes before poll 3 (the host's clock was set back); 'a' sold out in it
    await poll(sm, 4, cache=cache, finished=at(3) - timedelta(minutes=40))
    await poll(sm, 5, cache=cache, finished=at(3) + timedelta(minutes=5))
    async with sm() as s:
        rows = (await s.execute(select(AvailabilityChange.at).where(
            AvailabilityChange.series_key == "cloudx|h100-sxm|1|US|hourly").order_by(AvailabilityChange.id))).all()
        cov = (await s.execute(select(AvailabilityCoverage.start, AvailabilityCoverage.end,
                                      AvailabilityCoverage.polls))).all()
        stats = (await series_stats(s, keys=["cloudx|h100-sxm|1|US|hourly"], now=at(3) + timedelta(minutes=6)))[0]
    times = [r.at for r in rows]
    assert times == sorted(times)  # never out of order
    assert times[-1] == at(3) + timedelta(seconds=1)  # the sold-out counts at the last time already observed
    assert cov == [(at(0) + timedelta(seconds=1), at(3) + timedelta(minutes=5), 6)]
    w = stats.window(7)
    assert w.episodes == 1 and w.median_stay == 15 * M  # in stock from poll 2 to the last observed time


async def test_retention_keeps_the_state_in_force(sm: async_sessionmaker[AsyncSession]) -> None:
    await history(sm)
    now = at(111) + timedelta(minutes=2)
    key = "cloudx|h100-sxm|1|US|hourly"
    async with sm() as s:
        before = (await series_stats(s, keys=[key], now=now))[0].window(7)
    # A retention pass as if a month had gone by since poll 5 (the stay from poll 2 to 4 is then older).
    deleted = await prune_availability(sm, at(5) + timedelta(days=31))
    assert deleted > 0
    async with sm() as s:
        after = (await series_stats(s, keys=[key], now=now))[0].window(7)
        kept_old = (await s.execute(select(AvailabilityChange.series_key, func.count()).where(
            AvailabilityChange.at < at(5)).group_by(AvailabilityChange.series_key))).all()
    assert all(n == 1 for _, n in kept_old)  # each series keeps the change in force at the cut
    # The stay from poll 2 to 4 is gone with its rows; what remains starts from the state in force at the cut
    # (sold out at poll 4), and only the time since then counts as observed: never more than the kept rows hold.
    assert (after.appeared, after.episodes) == (before.appeared - 1, before.episodes - 1)
    assert (after.median_stay, after.median_comeback) == (before.median_stay, before.median_comeback)
    assert after.observed == before.observed - 4 * 15 * M


async def test_a_cap_is_on_the_whole_configuration_unless_per_gpu(sm: async_sessionmaker[AsyncSession]) -> None:
    """H100 × 2 at $4/h ($2 per GPU-hour) always in stock, H100 × 1 at $2.50/h in stock from poll 4 on."""
    def offers(k: int) -> list[Offer]:
        return [Offer(provider="cloudx", sku="two", gpu="h100-sxm", gpu_name="H100", gpu_count=2, price=4.0,
                      currency="USD", in_stock=True, location="US"),
                Offer(provider="cloudx", sku="one", gpu="h100-sxm", gpu_name="H100", gpu_count=1, price=2.5,
                      currency="USD", in_stock=k >= 4, location="US")]

    cache = StateCache()
    for k in range(8):
        await poll(sm, k, cache=cache, offers=offers(k))
    now = at(7) + timedelta(minutes=1)
    observed = 7 * 15 * M
    async with sm() as s:
        whole_5 = await card_stats(s, ["h100-sxm"], 2, cap=5.0, cap_per_gpu=False, now=now)
        whole_3 = await card_stats(s, ["h100-sxm"], 2, cap=3.0, cap_per_gpu=False, now=now)
        gpu_3 = await card_stats(s, ["h100-sxm"], 2, cap=3.0, cap_per_gpu=True, now=now)
        # any count (a workload's fitting configurations): $3/h for the whole configuration is met by the × 1
        # alone (from poll 4), priced per GPU-hour at its $2.50; $3 per GPU-hour by both, the cheapest $2
        any_whole = await card_stats(s, ["h100-sxm"], None, cap=3.0, cap_per_gpu=False, now=now)
        any_gpu = await card_stats(s, ["h100-sxm"], None, cap=3.0, cap_per_gpu=True, now=now)
    assert whole_5.window.observed == observed and whole_5.window.in_stock == observed
    assert whole_5.window.price_now == 2.0 and not whole_5.cap_per_gpu
    assert whole_3.window.in_stock == 0.0 and whole_3.window.now_in_stock is False
    assert gpu_3.window.in_stock == observed
    assert any_whole.window.in_stock == 3 * 15 * M and any_whole.window.price_now == 2.5
    assert any_gpu.window.in_stock == observed and any_gpu.window.price_now == 2.0


async def test_a_replicas_held_changes_give_the_same_figures(sm: async_sessionmaker[AsyncSession]) -> None:
    """storage.availability_cache: the figures from held changes refreshed by a small read equal a fresh read's,
    as polls come in (one of them committed after a later-stamped one), and after retention."""
    from storage.availability_cache import ChangeCache

    loads: list[int] = []
    cache = ChangeCache(on_load=loads.append)  # told what each question loaded afresh (the application freezes it)
    cards = ["h100-sxm", "h100-pcie"]

    async def both(now: datetime, **kw: object) -> None:
        async with sm() as s:
            fresh = await card_stats(s, cards, 1, now=now, **kw)  # type: ignore[arg-type]
            held = await card_stats(s, cards, 1, now=now, cache=cache, **kw)  # type: ignore[arg-type]
        assert held == fresh

    await history(sm)
    await both(at(111) + timedelta(minutes=2))
    assert loads == [len(cache)] and len(cache) > 0  # the first question loads the window; later ones refresh it
    await both(at(111) + timedelta(minutes=2), cap=2.5)
    await both(at(111) + timedelta(minutes=2), region="US")  # a place's series: loaded once, then held too
    await both(at(111) + timedelta(minutes=2), region="EU", providers=["cloudx"])
    cache_first = StateCache()
    loaded = len(loads)
    for k in range(112, 118):
        await poll(sm, k, cache=cache_first)
        await both(at(k) + timedelta(minutes=2))
        await both(at(k) + timedelta(minutes=2), cap=2.5)
        await both(at(k) + timedelta(minutes=2), region="US")
    assert len(loads) == loaded  # the polls' new rows came by refreshes, not loads
    # A row stamped 20 minutes before the latest held one, committed after it (another writer's late poll).
    async with sm() as s, s.begin():
        s.add(AvailabilityChange(series_key="cloudx|h100-sxm|1|*|hourly", at=at(117) - timedelta(minutes=20),
                                 in_stock=False, price_usd=None, price_rub=None))
    await both(at(117) + timedelta(minutes=2))
    assert len(cache) > 0
    await prune_availability(sm, at(5) + timedelta(days=31))
    await both(at(117) + timedelta(minutes=2))


async def test_stamps_in_another_zone_and_a_clock_jumping_ahead(sm: async_sessionmaker[AsyncSession]) -> None:
    """Polls stamped in a local zone (UTC+3) give the figures UTC stamps give; a poll stamped six hours ahead (the
    host's clock jumped forward, then was put right) opens a stretch of its own: the jumped-over hours are not
    observed, and the polls after it, stamped earlier, add no observed time until real time catches up."""
    from datetime import timezone

    msk = timezone(timedelta(hours=3))
    cache = StateCache()
    for k in range(12):
        start = at(k).astimezone(msk)
        await record_poll(sm, PollResult(provider="cloudx", status=PollStatus.OK, offers=snapshot(k),
                                         started_at=start, finished_at=start), rates=RATES, hysteresis=1, cache=cache)
    key = "cloudx|h100-sxm|1|US|hourly"
    async with sm() as s:
        local = (await series_stats(s, keys=[key], now=at(11)))[0].window(7)
    assert local.observed == 11 * 15 * M and local.episodes == 1 and local.median_stay == 30 * M
    await poll(sm, 12, cache=cache, finished=at(12) + timedelta(hours=6))  # the jump
    for k in range(13, 16):
        await poll(sm, k, cache=cache)  # stamped before the jump's stamp
    async with sm() as s:
        cov = (await s.execute(select(AvailabilityCoverage.start, AvailabilityCoverage.end)
                               .order_by(AvailabilityCoverage.id))).all()
        later = (await series_stats(s, keys=[key], now=at(16)))[0].window(7)
    assert cov == [(at(0), at(11)), (at(12) + timedelta(hours=6), at(12) + timedelta(hours=6))]
    assert later.observed == local.observed  # nothing claimed for the jumped-over hours or the polls after them
    assert later.now_in_stock is None  # and "now" is not claimed from a stamp in the future


async def test_two_hours_of_history_make_no_usual_claim(sm: async_sessionmaker[AsyncSession]) -> None:
    """A group seen for two hours, in and out of stock every 15 minutes: its figures are exact, and no line says
    what it 'usually' does (not the alert's, not the short-lived mark)."""
    from bot.availability_view import alert_line, short_lived
    from core.availability import typical_stay

    cache = StateCache()
    for k in range(9):  # two hours: polls at 0, 15, ..., 120 minutes
        await poll(sm, k, cache=cache, offers=[offer("a", in_stock=k % 2 == 1, price=2.0)])
    a = offer("a", in_stock=True, price=2.0)
    async with sm() as s:
        week = (await offer_stats(s, [a], now=at(8) + timedelta(minutes=1)))[a.key].window(7)
    assert week.observed == 8 * 15 * M and week.appeared == 4
    assert week.episodes == 4 and week.median_stay == 15 * M  # four complete 15-minute stays, measured
    assert typical_stay(week) is None and not week.enough
    assert alert_line("en", week) is None and alert_line("ru", week) is None and not short_lived(week)


async def test_a_carried_index_writes_what_a_rebuilt_one_does(sm: async_sessionmaker[AsyncSession]) -> None:
    """The ingest child carries its series index and the provider's current stretch between polls (one-statement
    upkeep); a writer without a state cache rebuilds both every poll. Fed the same churn (groups of one and of
    several configurations, prices moving, stock flipping, offers vanishing and new), and a retention pass that
    deletes the held stretch, the two write the same change rows and coverage."""
    import random

    rng = random.Random(7)
    listing = {f"s{i}": (rng.choice(["US", "EU", "JP"]), rng.choice(["h100-sxm", "a100-80gb"]),
                         round(rng.uniform(1, 3), 2), True) for i in range(40)}
    warm = StateCache()
    for k in range(30):
        for sku in rng.sample(sorted(listing), 8):
            region, gpu, price, in_stock = listing[sku]
            r = rng.random()
            listing[sku] = (region, gpu, round(price * rng.choice([0.8, 1.25]), 2) if r < 0.5 else price,
                            not in_stock if r >= 0.5 else in_stock)
        if k % 7 == 3:
            listing.pop(rng.choice(sorted(listing)))
            listing[f"n{k}"] = (rng.choice(["US", "EU"]), "h100-sxm", 2.0, True)
        for provider, cache in (("warm", warm), ("cold", None)):
            offers = [Offer(provider=provider, sku=sku, gpu=gpu, gpu_name=gpu.upper(), gpu_count=1, price=price,
                            currency="USD", in_stock=in_stock, location=region)
                      for sku, (region, gpu, price, in_stock) in sorted(listing.items())]
            await record_poll(sm, PollResult(provider=provider, status=PollStatus.OK, offers=offers,
                                             started_at=at(k), finished_at=at(k) + timedelta(seconds=1)),
                              rates=RATES, hysteresis=1, cache=cache)
        if k == 20:  # a retention pass that takes the current stretch (as if the polls were a month old)
            assert await prune_availability(sm, at(k) + timedelta(days=32)) > 0

    async def written(provider: str) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
        async with sm() as s:
            changes = (await s.execute(
                select(AvailabilityChange.series_key, AvailabilityChange.at, AvailabilityChange.in_stock,
                       AvailabilityChange.price_usd, AvailabilityChange.price_rub)
                .where(AvailabilityChange.series_key.like(f"{provider}|%")).order_by(AvailabilityChange.id))).all()
            coverage = (await s.execute(
                select(AvailabilityCoverage.start, AvailabilityCoverage.end, AvailabilityCoverage.polls)
                .where(AvailabilityCoverage.provider == provider).order_by(AvailabilityCoverage.id))).all()
        return ([(key.split("|", 1)[1], *rest) for key, *rest in changes], [tuple(r) for r in coverage])

    warm_rows, cold_rows = await written("warm"), await written("cold")
    # the held stretch was deleted: the next poll opens a new one (and the carried one is not updated in vain)
    assert warm_rows[0] and [start for start, _, _ in warm_rows[1]] == [at(21) + timedelta(seconds=1)]
    assert sorted(warm_rows[0], key=repr) == sorted(cold_rows[0], key=repr)
    assert warm_rows[1] == cold_rows[1]


def churn(provider: str, polls: int, seed: int = 3) -> list[list[Offer]]:
    """Polls of a small store with every kind of move: groups of one and of several configurations, one card the
    catalog cannot name, spot and hourly, and per poll some prices moved, some sold out or back, some vanished
    (and back later), some new."""
    import random

    rng = random.Random(seed)
    cards = [("h100-sxm", "H100"), ("a100-80gb", "A100"), (None, "WEIRD-GPU")]

    def make(i: int) -> Offer:
        gpu, name = cards[i % 3]
        return Offer(provider=provider, sku=f"s{i}", gpu=gpu, gpu_name=name, gpu_count=1 + (i // 3) % 2,
                     price=round(rng.uniform(1.0, 4.0), 2), currency="USD", in_stock=True,
                     location=("US", "EU", "")[(i // 6) % 3], billing=("hourly", "spot")[(i // 18) % 2])

    listed = {i: make(i) for i in range(40)}
    gone: dict[int, Offer] = {}
    fresh = 40
    out = []
    for _ in range(polls):
        out.append(list(listed.values()))
        for i in list(listed):
            r = rng.random()
            o = listed[i]
            if r < 0.08:
                gone[i] = listed.pop(i)
            elif r < 0.2:
                listed[i] = o.model_copy(update={"price": round(o.price * rng.choice((0.8, 1.25)), 2)})
            elif r < 0.3:
                listed[i] = o.model_copy(update={"in_stock": not o.in_stock})
        for i in list(gone):
            if rng.random() < 0.3:
                listed[i] = gone.pop(i)
        for _ in range(rng.randrange(3)):
            listed[fresh] = make(fresh)
            fresh += 1
    return out


async def test_the_same_history_with_or_without_the_state_cache(sm: async_sessionmaker[AsyncSession]) -> None:
    """One store's polls recorded three ways — by one process keeping its state cache, by writers that load the
    state each poll (the upkeep then reads and recounts only the series that moved), and mixed with restarts —
    write the same series and change rows; and each series' state is what its configurations' rows hold."""
    ways = {"kept": lambda k: kept, "loaded": lambda k: None,
            "mixed": lambda k: None if k % 3 == 1 else (mixed[0] if k < 12 else mixed[1])}
    kept, mixed = StateCache(), (StateCache(), StateCache())
    for provider, cache_of in ways.items():
        for k, offers in enumerate(churn(provider, 24)):
            start = at(k)
            await record_poll(sm, PollResult(provider=provider, status=PollStatus.OK, offers=offers,
                                             started_at=start, finished_at=start + timedelta(seconds=1)),
                              rates=RATES, hysteresis=1, cache=cache_of(k))
    async with sm() as s:
        series = (await s.execute(select(AvailabilitySeries.key, AvailabilitySeries.first_seen))).all()
        changes = (await s.execute(
            select(AvailabilityChange.series_key, AvailabilityChange.at, AvailabilityChange.in_stock,
                   AvailabilityChange.price_usd, AvailabilityChange.price_rub)
            .order_by(AvailabilityChange.series_key, AvailabilityChange.at, AvailabilityChange.id))).all()
        rows = (await s.execute(select(CurrentOffer))).scalars().all()

    def by_way(items: list[Any]) -> dict[str, list[tuple[Any, ...]]]:
        out: dict[str, list[tuple[Any, ...]]] = {way: [] for way in ways}
        for key, *rest in items:
            way, tail = key.split("|", 1)
            out[way].append((tail, *rest))
        return out

    written = by_way([tuple(c) for c in changes])
    assert len(written["kept"]) > 100  # the churn moved series on most polls
    assert written["loaded"] == written["kept"] and written["mixed"] == written["kept"]
    firsts = {way: sorted(v) for way, v in by_way([tuple(r) for r in series]).items()}
    assert firsts["loaded"] == firsts["kept"] and firsts["mixed"] == firsts["kept"]
    # no change row repeats its series' previous state, and the latest is what the configurations hold now
    latest: dict[str, tuple[Any, ...]] = {}
    for key, _at, *state in changes:
        assert latest.get(key) != tuple(state), key
        latest[key] = tuple(state)
    expected: dict[str, list[Any]] = {}
    for row in rows:
        card = row.gpu if row.gpu is not None else f"?{row.gpu_name}"
        for region in (row.location or "", "*"):
            _stock, usd, rub = expected.setdefault("|".join((row.provider, card, str(row.gpu_count), region,
                                                            row.billing)), [False, None, None])
            if row.in_stock:
                usd = row.price_per_gpu_hour_usd if usd is None else min(usd, row.price_per_gpu_hour_usd)
                rub = row.price_per_gpu_hour_rub if rub is None else min(rub, row.price_per_gpu_hour_rub)
                expected["|".join((row.provider, card, str(row.gpu_count), region, row.billing))] = [True, usd, rub]
    assert latest == {k: tuple(v) for k, v in expected.items()}


async def test_held_changes_read_only_what_moved_and_stay_a_fresh_reads(migrated_database_url: str) -> None:
    """storage.availability_cache's refresh: one statement per question, whether nothing moved or a poll added rows
    (no held row read again; the series list and the coverage come with the changes' tallies); a series that moves
    after days, a row committed late under a smaller id (read further, then the whole tail), a writer's clock set
    ahead and a new series each leave the figures a fresh read's."""
    from sqlalchemy import delete, event, insert, update

    from storage.availability_cache import ChangeCache

    engine = make_engine(migrated_database_url)
    sm = make_sessionmaker(engine)
    statements: list[str] = []
    every: list[str] = []

    @event.listens_for(engine.sync_engine, "before_cursor_execute")
    def _count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        every.append(statement)
        if "availability_changes" in statement:
            statements.append(statement)

    now = T0 + timedelta(days=10)
    providers = ["steady", "busy1", "busy2"]
    try:
        async with sm() as s, s.begin():
            # Ids to commit late under: taken first, freed once larger ones are taken (neither database gives them
            # out again).
            spare = [(await s.execute(insert(AvailabilityChange).values(
                series_key="spare", at=T0, in_stock=False).returning(AvailabilityChange.id))).scalar_one()
                for _ in range(2)]
            for p in providers:
                key = f"{p}|h100-sxm|1|*|hourly"
                await s.execute(insert(AvailabilitySeries).values(
                    key=key, provider=p, card="h100-sxm", gpu_count=1, region="*", billing="hourly",
                    first_seen=now - timedelta(days=9)))
                await s.execute(insert(AvailabilityCoverage).values(
                    provider=p, start=now - timedelta(days=9), end=now, polls=1000))
                if p == "steady":  # one change five days ago, nothing since
                    rows = [(now - timedelta(days=5), True, 2.0)]
                else:
                    rows = [(now - timedelta(days=9) + k * timedelta(minutes=10), k % 7 < 4, 1.5 + (k % 5) / 10)
                            for k in range(9 * 144)]
                await s.execute(insert(AvailabilityChange), [
                    {"series_key": key, "at": t, "in_stock": i, "price_usd": v if i else None,
                     "price_rub": v * 80 if i else None} for t, i, v in rows])
            await s.execute(delete(AvailabilityChange).where(AvailabilityChange.series_key == "spare"))
        cache = ChangeCache()

        async def both(when: datetime, *, first: bool = False) -> int:
            """The figures from held changes equal a fresh read's; the statements the held read ran."""
            async with sm() as s:
                fresh = await card_stats(s, ["h100-sxm"], 1, now=when)
                statements.clear()
                every.clear()
                held = await card_stats(s, ["h100-sxm"], 1, now=when, cache=cache)
            assert held == fresh
            if len(statements) == 1 and not first:
                assert len(every) == 1, every  # the series and the coverage rode on the changes' statement
            return len(statements)

        async def add(provider: str, stamp: datetime, in_stock: bool, *, row_id: int | None = None,
                      polled: datetime | None = None) -> None:
            async with sm() as s, s.begin():
                await s.execute(insert(AvailabilityChange).values(
                    **({"id": row_id} if row_id is not None else {}), series_key=f"{provider}|h100-sxm|1|*|hourly",
                    at=stamp, in_stock=in_stock, price_usd=1.9 if in_stock else None,
                    price_rub=152.0 if in_stock else None))
                await s.execute(update(AvailabilityCoverage).where(AvailabilityCoverage.provider.in_(providers))
                                .values(end=polled or stamp))

        await both(now, first=True)  # the first question loads the window (and reads the series list)
        assert len(cache) > 2 * 9 * 144
        assert await both(now + timedelta(seconds=30)) == 1  # nothing moved: one statement, no row read
        t = now
        for step in range(3):  # polls: the busy series move
            t += timedelta(minutes=10)
            await add("busy1", t, step % 2 == 0)
            await add("busy2", t, step % 2 == 1)
            assert await both(t + timedelta(seconds=5)) == 1  # the new rows came with the tallies
        t += timedelta(minutes=10)
        await add("steady", t, False)  # moves after five days
        assert await both(t + timedelta(seconds=5)) == 1
        # Committed late, stamped 15 minutes back, under an id smaller than every held one: the tallies show it,
        # the rows after the held ids do not hold it, the whole tail is read.
        await add("busy1", t - timedelta(minutes=15), True, row_id=spare[0], polled=t)
        assert await both(t + timedelta(seconds=10)) == 3
        # A writer's clock a day ahead, then rows stamped right again: the floor is held to this replica's clock.
        await add("busy2", t + timedelta(days=1), True, polled=t + timedelta(minutes=1))
        await both(t + timedelta(minutes=1))
        t += timedelta(minutes=10)
        await add("busy1", t, False)
        await add("busy2", t, False)
        assert await both(t + timedelta(seconds=5)) == 1
        assert await both(t + timedelta(seconds=6)) == 1
        # A provider's first H100 series appears: the count shows it, the list is read again, its rows loaded.
        async with sm() as s, s.begin():
            await s.execute(insert(AvailabilitySeries).values(
                key="newcomer|h100-sxm|1|*|hourly", provider="newcomer", card="h100-sxm", gpu_count=1, region="*",
                billing="hourly", first_seen=t))
            await s.execute(insert(AvailabilityCoverage).values(provider="newcomer", start=t, end=t, polls=1))
        await add("newcomer", t, True)
        assert await both(t + timedelta(seconds=7)) > 1
        async with sm() as s:
            assert "newcomer" in (await card_stats(s, ["h100-sxm"], 1, now=t, cache=cache)).providers
        assert await both(t + timedelta(seconds=8)) == 1
    finally:
        await engine.dispose()
