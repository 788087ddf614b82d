"""The shrink verdict: is a poll that the scraper found well-formed still believable, given recent polls?

A captcha page that parses as an empty list, a CDN serving a stale partial document, a marketplace API silently
capping results: each looks like a valid answer with far fewer offers than usual. Believing it would announce
"sold out" for everything that vanished, so such a poll is marked suspect and the stored state is kept.

Rules (counts are the number of offers each poll returned):
- empty after a non-empty trusted poll -> suspect, always (never accepted as the new normal on its own);
- fewer than `ratio` x the median of the last `window` trusted polls -> suspect, when that median is at least
  `min_median` (going from 3 listings to 1 is ordinary for a small provider);
- a smaller size that persists is believed eventually: after `confirm` consecutive shrink-suspect polls with a
  similar count (within the same ratio), the shrunken size is accepted as the provider's new normal.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median

from pydantic import BaseModel

DEFAULT_RATIO = 0.5
DEFAULT_WINDOW = 5
DEFAULT_MIN_MEDIAN = 4
DEFAULT_CONFIRM = 3


class ShrinkVerdict(BaseModel):
    trusted: bool
    reason: str | None = None  # English, for logs and the providers table

    @property
    def suspect(self) -> bool:
        return not self.trusted


def shrink_verdict(
    count: int,
    recent_trusted: Sequence[int],
    *,
    recent_shrunk: Sequence[int] = (),
    ratio: float = DEFAULT_RATIO,
    window: int = DEFAULT_WINDOW,
    min_median: float = DEFAULT_MIN_MEDIAN,
    confirm: int = DEFAULT_CONFIRM,
) -> ShrinkVerdict:
    """Judge `count` against recent trusted polls (newest first) and the consecutive shrink-suspect polls just
    before this one (newest first)."""
    if not recent_trusted:
        return ShrinkVerdict(trusted=True)  # nothing to compare with: the first poll sets the baseline
    last = recent_trusted[0]
    if count == 0:
        if last > 0:
            return ShrinkVerdict(trusted=False, reason=f"empty result after {last} offers in the last trusted poll")
        return ShrinkVerdict(trusted=True)
    typical = median(recent_trusted[:window])
    if typical < min_median or count >= ratio * typical:
        return ShrinkVerdict(trusted=True)
    similar = [n for n in recent_shrunk[:confirm] if n > 0 and min(n, count) >= ratio * max(n, count)]
    if len(similar) >= confirm:
        return ShrinkVerdict(trusted=True)  # the smaller size held for `confirm` polls: it is real
    return ShrinkVerdict(
        trusted=False,
        reason=f"result shrank to {count} offers from a median of {typical:g} over the last "
               f"{min(window, len(recent_trusted))} trusted polls",
    )
