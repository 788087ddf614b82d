"""Which GPU configurations a workload fits on, and the per-GPU requirement offers and subscriptions are matched by.

A configuration fits when the predicted peak plus the memory outside PyTorch's allocator (CUDA context, NCCL) is at
most the card's *usable* memory (what the device reports, `GPU.usable_gib`), never the label. Several GPUs never
add up: each one must hold its own share (reference §3).

Cards without BF16 (T4, V100) cannot run FlashAttention 2: on them the workload is estimated with eager attention
(the s^2 score matrix is kept), so long contexts stop fitting there first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from operator import attrgetter
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict

from core.estimator import MemoryEstimate, estimate_memory, estimate_prepared, need, prepare
from core.gpus import GPU, GPUS, find_gpu, get_gpu
from core.msg import Msg, msg
from core.workload import ADAPTER_METHODS, Attention, Method, Offload, Optimizer, Quant, Strategy, Workload

DEFAULT_COUNTS: tuple[int, ...] = (1, 2, 4, 8)
_NEVER = float("inf")
_MAX_NO_BF16_GIB = max((g.usable_gib for g in GPUS if not g.bf16), default=0.0)
NODE_SIZE = 8
MAX_NODES = 64


def default_strategy(method: Method) -> Strategy:
    """The multi-GPU strategy people use for a method: TP for inference, ZeRO-3 for full/freeze, FSDP for adapters."""
    if method is Method.INFERENCE:
        return Strategy.TP
    return Strategy.FSDP if method in ADAPTER_METHODS else Strategy.ZERO3


# Enum members as module constants (an `Enum.MEMBER` lookup costs ~0.1 us; placements are asked per count).
_SINGLE, _TP, _EAGER = Strategy.SINGLE, Strategy.TP, Attention.EAGER
_DEFAULT_STRATEGY = {m: default_strategy(m) for m in Method}


def _placement(w: Workload, count: int, eager: bool) -> tuple[int, Strategy, Attention]:
    """GPU count, strategy and attention of `w` on `count` GPUs: its own strategy when it names a multi-GPU one,
    else the method's default; eager attention on cards without BF16."""
    if count <= 1:
        strategy = _SINGLE
    elif w.strategy is not _SINGLE:
        strategy = w.strategy
    else:
        strategy = _DEFAULT_STRATEGY[w.method]
    return count, strategy, _EAGER if eager else w.attention


def config_for(w: Workload, count: int, *, eager: bool = False) -> Workload:
    """`w` as it runs on `count` GPUs (see `_placement`), as a Workload."""
    gpus, strategy, attention = _placement(w, count, eager)
    if gpus == w.gpus and strategy is w.strategy and attention is w.attention:
        return w
    return w.with_(gpus=gpus, strategy=strategy, attention=attention)


class Fit(NamedTuple):
    """One configuration that holds the workload. A NamedTuple: immutable and cheap to build, and a fit answer
    builds dozens per keystroke."""

    gpu: str  # catalog id
    gpu_name: str
    count: int  # type: ignore[assignment]  # shadows tuple.count(), which nothing calls on a Fit
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
    """What would make an impossible workload possible. `code` for machines, `msg` for people (the text catalog
    renders it in the user's language)."""

    model_config = ConfigDict(frozen=True)

    code: str  # "offload" | "qlora" | "more_nodes" | "more_gpus" | "bigger_gpu" | "none"
    msg: Msg


@dataclass(frozen=True, slots=True)
class FitReport:
    fits: list[Fit]  # fewest GPUs first, comfortable before tight, then the smallest card
    advice: list[Advice]  # empty when something fits
    counts: tuple[int, ...]  # the GPU counts that were tried
    gpu: str | None  # the one card asked about, if any (a family's representative variant)
    gpu_ids: tuple[str, ...] = ()  # every card asked about: a family's variants, each fitted on its own memory


