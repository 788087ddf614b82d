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


def test_ratios_within_25_percent_but_the_b200() -> None:
    ratios = {r.gpu.id: r for r in load_ratios()}
    off = {g: round(r.error(), 2) for g, r in ratios.items() if abs(r.error()) > 0.25}
    # B200: the model's ratio is its datasheet compute and bandwidth; Lambda's BERT run reaches ~3.4x an A100
    # where the model gives ~4.5x (no clocks are published to derive its sustained fraction from).
    assert set(off) <= {"b200"}, off
    assert ratios["b200"].error() < 0.4


def test_ratios_order_the_cards_as_measured() -> None:
    ratios = sorted(load_ratios(), key=lambda r: r.measured)
    predicted = [r.predicted for r in ratios]
    # the measured order, allowing neighbours within 10 % of each other to swap
    assert all(b > a * 0.9 for a, b in pairwise(predicted)), [
        (r.gpu.id, round(r.predicted, 2)) for r in ratios]
