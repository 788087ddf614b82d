"""Helpers every provider parser shares: payload validation with a dedicated error, per-record validation that skips
and counts a bad record instead of voiding the poll, GPU lookup that never guesses."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from core.gpus import find_gpu
from core.offers import Offer
from scrapers.errors import PayloadValidationError

if TYPE_CHECKING:
    from scrapers.http import PoliteClient

log = logging.getLogger("scrapers")

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


class Lenient(BaseModel):
    """Base of payload models: providers add fields all the time; unknown ones are ignored, not fatal."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, allow_inf_nan=False)


def validate(model: type[M], payload: Any, provider: str) -> M:
    """The payload as `model`, or PayloadValidationError (the poll becomes suspect) naming the first problems."""
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}" for err in exc.errors()[:3])
        raise PayloadValidationError(f"{provider}: payload does not match the documented shape ({problems})") from exc


_SXM6 = re.compile(r"\s*\bSXM6\b", re.IGNORECASE)  # only Blackwell (B200/B300) comes as SXM6: the name says it all


# (provider, spelling) already logged as unknown: a renamed SKU is logged the first time it is seen, not every poll.
# Bounded: a provider sending endless garbage names cannot grow it without limit (then it logs nothing new).
_LOGGED_UNKNOWN: set[tuple[str, str]] = set()
_LOGGED_UNKNOWN_MAX = 10_000


def gpu_id(name: str, memory_gb: float | None = None, provider: str = "") -> str | None:
    """Catalog id for a provider's spelling, None when unknown: kept as spelled, never guessed. An unknown
    spelling is logged once per provider and name (a warning: a renamed SKU reaches no watcher until mapped)."""
    gpu = find_gpu(name, memory_gb) or (find_gpu(_SXM6.sub("", name), memory_gb) if _SXM6.search(name) else None)
    if gpu is None:
        seen = (provider, name)
        if seen not in _LOGGED_UNKNOWN and len(_LOGGED_UNKNOWN) < _LOGGED_UNKNOWN_MAX:
            _LOGGED_UNKNOWN.add(seen)
            log.warning("%s: unknown GPU %r (memory %s GB): its offers reach nobody until the catalog maps it",
                        provider, name, memory_gb)
        return None
    return gpu.id


async def gather_limited(calls: Iterable[Awaitable[T]], limit: int = 4) -> list[T]:
    """Await `calls` with at most `limit` in flight, results in order: one provider's several requests (HOSTKEY's
    locations, Vultr's regions) overlap a little instead of queueing, without hammering its host."""
    gate = asyncio.Semaphore(limit)

    async def one(call: Awaitable[T]) -> T:
        async with gate:
            return await call

    return list(await asyncio.gather(*(one(c) for c in calls)))


def join_url(base_url: str, path: str) -> str:
    return base_url.rstrip("/") + "/" + path.lstrip("/")


def _problem(exc: ValidationError) -> str:
    err = exc.errors()[0]
    return f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"


class Offers(list[Offer]):
    """What `parse` returns: the offers, plus how many provider records were looked at and how many were skipped
    as invalid (a null where a number belongs, a value out of bounds), so the poller can judge the share."""

    def __init__(self, offers: Iterable[Offer] = (), *, records: int = 0, skipped: int = 0,
                 problems: Iterable[str] = ()) -> None:
        super().__init__(offers)
        self.records = records
        self.skipped = skipped
        self.problems = list(problems)


class Collector:
    """Builds one parse's `Offers`: `each` validates records one by one, `add` builds an offer; whatever fails is
    skipped, counted and remembered (the first few reasons), never raised."""

    KEEP_PROBLEMS = 5

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.offers: list[Offer] = []
        self.records = 0
        self.skipped = 0
        self.problems: list[str] = []

    def skip(self, problem: str) -> None:
        self.skipped += 1
        if len(self.problems) < self.KEEP_PROBLEMS:
            self.problems.append(problem)

    def each(self, model: type[M], items: Iterable[Any]) -> Iterator[M]:
        """Records of `items` that validate as `model`; each one that does not is skipped and counted."""
        for index, item in enumerate(items):
            self.records += 1
            try:
                yield model.model_validate(item)
            except ValidationError as exc:
                self.skip(f"record {index}: {_problem(exc)}")

    def add(self, **fields: Any) -> Offer | None:
        """An offer from `fields`, or None (skipped and counted) when a value is out of bounds."""
        try:
            offer = Offer(provider=self.provider, **fields)
        except ValidationError as exc:
            self.skip(f"{fields.get('sku', '?')}: {_problem(exc)}")
            return None
        self.offers.append(offer)
        return offer

    def result(self) -> Offers:
        return Offers(self.offers, records=max(self.records, self.skipped), skipped=self.skipped,
                      problems=self.problems)


async def token_paged_list(client: PoliteClient, provider: str, url: str, key: str, *, params: dict[str, Any],
                           headers: dict[str, str], timeout: float, max_pages: int) -> Any:
    """Google-style paging (`nextPageToken` in the answer, `pageToken` in the next request): every page's `key`
    list joined as `{key: [...]}`, at most `max_pages` requests (a runaway token must not loop forever). An answer
    without that list is returned as it came, for the parser's validation to name what is wrong."""
    items: list[Any] = []
    for _ in range(max_pages):
        page = await client.get_json(provider, url, params=params, headers=headers, timeout=timeout)
        if not isinstance(page, dict) or not isinstance(page.get(key), list):
            return page
        items.extend(page[key])
        if not page.get("nextPageToken"):
            break
        params = {**params, "pageToken": page["nextPageToken"]}
    return {key: items}
