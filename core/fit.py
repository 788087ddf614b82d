"""Which GPU configurations a workload fits on, and the per-GPU requirement offers and subscriptions are matched by.

A configuration fits when the predicted peak plus the memory outside PyTorch's allocator (CUDA context, NCCL) is at
most the card's *usable* memory (what the device reports, `GPU.usable_gib`), never the label. Several GPUs never
add up: each one must hold its own share (reference §3).

Cards without BF16 (T4, V100) cannot run FlashAttention 2: on them the workload is estimated with eager attention
(the s^2 score matrix is kept), so long contexts stop fitting there first.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from core.estimator import MemoryEstimate, estimate_memory, estimate_on
from core.gpus import GPU, GPUS, find_gpu, get_gpu
from core.workload import ADAPTER_METHODS, Attention, Method, Offload, Optimizer, Quant, Strategy, Workload

DEFAULT_COUNTS: tuple[int, ...] = (1, 2, 4, 8)
_MAX_NO_BF16_GIB = max((g.usable_gib for g in GPUS if not g.bf16), default=0.0)
NODE_SIZE = 8
MAX_NODES = 64


def default_strategy(method: Method) -> Strategy:
    """The multi-GPU strategy people use for a method: TP for inference, ZeRO-3 for full/freeze, FSDP for adapters."""
    if method is Method.INFERENCE:
        return Strategy.TP
    return Strategy.FSDP if method in ADAPTER_METHODS else Strategy.ZERO3


def _placement(w: Workload, count: int, eager: bool) -> tuple[int, Strategy, Attention]:
    """GPU count, strategy and attention of `w` on `count` GPUs: its own strategy when it names a multi-GPU one,
    else the method's default; eager attention on cards without BF16."""
    if count <= 1:
        strategy = Strategy.SINGLE
    elif w.strategy is not Strategy.SINGLE:
        strategy = w.strategy
    else:
        strategy = default_strategy(w.method)
    return count, strategy, Attention.EAGER if eager else w.attention


def config_for(w: Workload, count: int, *, eager: bool = False) -> Workload:
    """`w` as it runs on `count` GPUs (see `_placement`), as a Workload."""
    gpus, strategy, attention = _placement(w, count, eager)
    if gpus == w.gpus and strategy is w.strategy and attention is w.attention:
        return w
    return w.with_(gpus=gpus, strategy=strategy, attention=attention)


@dataclass(frozen=True, slots=True)
class Fit:
    """One configuration that holds the workload. A plain dataclass: a fit answer builds dozens per keystroke."""

    gpu: str  # catalog id
    gpu_name: str
    count: int
    per_gpu_gib: float  # predicted peak on each GPU (no margin)
    usable_gib: float  # what one card really gives
    utilization: float  # (peak + runtime) / usable, of one card
    strategy: Strategy
    need_gib: float  # peak + CUDA context / NCCL: what has to fit in usable_gib
    recommended_gib: float  # peak x (1 + margin) + runtime
    tight: bool  # fits, but not with the stated safety margin

    @property
    def total_memory_gib(self) -> float:
        return self.usable_gib * self.count


class Advice(BaseModel):
    """What would make an impossible workload possible. `code` for machines, `en` / `ru` for people."""

    model_config = ConfigDict(frozen=True)

    code: str  # "offload" | "qlora" | "more_nodes" | "more_gpus" | "bigger_gpu"
    en: str
    ru: str

    def text(self, lang: str) -> str:
        return self.ru if lang == "ru" else self.en


@dataclass(frozen=True, slots=True)
class FitReport:
    fits: list[Fit]  # cheapest memory first
    advice: list[Advice]  # empty when something fits
    counts: tuple[int, ...]  # the GPU counts that were tried
    gpu: str | None  # the one card asked about, if any


