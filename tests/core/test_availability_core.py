"""core.availability on synthetic histories with answers worked out by hand: appear/disappear sequences, gaps in
observation, restarts, retention cut-offs, cards merged across providers under a cap."""

from __future__ import annotations

import random

import pytest

from core.availability import (
    COMBINE_STEP,
    DAY,
    HOUR,
    Change,
    Span,
    StayVerdict,
    Timeline,
    Trend,
    combine,
    combining,
    timeline,
    trend,
    typical_stay,
    window_stats,
    windows,
)

M = 60.0


def out(at: float) -> Change:
    return Change(at, False, None, None)


def on(at: float, usd: float = 2.0) -> Change:
    return Change(at, True, usd, usd * 80)


def cycles(start: float, n: int, stay: float, period: float, usd: float = 2.0) -> list[Change]:
    """Out of stock at `start`, then `n` times: in stock for `stay`, out until the next period."""
    changes = [out(start)]
    for k in range(n):
        t = start + HOUR + k * period
        changes += [on(t, usd), out(t + stay)]
    return changes


def test_appear_disappear_sequence() -> None:
    # Observed for 3 days; in stock 35 min every 6 hours from hour 1.
    until = 3 * DAY
    changes = cycles(0.0, 12, 35 * M, 6 * HOUR)
    s = window_stats(changes, [Span(0.0, until)], until=until, days=7)
    assert s.appeared == 12 and s.episodes == 12
    assert s.median_stay == 35 * M and s.p90_stay == 35 * M
    assert s.comebacks == 11 and s.median_comeback == 6 * HOUR - 35 * M
    assert s.observed == until and s.in_stock == 12 * 35 * M
    assert s.share == pytest.approx(12 * 35 / (3 * 24 * 60))
    assert s.now_in_stock is False and s.last_in_stock == changes[-1].at
    assert s.state_since == changes[-1].at and not s.state_since_censored
    assert typical_stay(s) is StayVerdict.SHORT


def test_two_hours_of_history_say_nothing_usual() -> None:
    changes = [out(0.0), on(10 * M), out(20 * M), on(40 * M), out(50 * M), on(70 * M), out(80 * M)]
    s = window_stats(changes, [Span(0.0, 2 * HOUR)], until=2 * HOUR, days=7)
    assert s.episodes == 3 and s.median_stay == 10 * M
    assert typical_stay(s) is None  # three short stays in two hours are not "usually"
    assert not s.enough


def test_first_poll_state_is_not_an_appearance_and_its_stay_is_censored() -> None:
    # In stock at the provider's first poll, sold out 2 h later, back 1 h after that, still in stock.
    changes = [on(0.0), out(2 * HOUR), on(3 * HOUR)]
    s = window_stats(changes, [Span(0.0, 5 * HOUR)], until=5 * HOUR, days=7)
    assert s.appeared == 1  # only the return was seen happening
    assert s.episodes == 0  # neither stay has both ends observed
    assert s.longest_open == 2 * HOUR
    assert s.comebacks == 1 and s.median_comeback == HOUR
    assert s.now_in_stock is True and s.state_since == 3 * HOUR and not s.state_since_censored


def test_a_gap_cuts_episodes_and_is_not_observed_time() -> None:
    # Polls observed 0-10 h and 15-24 h (ingest down for 5 h). In stock 9-16 h: the stay spans the gap.
    changes = [out(0.0), on(9 * HOUR), out(16 * HOUR), on(20 * HOUR), out(21 * HOUR)]
    cov = [Span(0.0, 10 * HOUR), Span(15 * HOUR, 24 * HOUR)]
    s = window_stats(changes, cov, until=24 * HOUR, days=7)
    assert s.observed == 19 * HOUR
    assert s.in_stock == HOUR + HOUR + HOUR  # 9-10, 15-16, 20-21
    assert s.episodes == 1 and s.median_stay == HOUR  # only 20-21 h is complete
    assert s.appeared == 2  # 9 h and 20 h; 15 h is the same stay seen again, not an appearance
    assert s.comebacks == 1 and s.median_comeback == 4 * HOUR  # 16 -> 20 h; nothing measured across the gap


def test_return_during_a_gap_counts_as_appearance_but_not_as_a_measured_stay() -> None:
    changes = [out(0.0), on(12 * HOUR), out(13 * HOUR)]
    cov = [Span(0.0, 10 * HOUR), Span(12 * HOUR, 20 * HOUR)]
    s = window_stats(changes, cov, until=20 * HOUR, days=7)
    assert s.appeared == 1
    assert s.episodes == 0  # when it came back during the silence is unknown
    assert s.longest_open == HOUR
    assert s.comebacks == 0


