"""Availability statistics: how long an offer group stays in stock, how soon it comes back, where its price goes.

Pure: the figures come from two compact inputs that storage keeps incrementally (storage/availability.py):

- a series' CHANGES: (time, in stock?, price per GPU-hour) each time its availability or cheapest price moved — the
  state holds until the next change;
- its provider's COVERAGE: the stretches of time the provider was actually observed, built from trusted polls (two
  consecutive trusted polls close enough together observe the time between them; a longer silence — ingest down, a
  restart, the provider failing — is a gap: nothing is claimed about it).

A series is an offer GROUP (provider, card, GPU count, region, billing) or a provider FAMILY (the same without the
region). Figures only count observed time; an in-stock stretch is an EPISODE within one coverage stretch. An episode
that begins where observation begins (its start was not seen) or ends where observation ends (ingest stopped, or it
is still in stock) is CENSORED: its length is only a lower bound, so medians of "how long it lasts" use complete
episodes alone and say how many they rest on; callers decide from those counts whether anything "usual" can be said
(`typical_stay`). Times are epoch seconds (UTC) here; storage converts.
"""

from __future__ import annotations

import bisect
import itertools
import math
import operator
from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from core.offers import Offer
from core.slices import Steps, run_steps

DAY = 86400.0
HOUR = 3600.0
# How much history a "usually" claim needs: observation in the window, and complete episodes measured.
MIN_OBSERVED = DAY
MIN_EPISODES = 3
SHORT_LIVED = HOUR  # a median stay under this marks an offer group as short-lived
LONG_LIVED = DAY  # "usually stays for days"
TREND_BAND = 0.02  # within 2 % of the 7-day median price is "steady"
FRESH = HOUR  # the latest trusted poll speaks for "now" this long
WHOLE_GROUP = "*"  # the region of a provider family series


class Change(NamedTuple):
    at: float
    in_stock: bool
    usd: float | None  # cheapest in-stock price per GPU-hour, normalised; None when no rate was known
    rub: float | None


class Span(NamedTuple):
    start: float
    end: float


class Trend(StrEnum):
    CHEAPER = "cheaper"
    STEADY = "steady"
    DEARER = "dearer"


def group_key(offer: Offer) -> str:
    """An offer's group: the configurations a buyer would treat as the same offer (other vCPU/RAM/disk variants of
    one card count and region at one provider and billing)."""
    return series_key(offer.provider, card_of(offer), offer.gpu_count, offer.location, offer.billing.value)


def family_key(offer: Offer) -> str:
    return series_key(offer.provider, card_of(offer), offer.gpu_count, WHOLE_GROUP, offer.billing.value)


def card_of(offer: Offer) -> str:
    """The catalog card id, or the provider's own spelling (marked) when the card is not in the catalog."""
    return offer.gpu if offer.gpu is not None else f"?{offer.gpu_name}"


def series_key(provider: str, card: str, count: int, region: str, billing: str) -> str:
    return "|".join((provider, card, str(count), region, billing))


class Episode(NamedTuple):
    start: float
    end: float
    appeared: bool  # its start was seen: an observed transition into stock (not where observation began)
    complete: bool  # both its start and its end were observed
    ended: bool  # its end was observed (a sell-out seen by a trusted poll)


class WindowStats(BaseModel):
    """A series over one window ending at `until`. Durations in seconds; prices per GPU-hour in `currency`."""

    model_config = ConfigDict(frozen=True)

    days: int
    until: float
    observed: float  # seconds of the window the series' provider was observed (since the series was first seen)
    in_stock: float  # of which in stock
    appeared: int  # observed transitions into stock that began in the window
    episodes: int  # complete episodes that ended in the window (the durations' sample)
    median_stay: float | None
    p90_stay: float | None
    longest_open: float | None  # the longest censored stay overlapping the window (a lower bound)
    comebacks: int  # observed sell-outs in the window that were followed by a return
    median_comeback: float | None
    last_in_stock: float | None  # when it was last seen in stock (`until` when in stock now)
    now_in_stock: bool | None  # None: not observed now
    state_since: float | None  # when the current state began (a lower bound when `state_since_censored`)
    state_since_censored: bool
    currency: str
    price_now: float | None
    price_min: float | None
    price_median: float | None  # time-weighted over in-stock time in the window

    @property
    def share(self) -> float | None:
        return self.in_stock / self.observed if self.observed > 0 else None

    @property
    def enough(self) -> bool:
        """Whether the window holds enough history to say what is usual."""
        return self.observed >= MIN_OBSERVED and self.episodes >= MIN_EPISODES


