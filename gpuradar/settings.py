"""Application settings from the environment (and an optional `.env`), validated by pydantic-settings.

Kept light on purpose: every CLI command imports this module, so it must not pull in aiohttp, aiogram or the web
server (`gpuradar/web.py` imports `WebSettings` from here, not the other way round).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, SecretStr, field_validator
from pydantic_settings import NoDecode

from gpuradar.logs import LogSettings
from gpuradar.store_settings import StoreSettings
from scrapers.registry import ProvidersSettings
from storage.retention_settings import RetentionSettings


class WebSettings(BaseModel):
    """Where the HTTP server listens: this machine only by default (the image and docker-compose.yml set
    WEB__HOST=0.0.0.0, the container's own interfaces). `public_url`: the https address Telegram opens the Mini App
    at (the market page this server serves at `/`); with it set the bot puts the page on its menu button and under
    /offers and /estimate."""

    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)
    health_timeout: float = Field(default=3.0, gt=0)
    # A client gets this long to send a request's line and headers (and to start its next one on a kept-alive
    # connection), and this long again to send an authenticated request's body: slow-header and slow-body
    # connections are closed instead of held. Telegram sends an update in one go; an update is at most ~1 MB.
    header_timeout: float = Field(default=15.0, gt=0)
    body_timeout: float = Field(default=15.0, gt=0)
    public_url: str | None = None
    # Behind the https proxy in front of the page every client comes from the proxy's address: with this set, the
    # Mini App's per-address limits read the address the proxy appends to X-Forwarded-For instead (set it only when
    # a proxy of yours is the only way in, or clients could name any address).
    forwarded_for: bool = False

    @field_validator("public_url")
    @classmethod
    def _https(cls, value: str | None) -> str | None:
        if not value:
            return None
        from urllib.parse import urlsplit

        parts = urlsplit(value)
        # Telegram opens Mini Apps over https only; plain http is accepted for loopback (a local test client).
        if parts.scheme != "https" and not (parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost")):
            raise ValueError("WEB__PUBLIC_URL must be an https:// URL")
        return value


class WebhookSettings(BaseModel):
    """`WEBHOOK__URL` / `__SECRET` / `__PATH`: receive updates by webhook instead of long polling.

    `url` is the public HTTPS address Telegram posts to (the load balancer in front of the replicas); `path` is
    where this process serves it (usually the URL's own path). `secret` is sent by Telegram in every request's
    X-Telegram-Bot-Api-Secret-Token header and checked before anything is handled.
    """

    url: str | None = None
    secret: SecretStr | None = None  # never logged; required in webhook mode (see gpuradar.commands.run)
    path: str = "/telegram/webhook"
    drop_pending_updates: bool = False

    @field_validator("path")
    @classmethod
    def _absolute(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError("WEBHOOK__PATH must start with '/'")
        return value


class LeaseSettings(BaseModel):
    """`LEASE__TTL`: how long the scraper leader's lease lasts without renewal (another replica takes over
    within about this long after the leader dies)."""

    ttl: float = Field(default=30.0, gt=0)


class SenderSettings(BaseModel):
    """`SENDER__*`: the alert sender every replica runs (see `bot.sender`).

    `claim_ttl`: how long a replica's claim on the alerts it is sending lasts without renewal; a replica that dies
    on another host leaves its unsent alerts to the others after at most this long (on the same host at once).
    """

    batch: int = Field(default=500, ge=1)  # alert messages kept written and ready in memory
    poll_interval: float = Field(default=1.0, gt=0)  # how often to look for alerts another replica queued
    claim_ttl: float = Field(default=30.0, ge=1)
    # Telegram's limits, shared by this replica's replies and alerts (bot.pacing): messages per second overall,
    # and seconds between two messages to one chat.
    global_rate: float = Field(default=29.5, gt=0)
    chat_interval: float = Field(default=1.05, ge=0)
    # The span Telegram counts its per-second limits over; only a stand-in server with scaled time changes it.
    window: float = Field(default=1.0, gt=0)
    # Replicas split `global_rate` equally (storage.rate_share): each renews its row every third of this many
    # seconds; a dead replica's part returns to the others once its row expires.
    share_ttl: float = Field(default=15.0, ge=1)
    # The sender runs in a child process of the replica, with its own interpreter, event loop, database engine,
    # Bot session and pacer (issue 26: on the bot's loop, or a thread sharing its GIL, its index build and matching
    # held replies). True: the same sender on the bot's loop (tests, single-process embedding).
    in_process: bool = False
    # Replies first, alerts take the rest (gpuradar/sender_process.py): the part of each window alerts may fill
    # while no reply needs more (the rest is always kept for replies, which use it without asking the sender) ...
    alert_share: float = Field(default=0.8, gt=0, le=1)
    # ... and the part alerts keep however many replies flow (a reply flood cannot starve them).
    min_alert_share: float = Field(default=0.2, gt=0, le=1)
    # Paid broadcasts (Bot API sendMessage `allow_paid_broadcast`: up to 1,000 messages a second, 0.1 Star each
    # beyond the free limit, from the bot's Stars balance): alerts go at up to `paid_broadcast_rate` a second while
    # `paid_broadcast_budget_stars` lasts, then at the free rate until the next period. The budget is per
    # `paid_broadcast_budget_period` (a UTC calendar "month" or "day"), counted in the database by every sender of
    # the bot together: a restart or another replica goes on counting within the same period.
    paid_broadcast: bool = False
    paid_broadcast_rate: float = Field(default=1000.0, gt=0, le=1000)
    paid_broadcast_budget_stars: float = Field(default=0.0, ge=0)
    paid_broadcast_budget_period: Literal["month", "day"] = "month"
    # Messages one user's grouped digest takes at most (their offers cheapest first); the offers beyond them are
    # counted on the last one, with /offers to see them. One: a poll is one message per user, so the rate is users.
    digest_messages: int = Field(default=1, ge=1, le=20)


class IngestSettings(BaseModel):
    # Polls are recorded in a child process of the leader (gpuradar/ingest_process.py: own interpreter, event loop
    # and database engine, niced). True: the same child code serves the same channel from a thread of this process
    # (tests, where a child per started app costs ~0.7 s of CPU to import, and single-process embedding).
    in_process: bool = False


class Settings(StoreSettings):  # DATABASE_URL and how the environment is read: gpuradar/store_settings.py
    bot_token: SecretStr | None = None  # secret: never logged
    telegram_api_url: str | None = None  # a self-hosted or stand-in Bot API server
    # at start-up an unreachable Telegram is retried this many times, waiting backoff, 2x, 4x... seconds
    telegram_connect_attempts: int = Field(default=5, ge=1)
    telegram_connect_backoff: float = Field(default=1.0, ge=0)
    # ADMIN_IDS=123, =123,456 or =[123, 456] (read by `_admin_ids`, not as JSON only)
    admin_ids: Annotated[list[int], NoDecode] = Field(default_factory=list)
    providers: ProvidersSettings = ProvidersSettings()
    retention: RetentionSettings = RetentionSettings()  # storage/retention.py: what is kept how long
    user_agent: str = "GPURadarBot/0.1 (+https://t.me/gpuradar_bot; GPU stock alerts)"
    # CBR daily rates fallback when the rates file cannot be fetched (roubles per unit)
    fx_fallback_rub_per: dict[str, float] = Field(default_factory=lambda: {"USD": 80.0, "EUR": 93.0})
    fx_url: str = "https://www.cbr.ru/scripts/XML_daily.asp"
    web: WebSettings = WebSettings()  # WEB__HOST / __PORT / __PUBLIC_URL: /healthz, /metrics, the Mini App, the webhook
    log: LogSettings = LogSettings()  # LOG__LEVEL / LOG__JSON_LINES
    webhook: WebhookSettings = WebhookSettings()  # WEBHOOK__URL / __SECRET / __PATH
    lease: LeaseSettings = LeaseSettings()  # LEASE__TTL
    sender: SenderSettings = SenderSettings()  # SENDER__BATCH / __POLL_INTERVAL / __CLAIM_TTL
    ingest: IngestSettings = IngestSettings()  # INGEST__IN_PROCESS

    @field_validator("admin_ids", mode="before")
    @classmethod
    def _admin_ids(cls, value: Any) -> Any:
        """`123`, `123,456`, `123 456` and `[123, 456]` all mean the same list of Telegram user ids."""
        if isinstance(value, int):
            return [value]
        if isinstance(value, str):
            text = value.strip().removeprefix("[").removesuffix("]")
            return [part for part in text.replace(",", " ").split() if part]
        return value

    def secret_values(self) -> list[str]:
        """Every configured secret, for the redactor (core.redaction): each SecretStr anywhere in the settings (the
        bot token, the webhook secret, every provider's API key, any added later), the Hub token (HF_TOKEN) and the
        database password."""
        found: list[str] = []
        _collect_secrets(self, found)
        from modelhub.settings import HubSettings  # the Hub token is read from HF_TOKEN, not from these settings

        if hub_token := HubSettings.from_env().token:
            found.append(hub_token)
        try:
            from sqlalchemy.engine import make_url

            password = make_url(self.database_url).password
        except Exception:  # not a URL SQLAlchemy can read: App will say so; nothing to redact
            password = None
        if password:
            found.append(str(password))
        return found


def _collect_secrets(value: object, found: list[str]) -> None:
    if isinstance(value, SecretStr):
        if secret := value.get_secret_value():
            found.append(secret)
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            _collect_secrets(getattr(value, name), found)
    elif isinstance(value, dict):
        for item in value.values():
            _collect_secrets(item, found)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            _collect_secrets(item, found)