def test_stale_observation_says_nothing_about_now() -> None:
    changes = [out(0.0), on(HOUR)]
    s = window_stats(changes, [Span(0.0, 2 * HOUR)], until=10 * HOUR, days=7)
    assert s.now_in_stock is None and s.price_now is None
    assert s.last_in_stock == 2 * HOUR
    fresh = window_stats(changes, [Span(0.0, 2 * HOUR)], until=2.5 * HOUR, days=7)
    assert fresh.now_in_stock is True


def test_window_cut_keeps_the_state_in_force_and_true_episode_starts() -> None:
    # 40 days observed; the changes list starts with the state in force 30 days ago (as after retention).
    until = 40 * DAY
    changes = [on(9 * DAY), out(10.5 * DAY), on(36 * DAY), out(36 * DAY + 2 * HOUR)]
    cov = [Span(0.0, until)]
    s30 = window_stats(changes, cov, until=until, days=30)
    assert s30.observed == 30 * DAY
    assert s30.in_stock == 0.5 * DAY + 2 * HOUR  # 10-10.5 d and the 2 h on day 36
    assert s30.appeared == 1  # the one at 9 d began before the window
    # The stay that began before the window ended inside it: its full length counts (its start is on record).
    assert sorted([s30.median_stay or 0, s30.p90_stay or 0]) == [2 * HOUR, 1.5 * DAY]
    s7 = window_stats(changes, cov, until=until, days=7)
    assert s7.in_stock == 2 * HOUR and s7.episodes == 1


def test_prices_and_trend() -> None:
    changes = [out(0.0), on(HOUR, 3.0), on(3.5 * HOUR, 2.0), on(4 * HOUR, 1.5)]
    s = window_stats(changes, [Span(0.0, 5 * HOUR)], until=5 * HOUR, days=7)
    assert s.price_now == 1.5 and s.price_min == 1.5
    assert s.price_median == 3.0  # 2.5 h at 3.0 of 4 h in stock
    assert trend(s.price_now, s.price_median) is Trend.CHEAPER
    assert trend(3.03, 3.0) is Trend.STEADY and trend(3.2, 3.0) is Trend.DEARER and trend(None, 3.0) is None
    rub = window_stats(changes, [Span(0.0, 5 * HOUR)], until=5 * HOUR, days=7, currency="RUB")
    assert rub.price_now == 120.0


def test_long_stays_say_days() -> None:
    changes = [out(0.0)]
    for k in range(3):
        changes += [on(k * 2.2 * DAY + HOUR), out(k * 2.2 * DAY + HOUR + 2 * DAY)]
    s = window_stats(changes, [Span(0.0, 7 * DAY)], until=7 * DAY, days=7)
    assert s.median_stay == pytest.approx(2 * DAY)
    assert typical_stay(s) is StayVerdict.LONG


def test_combine_any_card_under_a_cap_across_providers() -> None:
    # Provider A: in stock 0-2 h at $3 (over the cap), 2-4 h at $2. Provider B: 3-6 h at $2.4, observed only to 5 h.
    a = ([on(0.0, 3.0), on(2 * HOUR, 2.0), out(4 * HOUR)], [Span(0.0, 8 * HOUR)])
    b = ([out(0.0), on(3 * HOUR, 2.4), out(6 * HOUR)], [Span(0.0, 5 * HOUR), Span(7 * HOUR, 8 * HOUR)])
    merged, cov = combine([a, b], cap=2.5)
    assert cov == [Span(0.0, 8 * HOUR)]
    s = window_stats(merged, cov, until=8 * HOUR, days=7)
    assert s.in_stock == 3 * HOUR  # 2-5 h: A from 2 h, then B until its provider was last seen
    assert s.price_min == 2.0 and s.now_in_stock is False
    without_cap, _ = combine([a, b])
    s2 = window_stats(without_cap, cov, until=8 * HOUR, days=7)
    assert s2.in_stock == 5 * HOUR


def test_a_change_seen_by_the_latest_poll_counts_at_once() -> None:
    changes = [out(0.0), on(2 * HOUR, 1.8)]
    s = window_stats(changes, [Span(0.0, 2 * HOUR)], until=2 * HOUR + M, days=7)
    assert s.appeared == 1 and s.now_in_stock is True and s.state_since == 2 * HOUR and s.price_now == 1.8
    assert s.in_stock == 0.0 and s.episodes == 0
    gone = window_stats([out(0.0), on(HOUR), out(2 * HOUR)], [Span(0.0, 2 * HOUR)], until=2 * HOUR + M, days=7)
    assert gone.episodes == 1 and gone.median_stay == HOUR and gone.now_in_stock is False