class StayVerdict(StrEnum):
    SHORT = "short"  # typically gone within the hour
    LONG = "long"  # typically stays for days
    NORMAL = "normal"


def typical_stay(stats: WindowStats) -> StayVerdict | None:
    """What can honestly be said about how long it stays; None when the history is too thin to say anything."""
    if stats.observed < MIN_OBSERVED:
        return None
    if stats.episodes >= MIN_EPISODES and stats.median_stay is not None:
        if stats.median_stay < SHORT_LIVED:
            return StayVerdict.SHORT
        if stats.median_stay >= LONG_LIVED:
            return StayVerdict.LONG
        return StayVerdict.NORMAL
    # Few complete episodes, but observed in stock for days on end without a break: that is what it does.
    if stats.longest_open is not None and stats.longest_open >= 3 * LONG_LIVED:
        return StayVerdict.LONG
    return None


def trend(now_price: float | None, median7: float | None) -> Trend | None:
    if now_price is None or median7 is None or median7 <= 0:
        return None
    if now_price < median7 * (1 - TREND_BAND):
        return Trend.CHEAPER
    if now_price > median7 * (1 + TREND_BAND):
        return Trend.DEARER
    return Trend.STEADY


class _Piece(NamedTuple):
    start: float
    end: float
    in_stock: bool
    price: float | None
    span: int  # index of the coverage stretch it lies in
    opened: int  # how it began: _CARRIED, _UNSEEN or _SEEN


_CARRIED = 0  # the state was already in force where observation began (or the series' first record there)
_UNSEEN = 1  # a change recorded where observation resumed: it happened at some point in the gap before
_SEEN = 2  # a change between two trusted polls of one stretch: its time is known to a poll's interval


change_time = operator.attrgetter("at")  # a change's time (changes are in time order: bisected by it)


def _pieces(changes: Sequence[Change], coverage: Sequence[Span], until: float, currency: str,
            first_span: int = 0, resume_at: float | None = None) -> list[_Piece]:
    """The series' state, cut to observed time: constant pieces within coverage stretches. A piece depends only on
    its stretch and the changes up to its end, so the pieces can be cut from stretch `first_span` on, and within
    it from `resume_at` on: the end of a piece already cut there (a change's time, never the stretch's start)."""
    out: list[_Piece] = []
    if not changes:
        return out
    first = changes[0].at
    usd = currency == "USD"
    for i in range(first_span, len(coverage)):
        s, e = coverage[i]
        s, e = max(s, first), min(e, until)
        resuming = False  # cutting on inside a stretch whose earlier pieces are kept
        if resume_at is not None and i == first_span:
            s, resuming = max(s, resume_at), True
        if e <= s:
            continue
        # the change in force at s, then every change inside (s, e)
        j = bisect.bisect_right(changes, s, key=change_time) - 1
        t = s
        opened = _CARRIED
        if resuming:
            opened = _SEEN  # pieces of this stretch came before: the change at s was seen between two polls
        elif j >= 0 and changes[j].at == s:
            if s > coverage[i].start:
                opened = _SEEN  # the series' first record, made while its provider was observed: it is new
            elif j > 0 and changes[j - 1].in_stock != changes[j].in_stock:
                opened = _UNSEEN
        j = max(j, 0)
        first_piece = len(out)
        # changes j .. k-1 hold in turn over [s, e): each from its time (the first from s) to the next one's
        k = bisect.bisect_left(changes, e, j + 1, key=change_time)
        inside = [c.at for c in changes[j + 1:k]]
        for c, start, end in zip(changes[j:k], [t, *inside], [*inside, e], strict=True):
            if end > start:
                price = (c.usd if usd else c.rub) if c.in_stock else None
                out.append(_Piece(start, end, c.in_stock, price, i, opened))
            opened = _SEEN
        # A change made by the stretch's latest poll has lasted no observed time yet, but it was seen: kept as an
        # empty piece, so "now" and "appeared" know it.
        k = bisect.bisect_right(changes, e, key=change_time) - 1
        if k >= 0 and changes[k].at == e:
            c = changes[k]
            price = c.usd if currency == "USD" else c.rub
            last = out[-1] if len(out) > first_piece else None
            if last is None or (last.in_stock, last.price) != (c.in_stock, price if c.in_stock else None):
                how = opened if last is None else _SEEN
                out.append(_Piece(e, e, c.in_stock, price if c.in_stock else None, i, how))
    return out


