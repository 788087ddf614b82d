"""The measured throughputs of `bench/data/throughput_points.json` as workloads for the speed model.

Shared by `bench/speed_table.py` (docs/accuracy.md) and `tests/core/test_speed.py`, so both judge the same thing.
Each point's conditions are read as the data file states them; what a point leaves open takes the workload
defaults below (LoRA rank 16 on every linear layer, AdamW, mixed bf16, FlashAttention, bf16 KV cache). A point's
`engine` (when the data file names one: the framework the run used, as `core.engines` knows it) is the workload's
engine; without one the engine-neutral model judges it. A point's `quant_kernel` and `quant_group` (the decode
kernel and group size its framework used, `core.engines.KERNELS`) are the workload's too.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.gpus import GPU, get_gpu
from core.models import Arch, find_model, from_hf_config
from core.speed import inference_speed, served_output_tokens_per_s, training_speed
from core.workload import (
    Attention,
    Engine,
    Method,
    Offload,
    Optimizer,
    Precision,
    Quant,
    QuantKernel,
    Strategy,
    Workload,
)

POINTS_PATH = Path(__file__).resolve().parent.parent / "bench" / "data" / "throughput_points.json"


@dataclass(frozen=True)
class Case:
    id: str
    kind: str  # train | decode | aggregate | prefill
    workload: Workload
    gpu: GPU
    count: int
    measured: float
    fp8: bool
    context: int | None
    prompt: int | None
    raw: dict[str, Any]

    def predicted(self) -> float:
        if self.kind == "train":
            return training_speed(self.workload, self.gpu, self.count, fp8=self.fp8).tokens_per_second
        s = inference_speed(self.workload, self.gpu, self.count, min_group=self.count, context=self.context,
                            prompt=self.prompt)
        if self.kind == "decode":
            return s.decode_tokens_per_s
        if self.kind == "aggregate":
            if self.raw.get("output"):
                return served_output_tokens_per_s(s, self.workload.concurrency, int(self.raw["prompt"]),
                                                  int(self.raw["output"]))
            return s.aggregate_decode_tokens_per_s
        return s.prefill_tokens_per_s

    def error(self) -> float:
        """Signed relative error of the prediction (+0.10: 10 % too fast)."""
        return self.predicted() / self.measured - 1.0


def _arch(raw: dict[str, Any]) -> Arch:
    if raw.get("config"):
        cfg = dict(raw["config"])
        cfg.pop("params_b", None)
        return from_hf_config(cfg, name=raw["model"])
    arch = find_model(raw["model"])
    if arch is None:
        raise ValueError(f"throughput point {raw['id']}: unknown model {raw['model']!r}")
    return arch


def to_case(raw: dict[str, Any]) -> Case:
    arch = _arch(raw)
    method = Method(raw["method"])
    training = method is not Method.INFERENCE
    adapters = method in (Method.LORA, Method.QLORA)
    count = int(raw["gpus"])
    strategy = Strategy(raw.get("strategy", "fsdp" if count > 1 and training else "tp" if count > 1 else "single"))
    quant = Quant(raw.get("quant", "nf4" if method is Method.QLORA else "none"))
    w = Workload(
        model=arch.id, arch=arch, params_b=arch.params_b, method=method, quant=quant,
        precision=Precision(raw.get("precision", "bf16")), seq_len=int(raw.get("seq_len") or raw.get("context") or 1),
        batch=int(raw.get("batch", 1)), grad_ckpt=bool(raw.get("grad_ckpt", False)), attention=Attention.FLASH,
        lora_rank=int(raw.get("lora_rank", 16)) if adapters else None,
        lora_targets=raw.get("lora_targets", "all-linear") if adapters else None,
        optimizer=Optimizer(raw.get("optimizer", "adamw")) if training else None, fused_ce=False, gpus=count,
        strategy=strategy, offload=Offload.NONE, gpu=raw["gpu"], kv_dtype=raw.get("kv_dtype", "bf16"),
        concurrency=int(raw.get("concurrency", 1)), examples=None, tokens_per_example=None, epochs=None,
        engine=Engine(raw["engine"]) if raw.get("engine") else None,
        quant_kernel=QuantKernel(raw["quant_kernel"]) if raw.get("quant_kernel") else None,
        quant_group=int(raw["quant_group"]) if raw.get("quant_group") else None)
    return Case(id=raw["id"], kind=raw["kind"], workload=w, gpu=get_gpu(raw["gpu"]), count=count,
                measured=float(raw["measured"]), fp8=bool(raw.get("fp8", False)), context=raw.get("context"),
                prompt=raw.get("prompt") if raw["kind"] == "prefill" else None, raw=raw)


def load_cases(path: Path = POINTS_PATH) -> list[Case]:
    return [to_case(r) for r in json.loads(path.read_text(encoding="utf-8"))["points"]]


def excluded(path: Path = POINTS_PATH) -> dict[str, str]:
    return dict(json.loads(path.read_text(encoding="utf-8"))["excluded"])


def median_abs_error(cases: list[Case]) -> float:
    return statistics.median(abs(c.error()) for c in cases)