def test_timeline_is_observed_time_only() -> None:
    # Observed 0-5 h and 7-10 h; in stock 1-2 h, 4-6 h (the gap from 5 h cuts it), back at 8 h; a price move at 9 h.
    changes = [out(0.0), on(HOUR), out(2 * HOUR), on(4 * HOUR), out(6 * HOUR), on(8 * HOUR), on(9 * HOUR, 3.0)]
    coverage = [Span(0.0, 5 * HOUR), Span(7 * HOUR, 10 * HOUR)]
    stretches = timeline(changes, coverage, since=0.5 * HOUR, until=10 * HOUR)
    assert [(s.start / HOUR, s.end / HOUR, s.in_stock) for s in stretches] == [
        (0.5, 1, False), (1, 2, True), (2, 4, False), (4, 5, True),  # the window starts at 0.5 h
        (7, 8, False), (8, 10, True)]  # 5-7 h unobserved: no stretch; the price move is not a new stretch
    assert timeline([], coverage, since=0.0, until=10 * HOUR) == []


def _history(rng: random.Random) -> tuple[list[Change], list[Span]]:
    """Polls every 5 minutes over ~40 days in stretches with gaps between them; the state moving at some polls
    (stock flips, price moves), some changes where a stretch begins or ends, some before observation began."""
    changes: list[Change] = []
    coverage: list[Span] = []
    t = rng.choice([0.0, -3 * HOUR])
    while t < 40 * DAY:
        length = rng.choice([5 * M, 3 * HOUR, DAY, 4 * DAY, 10 * DAY])
        coverage.append(Span(t, t + length))
        k = t
        while k <= t + length:
            if not changes or rng.random() < 0.15:
                in_stock = rng.random() < 0.6
                price = round(rng.uniform(1, 3), 2)
                changes.append(Change(k, in_stock, price if in_stock else None, price * 80 if in_stock else None))
            k += 5 * M
        t += length + rng.choice([10 * M, 3 * HOUR, 2 * DAY])
    return changes, coverage


@pytest.mark.parametrize("seed", range(40))
def test_a_prepared_timeline_answers_as_window_stats(seed: int) -> None:
    """core.availability.Timeline (the history prepared once, what a replica holds for /when) gives every window
    what window_stats gives, whatever the history and wherever the window ends."""
    rng = random.Random(seed)
    changes, coverage = _history(rng)
    if seed % 4 == 0:
        changes, coverage = combine([(changes, coverage), _history(rng)], cap=2.5)
    for currency in ("USD", "RUB"):
        prepared = Timeline(changes, coverage, currency)
        last = coverage[-1].end
        for until in (last, last + 10 * M, last + 2 * HOUR, last + 20 * DAY, last + 60 * DAY):
            for days in (1, 7, 30):
                want = window_stats(changes, coverage, until=until, days=days, currency=currency)
                got = prepared.window(until=until, days=days)
                sums = ("observed", "in_stock")
                assert got.model_dump(exclude=set(sums)) == want.model_dump(exclude=set(sums))
                for name in sums:  # the same time, added in another order
                    assert getattr(got, name) == pytest.approx(getattr(want, name), abs=1e-3)
        assert not prepared.covers(last - 1)
        assert windows(changes, coverage, until=last - HOUR, days=(7,), currency=currency)[7] == window_stats(
            changes, coverage, until=last - HOUR, days=7, currency=currency)


