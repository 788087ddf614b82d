"""Application settings from the environment (and an optional `.env`), validated by pydantic-settings."""

from __future__ import annotations

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from gpuradar.logs import LogSettings
from gpuradar.web import WebSettings
from scrapers.settings import ProvidersSettings
from storage.db import DEFAULT_DATABASE_URL


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_nested_delimiter="__", extra="ignore")

    database_url: str = DEFAULT_DATABASE_URL
    bot_token: SecretStr | None = None  # secret: never logged
    telegram_api_url: str | None = None  # a self-hosted or stand-in Bot API server
    admin_ids: list[int] = Field(default_factory=list)
    providers: ProvidersSettings = ProvidersSettings()
    user_agent: str = "GPURadarBot/0.1 (+https://t.me/gpuradar_bot; GPU stock alerts)"
    # CBR daily rates fallback when the rates file cannot be fetched (roubles per unit)
    fx_fallback_rub_per: dict[str, float] = Field(default_factory=lambda: {"USD": 80.0, "EUR": 93.0})
    fx_url: str = "https://www.cbr.ru/scripts/XML_daily.asp"
    web: WebSettings = WebSettings()  # WEB__HOST / WEB__PORT: /healthz, /metrics (and the webhook in webhook mode)
    log: LogSettings = LogSettings()  # LOG__LEVEL / LOG__JSON_LINES
