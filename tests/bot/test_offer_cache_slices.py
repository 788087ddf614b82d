"""The offer cache refreshed in slices (issue 26): whatever sequence of changes it is given (offers added, moved to
another price or group, gone; full reloads between), it holds exactly the offers a rebuild from scratch holds, in
the same order, and a reader running between two slices of a refresh sees the state before it or the state after
it, never a mix."""

from __future__ import annotations

import asyncio
import random
from operator import attrgetter

from bot.offer_cache import CachedOffer, OfferCache, OfferChanges

GPUS = ["h100-sxm", "a100-80gb", "rtx-4090", "l40s"]


def cached(rng: random.Random, key: str) -> CachedOffer:
    count = rng.choice([1, 2, 8])
    usd = None if rng.random() < 0.05 else round(rng.uniform(0.2, 4.0), 2)
    rub = None if usd is None or rng.random() < 0.05 else round(usd * 80, 2)
    return CachedOffer(key, "vastai", rng.choice(GPUS), "GPU", count, rng.choice(["US", "DE"]),
                       rng.choice(["hourly", "spot"]), rub, usd, f"https://example.test/{key}",
                       fraction=rng.choice([None, None, 0.5]))


def expected(offers: dict[str, CachedOffer], currency: str) -> list[tuple[CachedOffer, ...]]:
    """The groups as the cache should hold them, worked out here from scratch."""
    price = attrgetter("sort_rub" if currency == "RUB" else "sort_usd", "key")
    groups: dict[object, list[CachedOffer]] = {}
    for o in offers.values():
        groups.setdefault((o.gpu, o.gpu_count, o.fraction, o.billing == "spot"), []).append(o)
    return by_first([tuple(sorted(g, key=price)) for g in groups.values()])


def by_first(groups: list[tuple[CachedOffer, ...]]) -> list[tuple[CachedOffer, ...]]:
    return sorted(groups, key=lambda g: g[0].key)


def view(cache: OfferCache) -> frozenset[tuple[str, float | None]]:
    return frozenset((o.key, o.price_per_gpu_hour_usd) for g in cache.groups("RUB") for o in g)


async def test_refreshes_in_slices_hold_exactly_what_a_rebuild_holds() -> None:
    rng = random.Random(26)
    current: dict[str, CachedOffer] = {}
    answers: list[OfferChanges] = []

    async def loader() -> OfferChanges:
        return answers.pop(0)

    cache = OfferCache(loader)
    cache.budget = 0.0  # hand the loop back after every step: readers run between all of them
    seen: list[frozenset[tuple[str, float | None]]] = []
    stop = asyncio.Event()

    async def reader() -> None:
        while not stop.is_set():
            seen.append(view(cache))
            await asyncio.sleep(0)

    task = asyncio.create_task(reader())
    next_key = 0
    for n in range(25):
        before = frozenset((o.key, o.price_per_gpu_hour_usd) for o in current.values())
        if n % 8 == 0:  # a full reading (a restarted child): everything, nothing kept
            for _ in range(rng.randrange(200, 2500)):
                current[f"k{next_key}"] = cached(rng, f"k{next_key}")
                next_key += 1
            current = dict(rng.sample(sorted(current.items()), k=len(current) * 9 // 10))
            answers.append(OfferChanges(list(current.values()), full=True))
        else:
            gone = rng.sample(sorted(current), k=len(current) // 20)
            for key in gone:
                del current[key]
            changed = [cached(rng, key) for key in rng.sample(sorted(current), k=len(current) // 10)]
            for _ in range(rng.randrange(0, 300)):
                changed.append(cached(rng, f"k{next_key}"))
                next_key += 1
            current.update((o.key, o) for o in changed)
            answers.append(OfferChanges(changed, [*gone, "never-listed"]))
        seen.clear()
        assert await cache.refresh() == len(current)
        after = frozenset((o.key, o.price_per_gpu_hour_usd) for o in current.values())
        assert set(seen) <= {before, after}  # between two slices: the old state, whole
        assert len(cache) == len(current)
        for currency in ("RUB", "USD"):
            assert by_first(cache.groups(currency)) == expected(current, currency)
        assert cache.all() == tuple(sorted(current.values(), key=attrgetter("sort_rub", "key")))
    stop.set()
    await task
    assert cache.version == 25


async def test_a_refresh_from_a_plain_list_replaces_everything() -> None:
    rng = random.Random(3)
    first = [cached(rng, f"a{i}") for i in range(50)]
    second = [cached(rng, f"b{i}") for i in range(30)]
    answers = [first, second]

    async def loader() -> list[CachedOffer]:
        return answers.pop(0)

    cache = OfferCache(loader)
    await cache.refresh()
    assert by_first(cache.groups("USD")) == expected({o.key: o for o in first}, "USD")
    await cache.refresh()
    assert {o.key for o in cache.all()} == {o.key for o in second}


async def test_the_state_swapped_out_is_let_go_without_touching_the_new_one() -> None:
    """A refresh empties the tables of the state it replaced (the last references of replaced offers go a slice at
    a time), never a group the new state shares with it: an incremental refresh of one group keeps the others."""
    rng = random.Random(5)
    first = {f"k{i}": cached(rng, f"k{i}") for i in range(300)}
    answers = [OfferChanges(list(first.values()), full=True)]

    async def loader() -> OfferChanges:
        return answers.pop(0)

    cache = OfferCache(loader)
    await cache.refresh()
    before = {key: cache.groups(currency) for key, currency in (("RUB", "RUB"), ("USD", "USD"))}
    old_tables = cache._by_key, cache._members, cache._groups
    moved = CachedOffer("k0", "vastai", first["k0"].gpu, "GPU", first["k0"].gpu_count, first["k0"].location,
                        first["k0"].billing, 1.0, 0.01, "https://example.test/k0", fraction=first["k0"].fraction)
    answers.append(OfferChanges([moved], []))
    await cache.refresh()
    assert all(not table for table in (old_tables[0], old_tables[1], *old_tables[2].values()))  # emptied
    now = {**first, "k0": moved}
    for currency in ("RUB", "USD"):
        assert by_first(cache.groups(currency)) == expected(now, currency)
        untouched = [g for g in before[currency] if all(o.key != "k0" for o in g)]
        assert all(g in cache.groups(currency) for g in untouched)  # shared, intact