def _episodes(pieces: Sequence[_Piece]) -> list[Episode]:
    """Maximal in-stock runs within one coverage stretch."""
    return _episodes_from(pieces, 0)[0]


def _episodes_from(pieces: Sequence[_Piece], offset: int) -> tuple[list[Episode], list[int]]:
    """`_episodes`, with the index of each episode's first piece (plus `offset`)."""
    out: list[Episode] = []
    firsts: list[int] = []
    run: tuple[_Piece, _Piece, int] | None = None  # the open run: its first piece, its last, the first's index
    for n, p in enumerate(pieces):
        if p.in_stock:
            if run is None:
                run = (p, p, n)
            elif run[1].span != p.span or run[1].end != p.start:  # another stretch, or time between
                out.append(_episode(run[0], run[1], None))
                firsts.append(offset + run[2])
                run = (p, p, n)
            else:
                run = (run[0], p, run[2])
        elif run is not None:
            out.append(_episode(run[0], run[1], p))
            firsts.append(offset + run[2])
            run = None
    if run is not None:
        out.append(_episode(run[0], run[1], None))
        firsts.append(offset + run[2])
    return out, firsts


def _running_totals(pieces: Sequence[_Piece], observed: float, in_stock: float) -> tuple[list[float], list[float]]:
    """Observed and in-stock time before each of `pieces` and after the last, from the totals before the first."""
    lengths = [p.end - p.start for p in pieces]
    return (list(itertools.accumulate(lengths, initial=observed)),
            list(itertools.accumulate((n if p.in_stock else 0.0 for n, p in zip(lengths, pieces, strict=True)),
                                      initial=in_stock)))


def _episode(first: _Piece, last: _Piece, next_piece: _Piece | None) -> Episode:
    """The episode of an in-stock run from `first` to `last`; `next_piece`: the piece after it (None: none, or
    one that cannot continue it)."""
    # Seen to end: the next piece in the same stretch is out of stock.
    ended = next_piece is not None and next_piece.span == last.span and not next_piece.in_stock
    return Episode(first.start, last.end, first.opened != _CARRIED, first.opened == _SEEN and ended, ended)


_weight = operator.itemgetter(1)  # a priced item's length


def _price_entry(piece: _Piece, items: list[tuple[float, int]], zeros: list[float], *, remove: bool) -> None:
    """Add `piece`'s in-stock price to (or `remove` it from) the sorted lists `Timeline._priced_after` holds."""
    if not piece.in_stock or (price := piece.price) is None:
        return
    if piece.end > piece.start:
        entry = (price, _micros(piece.end - piece.start))
        if remove:
            del items[bisect.bisect_left(items, entry)]
        else:
            bisect.insort(items, entry)
    elif remove:
        del zeros[bisect.bisect_left(zeros, price)]
    else:
        bisect.insort(zeros, price)


def _quantile(values: Sequence[float], q: float) -> float | None:
    """The nearest-rank quantile (a real observed value, no interpolation)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[rank - 1]


def _micros(seconds: float) -> int:
    """A positive length of time in whole microseconds (at least one: every observed moment weighs): weights that
    add up exactly, in any order, so a median found from running totals is the one a walk finds."""
    return int(seconds * 1e6 + 0.5) or 1


def _weighted_median(pairs: Iterable[tuple[float, float]]) -> float | None:
    """Median of values weighted by time: the price the series asked for half of its in-stock time or less."""
    return _median_of_sorted(sorted((v, _micros(w)) for v, w in pairs if w > 0))


def _median_of_sorted(items: Sequence[tuple[float, int]]) -> float | None:
    """`_weighted_median` of (value, weight in microseconds > 0) pairs already sorted."""
    total = sum(w for _, w in items)
    if total <= 0:
        return None
    acc = 0
    for v, w in items:
        acc += w
        if 2 * acc >= total:
            return v
    return items[-1][0]


def _median_with(items: Sequence[tuple[float, int]], totals: Sequence[int],
                 head: tuple[float, int] | None) -> float | None:
    """`_median_of_sorted` of `items` with `head` inserted in order (None: nothing inserted), found by bisection
    in `totals`, the items' running totals of weight (exact integers, so the same median)."""
    total = (totals[-1] if totals else 0) + (head[1] if head is not None else 0)
    if total <= 0:
        return None
    need = (total + 1) // 2  # the first item whose running total reaches half of the total
    if head is None:
        return items[bisect.bisect_left(totals, need)][0]
    pos = bisect.bisect_right(items, head)
    k = bisect.bisect_left(totals, need, 0, pos)
    if k < pos:
        return items[k][0]
    if (totals[pos - 1] if pos else 0) + head[1] >= need:
        return head[0]
    return items[bisect.bisect_left(totals, need - head[1], pos)][0]


