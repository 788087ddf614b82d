"""In-memory view of the offers in stock, so inline queries (one per keystroke) never wait on the database.

The in-stock set changes only when a poll is ingested, so it is refreshed after each ingest (and on start): with
what changed when the loader can say (the leader's ingest process does), else with every offer; between refreshes
every read is a scan of in-memory groups.
Offers are grouped by (GPU, count) because fitting depends only on that pair: a workload is checked once per
distinct pair, not once per offer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from core.matching import Target
from core.slices import BUDGET, CHUNK, Steps, chunks, run_in_slices


@dataclass(frozen=True, slots=True)
class CachedOffer:
    key: str
    provider: str
    gpu: str | None  # catalog id
    gpu_name: str
    gpu_count: int
    location: str
    billing: str
    price_per_gpu_hour_rub: float | None
    price_per_gpu_hour_usd: float | None
    url: str
    available: int | None = None
    fraction: float | None = None  # share of one card when the offer is a slice of it (vGPU / MIG)
    memory_gb: float | None = None  # per GPU as listed (a slice's label says what it gives)
    # The whole configuration per hour (what the user pays), worked out once: ranking reads it for every offer.
    per_hour_rub: float | None = field(init=False, default=None)
    per_hour_usd: float | None = field(init=False, default=None)
    sort_rub: float = field(init=False, default=float("inf"))  # per_hour_rub, unknown prices last
    sort_usd: float = field(init=False, default=float("inf"))

    def __post_init__(self) -> None:
        rub, usd, n = self.price_per_gpu_hour_rub, self.price_per_gpu_hour_usd, self.gpu_count
        object.__setattr__(self, "per_hour_rub", None if rub is None else rub * n)
        object.__setattr__(self, "per_hour_usd", None if usd is None else usd * n)
        object.__setattr__(self, "sort_rub", float("inf") if rub is None else rub * n)
        object.__setattr__(self, "sort_usd", float("inf") if usd is None else usd * n)

    def per_gpu_hour(self, currency: str) -> float | None:
        return self.price_per_gpu_hour_usd if currency == "USD" else self.price_per_gpu_hour_rub

    def per_hour(self, currency: str) -> float | None:
        return self.per_hour_usd if currency == "USD" else self.per_hour_rub

    def target(self) -> Target:
        """The matchable form core's matcher uses, so "what matches now" agrees with what alerts will say."""
        return Target(self.key, self.provider, self.gpu, self.gpu_count, self.billing, self.location,
                      self.price_per_gpu_hour_rub, self.price_per_gpu_hour_usd, self.fraction)

    @classmethod
    def from_stored(cls, stored: Any) -> CachedOffer:
        """From a `storage.queries.StoredOffer` (the offer as listed plus its normalised prices)."""
        o = stored.offer
        return cls(key=o.key, provider=o.provider, gpu=o.gpu, gpu_name=o.gpu_name, gpu_count=o.gpu_count,
                   location=o.location or "", billing=o.billing.value, url=o.url or "", available=o.available,
                   fraction=o.fraction, memory_gb=o.gpu_memory_gb,
                   price_per_gpu_hour_rub=stored.price_per_gpu_hour_rub,
                   price_per_gpu_hour_usd=stored.price_per_gpu_hour_usd)


@dataclass(frozen=True, slots=True)
class OfferChanges:
    """What a loader may return instead of every offer: those added or changed since its previous answer and the
    keys gone since (`full`: `changed` is every offer, nothing else is kept)."""

    changed: Sequence[CachedOffer]
    gone: Sequence[str] = ()
    full: bool = False


Loader = Callable[[], Awaitable[Iterable[CachedOffer] | OfferChanges]]
GroupKey = tuple[str | None, int, float | None, bool]  # (card, count, slice fraction, spot)
# What `refresh` swaps in: the offers by key, each group's members by key, each group by price per currency.
_State = tuple[dict[str, CachedOffer], dict[GroupKey, dict[str, CachedOffer]],
               dict[str, dict[GroupKey, tuple[CachedOffer, ...]]]]


