"""One place where the bot asks core for an estimate: parse -> complete -> memory -> fit (-> time).

Results are memoised by the normalised text (an LRU), because inline mode asks again on every keystroke and the
same phrases ("70B QLoRA") come from many users. Parse failures are cached too: they are answers, not errors.
"""

from __future__ import annotations

import logging
import math
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from bot.i18n import render
from core.defaults import complete
from core.estimator import estimate_memory
from core.fit import fit_configs, requirement
from core.gpus import get_gpu
from core.parser import ParseError, parse_workload
from core.timecost import estimate_time
from core.workload import Workload

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Estimate:
    query: str
    workload: Workload
    assumptions: list[Any]  # core.defaults.Assumption: render(lang, a.msg)
    memory: Any  # core.estimator.MemoryEstimate
    report: Any  # core.fit.FitReport
    requirement: Any  # core.fit.Requirement
    time: Any | None  # core.timecost result when the workload names a dataset
    _fit_memo: dict[tuple[str, int], bool] = field(default_factory=dict, compare=False, repr=False)

    def fits(self, gpu: str, count: int) -> bool:
        """Whether `count` x `gpu` holds this workload (memoised: offers repeat the same pairs)."""
        key = (gpu, count)
        if key not in self._fit_memo:
            try:
                self._fit_memo[key] = bool(self.requirement.fits(get_gpu(gpu), count))
            except (KeyError, ValueError):  # a GPU id the catalog no longer has
                self._fit_memo[key] = False
        return self._fit_memo[key]

    def min_gib_by_count(self) -> dict[str, float]:
        """JSON-ready {"count": GiB}; counts the workload cannot run on at all (infinite need) are left out."""
        return {str(k): round(float(v), 3) for k, v in self.requirement.min_gib_by_count.items() if math.isfinite(v)}


@dataclass(frozen=True)
class Failure:
    """Text that is not a workload; `message(lang)` explains what was understood and gives examples."""

    query: str
    error: Exception | None

    def message(self, lang: str) -> str:
        if isinstance(self.error, ParseError):
            return render(lang, self.error.explain())
        return ""


def normalise(text: str) -> str:
    return " ".join(text.split()).strip()


class Estimator:
    def __init__(self, capacity: int = 4096) -> None:
        self._cache: OrderedDict[str, Estimate | Failure] = OrderedDict()
        self._capacity = capacity

    def get(self, text: str) -> Estimate | Failure:
        query = normalise(text)
        key = query.lower()
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        result = self._compute(query)
        self._cache[key] = result
        while len(self._cache) > self._capacity:
            self._cache.popitem(last=False)
        return result

    @staticmethod
    def _compute(query: str) -> Estimate | Failure:
        if not query:
            return Failure(query, None)
        try:
            spec = parse_workload(query)
            workload, assumptions = complete(spec)
            memory = estimate_memory(workload)
            report = fit_configs(workload)
            req = requirement(workload)
        except ParseError as e:
            return Failure(query, e)
        except (ValueError, KeyError, ArithmeticError) as e:  # a phrase the estimator cannot model
            log.info("estimate failed for %r: %s", query, e)
            return Failure(query, e)
        time_estimate = None
        if workload.examples is not None and workload.is_training and report.fits:
            try:
                time_estimate = estimate_time(workload, report.fits)
            except (ValueError, KeyError, ArithmeticError) as e:
                log.info("time estimate failed for %r: %s", query, e)
        return Estimate(query, workload, list(assumptions), memory, report, req, time_estimate)
