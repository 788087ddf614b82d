"""One estimate answer for every front end (the bot's commands, inline mode, `gpuradar estimate`): a workload ->
its memory, the configurations that hold it, and on demand the time (training with a dataset) or the speed
(inference) on any of them. Typed end to end; the per-configuration figures are computed when first asked for
and kept, because an inline answer shows only a few of the dozens of fits while the command line lists all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import TypeAdapter

from core.defaults import Assumption
from core.engines import runs_on
from core.estimator import MemoryEstimate
from core.fit import DEFAULT_COUNTS, Fit, FitReport, Requirement, fit_configs, requirement
from core.gpus import GPUS, get_gpu
from core.msg import Msg, msg
from core.parser import rate_said, render_value
from core.remedies import Remedy, remedies
from core.speed import ConfigSpeed, SpeedEstimate, inference_speed, keeps_up, smallest_group
from core.timecost import (
    DEFAULT_EPOCHS,
    DEFAULT_TOKENS_PER_EXAMPLE,
    ConfigTime,
    TimeEstimate,
    flops_per_token,
    tokens_per_second,
    trained_tokens,
)
from core.workload import Workload

# Per-configuration rows are validated straight from a dict through pydantic's public TypeAdapter: the same checks
# as `ConfigSpeed(**values)` at well under its cost (no keyword round trip; `model_construct` is slower still), and
# an answer builds a row per configuration shown.
_speed_row: Callable[[dict[str, Any]], ConfigSpeed] = TypeAdapter(ConfigSpeed).validate_python
_time_row: Callable[[dict[str, Any]], ConfigTime] = TypeAdapter(ConfigTime).validate_python


class Answer:
    """Everything known about one workload. Build with `answer(w, assumptions)`; read-only afterwards."""

    __slots__ = ("_fit_memo", "_keeping", "_remedies", "_speed", "_time", "assumptions", "memory", "named", "report",
                 "requirement", "workload")

    def __init__(self, w: Workload, assumptions: list[Assumption]) -> None:
        self.workload = w
        self.assumptions = assumptions
        self.report: FitReport = fit_configs(w)
        self.requirement: Requirement = requirement(w)
        self.memory: MemoryEstimate = self.requirement.estimate(max(1, w.gpus))  # = estimate_memory(config_for(w, n))
        # The configuration asked for by name (`--gpu NAME --gpus N`, "on 2x 4090"): always answered.
        # A family name ("on H100") names each of its variants.
        self.named: tuple[tuple[str, int], ...] = tuple((g, max(1, w.gpus)) for g in self.report.gpu_ids)
        self._fit_memo: dict[tuple[str, int, float | None], bool] = {}
        self._time: dict[tuple[str, int], ConfigTime] = {}
        self._speed: dict[tuple[str, int], ConfigSpeed] = {}
        self._remedies: list[Remedy] | None = None
        self._keeping: dict[str, int] | None = None

    # --- memory -------------------------------------------------------------------------------------------------
    def fits(self, gpu: str, count: int, fraction: float | None = None) -> bool:
        """Whether `count` x `gpu` (or a `fraction` of one card) holds the workload; memoised per pair."""
        key = (gpu, count, fraction)
        hit = self._fit_memo.get(key)
        if hit is None:
            try:
                card = get_gpu(gpu)
            except KeyError:  # an id the catalog no longer has
                hit = False
            else:
                if fraction is None:
                    hit = self.requirement.fits(card, count)
                else:  # a slice holds what fits in its share of the memory, never a whole card's worth
                    hit = (count == 1 and runs_on(self.workload, card)
                           and self.requirement.need_gib(1, eager=not card.bf16) <= card.usable_gib * fraction)
            self._fit_memo[key] = hit
        return hit

    @property
    def has_target(self) -> bool:
        """Whether a serving target was said (`Workload.has_target`): offers must keep up with it."""
        return self.workload.has_target

    def suits(self, gpu: str, count: int, fraction: float | None = None) -> bool:
        """What an offer list means by a configuration for this workload: it holds it (`fits`) and, where a serving
        target was said, keeps up with it. A slice shares its card's compute with others, so it is never counted on
        to keep up with a target."""
        if not self.fits(gpu, count, fraction):
            return False
        if not self.has_target:
            return True
        if fraction is not None:
            return False
        row = self.config_speed(gpu, count, True)
        return row is not None and bool(row.meets)

    def listed_fits(self) -> Sequence[Fit]:
        """The fitting configurations as every list shows them: fit order, and with a serving target those that keep
        up with it first (fit order within each), so the first one named is one that does what was asked. Without a
        target, the report's own lazy sequence: a list of six builds six fits, not all of them."""
        if not self.has_target:
            return self.report.fits
        return sorted(self.report.fits, key=lambda f: not self.suits(f.gpu, f.count))

    def keeping_counts(self) -> dict[str, int]:
        """What a subscription with a serving target watches: per card, the fewest GPUs of it (of `DEFAULT_COUNTS`,
        the counts its memory needs are stored at) from which every count that holds the workload keeps up with the
        target, so no alert offers a configuration too slow for it (an offer of a count between two is judged by
        the one below, as its memory need is). Cards that keep up at no count are absent; the cards named ("on
        H100") bound the choice. Catalog order; computed once (the answer, its button and a subscription ask)."""
        if self._keeping is not None:
            return self._keeping
        named = set(self.workload.gpu_ids)
        out: dict[str, int] = {}
        for card in GPUS:
            if named and card.id not in named:
                continue
            least = None
            for n in reversed(DEFAULT_COUNTS):  # from the most GPUs down, while each count that holds it keeps up
                if not self.fits(card.id, n):
                    continue
                if not self.suits(card.id, n):
                    break
                least = n
            if least is not None:
                out[card.id] = least
        self._keeping = out
        return out

    def keeping_cards(self) -> tuple[str, ...]:
        """The cards of `keeping_counts`."""
        return tuple(self.keeping_counts())

    def remedies(self) -> list[Remedy]:
        """`core.remedies.remedies` of this workload, computed once (an answer is rendered many times)."""
        if self._remedies is None:
            self._remedies = remedies(self.workload)
        return self._remedies

    @property
    def single_device_total(self) -> bool:
        """Whether `memory` is the whole workload on one device that no single card holds: its figure is then a
        total ("in all"), not a per-GPU need, and the per-GPU figure to give is the first fitting configuration's."""
        w = self.workload
        if w.count_asked is not None:
            return False
        first = self.report.fits[0] if self.report.fits else None
        return first is None or first.count > 1

    @property
    def first_fit(self) -> Fit | None:
        return self.report.fits[0] if self.report.fits else None

    def tight(self, gpu: str, count: int, fraction: float | None = None) -> bool:
        """Whether `count` x `gpu` (or a slice) holds the workload only without the safety margin: the fit table's
        "tight", said wherever that configuration is shown."""
        if not self.fits(gpu, count, fraction):
            return False
        card = get_gpu(gpu)
        usable = card.usable_gib * (fraction if fraction is not None else 1.0)
        return usable < self.requirement.recommended_gib(count, eager=not card.bf16)

    def configs(self) -> list[tuple[str, int, bool]]:
        """(card, count, fits) of every fitting configuration in fit order, then the one asked for by name."""
        out = [(f.gpu, f.count, True) for f in self.report.fits]
        have = {(g, c) for g, c, _ in out}
        out += [(g, c, False) for g, c in self.named if (g, c) not in have]
        return out

    # --- time (training with a dataset size) ----------------------------------------------------------------------
    @property
    def has_time(self) -> bool:
        return self.workload.is_training and bool(self.workload.examples)

    def tokens(self) -> int:
        return trained_tokens(self.workload)

    def config_time(self, gpu: str, count: int, fits: bool | None = None) -> ConfigTime | None:
        """Hours of the run on `count` x `gpu` (None without a dataset size). `fits` when the caller knows it."""
        if not self.has_time:
            return None
        key = (gpu, count)
        hit = self._time.get(key)
        if hit is None:
            tps = tokens_per_second(self.workload, gpu, count, req=self.requirement)
            hit = self._time[key] = _time_row({"gpu": gpu, "gpu_name": get_gpu(gpu).name, "count": count,
                                               "tokens_per_second": tps, "hours": self.tokens() / tps / 3600,
                                               "fits": self.fits(gpu, count) if fits is None else fits})
        return hit

    def time(self, limit: int | None = None) -> TimeEstimate | None:
        """The time on the first `limit` configurations of `configs()` (all by default)."""
        if not self.has_time:
            return None
        w = self.workload
        rows = [self.config_time(g, c, f) for g, c, f in self._limited(limit)]
        assumed = [k for k, v in (("tokens_per_example", w.tokens_per_example), ("epochs", w.epochs)) if not v]
        return TimeEstimate(tokens=self.tokens(), examples=w.examples or 0,
                            tokens_per_example=w.tokens_per_example or DEFAULT_TOKENS_PER_EXAMPLE,
                            epochs=w.epochs or DEFAULT_EPOCHS, flops_per_token=flops_per_token(w),
                            per_config=[r for r in rows if r is not None], assumed=assumed)

    # --- speed (inference) ----------------------------------------------------------------------------------------
    def config_speed(self, gpu: str, count: int, fits: bool | None = None) -> ConfigSpeed | None:
        if self.workload.is_training:
            return None
        key = (gpu, count)
        hit = self._speed.get(key)
        if hit is None:
            card = get_gpu(gpu)
            s = inference_speed(self.workload, card, count,
                                min_group=smallest_group(self.workload, gpu, count, self.requirement))
            hit = self._speed[key] = _speed_row({
                "gpu": gpu, "gpu_name": card.name, "count": count,
                "fits": self.fits(gpu, count) if fits is None else fits,
                "prefill_tokens_per_s": s.prefill_tokens_per_s, "decode_tokens_per_s": s.decode_tokens_per_s,
                "aggregate_decode_tokens_per_s": s.aggregate_decode_tokens_per_s, "bound": s.bound,
                "meets": keeps_up(self.workload, s)})
        return hit

    def speed(self, limit: int | None = None) -> SpeedEstimate | None:
        if self.workload.is_training:
            return None
        ordered = self.has_target and limit is not None  # the configurations that keep up first, then the rest
        rows = [r for g, c, f in (self.configs() if ordered else self._limited(limit))
                if (r := self.config_speed(g, c, f)) is not None]
        if ordered:
            rows = sorted(rows, key=lambda r: not r.meets)[:limit]
        w = self.workload
        return SpeedEstimate(concurrency=w.concurrency, context=w.seq_len,
                             per_config=rows, answer_tps=w.answer_tps,
                             demand_tps=w.demand_tps, request_rate=w.request_rate,
                             request_rate_unit=w.request_rate_unit, ttft_s=w.ttft_s)

    def _limited(self, limit: int | None) -> list[tuple[str, int, bool]]:
        """The first `limit` fits, then the configuration asked for by name when it is not among them."""
        if limit is None:
            return self.configs()
        out = [(f.gpu, f.count, True) for f in self.report.fits[:limit]]
        for g, c in self.named:
            if not any(f.gpu == g and f.count == c for f in self.report.fits):
                out.append((g, c, False))
        return out


