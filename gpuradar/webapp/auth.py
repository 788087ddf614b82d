"""Who is asking: Telegram's Mini App `initData`, checked with the bot token.

Telegram signs the launch parameters it hands the page (https://core.telegram.org/bots/webapps#validating-data-
received-via-the-web-app): HMAC-SHA256 of the sorted `key=value` lines under a key derived from the bot token.
aiogram's `safe_parse_webapp_init_data` does that check; on top of it `auth_date` must be at most a day old, so a
leaked launch string stops working soon. The page sends it in the `X-Telegram-Init-Data` header; without a valid one
the API answers reads only.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from aiogram.utils.web_app import safe_parse_webapp_init_data

INIT_DATA_HEADER = "X-Telegram-Init-Data"
MAX_AGE = timedelta(days=1)
MAX_INIT_DATA = 4096  # characters: Telegram's launch strings are a few hundred; anything longer is not one


@dataclass(frozen=True, slots=True)
class WebUser:
    id: int
    language_code: str | None


class InitDataError(ValueError):
    """initData missing, malformed, forged or too old; `reason` is a word for logs and the API answer."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def verify_init_data(init_data: str, token: str, *, now: datetime | None = None,
                     max_age: timedelta = MAX_AGE) -> WebUser:
    """The user the launch string was signed for; InitDataError unless it is signed with `token`, carries a user
    and was issued within `max_age` (and not in the future, beyond a minute of clock skew)."""
    if not init_data:
        raise InitDataError("missing")
    if len(init_data) > MAX_INIT_DATA:
        raise InitDataError("malformed")
    try:
        data = safe_parse_webapp_init_data(token, init_data)
    except ValueError:  # a bad signature, or fields that do not validate
        raise InitDataError("forged") from None
    except Exception:  # a query string aiogram cannot read at all (bad JSON in `user`...)
        raise InitDataError("malformed") from None
    if data.user is None:
        raise InitDataError("no_user")
    now = now or datetime.now(UTC)
    issued = data.auth_date if data.auth_date.tzinfo else data.auth_date.replace(tzinfo=UTC)
    if now - issued > max_age or issued - now > timedelta(minutes=1):
        raise InitDataError("expired")
    return WebUser(id=data.user.id, language_code=data.user.language_code)