class Requirement:
    """The per-GPU memory a workload needs at each GPU count; cheap to query many times (memoised per count)."""

    __slots__ = ("_cache", "_need", "_prepared", "_runnable", "workload")

    def __init__(self, w: Workload) -> None:
        self.workload = w
        self._cache: dict[tuple[int, bool], MemoryEstimate] = {}
        # (count, eager) -> (per_gpu_gib, need_gib, recommended + runtime, strategy): what fitting compares, with
        # no MemoryEstimate built (the same numbers, bit for bit: `core.estimator.need`).
        self._need: dict[tuple[int, bool], tuple[float, float, float, Strategy]] = {}
        self._prepared: Any = None  # core.estimator.prepare(w), made on the first question
        self._runnable: dict[int, bool] = {}

    def estimate(self, count: int, *, eager: bool = False) -> MemoryEstimate:
        key = (count, eager)
        est = self._cache.get(key)
        if est is None:
            est = self._cache[key] = estimate_prepared(self.workload, self._prepare(),
                                                       *_placement(self.workload, count, eager))
        return est

    def _prepare(self) -> Any:
        if self._prepared is None:
            self._prepared = prepare(self.workload)
        return self._prepared

    def per_gpu_gib(self, count: int) -> float:
        """Predicted peak per GPU on `count` GPUs (FlashAttention-capable cards)."""
        return self._numbers(count, False)[0]

    def _numbers(self, count: int, eager: bool) -> tuple[float, float, float, Strategy]:
        key = (count, eager)
        nums = self._need.get(key)
        if nums is None:
            nums = self._need[key] = need(self._prepare(), *_placement(self.workload, count, eager))
        return nums

    def need_gib(self, count: int, *, eager: bool = False) -> float:
        """Usable memory each of `count` GPUs must have: peak + CUDA context (+ NCCL when several)."""
        return self._numbers(count, eager)[1]

    def runnable(self, count: int) -> bool:
        """Tensor parallelism must divide the attention heads (vLLM's rule); other strategies run on any count."""
        ok = self._runnable.get(count)
        if ok is None:
            w = self.workload
            ok = not (count > 1 and _placement(w, count, False)[1] is _TP and w.arch.heads % count)
            self._runnable[count] = ok
        return ok

    def fits(self, gpu: GPU, count: int) -> bool:
        """Does the workload run on `count` x `gpu`? Compares with the card's usable memory, never its label."""
        return self.runnable(count) and self.need_gib(count, eager=not gpu.bf16) <= gpu.usable_gib

    @property
    def min_gib_by_count(self) -> dict[int, float]:
        """Least usable GiB per GPU (BF16 cards) at 1, 2, 4 and 8 GPUs: what offer matching compares with."""
        return {c: self.need_gib(c) if self.runnable(c) else float("inf") for c in DEFAULT_COUNTS}


# ~5.5 KB an entry once its counts are estimated (measured over 10,000 distinct phrases: bench/memory.py).
@lru_cache(maxsize=512)
def requirement(w: Workload) -> Requirement:
    """The memoised requirement of a workload (Workload is frozen and hashable)."""
    return Requirement(w)


@dataclass(frozen=True, slots=True)
class _Plan:
    """Every (card, count) pair in the order `fit_configs` sorts fits in, as far as the catalog alone decides it."""

    # Runs of (id, name, count, usable_gib, slot) in (count, total memory) order, each with whether it is a group
    # of pairs that tie on (count, total memory) but differ in card kind (BF16 or not) or, through rounding, in
    # usable size: only such a run may need its fits put in utilization order.
    runs: tuple[tuple[tuple[tuple[str, str, int, float, int], ...], bool], ...]
    counts: tuple[int, ...]  # distinct counts; count i's figures are in slots 2i (FlashAttention), 2i+1 (eager)
    all_bf16: bool


def _fit_key(f: Fit) -> tuple[int, bool, float, float]:
    """What a person would pick first, as far as the catalog says: the fewest GPUs, then a comfortable fit before
    a tight one, then the smallest card that does it (the cheapest kind, with the least memory left idle). The
    cheapest offer in stock comes on top of this where offers are known (`core.ranking`)."""
    return f.count, f.tight, f.usable_gib * f.count, f.utilization


