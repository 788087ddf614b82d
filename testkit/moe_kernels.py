"""MoE layer kernel times of `bench/data/moe_kernels.json` against the speed model's fused-experts term.

Shared by `bench/speed_table.py` (docs/accuracy.md's "MoE kernels" table) and `tests/core/test_moe_kernels.py`. Each
series is one MoE layer of a catalog model as one GPU of a tensor-parallel group holds it (the expert width split
`tp` ways), timed by the engines' own kernel benchmarks; `core.speed.fused_moe_s` predicts every point.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.gpus import GPU, get_gpu
from core.models import get_model
from core.speed import fused_moe_s

MOE_KERNELS_PATH = Path(__file__).resolve().parent.parent / "bench" / "data" / "moe_kernels.json"
_DTYPE_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp8_w8a8": 1.0}


@dataclass(frozen=True)
class MoePoint:
    series: str
    model: str
    gpu: GPU
    tp: int
    dtype: str
    tokens: int
    measured_us: float
    predicted_us: float

    def error(self) -> float:
        return self.predicted_us / self.measured_us - 1.0


def _data(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def load_moe_points(path: Path = MOE_KERNELS_PATH) -> list[MoePoint]:
    out: list[MoePoint] = []
    for s in _data(path)["series"]:
        arch = get_model(s["model"])
        gpu = get_gpu(s["gpu"])
        tp = int(s["tp"])
        expert_bytes = arch.mlp_matrices * arch.hidden * arch.intermediate / tp * _DTYPE_BYTES[s["dtype"]]
        for tokens, us in s["points"].items():
            n = int(tokens)
            predicted = fused_moe_s(arch.experts, arch.experts_active, expert_bytes, n, gpu) * 1e6
            out.append(MoePoint(s["id"], arch.name, gpu, tp, s["dtype"], n, float(us), predicted))
    return out


def series_sources(path: Path = MOE_KERNELS_PATH) -> dict[str, str]:
    return {s["id"]: s["source"] for s in _data(path)["series"]}


def excluded_series(path: Path = MOE_KERNELS_PATH) -> dict[str, str]:
    excluded: dict[str, str] = _data(path)["excluded"]
    return excluded


def block_fp8_gemm_times_us(path: Path = MOE_KERNELS_PATH) -> list[float]:
    return [float(g["us"]) for g in _data(path)["block_fp8_gemms"]]


def block_fp8_gemm_floor_us(path: Path = MOE_KERNELS_PATH) -> float:
    """The median of the published per-GEMM times: what `core.speed.BLOCK_FP8_GEMM_FLOOR_S` states."""
    return statistics.median(block_fp8_gemm_times_us(path))