@pytest.mark.parametrize("seed", range(16))
def test_a_timeline_resumed_from_where_its_inputs_moved_is_the_fresh_one(seed: int) -> None:
    """Timeline.resumed (what a replica does after a poll: the history up to some time T held, new changes and an
    extended or new stretch from T on) gives the timeline built afresh, piece for piece and window for window,
    wherever T falls (inside a stretch, in a gap, at a change) and for any t0 at or before the first difference."""
    rng = random.Random(5000 + seed)
    changes, coverage = _history(rng)
    if seed % 4 == 0:
        changes, coverage = combine([(changes, coverage), _history(rng)], cap=2.5)
    points = [*(c.at for c in changes[1:]), *(s.end for s in coverage), *(s.start for s in coverage)]
    for cut in [*rng.sample(points, 2), rng.uniform(coverage[0].start, coverage[-1].end), coverage[-1].end - M]:
        before = [c for c in changes if c.at < cut]
        if not before:
            continue
        held_cov = [Span(sp.start, min(sp.end, cut)) for sp in coverage if sp.start < cut]
        t0 = cut - rng.choice([0.0, 0.0, 5 * M, 2 * DAY])  # the cache's t0, or an earlier one
        for currency in ("USD", "RUB"):
            held = Timeline(before, held_cov, currency)
            # A window asked of the held timeline (what it sorted for it is carried into the resumed one).
            held.window(until=held_cov[-1].end, days=rng.choice([1, 7, 30]))
            resumed = held.resumed(changes, coverage, t0)
            fresh = Timeline(changes, coverage, currency)
            for name in ("_pieces", "_ends", "_observed", "_in_stock", "_episodes", "_episode_firsts",
                         "_episode_ends", "_appeared", "_open_max", "_comebacks", "_last_in_stock", "_live",
                         "_coverage", "_last_end"):
                assert getattr(resumed, name) == getattr(fresh, name), name
            if resumed._priced_from is not None:  # carried: what a fresh sort of the same pieces gives
                i = resumed._priced_from[0]
                items, totals, _ = fresh._priced_after(i)
                assert fresh._priced_from is not None
                assert resumed._priced_from[1:] == (items, totals, fresh._priced_from[3])
            if resumed._stays_from is not None:
                j = resumed._stays_from[0]
                assert resumed._stays_from[1] == fresh._stays_after(j)
            last = coverage[-1].end
            for until in (last, last + 2 * HOUR):
                for days in (1, 7, 30):
                    assert resumed.window(until=until, days=days) == fresh.window(until=until, days=days)


@pytest.mark.parametrize("seed", range(12))
def test_a_prepared_timeline_answers_as_window_stats_at_epoch_times(seed: int) -> None:
    """The same at real epoch stamps (microseconds, ~1.76e9 s: lengths that are no whole number of seconds and
    whose float sums depend on their order): the median price, found from running totals in a Timeline and by a
    walk in window_stats, is the same price (the weights add up exactly, in microseconds)."""
    rng = random.Random(1000 + seed)
    changes, coverage = _history(rng)
    if seed % 3 == 0:
        changes, coverage = combine([(changes, coverage), _history(rng)], cap=2.5)
    base = 1_764_633_600.0 + rng.randrange(10**6) / 1e6
    jitter = [rng.randrange(-2_000_000, 2_000_000) / 1e6 for _ in changes]
    # every change moved by up to 2 s (its order kept: changes are 5 minutes apart), the coverage by none
    changes = [c._replace(at=base + c.at + (j if all(c.at not in s for s in coverage) else 0.0))
               for c, j in zip(changes, jitter, strict=True)]
    coverage = [Span(base + s.start, base + s.end) for s in coverage]
    for currency in ("USD", "RUB"):
        prepared = Timeline(changes, coverage, currency)
        last = coverage[-1].end
        for until in (last, last + 7 * M + 0.123457, last + 3 * DAY + 0.5):
            for days in (1, 7, 30):
                want = window_stats(changes, coverage, until=until, days=days, currency=currency)
                got = prepared.window(until=until, days=days)
                assert (got.price_median, got.price_min, got.price_now) == (
                    want.price_median, want.price_min, want.price_now)


def test_combining_in_steps_is_combine_whatever_its_inputs_do_meanwhile() -> None:
    """`combining` yields on its way (a loop runs between its steps: issue 26) and gives exactly `combine`'s answer,
    even when the lists it was handed are changed while it is suspended (a replica's held rows move with a poll)."""
    rng = random.Random(11)
    series = [_history(rng) for _ in range(6)]
    want = combine([(list(c), list(s)) for c, s in series], cap=2.5)
    handed = [(list(c), list(s)) for c, s in series]
    steps = combining(handed, cap=2.5)
    next(steps)
    for changes, coverage in handed:  # what a held series' refresh or trim may do to its lists meanwhile
        changes.append(on(50 * DAY, 1.0))
        del changes[:3]
        coverage.clear()
    yields = 1
    while True:
        try:
            next(steps)
        except StopIteration as done:
            got = done.value
            break
        yields += 1
    assert got == want
    assert len(want[0]) > 1000  # enough moments for several steps ...
    assert yields > len(want[0]) * len(series) // COMBINE_STEP  # ... and it yielded between them