def window_stats(changes: Sequence[Change], coverage: Sequence[Span], *, until: float, days: int,
                 currency: str = "USD", fresh: float = FRESH) -> WindowStats:
    """Figures over the `days` ending at `until`. `changes` sorted by time, starting with the state in force at the
    window's start when there is one (earlier changes are welcome: an episode's true start counts); `coverage`
    sorted, not overlapping (the provider's observed stretches). The state "now" is the latest trusted poll's when
    it is at most `fresh` seconds old; otherwise nothing is said about now."""
    since = until - days * DAY
    pieces = _pieces(changes, coverage, until, currency)
    episodes = _episodes(pieces)
    observed = sum(min(p.end, until) - max(p.start, since) for p in pieces if p.end > since)
    in_stock = sum(min(p.end, until) - max(p.start, since) for p in pieces if p.end > since and p.in_stock)
    appeared = sum(1 for e in episodes if e.appeared and e.start >= since)
    stays = [e.end - e.start for e in episodes if e.complete and e.end > since]
    open_stays = [e.end - e.start for e in episodes if not e.complete and e.end > since]
    comeback_gaps: list[float] = []
    for a, b in itertools.pairwise(episodes):
        # a sell-out that was seen, followed by a return seen in the same stretch
        if a.ended and b.appeared and b.start > since and _same_span(coverage, a.end, b.start):
            comeback_gaps.append(b.start - a.end)
    last_in_stock = max((p.end for p in pieces if p.in_stock), default=None)
    # "Now" is what the latest trusted poll saw, if it is recent enough to speak for now.
    live = pieces[-1] if pieces and pieces[-1].end == min(coverage[-1].end, until) \
        and until - coverage[-1].end <= fresh else None
    now_in_stock = live.in_stock if live is not None else None
    since_state, censored = None, False
    if live is not None:
        k = len(pieces) - 1
        while k > 0 and pieces[k - 1].in_stock == live.in_stock and pieces[k - 1].span == live.span \
                and pieces[k - 1].end == pieces[k].start:
            k -= 1
        since_state = pieces[k].start
        censored = pieces[k].opened != _SEEN
    priced = [(p.price, min(p.end, until) - max(p.start, since)) for p in pieces
              if p.in_stock and p.price is not None and p.end > since]
    price_now = live.price if live is not None and live.in_stock else None
    return WindowStats(
        days=days, until=until, observed=max(0.0, observed), in_stock=max(0.0, in_stock), appeared=appeared,
        episodes=len(stays), median_stay=_quantile(stays, 0.5), p90_stay=_quantile(stays, 0.9),
        longest_open=max(open_stays, default=None), comebacks=len(comeback_gaps),
        median_comeback=_quantile(comeback_gaps, 0.5), last_in_stock=last_in_stock, now_in_stock=now_in_stock,
        state_since=since_state, state_since_censored=censored, currency=currency, price_now=price_now,
        price_min=min((v for v, _ in priced), default=None), price_median=_weighted_median(priced))


