"""Why a poll could not be trusted. Each error knows whether the provider answered at all (SUSPECT: it answered,
but the answer is not believable) or not (FAILED: no usable answer), so the poller's verdict is one lookup."""

from __future__ import annotations

from core.polls import PollStatus


class ScrapeError(Exception):
    """Base of everything a fetch or a parse can raise on purpose."""

    status: PollStatus = PollStatus.SUSPECT


class TransportFailed(ScrapeError):
    """Timeout or connection error (after retries): nothing came back."""

    status = PollStatus.FAILED


class HttpStatusError(ScrapeError):
    """A non-2xx answer (after retries for 5xx / 429)."""

    def __init__(self, status_code: int, url: str, retry_after: float | None = None) -> None:
        self.status_code = status_code
        self.url = url
        self.retry_after = retry_after
        super().__init__(f"HTTP {status_code} from {url}")
        # A 5xx or 429 means the provider could not serve us: no answer. A 4xx answer (403 block, 404 moved API)
        # is an answer we cannot believe.
        self.status = PollStatus.FAILED if status_code >= 500 or status_code == 429 else PollStatus.SUSPECT


class NotJsonError(ScrapeError):
    """HTML (captcha, maintenance page) or other non-JSON where JSON was expected."""


class TruncatedPayload(ScrapeError):
    """The body started as JSON but does not parse (cut off in transit)."""


class PayloadValidationError(ScrapeError):
    """The payload parsed but does not have the shape the provider's API documents."""


class PayloadTooLarge(ScrapeError):
    """The body is larger than the provider's limit: not read any further, not believed."""


class RedirectRefused(ScrapeError):
    """The provider redirected to another host (not on the allow-list), or redirected too often."""
