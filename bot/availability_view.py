"""Availability figures (core/availability.py) as the bot says them: durations with each language's plurals, the
alert's one line, the short-lived mark of offer rows, and the /when answer. Nothing here claims more than the
figures allow: without enough history a line is left out, not guessed."""

from __future__ import annotations

from bot.formatting import money
from core.availability import DAY, HOUR, StayVerdict, WindowStats, typical_stay
from storage.availability import CardStats
from texts import t

_NBSP = "\u00a0"


def duration(lang: str, seconds: float) -> str:
    """'35 minutes', '1 hour 20 minutes', '3 days 4 hours' ('35 минут', '1 час 20 минут'): two units at most,
    rounded to the smaller one."""
    minutes = max(1, round(seconds / 60))
    if minutes < 60:
        return t(lang, "avail_minutes", n=minutes)
    if seconds < DAY:
        hours, rest = divmod(minutes, 60)
        if hours >= 24:  # rounding carried into a whole day
            return t(lang, "avail_days", n=1)
        head = t(lang, "avail_hours", n=hours)
        return head if rest == 0 or hours >= 10 else f"{head} {t(lang, 'avail_minutes', n=rest)}"
    hours_total = round(seconds / HOUR)
    days, hours = divmod(hours_total, 24)
    head = t(lang, "avail_days", n=days)
    return head if hours == 0 or days >= 7 else f"{head} {t(lang, 'avail_hours', n=hours)}"


def percent(share: float) -> str:
    return f"{round(share * 100)}{_NBSP}%"


def alert_line(lang: str, week: WindowStats | None) -> str | None:
    """The alert's line about the offer group's last 7 days, or None when the history cannot say."""
    if week is None:
        return None
    verdict = typical_stay(week)
    if verdict is None:
        return None
    if verdict is StayVerdict.LONG:
        return t(lang, "avail_alert_long")
    assert week.median_stay is not None
    key = "avail_alert_short" if verdict is StayVerdict.SHORT else "avail_alert_normal"
    return t(lang, key, n=max(week.appeared, week.episodes), stay=duration(lang, week.median_stay))


def short_lived(week: WindowStats | None) -> bool:
    return week is not None and typical_stay(week) is StayVerdict.SHORT


def when_answer(lang: str, stats: CardStats, what: str, cap: str | None, *, monthly: bool = False,
                filters: str = "") -> str:
    """'In the last 30 days an H100 × 1 under $2.50/GPU-hour (on RunPod · spot) was in stock 62 % of the time;
    after selling out it came back within a median 3 hours; right now: sold out for 1 hour 20 minutes.'
    `filters`: the other filters the figures went through, as /subs says them."""
    w = stats.window
    if cap is not None:
        # Said back as the user meant it: per GPU-hour only when they said so (for one GPU both are the same figure)
        # (`monthly`: the cap was said per month and `cap` is that month's figure)
        key = ("when_under" if stats.cap_per_gpu else "when_under_whole") + ("_month" if monthly else "")
        what += t(lang, key, cap=cap)
    if filters:
        what += t(lang, "when_filters", filters=filters)
    share = w.share
    if share is None:
        return t(lang, "when_no_history", what=what)
    if w.observed >= w.days * DAY * 0.9:
        parts = [t(lang, "when_share", days=w.days, what=what, share=percent(share))]
    else:
        parts = [t(lang, "when_share_thin", observed=duration(lang, w.observed), what=what, share=percent(share))]
    if w.comebacks >= 1 and w.median_comeback is not None and w.observed >= DAY:
        parts.append(t(lang, "when_comeback", gap=duration(lang, w.median_comeback)))
    if w.enough and w.median_stay is not None:
        parts.append(t(lang, "when_stay", stay=duration(lang, w.median_stay)))
    if w.now_in_stock is None or w.state_since is None:
        parts.append(t(lang, "when_now_unknown"))
    else:
        since = duration(lang, w.until - w.state_since)
        if w.now_in_stock:
            key = "when_now_in_atleast" if w.state_since_censored else "when_now_in"
            parts.append(t(lang, key, since=since, price=price_text(w.price_now, w.currency, lang)))
        else:
            key = "when_now_out_atleast" if w.state_since_censored else "when_now_out"
            parts.append(t(lang, key, since=since))
    return "; ".join(parts) + "."


def price_text(amount: float | None, currency: str, lang: str = "en") -> str:
    return money(amount, currency, lang)