class Timeline:
    """A series' (or a merged "any of them") history prepared once for many windows: `window(until, days)` gives
    what `window_stats` gives — the same pieces and episodes, the window's sums from running totals and its
    medians from the pieces and episodes inside it — without walking the whole history again (a held timeline
    answers /when in a bisect and a sort of the window's own episodes: storage/availability_cache.py). Sums may
    differ from `window_stats`' in the last bits of a float (added in another order)."""

    __slots__ = ("_appeared", "_comebacks", "_coverage", "_ends", "_episode_ends", "_episode_firsts", "_episodes",
                 "_in_stock", "_last_end", "_last_in_stock", "_live", "_observed", "_open_max", "_pieces",
                 "_priced_from", "_stays_from", "currency")

    def __init__(self, changes: Sequence[Change], coverage: Sequence[Span], currency: str = "USD", *,
                 pieces: list[_Piece] | None = None) -> None:
        if pieces is None:
            pieces = _pieces(changes, coverage, math.inf, currency)
        observed, in_stock = _running_totals(pieces, 0.0, 0.0)
        episodes, firsts = _episodes_from(pieces, 0)
        self._set(currency, coverage, pieces, [p.end for p in pieces], observed, in_stock, episodes, firsts)
        # What the latest window read past its first piece (`_priced_after`) and first episode (`_stays_after`):
        # the next window usually starts in the same ones (pieces last minutes to days).
        self._priced_from: tuple[int, list[tuple[float, int]], list[int], list[float]] | None = None
        self._stays_from: tuple[int, list[float]] | None = None

    def _set(self, currency: str, coverage: Sequence[Span], pieces: list[_Piece], ends: list[float],
             observed: list[float], in_stock: list[float], episodes: list[Episode], firsts: list[int]) -> None:
        """Everything else from the pieces (with their running totals) and the episodes: walks the episodes, and
        of the pieces only the latest state's run."""
        self.currency = currency
        self._coverage = tuple(coverage)
        self._last_end = coverage[-1].end if coverage else -math.inf
        self._pieces = pieces
        self._ends = ends
        self._observed = observed
        self._in_stock = in_stock
        self._episodes = episodes
        self._episode_firsts = firsts
        self._episode_ends = [e.end for e in episodes]
        self._appeared = [e.start for e in episodes if e.appeared]  # in time order, as the episodes are
        # the longest censored stay from episode i on
        open_max: list[float | None] = [None] * (len(episodes) + 1)
        for i in range(len(episodes) - 1, -1, -1):
            e, after = episodes[i], open_max[i + 1]
            here = None if e.complete else e.end - e.start
            open_max[i] = here if after is None else after if here is None else max(here, after)
        self._open_max = open_max
        starts = [sp.start for sp in coverage]
        self._comebacks = [(b.start, b.start - a.end) for a, b in itertools.pairwise(episodes)
                           if a.ended and b.appeared and _same_span(coverage, a.end, b.start, starts)]
        # Piece ends never decrease: the last in-stock piece ends latest.
        self._last_in_stock = next((p.end for p in reversed(pieces) if p.in_stock), None)
        live: tuple[_Piece, float, bool] | None = None
        if pieces and pieces[-1].end == self._last_end and pieces[-1].in_stock:  # the latest episode's state
            first = pieces[firsts[-1]]
            live = (pieces[-1], first.start, first.opened != _SEEN)
        elif pieces and pieces[-1].end == self._last_end:  # out of stock since the start of that run of pieces
            last = pieces[-1]
            k = len(pieces) - 1
            while k > 0 and pieces[k - 1].in_stock == last.in_stock and pieces[k - 1].span == last.span \
                    and pieces[k - 1].end == pieces[k].start:
                k -= 1
            live = (last, pieces[k].start, pieces[k].opened != _SEEN)
        self._live = live

    def resumed(self, changes: Sequence[Change], coverage: Sequence[Span], t0: float) -> Timeline:
        """The timeline of `changes` and `coverage`, given that they are this one's inputs before `t0` (no change
        and no stretch that ends before `t0` differs: a poll's new rows and an extended last stretch, as
        storage/availability_cache.py finds them): the pieces of the stretches that ended before `t0` are this
        one's, only the later stretches are cut afresh; the pieces' running totals, the episodes and what the
        latest window sorted are carried up to where they stop depending on later pieces. The same timeline as
        `Timeline(changes, coverage)`."""
        old = self._coverage
        m = bisect.bisect_left([s.end for s in old], t0)  # the stretches that ended before t0
        if len(coverage) < m or tuple(coverage[:m]) != old[:m] or not changes:
            return Timeline(changes, coverage, self.currency)
        # The pieces that ended before t0 are kept: each is a change's time to the next change's, both before t0
        # (the stretch's own end is not before t0 unless the whole stretch is). Those inside stretch m (where t0
        # falls) hold only while that stretch still starts where it did.
        k = bisect.bisect_left(self._ends, t0)
        resume_at: float | None = None
        if k and self._pieces[k - 1].span == m:
            if not (m < len(coverage) and coverage[m].start == old[m].start):
                return Timeline(changes, coverage, self.currency)
            resume_at = self._pieces[k - 1].end
        added = _pieces(changes, coverage, math.inf, self.currency, first_span=m, resume_at=resume_at)
        pieces = self._pieces[:k] + added
        observed, in_stock = _running_totals(added, self._observed[k], self._in_stock[k])
        # The episodes are cut afresh from the first piece where the episode walk starts with nothing open: the
        # first piece of episode e, the one holding piece k - 1 (an in-stock run is open to what follows), or
        # piece k when that piece is not in stock.
        if k and self._pieces[k - 1].in_stock:
            e = bisect.bisect_right(self._episode_firsts, k - 1) - 1
            r = self._episode_firsts[e]
        else:
            e, r = bisect.bisect_left(self._episode_firsts, k), k
        later, later_firsts = _episodes_from(pieces[r:], r)
        out = Timeline.__new__(Timeline)
        out._set(self.currency, coverage, pieces, self._ends[:k] + [p.end for p in added],
                 self._observed[:k] + observed, self._in_stock[:k] + in_stock, self._episodes[:e] + later,
                 self._episode_firsts[:e] + later_firsts)
        out._priced_from = self._priced_carried(k, added)
        out._stays_from = self._stays_carried(e, later)
        return out

    def _priced_carried(self, k: int, added: Sequence[_Piece]) -> tuple[int, list[tuple[float, int]], list[int],
                                                                          list[float]] | None:
        """What `_priced_after` held, with this timeline's pieces from k on replaced by `added`."""
        held = self._priced_from
        if held is None or held[0] >= k:
            return None
        i, items, _, zeros = held
        items, zeros = list(items), list(zeros)
        for piece in self._pieces[k:]:
            _price_entry(piece, items, zeros, remove=True)
        for piece in added:
            _price_entry(piece, items, zeros, remove=False)
        return i, items, list(itertools.accumulate(map(_weight, items))), zeros

    def _stays_carried(self, e: int, later: Sequence[Episode]) -> tuple[int, list[float]] | None:
        """What `_stays_after` held, with this timeline's episodes from e on replaced by `later`."""
        held = self._stays_from
        if held is None or held[0] > e:
            return None
        j, stays = held[0], list(held[1])
        for ep in self._episodes[e:]:
            if ep.complete:
                del stays[bisect.bisect_left(stays, ep.end - ep.start)]
        for ep in later:
            if ep.complete:
                bisect.insort(stays, ep.end - ep.start)
        return j, stays

    def _priced_after(self, i: int) -> tuple[list[tuple[float, int]], list[int], float | None]:
        """The in-stock priced pieces after piece i: (price, length in microseconds) of those with a length,
        sorted, with their running totals of length, and the lowest price of them all."""
        held = self._priced_from
        if held is None or held[0] != i:
            items: list[tuple[float, int]] = []
            zeros: list[float] = []
            for p in itertools.islice(self._pieces, i + 1, None):
                if p.in_stock and (v := p.price) is not None:
                    if p.end > p.start:
                        items.append((v, _micros(p.end - p.start)))
                    else:
                        zeros.append(v)
            items.sort()
            zeros.sort()
            held = self._priced_from = (i, items, list(itertools.accumulate(map(_weight, items))), zeros)
        items, zeros = held[1], held[3]
        lowest = min(items[0][0] if items else math.inf, zeros[0] if zeros else math.inf)
        return items, held[2], None if lowest == math.inf else lowest

    def _stays_after(self, j: int) -> list[float]:
        """The lengths of the complete episodes from episode j on, sorted."""
        held = self._stays_from
        if held is None or held[0] != j:
            held = self._stays_from = (j, sorted(e.end - e.start for e in self._episodes[j:] if e.complete))
        return held[1]

    def covers(self, until: float) -> bool:
        """Whether `window` can answer for a window ending at `until`: not before the last observed moment (a
        clock set back: `window_stats` cuts the history there instead)."""
        return until >= self._last_end

    def window(self, *, until: float, days: int, fresh: float = FRESH) -> WindowStats:
        """`window_stats(changes, coverage, until=until, days=days, currency=currency)`; `until` as `covers`
        allows."""
        if not self.covers(until):
            raise ValueError("until before the last observation")
        since = until - days * DAY
        pieces = self._pieces
        i = bisect.bisect_right(self._ends, since)  # the first piece ending after the window's start
        observed = in_stock = 0.0
        if i < len(pieces):
            head = pieces[i]
            clipped = head.end - max(head.start, since)
            observed = clipped + (self._observed[-1] - self._observed[i + 1])
            in_stock = (clipped if head.in_stock else 0.0) + (self._in_stock[-1] - self._in_stock[i + 1])
        appeared = len(self._appeared) - bisect.bisect_left(self._appeared, since)
        j = bisect.bisect_right(self._episode_ends, since)
        stays = self._stays_after(j)
        gaps = [gap for start, gap in self._comebacks[bisect.bisect_right(self._comebacks, (since, math.inf)):]]
        live = self._live if self._live is not None and until - self._last_end <= fresh else None
        # The window's in-stock prices: its first piece (cut at the window's start) and every piece after it.
        priced, totals, price_min = self._priced_after(i)
        first: tuple[float, int] | None = None
        if i < len(pieces) and (head := pieces[i]).in_stock and head.price is not None:
            price_min = head.price if price_min is None else min(head.price, price_min)
            length = head.end - max(head.start, since)
            if length > 0:
                first = (head.price, _micros(length))
        return WindowStats(
            days=days, until=until, observed=max(0.0, observed), in_stock=max(0.0, in_stock), appeared=appeared,
            episodes=len(stays), median_stay=_quantile(stays, 0.5), p90_stay=_quantile(stays, 0.9),
            longest_open=self._open_max[j], comebacks=len(gaps), median_comeback=_quantile(gaps, 0.5),
            last_in_stock=self._last_in_stock, now_in_stock=live[0].in_stock if live is not None else None,
            state_since=live[1] if live is not None else None,
            state_since_censored=live[2] if live is not None else False, currency=self.currency,
            price_now=live[0].price if live is not None and live[0].in_stock else None,
            price_min=price_min, price_median=_median_with(priced, totals, first))


