"""`gpuradar providers check NAME`: fetch a provider once, run its parser, and report what matched and what did not
— without storing anything — so an operator can confirm a provider (immers.cloud's declarative selectors against
its live page, or a new API key) in a minute before enabling it."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel, Field

from core.offers import Offer
from core.polls import PollStatus
from scrapers import registry
from scrapers.errors import ScrapeError
from scrapers.http import PoliteClient
from scrapers.poller import configure, deadline_for, dedupe, provider_settings, with_vat


class CheckReport(BaseModel):
    provider: str
    status: PollStatus
    error: str | None = None
    needs: list[str] = Field(default_factory=list)  # settings still missing (credentials)
    enabled: bool = False
    records: int = 0
    skipped: int = 0
    problems: list[str] = Field(default_factory=list)
    offers: list[Offer] = Field(default_factory=list)
    unknown_gpus: list[str] = Field(default_factory=list)
    page: dict[str, Any] | None = None  # declarative providers: rows found, hits per field, sample rows


async def check(name: str, settings: Any, client: PoliteClient) -> CheckReport:
    """One fetch and parse of `name` (enabled or not); nothing is stored."""
    cfg = provider_settings(name, settings)  # KeyError for an unknown provider: the caller says so
    report = CheckReport(provider=name, status=PollStatus.FAILED, enabled=cfg.enabled)
    if missing := cfg.credentials_missing():
        report.needs = [f"PROVIDERS__{name.upper()}__{m}" for m in missing]
        report.error = "credentials missing"
        return report
    module = registry.load(name)
    extra = {"name": name} if getattr(module, "TAKES_NAME", False) else {}
    configure(client, name, cfg)
    try:
        async with asyncio.timeout(deadline_for(cfg, client)):
            payload = await module.fetch(client, cfg, **extra)
        if hasattr(module, "inspect"):
            report.page = module.inspect(payload, cfg, **extra)
        parsed = module.parse(payload, cfg, **extra)
    except ScrapeError as exc:
        report.status, report.error = exc.status, str(exc)
        return report
    except TimeoutError:
        report.error = "no answer within the poll's deadline"
        return report
    except Exception as exc:  # a parser that trips on this page: say how, it is what the operator came for
        report.status, report.error = PollStatus.SUSPECT, f"{type(exc).__name__}: {exc}"
        return report
    report.offers = dedupe(with_vat(parsed, cfg))
    report.records = getattr(parsed, "records", len(parsed))
    report.skipped = getattr(parsed, "skipped", 0)
    report.problems = list(getattr(parsed, "problems", []))
    report.unknown_gpus = sorted({o.gpu_name for o in report.offers if o.gpu is None})
    abnormal = report.skipped and (report.skipped >= report.records
                                   or report.skipped / report.records > cfg.max_skipped_share)
    report.status = PollStatus.SUSPECT if abnormal or not report.offers else PollStatus.OK
    if not report.offers and not report.error:
        report.error = "no offers matched"
    return report