class Requirement:
    """The per-GPU memory a workload needs at each GPU count; cheap to query many times (memoised per count)."""

    __slots__ = ("_cache", "_need", "_runnable", "workload")

    def __init__(self, w: Workload) -> None:
        self.workload = w
        self._cache: dict[tuple[int, bool], MemoryEstimate] = {}
        self._need: dict[tuple[int, bool], float] = {}
        self._runnable: dict[int, bool] = {}

    def estimate(self, count: int, *, eager: bool = False) -> MemoryEstimate:
        key = (count, eager)
        est = self._cache.get(key)
        if est is None:
            est = estimate_on(self.workload, *_placement(self.workload, count, eager))
            self._cache[key] = est
        return est

    def per_gpu_gib(self, count: int) -> float:
        """Predicted peak per GPU on `count` GPUs (FlashAttention-capable cards)."""
        return self.estimate(count).per_gpu_gib

    def need_gib(self, count: int, *, eager: bool = False) -> float:
        """Usable memory each of `count` GPUs must have: peak + CUDA context (+ NCCL when several)."""
        key = (count, eager)
        need = self._need.get(key)
        if need is None:
            need = self._need[key] = self.estimate(count, eager=eager).need_gib
        return need

    def runnable(self, count: int) -> bool:
        """Tensor parallelism must divide the attention heads (vLLM's rule); other strategies run on any count."""
        ok = self._runnable.get(count)
        if ok is None:
            w = self.workload
            ok = not (count > 1 and _placement(w, count, False)[1] is Strategy.TP and w.arch.heads % count)
            self._runnable[count] = ok
        return ok

    def fits(self, gpu: GPU, count: int) -> bool:
        """Does the workload run on `count` x `gpu`? Compares with the card's usable memory, never its label."""
        return self.runnable(count) and self.need_gib(count, eager=not gpu.bf16) <= gpu.usable_gib

    @property
    def min_gib_by_count(self) -> dict[int, float]:
        """Least usable GiB per GPU (BF16 cards) at 1, 2, 4 and 8 GPUs: what offer matching compares with."""
        return {c: self.need_gib(c) if self.runnable(c) else float("inf") for c in DEFAULT_COUNTS}


@lru_cache(maxsize=2048)
def requirement(w: Workload) -> Requirement:
    """The memoised requirement of a workload (Workload is frozen and hashable)."""
    return Requirement(w)


def _fit(req: Requirement, gpu: GPU, count: int) -> Fit:
    est = req.estimate(count, eager=not gpu.bf16)
    need = est.need_gib
    recommended = est.recommended_per_gpu_gib + est.runtime_gib
    return Fit(gpu.id, gpu.name, count, est.per_gpu_gib, gpu.usable_gib, need / gpu.usable_gib, est.strategy,
               need, recommended, recommended > gpu.usable_gib)


def _fits_at(req: Requirement, gpus: tuple[GPU, ...], counts: tuple[int, ...]) -> list[Fit]:
    """One estimate per (count, attention kind), then a float comparison per card (the inline-query hot path)."""
    out: list[Fit] = []
    for c in counts:
        if not req.runnable(c):
            continue
        per_kind: dict[bool, tuple[float, float, float, Strategy]] = {}
        for eager in (False, True):
            est = req.estimate(c, eager=eager)
            per_kind[eager] = (est.per_gpu_gib, est.need_gib, est.recommended_per_gpu_gib + est.runtime_gib,
                               est.strategy)
            # Eager attention never needs less than flash: skip it when no card without BF16 could hold even that.
            if est.need_gib > _MAX_NO_BF16_GIB or all(g.bf16 for g in gpus):
                break
        for g in gpus:
            kind = per_kind.get(not g.bf16)
            if kind is None:
                continue
            peak, need, rec, strategy = kind
            usable = g.usable_gib
            if need <= usable:
                out.append(Fit(g.id, g.name, c, peak, usable, need / usable, strategy, need, rec, rec > usable))
    return out


def _named_gpu(w: Workload) -> GPU | None:
    if not w.gpu:
        return None
    try:
        return get_gpu(w.gpu)
    except KeyError:
        return find_gpu(w.gpu)


@lru_cache(maxsize=1024)
def fit_configs(w: Workload, counts: tuple[int, ...] = DEFAULT_COUNTS) -> FitReport:
    """Every catalog GPU x count that fits, smallest total memory first; advice when nothing up to 8 GPUs does.

    With `w.gpu` set the answer is about that card (at `w.gpus` when more than one was asked for); with only
    `w.gpus > 1` it is about every card at that count. Memoised per workload (the bot re-asks the same phrase
    keystroke after keystroke): treat the report as read-only.
    """
    req = requirement(w)
    named = _named_gpu(w)
    if w.gpus > 1:
        counts = (w.gpus,)
    gpus = (named,) if named else GPUS
    fits = _fits_at(req, gpus, tuple(counts))
    fits.sort(key=lambda f: (f.usable_gib * f.count, f.count, f.utilization))
    advice = [] if fits else _advice(w, req, named)
    return FitReport(fits=fits, advice=advice, counts=tuple(counts), gpu=named.id if named else None)