def windows(changes: Sequence[Change], coverage: Sequence[Span], *, until: float, days: Sequence[int],
            currency: str = "USD") -> dict[int, WindowStats]:
    """`window_stats` for each of `days`, the history prepared once (a Timeline) unless `until` is before the last
    observation."""
    timeline_ = Timeline(changes, coverage, currency)
    if not timeline_.covers(until):
        return {d: window_stats(changes, coverage, until=until, days=d, currency=currency) for d in days}
    return {d: timeline_.window(until=until, days=d) for d in days}


class Stretch(NamedTuple):
    start: float
    end: float
    in_stock: bool


def timeline(changes: Sequence[Change], coverage: Sequence[Span], *, since: float, until: float) -> list[Stretch]:
    """The series' state over observed time between `since` and `until`, as maximal stretches (in stock or not):
    what /history draws under its price chart. Time outside them was not observed: nothing is claimed about it."""
    out: list[Stretch] = []
    for p in _pieces(changes, coverage, until, "USD"):
        start, end = max(p.start, since), min(p.end, until)
        if end <= start:
            continue
        if out and out[-1].in_stock == p.in_stock and out[-1].end == start:
            out[-1] = Stretch(out[-1].start, end, p.in_stock)
        else:
            out.append(Stretch(start, end, p.in_stock))
    return out