@lru_cache(maxsize=256)
def _plan(gpus: tuple[GPU, ...], counts: tuple[int, ...]) -> _Plan:
    """The fits sort key is (count, tight, total memory, utilization). Count and total memory depend on the catalog
    only, so the pairs are put in (count, total memory) order once (stably, from the count-major catalog order);
    the fits of an answer then come out sorted by filtering. Utilization can only differ inside a group that ties
    on (count, total memory) with different cards (T4 beside A2 and A16: eager and FlashAttention figures): such a
    group is its own run, sorted on its own when more than one of it fits. A tight fit moves behind the
    comfortable ones of its count by a stable sort on (count, tight), which keeps every other order."""
    distinct = tuple(dict.fromkeys(counts))
    pairs = [(g.id, g.name, c, g.usable_gib, 2 * distinct.index(c) + (not g.bf16)) for c in counts for g in gpus]
    pairs.sort(key=lambda e: (e[2], e[3] * e[2]))
    groups: dict[tuple[int, float], list[tuple[str, str, int, float, int]]] = {}
    for e in pairs:
        groups.setdefault((e[2], e[3] * e[2]), []).append(e)
    runs: list[tuple[tuple[tuple[str, str, int, float, int], ...], bool]] = []
    plain: list[tuple[str, str, int, float, int]] = []
    for group in groups.values():  # dicts keep insertion order: (count, total memory) order
        if len({(e[3], e[4]) for e in group}) > 1:
            if plain:
                runs.append((tuple(plain), False))
                plain = []
            runs.append((tuple(group), True))
        else:
            plain += group
    if plain:
        runs.append((tuple(plain), False))
    return _Plan(tuple(runs), distinct, all(g.bf16 for g in gpus))


_CATALOG_PLANS: dict[tuple[int, ...], _Plan] = {}
_COUNT_TIGHT = attrgetter("count", "tight")  # a stable sort on it keeps (count, total memory) order otherwise
_UTILIZATION = attrgetter("utilization")
# A Fit straight from its field values: NamedTuple's generated `__new__` is a Python function with one argument per
# field (~0.25 us a call against ~0.13 us), and an answer builds up to a hundred and more of them.
_new_fit: Callable[[type[Fit], tuple[Any, ...]], Fit] = tuple.__new__  # type: ignore[assignment]


def _fits_at(req: Requirement, gpus: tuple[GPU, ...], counts: tuple[int, ...], *, by_utilization: bool = True
             ) -> list[Fit]:
    """The fits of `req` among `gpus` x `counts`, sorted as `fit_configs` reports them (see `_plan`).

    One memory figure per (count, attention kind), then a float comparison per (card, count): the inline-query hot
    path. Without `by_utilization` the order is (total memory, count) only, stable with respect to the count-major
    catalog order: the first of several equally small configurations is the one that order visits first."""
    # The catalog's plans by counts alone: hashing a tuple of 30 GPU dataclasses would cost ~15 us a keystroke.
    plan = _CATALOG_PLANS.get(counts) if gpus is GPUS else None
    if plan is None:
        plan = _plan(gpus, counts)
        if gpus is GPUS and len(_CATALOG_PLANS) < 256:
            _CATALOG_PLANS[counts] = plan
    slots: list[tuple[float, float, float, Strategy] | None] = []
    for c in plan.counts:
        if not req.runnable(c):
            slots += (None, None)
            continue
        flash = req._numbers(c, False)
        # Eager attention never needs less than flash: skip it when no card without BF16 could hold even that.
        slots += (flash, None if flash[1] > _MAX_NO_BF16_GIB or plan.all_bf16 else req._numbers(c, True))
    # What each slot must find room for (infinite where nothing runs): one float comparison per pair below.
    needs = [_NEVER if nums is None else nums[1] for nums in slots]
    out: list[Fit] = []
    append = out.append
    tight = False
    for run, mixed in plan.runs:
        start = len(out)
        for gpu_id, name, c, usable, slot in run:
            if needs[slot] <= usable:
                peak, need, rec, strategy = slots[slot]  # type: ignore[misc]  # not None where the need is finite
                if rec > usable:
                    tight = True
                append(_new_fit(Fit, (gpu_id, name, c, peak, usable, need / usable, strategy, need, rec,
                                      rec > usable)))
        if mixed and by_utilization and len(out) - start > 1:
            out[start:] = sorted(out[start:], key=_UTILIZATION)
    if by_utilization and tight:  # in (count, total memory) order: move the tight fits behind within each count
        out.sort(key=_COUNT_TIGHT)
    return out


def _card(gpu_id: str) -> GPU | None:
    try:
        return get_gpu(gpu_id)
    except KeyError:
        return find_gpu(gpu_id)


def _named_gpus(w: Workload) -> tuple[GPU, ...]:
    """The cards the workload names: every variant of a family ("H100"), one card ("H100 PCIe"), or none."""
    return tuple(g for g in (_card(i) for i in w.gpu_ids) if g is not None)


