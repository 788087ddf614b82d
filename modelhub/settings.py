"""How a Hub lookup behaves: where the Hub is, the token, and the bounds that keep one lookup (or a flood of them)
from costing the bot more than a lookup is worth."""

from __future__ import annotations

import os
from datetime import timedelta
from urllib.parse import urlsplit

from pydantic import BaseModel, Field

DEFAULT_ENDPOINT = "https://huggingface.co"
# The Hub's own hosts: a redirect may lead to one of them (a renamed repository, the LFS/Xet file CDN:
# cdn-lfs.huggingface.co, cas-bridge.xethub.hf.co) and to nothing else.
HUB_DOMAINS = ("huggingface.co", "hf.co")


class HubSettings(BaseModel):
    endpoint: str = DEFAULT_ENDPOINT
    token: str | None = None
    timeout: float = Field(default=6.0, gt=0)  # seconds for the whole lookup
    ttl_found: timedelta = timedelta(days=7)
    ttl_missing: timedelta = timedelta(hours=1)
    memo_size: int = Field(default=2048, ge=1)
    # A real config.json is 1-10 KB (the largest with label maps ~100 KB); model info lists every file of the
    # repository, a few hundred KB for the biggest. Anything beyond these is not read at all.
    max_config_bytes: int = Field(default=1 << 20, ge=1024)
    max_info_bytes: int = Field(default=4 << 20, ge=1024)
    max_redirects: int = Field(default=5, ge=0)
    # Lookups in flight at once across all users (each holds two requests); more wait their turn within `timeout`.
    max_concurrent: int = Field(default=8, ge=1)

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> HubSettings:
        e = os.environ if env is None else env
        endpoint = (e.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
        token = e.get("HF_TOKEN") or e.get("HUGGING_FACE_HUB_TOKEN") or None
        timeout = float(e.get("HF_HUB_LOOKUP_TIMEOUT") or 6.0)
        concurrent = int(e.get("HF_HUB_MAX_CONCURRENT") or 8)
        return cls(endpoint=endpoint, token=token, timeout=timeout, max_concurrent=concurrent)

    def host(self) -> str:
        return (urlsplit(self.endpoint).hostname or "").lower()

    def allows_redirect_to(self, url: str) -> bool:
        """A redirect target the lookup may follow: the endpoint's own origin, or https on the Hub's own hosts."""
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        own = urlsplit(self.endpoint)
        if host == self.host() and parts.scheme == own.scheme and parts.port == own.port:
            return True
        return parts.scheme == "https" and parts.port in (None, 443) \
            and any(host == d or host.endswith("." + d) for d in HUB_DOMAINS)
