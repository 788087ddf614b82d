"""GPU-to-A100 training ratios of `bench/data/gpu_ratios.json` (Lambda's benchmark) against the speed model.

Shared by `bench/speed_table.py` (docs/accuracy.md) and `tests/core/test_gpu_ratios.py`. The benchmark's workload is
rebuilt as it ran (BERT-large fine-tuning at sequence 384, the batch each card ran, FP16 mixed precision, eager
attention, eager PyTorch's unfused elementwise kernels) and `core.speed.training_speed` is asked for it on each card;
the ratio is that against the same workload on the A100 80GB. Measured ratios are taken between the steady rates the
runs' own logs show (`steady`: the published figure averages 100 steps including the first, slow ones), each against
the A100 run of its own benchmark commit, at that run's batch.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.gpus import GPU, get_gpu
from core.models import Arch, arch_from_config
from core.speed import training_speed
from core.workload import Attention, Engine, Method, Offload, Optimizer, Precision, Quant, Strategy, Workload

RATIOS_PATH = Path(__file__).resolve().parent.parent / "bench" / "data" / "gpu_ratios.json"

# BERT-large as the speed model sees it (an encoder trains like a decoder of the same shape): GELU MLP, tied
# embeddings (google-research/bert `bert_config.json` of BERT-Large, Uncased).
BERT_LARGE: dict[str, Any] = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": 1024,
                              "n_layer": 24, "n_head": 16, "n_inner": 4096, "vocab_size": 30522,
                              "tie_word_embeddings": True}


@dataclass(frozen=True)
class Ratio:
    gpu: GPU
    name: str
    measured: float  # the card's throughput / the A100's
    predicted: float

    def error(self) -> float:
        return self.predicted / self.measured - 1.0


def _workload(arch: Arch, gpu: GPU, batch: int) -> Workload:
    return Workload(model=arch.id, arch=arch, params_b=arch.params_b, method=Method.FULL, quant=Quant.NONE,
                    precision=Precision.FP16, seq_len=384, batch=batch, grad_ckpt=False, attention=Attention.EAGER,
                    lora_rank=None, lora_targets=None, optimizer=Optimizer.ADAMW, fused_ce=False, gpus=1,
                    strategy=Strategy.SINGLE, offload=Offload.NONE, gpu=gpu.id, kv_dtype="bf16", concurrency=1,
                    examples=None, tokens_per_example=None, epochs=None, engine=Engine.HF_PEFT)


def _rate(arch: Arch, gpu_id: str, batch: int) -> float:
    gpu = get_gpu(gpu_id)
    return training_speed(_workload(arch, gpu, batch), gpu, 1).tokens_per_second / 384  # sequences/s


def load_ratios(path: Path = RATIOS_PATH) -> list[Ratio]:
    data = json.loads(path.read_text(encoding="utf-8"))
    arch = arch_from_config(BERT_LARGE, "bert-large")
    ref = data["reference"]
    out: list[Ratio] = []
    for p in data["points"]:
        # steady rates from the runs' logs (the published figure includes warm-up iterations); a row from another
        # commit of the benchmark is measured against that commit's own A100 run, at that run's batch
        measured = float(p["steady"]) / float(p.get("reference_steady", ref["steady"]))
        ref_rate = _rate(arch, ref["gpu"], int(p.get("reference_batch", ref["batch"])))
        out.append(Ratio(get_gpu(p["gpu"]), p["name"], measured, _rate(arch, p["gpu"], int(p["batch"])) / ref_rate))
    return out
