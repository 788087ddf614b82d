"""Which GPU configurations a workload fits on, and the per-GPU requirement offers and subscriptions are matched by.

A configuration fits when the predicted peak plus the memory outside PyTorch's allocator (CUDA context, NCCL) is at
most the card's *usable* memory (what the device reports, `GPU.usable_gib`), never the label. Several GPUs never
add up: each one must hold its own share (docs/reference/estimator.md §3).

Cards without BF16 (T4, V100) cannot run FlashAttention 2: on them the workload is estimated with eager attention
(the s^2 score matrix is kept), so long contexts stop fitting there first.

A card whose engine cannot run the workload's precision is no fit at any memory (`core.engines.runs_on`): FP8
weights need FP8 tensor cores (Ada / Hopper or newer) or, in vLLM and SGLang, Ampere's weight-only Marlin fallback;
never Volta or Turing.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache, partial
from itertools import pairwise
from typing import Any, NamedTuple, overload

from pydantic import BaseModel, ConfigDict

from core.engines import profile, runs_on
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
    fits: Fits  # fewest GPUs first, comfortable before tight, then the smallest card
    counts: tuple[int, ...]  # the GPU counts that were tried
    gpu: str | None  # the one card asked about, if any (a family's representative variant)
    gpu_ids: tuple[str, ...] = ()  # every card asked about: a family's variants, each fitted on its own memory
    # What would make it possible when nothing fits (`advice`), worked out when first read: an answer shows its own,
    # but the remedies re-estimate up to a dozen changed workloads and read only their fits, and working advice out
    # walks the catalog again for each of its alternatives and up to 63 node counts.
    _advise: Callable[[], list[Advice]] | None = field(default=None, repr=False, compare=False)
    _advice: list[Advice] | None = field(default=None, repr=False, compare=False)

    @property
    def advice(self) -> list[Advice]:
        """What would make an impossible workload possible; empty when something fits."""
        got = self._advice
        if got is None:
            advise = self._advise
            got = advise() if advise is not None else []
            object.__setattr__(self, "_advice", got)  # computed once, like a frozen field read the first time
            object.__setattr__(self, "_advise", None)
        return got


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

    def recommended_gib(self, count: int, *, eager: bool = False) -> float:
        """Usable memory per GPU for a comfortable fit (the stated safety margin): below it a fit is tight."""
        return self._numbers(count, eager)[2]

    @property
    def recommended_gib_by_count(self) -> dict[int, float]:
        """`recommended_gib` at the counts of `min_gib_by_count`: a stored subscription marks tight fits with it."""
        return {c: self.recommended_gib(c) if self.runnable(c) else float("inf") for c in DEFAULT_COUNTS}

    def runnable(self, count: int) -> bool:
        """Tensor parallelism must divide the attention heads (vLLM's rule); other strategies, and engines that
        split layers across the GPUs (llama.cpp, Ollama, transformers), run on any count."""
        ok = self._runnable.get(count)
        if ok is None:
            w = self.workload
            ok = not (count > 1 and _placement(w, count, False)[1] is _TP and w.arch.heads % count
                      and not profile(w.engine).layer_split)
            self._runnable[count] = ok
        return ok

    def fits(self, gpu: GPU, count: int) -> bool:
        """Does the workload run on `count` x `gpu`? Compares with the card's usable memory, never its label."""
        return (self.runnable(count) and runs_on(self.workload, gpu)
                and self.need_gib(count, eager=not gpu.bf16) <= gpu.usable_gib)

    @property
    def min_gib_by_count(self) -> dict[int, float]:
        """Least usable GiB per GPU (BF16 cards) at 1, 2, 4 and 8 GPUs: what offer matching compares with."""
        return {c: self.need_gib(c) if self.runnable(c) else float("inf") for c in DEFAULT_COUNTS}


# ~5.5 KB an entry once its counts are estimated (measured over 10,000 distinct phrases: bench/memory.py).
@lru_cache(maxsize=512)
def requirement(w: Workload) -> Requirement:
    """The memoised requirement of a workload (Workload is frozen and hashable)."""
    return Requirement(w)


_Entry = tuple[str, str, int, float, int]  # (card id, card name, count, usable GiB, slot): one pair of a plan
_Nums = tuple[float, float, float, Strategy]  # `Requirement._numbers`: (peak, need, recommended + runtime, strategy)
_Run = tuple[tuple[_Entry, ...], bool]
# A count's BF16 cards alone, in plan order (= usable size ascending), with their usable sizes: when no card
# without BF16 can hold the workload at that count its fits are two slices of these, found by bisection.
_Sorted = tuple[tuple[_Entry, ...], tuple[float, ...]]


@dataclass(frozen=True, slots=True)
class _Plan:
    """Every (card, count) pair in the order `fit_configs` sorts fits in, as far as the catalog alone decides it."""

    # Per count (ascending): runs of pairs in (count, total memory) order, each with whether it is a group of pairs
    # that tie on (count, total memory) but differ in card kind (BF16 or not) or, through rounding, in usable size:
    # only such a run may need its fits put in utilization order.
    per_count: tuple[tuple[int, tuple[_Run, ...], _Sorted | None], ...]  # (FlashAttention slot, runs, flash_only)
    counts: tuple[int, ...]  # distinct counts; count i's figures are in slots 2i (FlashAttention), 2i+1 (eager)
    all_bf16: bool
    slot_usables: tuple[tuple[float, ...], ...]  # per slot: the usable sizes of its pairs, ascending


def _fit_key(f: Fit) -> tuple[int, bool, float, float]:
    """What a person would pick first, as far as the catalog says: the fewest GPUs, then a comfortable fit before
    a tight one, then the smallest card that does it (the cheapest kind, with the least memory left idle). The
    cheapest offer in stock comes on top of this where offers are known (`core.ranking`)."""
    return f.count, f.tight, f.usable_gib * f.count, f.utilization


@lru_cache(maxsize=256)
def _plan(gpus: tuple[GPU, ...], counts: tuple[int, ...]) -> _Plan:
    """The fits sort key is (count, tight, total memory, utilization). Count and total memory depend on the catalog
    only, so the pairs are put in (count, total memory) order once (stably, from the count-major catalog order);
    the fits of an answer then come out sorted by filtering: per count, the comfortable ones, then the tight ones.
    Utilization can only differ inside a group that ties on (count, total memory) with different cards (T4 beside
    A2 and A16: eager and FlashAttention figures): such a group is its own run, sorted on its own when more than
    one of it fits."""
    distinct = tuple(dict.fromkeys(counts))
    pairs = [(g.id, g.name, c, g.usable_gib, 2 * distinct.index(c) + (not g.bf16)) for c in counts for g in gpus]
    pairs.sort(key=lambda e: (e[2], e[3] * e[2]))
    groups: dict[tuple[int, float], list[_Entry]] = {}
    for e in pairs:
        groups.setdefault((e[2], e[3] * e[2]), []).append(e)
    per_count: dict[int, list[_Run]] = {}
    plain: list[_Entry] = []
    for (count, _), group in groups.items():  # dicts keep insertion order: (count, total memory) order
        runs = per_count.setdefault(count, [])
        if plain and plain[0][2] != count:  # a run never spans two counts
            per_count[plain[0][2]].append((tuple(plain), False))
            plain = []
        if len({(e[3], e[4]) for e in group}) > 1:
            if plain:
                runs.append((tuple(plain), False))
                plain = []
            runs.append((tuple(group), True))
        else:
            plain += group
    if plain:
        per_count[plain[0][2]].append((tuple(plain), False))
    usables = tuple(tuple(sorted(e[3] for e in pairs if e[4] == slot)) for slot in range(2 * len(distinct)))

    def flash_only(c: int) -> _Sorted | None:
        slot = 2 * distinct.index(c)
        entries = tuple(e for run, _ in per_count[c] for e in run if e[4] == slot)
        us = tuple(e[3] for e in entries)
        # Slices are exact only when the order is usable size ascending and no two of these tie on total memory
        # with different sizes (then utilization would order them): true of any real catalog, checked anyway.
        ok = list(us) == sorted(us) and all(a[3] == b[3] or a[3] * c != b[3] * c for a, b in pairwise(entries))
        return (entries, us) if ok else None

    return _Plan(tuple((2 * distinct.index(c), tuple(runs), flash_only(c)) for c, runs in per_count.items()),
                 distinct, all(g.bf16 for g in gpus), usables)


_CATALOG_PLANS: dict[tuple[int, tuple[int, ...]], _Plan] = {}
# A Fit straight from its field values: NamedTuple's generated `__new__` is a Python function with one argument per
# field (~0.25 us a call against ~0.13 us).
_new_fit: Callable[[type[Fit], tuple[Any, ...]], Fit] = tuple.__new__


def _fit(e: _Entry, nums: _Nums) -> Fit:
    gpu_id, name, count, usable, _ = e
    peak, need, rec, strategy = nums
    return _new_fit(Fit, (gpu_id, name, count, peak, usable, need / usable, strategy, need, rec, rec > usable))


class Fits(Sequence[Fit]):
    """The fits of one answer, in fit order, each built when first read. Which pairs fit and their order are
    settled up front (a float comparison per pair); the Fit tuples are not: an inline answer reads four of a
    hundred, the command line fifteen and the count. Read-only, like the report that holds it."""

    __slots__ = ("_built", "_order", "_slots")

    def __init__(self, order: list[_Entry], slots: list[_Nums | None]) -> None:
        self._order = order
        self._slots = slots
        self._built: list[Fit] = []

    def _upto(self, n: int) -> list[Fit]:
        built = self._built
        if len(built) < n:
            slots = self._slots
            more = [_fit(e, slots[e[4]]) for e in self._order[len(built):n]]  # type: ignore[arg-type]
            # a new list, never appended to: a reader still holding the shorter one sees a consistent prefix
            built = self._built = built + more
        return built

    def __len__(self) -> int:
        return len(self._order)

    @overload
    def __getitem__(self, i: int) -> Fit: ...

    @overload
    def __getitem__(self, i: slice) -> list[Fit]: ...

    def __getitem__(self, i: int | slice) -> Fit | list[Fit]:
        n = len(self._order)
        if isinstance(i, slice):
            _, stop, step = i.indices(n)
            return self._upto(stop if step > 0 else n)[i]
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("fit index out of range")
        return self._upto(i + 1)[i]

    def __iter__(self) -> Iterator[Fit]:
        return iter(self._upto(len(self._order)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Fits):
            other = other._upto(len(other._order))
        if isinstance(other, list):
            return self._upto(len(self._order)) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Fits({self._upto(len(self._order))!r})"


def _slots_of(req: Requirement, plan: _Plan) -> list[_Nums | None]:
    """One memory figure per (count, attention kind): slots 2i (FlashAttention) and 2i+1 (eager) of count i.
    `Requirement._numbers` written out for the few counts of a plan (the same memo, the same figures)."""
    w = req.workload
    p = req._prepare()
    memo = req._need
    slots: list[_Nums | None] = []
    for c in plan.counts:
        if not req.runnable(c):
            slots += (None, None)
            continue
        flash = memo.get((c, False))
        if flash is None:
            flash = memo[c, False] = need(p, *_placement(w, c, False))
        # Eager attention never needs less than flash: skip it when no card without BF16 could hold even that.
        if flash[1] > _MAX_NO_BF16_GIB or plan.all_bf16:
            slots += (flash, None)
            continue
        eager = memo.get((c, True))
        if eager is None:
            eager = memo[c, True] = need(p, *_placement(w, c, True))
        slots += (flash, eager)
    return slots


# The catalog as each kind of workload can use it (`core.engines.runs_on`), one tuple per kind, made once: the
# whole catalog for everything but FP8 weights, which keep the cards their engine runs them on.
_CATALOG_VIEWS: dict[object, tuple[GPU, ...]] = {}
_FP8_Q = Quant.FP8


def _runnable_gpus(w: Workload, gpus: tuple[GPU, ...]) -> tuple[GPU, ...]:
    if w.quant is not _FP8_Q:
        return gpus
    if gpus is not GPUS:
        return tuple(g for g in gpus if runs_on(w, g))
    view = _CATALOG_VIEWS.get(w.engine)
    if view is None:
        view = tuple(g for g in GPUS if runs_on(w, g))
        # engines that run FP8 on the same cards share one view object, and so one set of plans
        view = _CATALOG_VIEWS[w.engine] = next((v for v in _CATALOG_VIEWS.values() if v == view), view)
    return view


# The counts a phrase's fits are planned for: every default count, or the one count it states.
WARM_COUNTS: tuple[tuple[int, ...], ...] = (DEFAULT_COUNTS, *((c,) for c in (*DEFAULT_COUNTS, 3, 6, 16)))


def warm_up(w: Workload) -> int:
    """Build the fit plans a phrase would otherwise build on first use: the whole catalog's and each engine's view of
    it for FP8 weights (`w`: any workload, its quantisation and engine replaced here), and every card and every
    family a phrase can name, each at `WARM_COUNTS`. ~300 plans of at most 34 cards: milliseconds, once. Returns how
    many plans exist."""
    from core.gpus import families
    from core.workload import Engine

    catalog_views: list[tuple[GPU, ...]] = [GPUS]
    for engine in (None, *Engine):
        catalog_views.append(_runnable_gpus(w.with_(quant=_FP8_Q, engine=engine), GPUS))
    named = [(g,) for g in GPUS] + [f for f in families() if len(f) > 1]
    for counts in WARM_COUNTS:
        for gpus in (*catalog_views, *named):
            _plan_for(gpus, counts)
    return len(_CATALOG_PLANS) + len(_NAMED_PLANS)


# Plans of the cards a phrase names ("on 2x 4090", "on H100": a family's variants), by their catalog ids and the
# counts: a new phrase makes a new tuple of cards, so these are found by what the tuple holds, never by hashing the
# GPU dataclasses (~0.5 us each) or by building the plan again. Bounded: the catalog's cards and families times
# the counts phrases say; `warm_up` builds the usual ones before the first phrase.
_NAMED_PLANS: dict[tuple[tuple[str, ...], tuple[int, ...]], _Plan] = {}
_NAMED_PLANS_MAX = 4096
_CATALOG_BY_ID = {g.id: g for g in GPUS}


def _plan_for(gpus: tuple[GPU, ...], counts: tuple[int, ...]) -> _Plan:
    # The catalog's plans (and its views') by counts alone: hashing a tuple of 30 GPU dataclasses would cost ~15 us
    # a keystroke.
    catalog = gpus is GPUS or any(gpus is v for v in _CATALOG_VIEWS.values())
    if catalog:
        key = (id(gpus), counts)
        plan = _CATALOG_PLANS.get(key)
        if plan is None:
            plan = _plan(gpus, counts)
            if len(_CATALOG_PLANS) < 256:
                _CATALOG_PLANS[key] = plan
        return plan
    ids = tuple(g.id for g in gpus)
    named = (ids, counts)
    plan = _NAMED_PLANS.get(named)
    if plan is not None:
        return plan
    plan = _plan(gpus, counts)
    # only the catalog's own cards are kept by id (a GPU built by hand may reuse an id with other figures)
    if len(_NAMED_PLANS) < _NAMED_PLANS_MAX and all(g is _CATALOG_BY_ID.get(g.id) for g in gpus):
        _NAMED_PLANS[named] = plan
    return plan


def _fits_at(req: Requirement, gpus: tuple[GPU, ...], counts: tuple[int, ...]) -> Fits:
    """The fits of `req` among `gpus` x `counts`, in `_fit_key` order (see `_plan`): the inline-query hot path.

    A pair fits when its slot's need is at most its usable memory, and sits comfortably when the recommended
    figure is too. Within a count the pairs are in (total memory) order, so the count's fits are its comfortable
    pairs, then its tight ones, each in plan order; a count's tight pairs are looked for only when some card of
    its slots has a usable size between a slot's need and its recommendation."""
    gpus = _runnable_gpus(req.workload, gpus)
    if not gpus:  # no card asked about can run it (FP8 weights on a T4)
        return Fits([], [])
    plan = _plan_for(gpus, counts)
    slots = _slots_of(req, plan)
    needs = [_NEVER if nums is None else nums[1] for nums in slots]
    recs = [_NEVER if nums is None else nums[2] for nums in slots]
    usables = plan.slot_usables
    order: list[_Entry] = []

    def utilization(e: _Entry) -> float:
        return needs[e[4]] / e[3]  # Fit.utilization, the same division

    for flash_slot, runs, flash in plan.per_count:
        eager = usables[flash_slot + 1]
        if flash is not None and (not eager or needs[flash_slot + 1] > eager[-1]):
            # No card without BF16 holds it at this count: comfortable = usable >= recommended, tight = usable
            # from the need up to the recommendation, each a slice of the BF16 cards in plan order.
            entries, us = flash
            at_need = bisect_left(us, needs[flash_slot])
            at_rec = max(at_need, bisect_left(us, recs[flash_slot]))
            order += entries[at_rec:]
            order += entries[at_need:at_rec]
            continue
        tight = False
        for s in (flash_slot, flash_slot + 1):
            us = usables[s]
            if us and bisect_left(us, needs[s]) < bisect_left(us, recs[s]):
                tight = True
        if not tight:
            for run, mixed in runs:
                sel = [e for e in run if needs[e[4]] <= e[3]]
                if mixed and len(sel) > 1:
                    sel.sort(key=utilization)
                order += sel
            continue
        late: list[_Entry] = []
        for run, mixed in runs:
            comfortable = [e for e in run if recs[e[4]] <= e[3] and needs[e[4]] <= e[3]]
            behind = [e for e in run if needs[e[4]] <= e[3] < recs[e[4]]]
            if mixed:
                comfortable.sort(key=utilization)
                behind.sort(key=utilization)
            order += comfortable
            late += behind
        order += late
    return Fits(order, slots)


def _fits_in_plan_order(req: Requirement, gpus: tuple[GPU, ...], counts: tuple[int, ...]) -> list[Fit]:
    """Every fit in (count, total memory) order only, stable with respect to the count-major catalog order: the
    first of several equally small configurations is the one that order visits first."""
    gpus = _runnable_gpus(req.workload, gpus)
    if not gpus:
        return []
    plan = _plan_for(gpus, counts)
    slots = _slots_of(req, plan)
    return [_fit(e, nums) for _, runs, _ in plan.per_count for run, _ in runs for e in run
            if (nums := slots[e[4]]) is not None and nums[1] <= e[3]]


def _card(gpu_id: str) -> GPU | None:
    try:
        return get_gpu(gpu_id)
    except KeyError:
        return find_gpu(gpu_id)


def _named_gpus(w: Workload) -> tuple[GPU, ...]:
    """The cards the workload names: every variant of a family ("H100"), one card ("H100 PCIe"), or none."""
    if not w.gpu:  # no card named (`Workload.gpu_ids` is empty)
        return ()
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
    if w.count_asked is not None:
        counts = (w.count_asked,)
    fits = _fits_at(req, named or GPUS, tuple(counts))  # sorted by `_fit_key`
    # advice for a family is about its roomiest variant: the one most likely to hold the workload with more cards
    advise = None if fits else partial(_advice, w, req, max(named, key=lambda g: g.usable_gib) if named else None)
    return FitReport(fits=fits, counts=tuple(counts), gpu=named[0].id if named else None,
                     gpu_ids=tuple(g.id for g in named), _advise=advise, _advice=[] if fits else None)


# --- advice when nothing fits ------------------------------------------------------------------------------------

_BIGGEST = max((g for g in GPUS if g.vendor == "nvidia"), key=lambda g: g.usable_gib)


def _smallest_fit(w: Workload, counts: tuple[int, ...] = DEFAULT_COUNTS) -> Fit | None:
    """The fit with the least memory in all (then the fewest GPUs): `min` of `_fits_in_plan_order` by
    (usable x count, count), without building every fit. A count's pairs are in total-memory order, so its first
    fitting pair is its smallest (the first of equals, as `min` keeps); the counts' firsts are then compared."""
    gpus = _runnable_gpus(w, GPUS)
    if not gpus:
        return None
    plan = _plan_for(gpus, counts)
    slots = _slots_of(requirement(w), plan)
    best: tuple[_Entry, _Nums] | None = None
    best_key: tuple[float, int] | None = None
    for _, runs, _ in plan.per_count:
        found = next(((e, nums) for run, _ in runs for e in run
                      if (nums := slots[e[4]]) is not None and nums[1] <= e[3]), None)
        if found is not None:
            e = found[0]
            key = (e[3] * e[2], e[2])  # Fit.usable_gib * Fit.count, the same product
            if best_key is None or key < best_key:
                best, best_key = found, key
    return None if best is None else _fit(*best)


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
    elif w.count_asked is not None:  # "on 1 GPU", "x2": no card holds it at that count; what would, at any count
        other = _smallest_fit(w)
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
        out.append(Advice(code="none", msg=msg("advice_none", nodes=MAX_NODES)))
    return out
