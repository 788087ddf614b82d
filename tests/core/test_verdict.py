"""Shrink verdict: abnormal shrink against recent trusted polls marks a poll suspect."""

from __future__ import annotations

from core.verdict import shrink_verdict


def test_first_poll_is_trusted_even_empty() -> None:
    assert shrink_verdict(0, []).trusted
    assert shrink_verdict(10, []).trusted


def test_empty_after_non_empty_is_suspect() -> None:
    v = shrink_verdict(0, [2, 2, 2])
    assert v.suspect
    assert "empty" in (v.reason or "")


def test_empty_after_empty_is_fine() -> None:
    assert shrink_verdict(0, [0, 0]).trusted


def test_shrink_below_half_the_median_is_suspect() -> None:
    v = shrink_verdict(40, [100, 98, 101, 99, 100])
    assert v.suspect
    assert "median of 100" in (v.reason or "")
    assert shrink_verdict(50, [100, 98, 101, 99, 100]).trusted  # exactly half is still believed


def test_median_not_last_so_one_odd_poll_does_not_move_the_bar() -> None:
    assert shrink_verdict(40, [45, 100, 100, 100, 100]).suspect


def test_small_providers_may_shrink() -> None:
    assert shrink_verdict(1, [3, 3, 3]).trusted


def test_only_the_window_counts() -> None:
    # a long-past size no longer matters
    assert shrink_verdict(30, [50, 50, 50, 50, 50, 500, 500, 500], window=5).trusted


def test_persistent_smaller_size_is_accepted_after_confirm_polls() -> None:
    trusted = [100] * 5
    assert shrink_verdict(30, trusted, recent_shrunk=[31, 29]).suspect
    assert shrink_verdict(30, trusted, recent_shrunk=[31, 29, 30]).trusted
    # not similar sizes: keeps suspecting
    assert shrink_verdict(30, trusted, recent_shrunk=[5, 29, 30]).suspect


def test_growth_is_always_fine() -> None:
    assert shrink_verdict(1000, [10, 10, 10]).trusted
