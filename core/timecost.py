"""How long a fine-tuning run takes on each configuration, and what it costs at a given hourly price.

tokens = examples x tokens per example x epochs. FLOPs per token follow `docs/reference/estimator.md` §6: forward 2 x
params (active params for MoE) plus causal attention 2 x L x q_dim x seq; full fine-tuning adds a backward of twice the
forward, LoRA/QLoRA only the input-gradient half of it (the frozen base needs no weight gradients), and gradient
checkpointing one more forward. How fast those FLOPs run on a given card and count is `core.speed`'s roofline.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from core.fit import Fit, Requirement
from core.gpus import get_gpu
from core.objectives import facts
from core.speed import flops_per_token, smallest_group, training_speed
from core.workload import Strategy, Workload

# Stated defaults when the dataset is only partly described.
DEFAULT_TOKENS_PER_EXAMPLE = 512
DEFAULT_EPOCHS = 1.0


class ConfigTime(BaseModel):
    model_config = ConfigDict(frozen=True)

    gpu: str  # catalog id
    gpu_name: str
    count: int
    tokens_per_second: float
    hours: float
    fits: bool = True  # False for a configuration asked for by name that does not hold the workload

    def cost(self, price_per_gpu_hour: float) -> float:
        """Cost of the whole run when each GPU costs `price_per_gpu_hour` (any currency)."""
        return self.hours * self.count * price_per_gpu_hour


class TimeEstimate(BaseModel):
    model_config = ConfigDict(frozen=True)

    tokens: int  # training tokens: examples x tokens per example x epochs
    examples: int
    tokens_per_example: int
    epochs: float
    flops_per_token: float
    per_config: list[ConfigTime]
    assumed: list[str]  # fields filled with a stated default ("tokens_per_example", "epochs")

    def for_config(self, gpu: str, count: int) -> ConfigTime | None:
        return next((c for c in self.per_config if c.gpu == gpu and c.count == count), None)

    def cost(self, hourly_price: float, gpu: str | None = None, count: int | None = None) -> float | None:
        """Cost of the run at `hourly_price` per GPU-hour on one configuration (the first one when unnamed)."""
        configs = [c for c in self.per_config if (gpu is None or c.gpu == gpu) and (count is None or c.count == count)]
        return configs[0].cost(hourly_price) if configs else None


def trained_tokens(w: Workload) -> int:
    """Tokens the run trains on: examples x tokens per example x epochs, times the sequences of each example a
    preference objective trains (a DPO pair's chosen and rejected, `core.objectives`)."""
    return round((w.examples or 0) * (w.tokens_per_example or DEFAULT_TOKENS_PER_EXAMPLE)
                 * (w.epochs or DEFAULT_EPOCHS) * facts(w.objective).graded)


def tokens_per_second(w: Workload, gpu_id: str, count: int, strategy: Strategy | None = None,
                      req: Requirement | None = None) -> float:
    """Training throughput of `w` on `count` x `gpu_id` (all GPUs together). `req`: `core.fit.requirement(w)`."""
    if strategy is not None and strategy is not w.strategy:
        w, req = w.with_(strategy=strategy), None
    return training_speed(w, get_gpu(gpu_id), count,
                          min_group=smallest_group(w, gpu_id, count, req)).tokens_per_second


def estimate_time(w: Workload, fits: Sequence[Fit], extra: tuple[tuple[str, int], ...] = ()) -> TimeEstimate | None:
    """Hours on each fitting configuration (and on the `extra` (card, count) pairs asked for by name, marked
    `fits=False` when they do not hold it); None for inference or when no dataset size was given."""
    if not w.is_training or not w.examples:
        return None
    assumed: list[str] = []
    if not w.tokens_per_example:
        assumed.append("tokens_per_example")
    if not w.epochs:
        assumed.append("epochs")
    tpe = w.tokens_per_example or DEFAULT_TOKENS_PER_EXAMPLE
    epochs = w.epochs or DEFAULT_EPOCHS
    tokens = trained_tokens(w)
    per_config = []
    seen: set[tuple[str, int]] = set()
    pairs = [(f.gpu, f.gpu_name, f.count, f.strategy, True) for f in fits]
    for gpu_id, count in extra:
        if (gpu_id, count) not in {(p[0], p[2]) for p in pairs}:
            pairs.append((gpu_id, get_gpu(gpu_id).name, count, w.strategy, False))
    for gpu_id, name, count, strategy, fits_ in pairs:
        if (gpu_id, count) in seen:
            continue
        seen.add((gpu_id, count))
        tps = tokens_per_second(w, gpu_id, count, strategy)
        per_config.append(ConfigTime(gpu=gpu_id, gpu_name=name, count=count, tokens_per_second=tps,
                                     hours=tokens / tps / 3600, fits=fits_))
    return TimeEstimate(tokens=tokens, examples=w.examples, tokens_per_example=tpe, epochs=epochs,
                        flops_per_token=flops_per_token(w), per_config=per_config, assumed=assumed)
