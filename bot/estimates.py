"""One place where the bot asks core for an estimate: parse -> complete -> memory -> fit (-> time).

Results are memoised by the normalised text (an LRU), because inline mode asks again on every keystroke and the
same phrases ("70B QLoRA") come from many users. Parse failures are cached too: they are answers, not errors.
"""

from __future__ import annotations

import logging
import math
from collections import OrderedDict
from dataclasses import dataclass

from bot.i18n import render
from core.answer import Answer, answer
from core.defaults import Assumption, complete
from core.estimator import MemoryEstimate
from core.fit import FitReport, Requirement
from core.parser import ParseError, parse_workload
from core.workload import Workload

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Estimate:
    """A phrase and its answer (`core.answer.Answer`: the same pipeline `gpuradar estimate` uses)."""

    query: str
    answer: Answer

    @property
    def workload(self) -> Workload:
        return self.answer.workload

    @property
    def assumptions(self) -> list[Assumption]:
        return self.answer.assumptions

    @property
    def memory(self) -> MemoryEstimate:
        return self.answer.memory

    @property
    def report(self) -> FitReport:
        return self.answer.report

    @property
    def requirement(self) -> Requirement:
        return self.answer.requirement

    def fits(self, gpu: str, count: int, fraction: float | None = None) -> bool:
        """Whether `count` x `gpu` (or a slice of one) holds this workload (memoised: offers repeat the pairs)."""
        return self.answer.fits(gpu, count, fraction)

    def hours(self, gpu: str, count: int) -> float | None:
        """Hours of the job on `count` x `gpu`, when the dataset is known."""
        t = self.answer.config_time(gpu, count)
        return None if t is None else t.hours

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
            workload, assumptions = complete(parse_workload(query))
            result = answer(workload, assumptions)
        except ParseError as e:
            return Failure(query, e)
        except (ValueError, KeyError, ArithmeticError) as e:  # a phrase the estimator cannot model
            log.info("estimate failed for %r: %s", query, e)
            return Failure(query, e)
        return Estimate(query, result)
