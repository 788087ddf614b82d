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
from datetime import UTC, datetime
from typing import Any

import httpx

from core.offers import Offer
from core.polls import PollResult, PollStatus
from scrapers import registry
from scrapers.errors import HttpStatusError, ScrapeError
from scrapers.http import PoliteClient
from scrapers.settings import ProviderSettings, ProvidersSettings

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]

# A raw httpx client handed in by a caller gets one PoliteClient for its lifetime, so rate limits and conditional
# validators persist across polls.
_wrapped: weakref.WeakKeyDictionary[httpx.AsyncClient, PoliteClient] = weakref.WeakKeyDictionary()


def utcnow() -> datetime:
    return datetime.now(UTC)


def providers_of(settings: Any) -> ProvidersSettings:
    """Accept the app `Settings` (its `.providers`) or `ProvidersSettings` itself."""
    if isinstance(settings, ProvidersSettings):
        return settings
    providers = getattr(settings, "providers", None)
    if isinstance(providers, ProvidersSettings):
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


def dedupe(offers: list[Offer]) -> list[Offer]:
    """One offer per configuration key: a provider listing the same configuration twice keeps the cheapest
    in-stock one, so change detection never sees two states for one key."""
    best: dict[str, Offer] = {}
    for offer in offers:
        seen = best.get(offer.key)
        if seen is None or (offer.in_stock, -offer.price) > (seen.in_stock, -seen.price):
            best[offer.key] = offer
    return list(best.values())


def deadline_for(cfg: ProviderSettings, client: PoliteClient) -> float:
    """Long enough for every attempt to time out plus the backoff between them, never unbounded."""
    policy = client.retry
    waits = sum(min(policy.max_delay, policy.base_delay * 2**i) * (1 + policy.jitter) for i in range(policy.attempts))
    return cfg.timeout * policy.attempts * 3 + waits * policy.scale + 5


async def poll(name: str, settings: Any, client: PoliteClient | httpx.AsyncClient, *, now: Clock = utcnow,
               deadline: float | None = None) -> PollResult:
    """Fetch, parse and judge one provider. Never raises for a provider's fault: the reason is in `error`."""
    started = now()

    def result(status: PollStatus, offers: list[Offer] | None = None, error: str | None = None, *,
               records: int = 0, skipped: int = 0, retry_after: float | None = None) -> PollResult:
        offers = offers or []
        unknown = sorted({o.gpu_name for o in offers if o.gpu is None})
        return PollResult(provider=name, status=status, offers=offers, error=error, started_at=started,
                          finished_at=now(), unknown_gpus=unknown, records=records, skipped=skipped,
                          retry_after=retry_after)

    try:
        cfg = provider_settings(name, settings)
        module = registry.load(name)
    except (KeyError, ImportError) as exc:
        return result(PollStatus.FAILED, error=f"unknown provider {name!r} ({exc})")
    if missing := cfg.credentials_missing():
        return result(PollStatus.FAILED, error=f"needs {', '.join(missing)} (PROVIDERS__{name.upper()}__...)")
    pc = polite(client)
    configure(pc, name, cfg)
    extra = {"name": name} if getattr(module, "TAKES_NAME", False) else {}
    limit = deadline if deadline is not None else deadline_for(cfg, pc)
    try:
        async with asyncio.timeout(limit):
            payload = await module.fetch(pc, cfg, **extra)
            parsed = await asyncio.to_thread(module.parse, payload, cfg, **extra)
        offers = dedupe(with_vat(parsed, cfg))
    except HttpStatusError as exc:
        log.warning("%s: poll %s: %s", name, exc.status.value, exc)
        return result(exc.status, error=str(exc), retry_after=exc.retry_after if exc.status_code == 429 else None)
    except ScrapeError as exc:
        log.warning("%s: poll %s: %s", name, exc.status.value, exc)
        return result(exc.status, error=str(exc))
    except TimeoutError:
        return result(PollStatus.FAILED, error=f"poll took longer than its {limit:.0f} s deadline")
    except Exception as exc:  # a parser bug on a new payload shape: the answer is not believable, say why
        log.exception("%s: unexpected error while polling", name)
        return result(PollStatus.SUSPECT, error=f"unexpected {type(exc).__name__}: {exc}")
    records, skipped = getattr(parsed, "records", 0), getattr(parsed, "skipped", 0)
    if skipped and (skipped >= records or skipped / records > cfg.max_skipped_share):
        problems = "; ".join(getattr(parsed, "problems", [])[:3])
        error = f"{skipped} of {records} records invalid ({problems})"
        log.warning("%s: poll suspect: %s", name, error)
        return result(PollStatus.SUSPECT, error=error, records=records, skipped=skipped)
    res = result(PollStatus.OK, offers, records=records, skipped=skipped)
    if skipped:
        log.warning("%s: skipped %d of %d records as invalid: %s", name, skipped, records,
                    "; ".join(getattr(parsed, "problems", [])[:3]))
    log.info("%s: ok, %d offers (%d in stock), unknown GPUs: %s", name, len(offers),
             sum(o.in_stock for o in offers), ", ".join(res.unknown_gpus) or "none")
    return res


def configure(client: PoliteClient, name: str, cfg: ProviderSettings) -> None:
    """Carry the provider's bounds from its settings to the shared client (body size, redirect hosts)."""
    if cfg.max_body_mb:
        client.body_limits[name] = int(cfg.max_body_mb * 1024 * 1024)
    if cfg.redirect_hosts:
        client.redirect_hosts[name] = frozenset(h.lower() for h in cfg.redirect_hosts)


def with_vat(offers: list[Offer], cfg: ProviderSettings) -> list[Offer]:
    """The operator's VAT terms for this provider, where the settings override the catalog's."""
    update = {k: v for k, v in (("vat_rate", cfg.vat_rate), ("vat_included", cfg.vat_included)) if v is not None}
    return [o.model_copy(update=update) for o in offers] if update else list(offers)