def _same_span(coverage: Sequence[Span], a: float, b: float, starts: Sequence[float] | None = None) -> bool:
    """Whether times a and b lie in one stretch of `coverage` (`starts`: its stretches' starts, when at hand)."""
    i = bisect.bisect_right([s.start for s in coverage] if starts is None else starts, a) - 1
    return i >= 0 and coverage[i].start <= a and b <= coverage[i].end


def merge_coverage(spans: Iterable[Span]) -> list[Span]:
    out: list[Span] = []
    for s in sorted(spans):
        if out and s.start <= out[-1].end:
            if s.end > out[-1].end:
                out[-1] = Span(out[-1].start, s.end)
        else:
            out.append(s)
    return out


def combine(series: Sequence[tuple[Sequence[Change], Sequence[Span]]], *, cap: float | None = None,
            currency: str = "USD", caps: Sequence[float | None] | None = None) -> tuple[list[Change], list[Span]]:
    """Several series as one: "any of them in stock (at or under `cap` per GPU-hour, in `currency`)", priced at the
    cheapest such. `caps`, when given, is each series' own cap per GPU-hour instead (a cap on the whole
    configuration's hourly price is a different cap per GPU for each GPU count). Each series counts only where its
    own provider was observed; the result's coverage is the union. (A series with no known price in `currency`
    never meets a cap.)"""
    return run_steps(combining(series, cap=cap, currency=currency, caps=caps))