def _group_key(offer: CachedOffer) -> GroupKey:
    return offer.gpu, offer.gpu_count, offer.fraction, offer.billing == "spot"


class OfferCache:
    """The current in-stock offers, cheapest configuration per hour first, reloaded by `refresh()`.

    A refresh given only what changed (`OfferChanges`, as the leader's ingest process hands over) re-sorts only the
    groups those offers are in: a poll that changes 5 % of the configurations costs the bot's loop that 5 %, not a
    sort of every offer (tens of milliseconds with tens of thousands of offers, every answer waiting meanwhile)."""

    def __init__(self, loader: Loader) -> None:
        self._loader = loader
        self._by_key: dict[str, CachedOffer] = {}
        self._members: dict[GroupKey, dict[str, CachedOffer]] = {}
        # (card, count, fraction, spot) -> offers by whole-configuration price, once per currency: `groups()`
        self._groups: dict[str, dict[GroupKey, tuple[CachedOffer, ...]]] = {"RUB": {}, "USD": {}}
        self._all: tuple[CachedOffer, ...] | None = ()  # every offer, cheapest first: built when first asked for
        self._lock = asyncio.Lock()
        self.version = 0  # bumps on every refresh: estimate caches keyed on it stay coherent
        self.budget = BUDGET  # seconds a refresh works before it hands the loop back (core.slices)

    async def refresh(self) -> int:
        async with self._lock:  # two ingests finishing together reload once each, never interleaved
            got = await self._loader()
            # Built a slice at a time beside the state readers see (core.slices: the loop answers in between), then
            # swapped in at once: 100,000 offers grouped and sorted in one go held the loop 0.4 s.
            if isinstance(got, OfferChanges) and not got.full:
                state = await run_in_slices(self._applying(got.changed, got.gone), self.budget)
            else:
                state = await run_in_slices(self._replacing(got.changed if isinstance(got, OfferChanges) else got),
                                            self.budget)
            old = self._by_key, self._members, self._groups
            self._by_key, self._members, self._groups = state
            self._all = None
            self.version += 1
            # The state swapped out is let go a slice at a time: on a full reload it holds the last references to
            # every offer replaced, and dropped at once it freed 100,000 of them in one go (0.1-0.2 s of the loop).
            await run_in_slices(_letting_go(*old), self.budget)
            return len(self._by_key)

    def _replacing(self, offers: Iterable[CachedOffer]) -> Steps[_State]:
        """The state holding exactly `offers`."""
        listed = offers if isinstance(offers, Sequence) else list(offers)
        by_key: dict[str, CachedOffer] = {}
        for start in chunks(len(listed)):
            by_key.update((o.key, o) for o in listed[start:start + CHUNK])
            yield
        members: dict[GroupKey, dict[str, CachedOffer]] = {}
        for i, offer in enumerate(by_key.values()):
            members.setdefault(_group_key(offer), {})[offer.key] = offer
            if i % CHUNK == CHUNK - 1:
                yield
        groups: dict[str, dict[GroupKey, tuple[CachedOffer, ...]]] = {"RUB": {}, "USD": {}}
        for key in list(members):
            yield from _regrouping(members, groups, key)
        return by_key, members, groups

    def _applying(self, changed: Sequence[CachedOffer], gone: Sequence[str]) -> Steps[_State]:
        """The current state with `changed` added or replaced and `gone` removed, built beside it: the groups
        nothing touched are shared with the current state, the others copied before they change."""
        by_key = dict(self._by_key)
        members = dict(self._members)
        copied: set[GroupKey] = set()

        def group(key: GroupKey) -> dict[str, CachedOffer]:
            if key not in copied:
                copied.add(key)
                members[key] = dict(members.get(key, {}))
            return members[key]

        for i, gone_key in enumerate(gone):
            old = by_key.pop(gone_key, None)
            if old is not None:
                group(_group_key(old)).pop(gone_key, None)
            if i % CHUNK == CHUNK - 1:
                yield
        for i, offer in enumerate(changed):
            old = by_key.get(offer.key)
            if old is not None:
                group(_group_key(old)).pop(offer.key, None)
            by_key[offer.key] = offer
            group(_group_key(offer))[offer.key] = offer
            if i % CHUNK == CHUNK - 1:
                yield
        groups = {currency: dict(by_group) for currency, by_group in self._groups.items()}
        for key in copied:
            yield from _regrouping(members, groups, key)
        return by_key, members, groups

    def __len__(self) -> int:
        return len(self._by_key)

    def all(self) -> tuple[CachedOffer, ...]:
        if self._all is None:
            self._all = tuple(sorted(self._by_key.values(), key=_price_key))
        return self._all

    def filter(self, *, gpu_ids: Iterable[str] | None = None,
               fits: Callable[[str, int, float | None], bool] | None = None) -> list[CachedOffer]:
        """In-stock offers, cheapest configuration per hour first, of the given GPUs and/or whose (GPU, count,
        slice fraction) `fits`."""
        keep = [offer for group in self.groups("RUB", gpu_ids=gpu_ids, fits=fits) for offer in group]
        keep.sort(key=_price_key)
        return keep

    def groups(self, currency: str, *, gpu_ids: Iterable[str] | None = None,
               fits: Callable[[str, int, float | None], bool] | None = None,
               keep: Callable[[CachedOffer], bool] | None = None) -> list[tuple[CachedOffer, ...]]:
        """Like `filter`, as groups of one (card, count, slice, spot) each, every group by whole-configuration price
        in `currency`: what `core.ranking.rank_groups` merges without sorting thousands of offers per answer.
        `keep`: the offers of a group to keep (filters said with /offers: a price cap, providers, a region), in
        the group's order."""
        wanted = set(gpu_ids) if gpu_ids else None
        out: list[tuple[CachedOffer, ...]] = []
        for (gpu, count, fraction, _spot), offers in self._groups.get(currency, self._groups["RUB"]).items():
            if gpu is None:
                continue  # a card the catalog cannot name is shown to nobody until it is mapped (issue 20)
            if wanted is not None and gpu not in wanted:
                continue
            if fits is not None and not fits(gpu, count, fraction):
                continue
            if keep is not None and not (offers := tuple(o for o in offers if keep(o))):
                continue
            out.append(offers)
        return out


