"""GPU-to-A100 training ratios (Lambda's benchmark, `bench/data/gpu_ratios.json`) against the speed model: the
same workload on each card, every card's own datasheet figures, no per-card fudge."""

from __future__ import annotations

import json
from itertools import pairwise

from testkit.gpu_ratios import RATIOS_PATH, load_ratios


def test_ratio_points_carry_their_source_and_cover_a_dozen_cards() -> None:
    data = json.loads(RATIOS_PATH.read_text(encoding="utf-8"))
    assert "lambdal/deeplearning-benchmark" in data["about"]
    ratios = load_ratios()
    assert len({r.gpu.id for r in ratios}) >= 12


def test_every_ratio_within_25_percent() -> None:
    """B200 was +32 % against the published averages: its 180 GB part streams 7,672 GB/s, not 8 TB/s (a 7680-bit
    bus, pytorch/ao PR #4002), and its published figure carries 5.7 % of warm-up iterations where the A100's carries
    1.8 % (both runs' logs); with both, it is within 25 % like every other card."""
    ratios = {r.gpu.id: r for r in load_ratios()}
    off = {g: round(r.error(), 2) for g, r in ratios.items() if abs(r.error()) > 0.25}
    assert not off, off


def test_measured_ratios_are_steady_rates_from_the_runs_logs() -> None:
    data = json.loads(RATIOS_PATH.read_text(encoding="utf-8"))
    for p in [data["reference"], *data["points"]]:
        assert p["log"].startswith("lambdal/deeplearning-benchmark @"), p["gpu"]
        # the steady rate is the progress bar's it/s x the batch, and never far from the published average
        assert p["steady"] == round(p["steady_it_s"] * p["batch"], 1)
        assert abs(p["steady"] / p["e2e_measured"] - 1) < 0.12, p["gpu"]
        assert round(p["e2e_measured"]) in (p["measured"], p["measured"] + 1) or abs(
            p["e2e_measured"] - p["measured"]) < 1, p["gpu"]


def test_ratios_order_the_cards_as_measured() -> None:
    ratios = sorted(load_ratios(), key=lambda r: r.measured)
    # the measured order, allowing neighbours within 10 % of each other (predicted or measured: the V100 and the
    # A5000 measure 0.38 and 0.39, from runs four years apart) to swap
    assert all(b.predicted > a.predicted * 0.9 or b.measured < a.measured * 1.1 for a, b in pairwise(ratios)), [
        (r.gpu.id, round(r.measured, 2), round(r.predicted, 2)) for r in ratios]
