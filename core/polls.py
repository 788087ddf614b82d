"""The outcome of one poll of one provider, as the scrapers hand it to storage and change detection."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, Field

from core.offers import Offer


class PollStatus(StrEnum):
    OK = "ok"  # trusted: its offers are the provider's whole current state
    SUSPECT = "suspect"  # answered, but not believable (captcha, bad payload, abnormal shrink): state kept as is
    FAILED = "failed"  # no usable answer (timeout, connection error, 5xx after retries)


class PollResult(BaseModel):
    provider: str
    status: PollStatus
    offers: list[Offer] = Field(default_factory=list)
    error: str | None = None
    started_at: datetime
    finished_at: datetime
    unknown_gpus: list[str] = Field(default_factory=list)  # provider spellings not in the catalog (logged)
    records: int = 0  # provider records looked at (listings, plans, presets ...)
    skipped: int = 0  # of those, invalid or out of bounds: skipped and counted, not offered
    retry_after: float | None = None  # seconds the provider asked us to stay away (a 429 with a long Retry-After)

    @property
    def trusted(self) -> bool:
        return self.status is PollStatus.OK
