"""`gpuradar providers check NAME`: fetch a provider once, run its parser and report what matched and what did not
— without storing anything — so an operator can confirm a provider (immers.cloud's declarative selectors against
its live page, or a new API key) in a minute before enabling it. It runs the poller's own `attempt`, so a check and
a poll judge the same answer the same way (an empty answer that validates is OK in both; the report says it found
no offers)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from core.offers import Offer
from core.polls import PollStatus
from scrapers.http import PoliteClient
from scrapers.poller import attempt, provider_settings


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
    """One fetch and parse of `name` (enabled or not); nothing is stored. KeyError for an unknown provider."""
    cfg = provider_settings(name, settings)
    got = await attempt(name, settings, client, inspect=True)
    return CheckReport(provider=name, status=got.status, error=got.error, needs=got.needs, enabled=cfg.enabled,
                       records=got.records, skipped=got.skipped, problems=got.problems, offers=got.offers,
                       unknown_gpus=got.unknown_gpus, page=got.page)
