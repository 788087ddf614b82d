"""Short tokens for user text that must travel in a deep link (64 characters) or callback data (64 bytes).

Short text travels itself (base64url, so it survives a restart); longer text travels as a hash that this process
remembers (an LRU of recent queries). A hash the process no longer knows decodes to None and the user is asked to
send the text again — a polite failure instead of a wrong subscription.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections import OrderedDict

INLINE_MAX = 40  # characters of encoded text kept inline; leaves room for prefixes such as "sub_" and "o:12:"


class QueryTokens:
    def __init__(self, capacity: int = 50_000) -> None:
        self._known: OrderedDict[str, str] = OrderedDict()
        self._capacity = capacity

    def encode(self, text: str) -> str:
        raw = base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")
        if len(raw) + 1 <= INLINE_MAX:
            return "b" + raw
        token = "h" + hashlib.sha1(text.encode()).hexdigest()[:16]
        self._known[token] = text
        self._known.move_to_end(token)
        while len(self._known) > self._capacity:
            self._known.popitem(last=False)
        return token

    def decode(self, token: str) -> str | None:
        if token.startswith("b"):
            raw = token[1:]
            try:
                # validate: a tampered payload is rejected, not silently stripped of odd characters
                return base64.b64decode(raw + "=" * (-len(raw) % 4), altchars=b"-_", validate=True).decode() or None
            except (binascii.Error, ValueError, UnicodeDecodeError):
                return None
        if token.startswith("h"):
            return self._known.get(token)
        return None
