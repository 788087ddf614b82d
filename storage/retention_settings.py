"""Retention's settings (`RETENTION__*`, read by gpuradar.settings); light to import: pydantic only."""

from __future__ import annotations

from pydantic import BaseModel, Field


class RetentionSettings(BaseModel):
    """`RETENTION__*` (gpuradar.settings): days each kind of row is kept; 0 for a table keeps it for ever."""

    raw_days: float = Field(default=7, ge=0)  # price points at full resolution
    hourly_days: float = Field(default=90, ge=0)  # then the last point of each hour
    daily_days: float = Field(default=730, ge=0)  # then the last point of each day; deleted after
    events_days: float = Field(default=30, ge=0)
    runs_days: float = Field(default=30, ge=0)
    alert_events_days: float = Field(default=3, ge=2)
    deliveries_days: float = Field(default=7, ge=0)
    batch: int = Field(default=5000, ge=100)  # rows per statement (one short transaction each)
    every: float = Field(default=3600, gt=0)  # seconds between runs on the leader
