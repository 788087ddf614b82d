"""Where the store is (`DATABASE_URL`, or `.env`): the one setting a command that only reads the store needs.

Read the same way as `gpuradar.settings.Settings` (which extends this), without what building the whole settings
costs: those import every provider module for their settings (`scrapers.registry`), which `gpuradar estimate`
never polls.
"""

from __future__ import annotations

from pydantic_settings import BaseSettings, SettingsConfigDict

from storage.urls import DEFAULT_DATABASE_URL


class StoreSettings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_nested_delimiter="__", extra="ignore")

    database_url: str = DEFAULT_DATABASE_URL