# --- advice when nothing fits ------------------------------------------------------------------------------------

_BIGGEST = max((g for g in GPUS if g.vendor == "nvidia"), key=lambda g: g.usable_gib)


def _smallest_fit(w: Workload, counts: tuple[int, ...] = DEFAULT_COUNTS) -> Fit | None:
    best = _fits_at(requirement(w), GPUS, counts)
    return min(best, key=lambda f: (f.usable_gib * f.count, f.count)) if best else None


def _where(f: Fit) -> tuple[str, str]:
    return f"{f.count}x {f.gpu_name}", f"{f.count}x {f.gpu_name}"


def _advice(w: Workload, req: Requirement, named: GPU | None) -> list[Advice]:
    out: list[Advice] = []
    if named is not None:
        # More of the same card, then any card at all.
        for count in (2, 4, 8, 16, 32, 64):
            if count > max(w.gpus, 1) and req.fits(named, count):
                out.append(Advice(
                    code="more_gpus",
                    en=f"It does not fit on {max(w.gpus, 1)}x {named.name}; {count}x {named.name} would hold it.",
                    ru=f"На {max(w.gpus, 1)}x {named.name} не помещается; поместится на {count}x {named.name}."))
                break
        other = _smallest_fit(w.with_(gpu=None))
        if other is not None:
            en, ru = _where(other)
            out.append(Advice(code="bigger_gpu", en=f"The smallest configuration that fits: {en}.",
                              ru=f"Самая скромная подходящая конфигурация: {ru}."))
            return out
    if w.is_training and w.offload is not Offload.ALL:
        for offload in (Offload.OPTIMIZER, Offload.ALL):
            if offload is w.offload:
                continue
            alt = w.with_(offload=offload, gpu=None, gpus=1, strategy=w.strategy)
            f = _smallest_fit(alt)
            if f is not None:
                cpu = estimate_memory(config_for(alt, f.count)).cpu_ram_gib
                en, ru = _where(f)
                what_en = "the optimizer states" if offload is Offload.OPTIMIZER else "parameters and optimizer states"
                what_ru = "состояния оптимизатора" if offload is Offload.OPTIMIZER else "веса и состояния оптимизатора"
                out.append(Advice(
                    code="offload",
                    en=f"Offload {what_en} to CPU (DeepSpeed ZeRO-3 offload): fits on {en} with about "
                       f"{cpu:.0f} GiB of host RAM, at a large speed cost.",
                    ru=f"Выгрузите {what_ru} в оперативную память (DeepSpeed ZeRO-3 offload): поместится на {ru}, "
                       f"нужно около {cpu:.0f} ГиБ ОЗУ, обучение будет заметно медленнее."))
                break
    if w.method in (Method.FULL, Method.FREEZE, Method.LORA):
        alt = w.with_(method=Method.QLORA, quant=Quant.NF4, lora_rank=w.lora_rank or 16,
                      lora_targets=w.lora_targets or "all-linear", optimizer=w.optimizer or Optimizer.ADAMW,
                      offload=Offload.NONE, gpu=None, gpus=1)
        f = _smallest_fit(alt)
        if f is not None:
            en, ru = _where(f)
            out.append(Advice(code="qlora", en=f"QLoRA (4-bit base, LoRA adapters) fits on {en}.",
                              ru=f"QLoRA (4-битная база и LoRA-адаптеры) поместится на {ru}."))
    base = w.with_(gpu=None, gpus=1)
    breq = requirement(base)
    for nodes in range(2, MAX_NODES + 1):
        count = nodes * NODE_SIZE
        if breq.runnable(count) and breq.fits(_BIGGEST, count):
            out.append(Advice(
                code="more_nodes",
                en=f"Several nodes: {nodes} nodes of 8x {_BIGGEST.name} ({count} GPUs, "
                   f"{config_for(base, count).strategy.value}).",
                ru=f"Несколько узлов: {nodes} узла(ов) по 8x {_BIGGEST.name} ({count} GPU, "
                   f"{config_for(base, count).strategy.value})."))
            break
    if not out:
        out.append(Advice(code="none", en="Nothing in the catalog holds this workload, even across 64 nodes.",
                          ru="Ни одна конфигурация из каталога не вмещает эту задачу, даже на 64 узлах."))
    return out
