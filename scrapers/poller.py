"""One poll of one provider -> a `PollResult` that never lies.

OK only when the fetch succeeded and the payload validated; everything else carries its reason: FAILED when no
usable answer came (timeouts, connection errors, 5xx / 429 after retries), SUSPECT when an answer came but cannot
be believed (HTML captcha or maintenance page, truncated JSON, a payload that fails validation, a 4xx, a body over
the size limit). An empty list that validates is OK here — the abnormal-shrink check against recent polls belongs
to storage's ingest — and its size is logged. A poll also has a hard deadline, so a provider that trickles bytes
cannot hold a scrape cycle.

One bad record does not void a poll: parsers skip and count a record that fails validation or sanity bounds, and
the poll turns SUSPECT only when the skipped share is abnormal (above the provider's `max_skipped_share`, or every
record). Parsing runs in a worker thread, so a large catalogue never stalls the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import httpx
from pydantic import SecretStr

from core.changes import dedupe
from core.offers import Offer
from core.polls import PollResult, PollStatus
from core.redaction import redact
from scrapers import registry
from scrapers.errors import HttpStatusError, ScrapeError
from scrapers.heap import built_frozen
from scrapers.http import PoliteClient
from scrapers.provider import Provider
from scrapers.settings import ProvidersBase, ProviderSettings

if TYPE_CHECKING:
    from scrapers.providers._common import Offers

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]

# A raw httpx client handed in by a caller gets one PoliteClient for its lifetime, so rate limits and conditional
# validators persist across polls.
_wrapped: weakref.WeakKeyDictionary[httpx.AsyncClient, PoliteClient] = weakref.WeakKeyDictionary()


def utcnow() -> datetime:
    return datetime.now(UTC)


def providers_of(settings: Any) -> ProvidersBase:
    """Accept the app `Settings` (its `.providers`) or `ProvidersSettings` itself."""
    if isinstance(settings, ProvidersBase):
        return settings
    providers = getattr(settings, "providers", None)
    if isinstance(providers, ProvidersBase):
        return providers
    raise TypeError(f"expected Settings or ProvidersSettings, got {type(settings).__name__}")


def provider_settings(name: str, settings: Any) -> ProviderSettings:
    cfg = providers_of(settings).get(name)
    if cfg is None:
        raise KeyError(name)
    return cfg


def polite(client: PoliteClient | httpx.AsyncClient) -> PoliteClient:
    if isinstance(client, PoliteClient):
        return client
    if client not in _wrapped:
        _wrapped[client] = PoliteClient(client)
    return _wrapped[client]


def deadline_for(cfg: ProviderSettings, client: PoliteClient) -> float:
    """Long enough for every attempt to time out plus the backoff between them, never unbounded."""
    policy = client.retry
    waits = sum(min(policy.max_delay, policy.base_delay * 2**i) * (1 + policy.jitter) for i in range(policy.attempts))
    return cfg.timeout * policy.attempts * 3 + waits * policy.scale + 5


@dataclass(slots=True)
class Attempt:
    """One fetch and parse of one provider, judged: what `poll` reports to storage and `providers check` shows to
    an operator. The same code runs for both, so both agree on what an answer means."""

    provider: str
    status: PollStatus
    error: str | None = None
    needs: list[str] = field(default_factory=list)  # key settings still empty (PROVIDERS__X__API_KEY)
    offers: list[Offer] = field(default_factory=list)
    records: int = 0
    skipped: int = 0
    problems: list[str] = field(default_factory=list)
    retry_after: float | None = None
    page: dict[str, Any] | None = None  # `inspect`'s report (declarative pages), when asked for
    unknown: list[str] | None = None  # `unknown_gpus`, when worked out beside the parse
    stocked: int | None = None  # how many offers are in stock, when counted beside the parse

    @property
    def unknown_gpus(self) -> list[str]:
        return self.unknown if self.unknown is not None else _unknown_gpus(self.offers)


async def attempt(name: str, settings: Any, client: PoliteClient | httpx.AsyncClient, *,
                  deadline: float | None = None, inspect: bool = False) -> Attempt:
    """Fetch, parse and judge one provider. Never raises for a provider's fault: the reason is in `error`.

    OK: the answer validated and at most `max_skipped_share` of its records were invalid (an empty list that
    validates is OK too: the abnormal-shrink check against recent polls belongs to storage's ingest).

    The reason and the problems are redacted (core.redaction): an answer may echo the request, key included (a
    GraphQL error quoting its input), and these texts are stored, printed and shown to admins."""
    got = await _attempt(name, settings, client, deadline=deadline, inspect=inspect)
    try:
        own = _secrets_of(provider_settings(name, settings))
    except KeyError:
        own = []
    if got.error is not None:
        got.error = redact(got.error, *own)
    got.problems = [redact(p, *own) for p in got.problems]
    return got


def _secrets_of(cfg: ProviderSettings) -> list[str]:
    return [v.get_secret_value() for v in (getattr(cfg, f) for f in type(cfg).model_fields)
            if isinstance(v, SecretStr) and v.get_secret_value()]


async def _attempt(name: str, settings: Any, client: PoliteClient | httpx.AsyncClient, *,
                   deadline: float | None, inspect: bool) -> Attempt:
    try:
        cfg = provider_settings(name, settings)
        provider = registry.resolve(name, cfg)
    except KeyError as exc:
        return Attempt(name, PollStatus.FAILED, error=f"unknown provider {name!r} ({exc})")
    if missing := provider.missing(cfg):
        return Attempt(name, PollStatus.FAILED, error=f"needs {', '.join(missing)} (PROVIDERS__{name.upper()}__...)",
                       needs=provider.setting_names(missing))
    pc = polite(client)
    configure(pc, provider, cfg)
    limit = deadline if deadline is not None else deadline_for(cfg, pc)
    page: dict[str, Any] | None = None
    try:
        async with asyncio.timeout(limit):
            payload = await provider.fetch(pc, cfg)
            if inspect and provider.inspect is not None:  # before parsing: a page that fails to parse is why
                page = provider.inspect(payload, cfg)
            parsed, offers, unknown, stocked = await asyncio.to_thread(_parsed, provider, payload, cfg)
    except HttpStatusError as exc:
        log.warning("%s: poll %s: %s", name, exc.status.value, exc)
        return Attempt(name, exc.status, error=str(exc),
                       retry_after=exc.retry_after if exc.status_code == 429 else None)
    except ScrapeError as exc:
        log.warning("%s: poll %s: %s", name, exc.status.value, exc)
        return Attempt(name, exc.status, error=str(exc), page=page)
    except TimeoutError:
        return Attempt(name, PollStatus.FAILED, error=f"poll took longer than its {limit:.0f} s deadline")
    except Exception as exc:  # a parser bug on a new payload shape: the answer is not believable, say why
        log.exception("%s: unexpected error while polling", name)
        return Attempt(name, PollStatus.SUSPECT, error=f"unexpected {type(exc).__name__}: {exc}", page=page)
    records, skipped, problems = parsed.records, parsed.skipped, list(parsed.problems)
    if skipped and (skipped >= records or skipped / records > cfg.max_skipped_share):
        error = f"{skipped} of {records} records invalid ({'; '.join(problems[:3])})"
        log.warning("%s: poll suspect: %s", name, error)
        return Attempt(name, PollStatus.SUSPECT, error=error, records=records, skipped=skipped, problems=problems,
                       page=page)
    if skipped:
        log.warning("%s: skipped %d of %d records as invalid: %s", name, skipped, records, "; ".join(problems[:3]))
    return Attempt(name, PollStatus.OK, offers=offers, records=records, skipped=skipped, problems=problems,
                   page=page, unknown=unknown, stocked=stocked)


def _parsed(provider: Provider[Any], payload: Any,
            cfg: ProviderSettings) -> tuple[Offers, list[Offer], list[str], int]:
    """The provider's pure parse and everything else done to its offers before they are judged (VAT terms, stock
    for a price-only source, one offer per key, the cards the catalog does not know, how many are in stock for the
    log line), all in the worker thread the poller runs this in: at 100,000 configurations that after-work alone is
    ~0.15 s of CPU, which on the loop is a stall (counting the offers in stock alone was 7-15 ms of it). The cyclic
    collector is paused meanwhile, and what the parse built frozen once it is done where the process freezes its
    heap (scrapers.heap.built_frozen: a collection walking the payload and the new offers would hold the
    interpreter lock, and with it the loop, for 0.1-0.7 s)."""
    with built_frozen():
        parsed = provider.parse(payload, cfg)
        offers = list(dedupe(listed_only(with_vat(parsed, cfg), provider)).values())
        return parsed, offers, _unknown_gpus(offers), sum(o.in_stock for o in offers)


def _unknown_gpus(offers: list[Offer]) -> list[str]:
    return sorted({o.gpu_name for o in offers if o.gpu is None})


async def poll(name: str, settings: Any, client: PoliteClient | httpx.AsyncClient, *, now: Clock = utcnow,
               deadline: float | None = None) -> PollResult:
    """One poll for storage: `attempt`, timed and as a `PollResult` (offers only when trusted)."""
    started = now()
    got = await attempt(name, settings, client, deadline=deadline)
    unknown = got.unknown_gpus
    if got.status is PollStatus.OK:
        stocked = got.stocked if got.stocked is not None else sum(o.in_stock for o in got.offers)
        log.info("%s: ok, %d offers (%d in stock), unknown GPUs: %s", name, len(got.offers), stocked,
                 ", ".join(unknown) or "none")
    return PollResult(provider=name, status=got.status, offers=got.offers, error=got.error, started_at=started,
                      finished_at=now(), unknown_gpus=unknown, records=got.records, skipped=got.skipped,
                      retry_after=got.retry_after)


def configure(client: PoliteClient, provider: Provider[Any], cfg: ProviderSettings) -> None:
    """Carry the provider's politeness and bounds from its definition and settings to the shared client (a rate
    limit the caller set on the client stays)."""
    name = provider.name
    client.rate_limits.setdefault(name, provider.rate_limit_per_minute)
    client.conditional[name] = provider.conditional
    client.body_limits[name] = int(cfg.max_body_mb * 1024 * 1024) if cfg.max_body_mb else provider.max_body_bytes
    if cfg.redirect_hosts:
        client.redirect_hosts[name] = frozenset(h.lower() for h in cfg.redirect_hosts)


def listed_only(offers: list[Offer], provider: Provider[Any]) -> list[Offer]:
    """A price-only source (`info.stock_known` False) says nothing about stock: none of its offers is in stock, with
    no count, whatever its parser built — so it is never alerted as available."""
    if provider.info.stock_known:
        return offers
    return [o if not o.in_stock and o.available is None else o.model_copy(update={"in_stock": False, "available": None})
            for o in offers]


def with_vat(offers: list[Offer], cfg: ProviderSettings) -> list[Offer]:
    """The operator's VAT terms for this provider, where the settings override the catalog's."""
    update = {k: v for k, v in (("vat_rate", cfg.vat_rate), ("vat_included", cfg.vat_included)) if v is not None}
    return [o.model_copy(update=update) for o in offers] if update else list(offers)