COMBINE_STEP = 16_000  # series' states looked at between two points where `combining` may yield (a few ms)


def combining(series: Sequence[tuple[Sequence[Change], Sequence[Span]]], *, cap: float | None = None,
              currency: str = "USD", caps: Sequence[float | None] | None = None
              ) -> Steps[tuple[list[Change], list[Span]]]:
    """`combine` in steps (core.slices), for a loop that must keep answering: a replica's first /when of a card
    merges 30 days of a dozen provider families, ~100,000 changes when they move every few minutes, 0.2 s in one
    go (issue 26). The series are copied first, so what holds them may change them while it yields."""
    series = [(tuple(changes), tuple(coverage)) for changes, coverage in series]
    limits = list(caps) if caps is not None else [cap] * len(series)
    # (time, order, series, position, change or None = unobserved): the position keeps the order they were added in
    # among equal (time, order, series), and no comparison reaches the change
    runs: list[list[tuple[float, int, int, int, Change | None]]] = []
    for n, (changes, coverage) in enumerate(series):
        run: list[tuple[float, int, int, int, Change | None]] = []
        for i in range(0, len(changes), COMBINE_STEP):
            run += [(c.at, 1, n, i + j, c) for j, c in enumerate(changes[i:i + COMBINE_STEP])]
            yield
        for s in coverage:
            run.append((s.start, 0, n, len(run), None))  # observed from here: its state in force applies
            run.append((s.end, 2, n, len(run), None))
        run.sort()  # two sorted runs (changes, stretches): one merge
        runs.append(run)
        yield
    # Sorted as one list would be, in steps: pairs of sorted runs merged level by level (two runs side by side
    # are one merge for list.sort), the longest step one merge of everything, not a sort of everything.
    while len(runs) > 1:
        paired = []
        for i in range(0, len(runs) - 1, 2):
            pair = runs[i] + runs[i + 1]
            pair.sort()
            paired.append(pair)
            yield
        runs = paired + runs[len(runs) - len(runs) % 2:]
    events = runs[0] if runs else []
    observed: list[bool] = [False] * len(series)
    state: list[Change | None] = [None] * len(series)
    other = "rub" if currency == "USD" else "usd"

    def merged_at(at: float) -> Change:
        best: float | None = None
        best_other: float | None = None
        any_in = False
        for k, held in enumerate(state):
            if held is None or not observed[k] or not held.in_stock:
                continue
            price = held.usd if currency == "USD" else held.rub
            limit = limits[k]
            if limit is not None and (price is None or price > limit):
                continue
            any_in = True
            if price is not None and (best is None or price < best):
                best, best_other = price, getattr(held, other)
        usd, rub = (best, best_other) if currency == "USD" else (best_other, best)
        return Change(at, any_in, usd if any_in else None, rub if any_in else None)

    out: list[Change] = []
    every = max(1, COMBINE_STEP // (len(series) + 8))  # moments between two yields (a moment costs ~8 series' looks)
    # One merged state per moment: what starts and changes there first, then what stops being observed. Where
    # every series' observation ends at once nothing more is claimed (the state is unknown from there, not "sold
    # out": else the latest poll's state would read as gone the moment it was seen).
    for moment, (at, group) in enumerate(itertools.groupby(events, key=operator.itemgetter(0))):
        if moment % every == every - 1:
            yield
        ends: list[int] = []
        for _, order, n, _, change in group:
            if change is not None:
                state[n] = change
            elif order == 0:
                observed[n] = True
            else:
                ends.append(n)
        if not any(observed):
            continue
        merged = merged_at(at)
        if ends:
            for n in ends:
                observed[n] = False
            if any(observed):
                merged = merged_at(at)
        if not out or out[-1][1:] != merged[1:]:
            out.append(merged)
    coverage = merge_coverage(s for _, cov in series for s in cov)
    return out, coverage