# ~14 KB an entry (dozens of Fit tuples): 256 are ~3.5 MB. The bot keeps its answers in its own Estimator LRU.
@lru_cache(maxsize=256)
def fit_configs(w: Workload, counts: tuple[int, ...] = DEFAULT_COUNTS) -> FitReport:
    """Every catalog GPU x count that fits, in `_fit_key` order (fewest GPUs, comfortable before tight, smallest
    card); advice when nothing up to 8 GPUs does.

    With `w.gpu` set the answer is about that card, or every variant of a named family (`w.gpu_ids`), at `w.gpus`
    when a count was asked for; with only a count (`w.gpus_stated`) it is about every card at that count. Memoised per
    workload (the bot re-asks the same phrase keystroke after keystroke): treat the report as read-only.
    """
    req = requirement(w)
    named = _named_gpus(w)
    if w.gpus > 1 or w.gpus_stated:
        counts = (w.gpus,)
    fits = _fits_at(req, named or GPUS, tuple(counts))  # sorted by `_fit_key`
    # advice for a family is about its roomiest variant: the one most likely to hold the workload with more cards
    advice = [] if fits else _advice(w, req, max(named, key=lambda g: g.usable_gib) if named else None)
    return FitReport(fits=fits, advice=advice, counts=tuple(counts), gpu=named[0].id if named else None,
                     gpu_ids=tuple(g.id for g in named))


# --- advice when nothing fits ------------------------------------------------------------------------------------

_BIGGEST = max((g for g in GPUS if g.vendor == "nvidia"), key=lambda g: g.usable_gib)


def _smallest_fit(w: Workload, counts: tuple[int, ...] = DEFAULT_COUNTS) -> Fit | None:
    best = _fits_at(requirement(w), GPUS, counts, by_utilization=False)
    return min(best, key=lambda f: (f.usable_gib * f.count, f.count)) if best else None


def _where(f: Fit) -> str:
    return f"{f.count}x {f.gpu_name}"


def _advice(w: Workload, req: Requirement, named: GPU | None) -> list[Advice]:
    out: list[Advice] = []
    if named is not None:
        # More of the same card, then any card at all.
        for count in (2, 4, 8, 16, 32, 64):
            if count > max(w.gpus, 1) and req.fits(named, count):
                out.append(Advice(code="more_gpus", msg=msg("advice_more_gpus", have=str(max(w.gpus, 1)),
                                                            gpu=named.name, count=str(count))))
                break
        other = _smallest_fit(w.with_(gpu=None, gpu_family=()))
        if other is not None:
            out.append(Advice(code="bigger_gpu", msg=msg("advice_bigger_gpu", where=_where(other))))
            return out
    if w.is_training and w.offload is not Offload.ALL:
        for offload in (Offload.OPTIMIZER, Offload.ALL):
            if offload is w.offload:
                continue
            alt = w.with_(offload=offload, gpu=None, gpu_family=(), gpus=1, strategy=w.strategy)
            f = _smallest_fit(alt)
            if f is not None:
                cpu = estimate_memory(config_for(alt, f.count)).cpu_ram_gib
                out.append(Advice(code="offload", msg=msg(f"advice_offload_{offload.value}", where=_where(f),
                                                          cpu=f"{cpu:.0f}")))
                break
    if w.method in (Method.FULL, Method.FREEZE, Method.LORA):
        alt = w.with_(method=Method.QLORA, quant=Quant.NF4, lora_rank=w.lora_rank or 16,
                      lora_targets=w.lora_targets or "all-linear", optimizer=w.optimizer or Optimizer.ADAMW,
                      offload=Offload.NONE, gpu=None, gpu_family=(), gpus=1)
        f = _smallest_fit(alt)
        if f is not None:
            out.append(Advice(code="qlora", msg=msg("advice_qlora", where=_where(f))))
    base = w.with_(gpu=None, gpu_family=(), gpus=1)
    breq = requirement(base)
    for nodes in range(2, MAX_NODES + 1):
        count = nodes * NODE_SIZE
        if breq.runnable(count) and breq.fits(_BIGGEST, count):
            out.append(Advice(code="more_nodes", msg=msg("advice_more_nodes", nodes=nodes, gpu=_BIGGEST.name,
                                                         count=str(count),
                                                         strategy=config_for(base, count).strategy.value)))
            break
    if not out:
        out.append(Advice(code="none", msg=msg("advice_none", nodes=str(MAX_NODES))))
    return out