def target_said(sp: SpeedEstimate | Workload) -> Msg | None:
    """The serving targets a speed table (or a workload) is checked against, in words (None: none was said)."""
    answer_tps, demand_tps, rate, ttft = sp.answer_tps, sp.demand_tps, sp.request_rate, sp.ttft_s
    parts: list[Msg] = []
    speed = render_value("answer_tps", answer_tps or 0.0)
    if demand_tps is not None:
        demand = render_value("total_tps", demand_tps)
        parts.append(msg("speed_target_rate", rate=rate_said(rate, sp.request_rate_unit), demand=demand, speed=speed)
                     if rate is not None else msg("speed_target_total", demand=demand, speed=speed))
    elif answer_tps is not None:
        parts.append(msg("speed_target_each", speed=speed))
    if ttft is not None:
        parts.append(msg("speed_target_ttft", ttft=render_value("ttft_s", ttft)))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else msg("speed_target_both", first=parts[0], second=parts[1])


def answer(w: Workload, assumptions: list[Assumption] | None = None) -> Answer:
    return Answer(w, list(assumptions or []))


def warm_up() -> None:
    """What a long-running front end (the bot) does once at start-up so that its first users' phrases cost what
    later ones do: the parser's scanners compiled (`core.parser.warm_up`, the bulk of it), the model and card
    indexes with the answers for every spelling the catalogs give (`core.models.warm_up`, `core.parser.warm_names`),
    every catalog architecture's numbers, and the fit plans of the catalog and of every card or family a phrase can
    name. Answers are the same with or without it (tests/core/test_first_time.py); the command line
    answers one phrase and does not call it."""
    from core import estimator, fit, gpus, models, parser
    from core.defaults import complete

    parser.warm_up()
    models.warm_up()
    parser.warm_names()
    gpus.warm_up()
    estimator.warm_up(models.MODELS)
    fit.warm_up(complete(parser.parse_workload("7B inference"))[0])
