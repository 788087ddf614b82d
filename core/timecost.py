"""How long a fine-tuning run takes on each fitting configuration, and what it costs at a given hourly price.

tokens = examples x tokens per example x epochs. FLOPs per token follow reference §6: forward 2 x params (active
params for MoE) plus causal attention 2 x L x q_dim x seq; full fine-tuning adds a backward of twice the forward,
LoRA/QLoRA only the input-gradient half of it (the frozen base needs no weight gradients), and gradient
checkpointing one more forward. Throughput = GPUs x datasheet TFLOPS x utilisation(GPU class) x method factor x
multi-GPU scaling / FLOPs per token.

The utilisation constants are calibrated against torchtune's published throughputs (reference §6, batch 2 packed to
2048 tokens, torch.compile): they are *effective* fractions of the datasheet peak under the FLOP count above, not
profiler MFU — the workstation figure exceeds 1 because the A6000 measurements run faster than that count allows
on its datasheet peak (the 4090 runs were memory-squeezed: the same configs reserved half the memory there).
`tests/test_timecost.py` checks that all seven published throughputs are reproduced within 25 %.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from core.estimator import FREEZE_TRAINABLE_LAYERS
from core.fit import Fit
from core.gpus import GPUClass, get_gpu
from core.workload import ADAPTER_METHODS, Attention, Method, Offload, Strategy, Workload

# Effective utilisation per GPU class, from the LoRA anchors (tokens/s x FLOPs/token / (GPUs x peak x scaling)):
#   consumer:    Llama-3.1-8B LoRA, 1x RTX 4090:  3,083 tok/s x 49.8 GFLOP / 165 TFLOPS          = 0.93
#   workstation: Llama-3.1-8B LoRA, 1x RTX A6000: 4,699 tok/s x 49.8 GFLOP / 155 TFLOPS          = 1.51
#   datacenter:  Llama-3.1-70B LoRA, 8x A100:     3,497 tok/s x 431 GFLOP / (8 x 312 x 0.9 FSDP) = 0.67
UTILISATION: dict[GPUClass, float] = {GPUClass.CONSUMER: 0.93, GPUClass.WORKSTATION: 1.51,
                                      GPUClass.DATACENTER: 0.67}
# Relative to LoRA on the same card: QLoRA pays for dequantisation (4090: 2,413 vs 3,083 tok/s; 405B on 8x A100
# runs at 1.07 of the LoRA-calibrated rate: 0.9 splits the two), full fine-tuning for the optimizer step and the
# weight-gradient traffic (4090: 0.71, A6000: 0.73 once the extra FLOPs are counted).
METHOD_FACTOR: dict[Method, float] = {Method.LORA: 1.0, Method.QLORA: 0.9, Method.FULL: 0.72, Method.FREEZE: 0.72}
# Communication cost of several GPUs (one node), per strategy.
SCALING: dict[Strategy, float] = {Strategy.SINGLE: 1.0, Strategy.DDP: 0.95, Strategy.ZERO2: 0.92,
                                  Strategy.ZERO3: 0.9, Strategy.FSDP: 0.9, Strategy.TP: 0.85}
# Offloading states to CPU trades memory for PCIe traffic (DeepSpeed reports 2-4x slower steps).
OFFLOAD_FACTOR: dict[Offload, float] = {Offload.NONE: 1.0, Offload.OPTIMIZER: 0.5, Offload.ALL: 0.25}
EAGER_FACTOR = 0.8  # eager attention is slower than FlashAttention as well as bigger

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


def flops_per_token(w: Workload) -> float:
    """Training FLOPs per token (reference §6; MoE counts active parameters)."""
    a = w.arch
    forward = 2.0 * a.active_params_b * 1e9 + 2.0 * a.layers * a.q_dim * w.seq_len
    if w.method is Method.FULL:
        backward = 2.0 * forward
    elif w.method in ADAPTER_METHODS:
        backward = forward  # input gradients only
    else:  # freeze: gradients flow through the trained top layers only
        backward = 2.0 * forward * min(FREEZE_TRAINABLE_LAYERS, a.layers) / a.layers
    recompute = forward if w.grad_ckpt else 0.0
    return forward + backward + recompute


def tokens_per_second(w: Workload, gpu_id: str, count: int, strategy: Strategy | None = None) -> float:
    """Training throughput of `w` on `count` x `gpu_id` (all GPUs together)."""
    gpu = get_gpu(gpu_id)
    strategy = strategy or (Strategy.SINGLE if count <= 1 else w.strategy)
    rate = gpu.bf16_tflops * 1e12 * UTILISATION[gpu.gpu_class] * METHOD_FACTOR.get(w.method, 1.0)
    rate *= count * SCALING.get(strategy, 0.9) * OFFLOAD_FACTOR[w.offload]
    if w.attention is Attention.EAGER or not gpu.bf16:
        rate *= EAGER_FACTOR
    return rate / flops_per_token(w)


def estimate_time(w: Workload, fits: list[Fit]) -> TimeEstimate | None:
    """Hours on each fitting configuration; None for inference or when no dataset size was given."""
    if not w.is_training or not w.examples:
        return None
    assumed: list[str] = []
    if not w.tokens_per_example:
        assumed.append("tokens_per_example")
    if not w.epochs:
        assumed.append("epochs")
    tpe = w.tokens_per_example or DEFAULT_TOKENS_PER_EXAMPLE
    epochs = w.epochs or DEFAULT_EPOCHS
    tokens = round(w.examples * tpe * epochs)
    per_config = []
    for f in fits:
        tps = tokens_per_second(w, f.gpu, f.count, f.strategy)
        per_config.append(ConfigTime(gpu=f.gpu, gpu_name=f.gpu_name, count=f.count,
                                     tokens_per_second=tps, hours=tokens / tps / 3600))
    return TimeEstimate(tokens=tokens, examples=w.examples, tokens_per_example=tpe, epochs=epochs,
                        flops_per_token=flops_per_token(w), per_config=per_config, assumed=assumed)