def _letting_go(by_key: dict[str, CachedOffer], members: dict[GroupKey, dict[str, CachedOffer]],
                groups: dict[str, dict[GroupKey, tuple[CachedOffer, ...]]]) -> Steps[None]:
    """Empty a state's tables (its own: the next state copied each of them) an entry at a time; a group's members
    and offers, which the next state may share, are only let go, never emptied."""
    for i in range(len(by_key)):
        by_key.popitem()
        if i % CHUNK == CHUNK - 1:
            yield
    tables: list[dict[GroupKey, Any]] = [members, *groups.values()]
    for table in tables:
        while table:
            table.popitem()  # at most one group's offers freed
            yield


def _regrouping(members: dict[GroupKey, dict[str, CachedOffer]],
                groups: dict[str, dict[GroupKey, tuple[CachedOffer, ...]]], key: GroupKey) -> Steps[None]:
    """Group `key` sorted again from its members, once per currency (gone from both when it has none left)."""
    offers = members.get(key)
    if not offers:
        members.pop(key, None)
        groups["RUB"].pop(key, None)
        groups["USD"].pop(key, None)
        return
    groups["RUB"][key] = tuple(sorted(offers.values(), key=_price_key))
    yield
    groups["USD"][key] = tuple(sorted(offers.values(), key=_usd_key))
    yield


# What the whole configuration costs per hour, unknown prices last; then the key, for a stable order.
_price_key = attrgetter("sort_rub", "key")
_usd_key = attrgetter("sort_usd", "key")
