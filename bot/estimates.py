"""One place where the bot asks core for an estimate: parse -> complete -> memory -> fit (-> time).

Results are memoised by the normalised text (an LRU), because inline mode asks again on every keystroke and the
same phrases ("70B QLoRA") come from many users. Parse failures are cached too: they are answers, not errors.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections import OrderedDict
from dataclasses import dataclass, field

from bot.ratelimit import RateLimiter
from core.answer import Answer, answer
from core.defaults import Assumption, complete
from core.estimator import MemoryEstimate
from core.fit import FitReport, Requirement
from core.gpus import GPUS
from core.hub import ArchLookup, HubError, hub_error_msg, hub_name_to_resolve, with_hub_arch
from core.msg import Msg, msg
from core.parser import ParseError, parse_workload
from core.remedies import Remedy, differences, split_changes
from core.remedies import apply as apply_changes
from core.workload import Workload
from texts.i18n import render

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Estimate:
    """A phrase and its answer (`core.answer.Answer`: the same pipeline `gpuradar estimate` uses)."""

    query: str
    answer: Answer
    # a remedy's re-estimate: what its changes did to the phrase's settings (field, "offload: … (was: …)")
    changed: tuple[tuple[str, Msg], ...] = ()
    # `Workload.count_asked`, read once: `fits` runs for every group of offers a ranking looks at
    _asked: int | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_asked", self.answer.workload.count_asked)

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
        """Whether `count` x `gpu` (or a slice of one) is one for this workload: of the count asked for, if one was
        (the count the fit table, 🔔 and /subscribe are about: "on 2x A100" lists no single A100), holding it and
        keeping up with a serving target said (`core.answer.Answer.suits`; memoised: offers repeat the pairs)."""
        asked = self._asked
        return (asked is None or count == asked) and self.answer.suits(gpu, count, fraction)

    def holds_at(self, count: int | None = None) -> bool:
        """Whether some card the answer is about (the cards named, else any) holds the workload at `count`, or, with
        None, at the count asked for (any count up to 8 when none was). False: no offer could ever be one for it."""
        if count is None or count == self._asked:
            return bool(self.answer.report.fits)
        cards = self.workload.gpu_ids or tuple(g.id for g in GPUS)
        return any(self.answer.fits(gpu, count) for gpu in cards)

    def tight(self, gpu: str, count: int, fraction: float | None = None) -> bool:
        """Whether that configuration holds this workload only without the safety margin."""
        return self.answer.tight(gpu, count, fraction)

    def hours(self, gpu: str, count: int) -> float | None:
        """Hours of the job on `count` x `gpu`, when the dataset is known."""
        t = self.answer.config_time(gpu, count)
        return None if t is None else t.hours

    def rec_gib_by_count(self) -> dict[str, float]:
        """JSON-ready {"count": GiB} of a comfortable fit (the safety margin included); infinite ones left out."""
        recs = self.requirement.recommended_gib_by_count
        return {str(k): round(float(v), 3) for k, v in recs.items() if math.isfinite(v)}

    @property
    def changes(self) -> tuple[str, ...]:
        """The remedies this estimate was re-run with (`core.remedies` codes), in order."""
        return split_changes(self.query)[1]

    def remedies(self) -> list[Remedy]:
        """Up to three changes that make it fit (or fit on fewer GPUs), each re-estimated; memoised."""
        return self.answer.remedies()

    def min_gib_by_count(self) -> dict[str, float]:
        """JSON-ready {"count": GiB}; counts the workload cannot run on at all (infinite need) are left out."""
        return {str(k): round(float(v), 3) for k, v in self.requirement.min_gib_by_count.items() if math.isfinite(v)}


@dataclass(frozen=True)
class Failure:
    """Text that is not a workload; `message(lang)` explains what was understood and gives examples."""

    query: str
    error: Exception | None

    def __post_init__(self) -> None:
        # A Failure is kept (the estimator's cache, an inline page) long after its error was raised, and the error's
        # traceback holds every frame it was raised and caught through, each frame its caller: the handler's with the
        # update it answered (its InlineQuery, User, results), and the frame whose local is this Failure, so the
        # whole chain is a reference cycle. Only the cyclic collector frees it, and in the bot, whose heap is frozen
        # (gpuradar/heap.py), not before the hourly full collection: ~8 KB per failed phrase, and an inline user
        # typing a phrase fails on most keystrokes. Nothing reads the traceback: `message` needs the error alone.
        error: BaseException | None = self.error
        seen: set[int] = set()
        while error is not None and id(error) not in seen:
            seen.add(id(error))
            error.__traceback__ = None
            error = error.__cause__ or error.__context__

    def message(self, lang: str) -> str:
        if isinstance(self.error, ParseError):
            return render(lang, self.error.explain())
        if isinstance(self.error, HubError):
            return render(lang, hub_error_msg(self.error))
        return ""


def reading_choices(result: Failure) -> tuple[tuple[str, str], ...]:
    """(label, phrase) for each reading a phrase could have had when one fragment stood in the way: each model of a
    family named without its size ("qwen3 8k" -> "Qwen3-8B 8k"...), either side of a contradiction ("70B LoRA or
    QLoRA" -> "70B LoRA", "70B QLoRA"); none otherwise."""
    err = result.error
    return err.choices if isinstance(err, ParseError) else ()


@dataclass(frozen=True)
class HubPending(Failure):
    """The workload names a Hugging Face repository nobody has looked up yet: `Estimator.lookup(repo)` first.

    A Failure for every caller that cannot wait (inline keystrokes): its message says the lookup is under way."""

    repo: str = ""

    def message(self, lang: str) -> str:
        return render(lang, msg("hub_looking", repo=self.repo))


def normalise(text: str) -> str:
    return " ".join(text.split()).strip()


class Estimator:
    def __init__(self, capacity: int = 256, hub: ArchLookup | None = None,
                 limiter: RateLimiter | None = None) -> None:
        # Bounded by what an entry holds: ~20 KB when computed, ~45 KB once inline answers have ranked the offers
        # in stock against it (the per-(card, count) fit and time memos of `core.answer.Answer`), so 256 phrases
        # are ~11 MB (1,024 were ~45 MB: bench/memory.py). A phrase not kept costs ~0.3 ms to answer again.
        self._cache: OrderedDict[str, Estimate | Failure] = OrderedDict()
        self._capacity = capacity
        self.hub = hub  # None: an org/name the catalog lacks is "not in the catalog"
        self._lookups: set[asyncio.Task[None]] = set()
        # per-user allowance of Hub lookups ("hub" kind); the resolver caps them across all users
        self.limiter = limiter or RateLimiter()

    def _refused(self, repo: str, user_id: int | None) -> HubError | None:
        """A "busy" answer when this user has used up their lookups of names not known yet (a known one is free)."""
        if user_id is None or self.hub is None or self.hub.cached(repo) is not None:
            return None
        if self.limiter.take(user_id, "hub") > 0:
            return HubError("busy", repo, "per-user limit")
        return None

    async def lookup(self, repo: str, user_id: int | None = None) -> HubError | None:
        """Look `repo` up on the Hub; its answer (or a "not found"...) is then what `get` finds. Returns the failure,
        if any: an unreachable Hub is not remembered, so only this return value tells of it."""
        if self.hub is None:
            return None
        refused = self._refused(repo, user_id)
        if refused is not None:
            return refused
        try:
            await self.hub.resolve(repo)
        except HubError as exc:
            return exc
        return None

    def lookup_soon(self, repo: str, user_id: int | None = None) -> HubError | None:
        """Start a lookup without waiting for it (inline queries: the next keystroke finds the answer); a "busy"
        error instead when the user may not start one now."""
        refused = self._refused(repo, user_id)
        if refused is not None:
            return refused
        task = asyncio.get_running_loop().create_task(self._lookup_quietly(repo))
        self._lookups.add(task)
        task.add_done_callback(self._lookups.discard)
        return None

    async def _lookup_quietly(self, repo: str) -> None:
        await self.lookup(repo)

    async def get_resolved(self, text: str, user_id: int | None = None, *,
                           count: int | None = None) -> Estimate | Failure:
        """`get`, waiting for a Hub lookup when the text names a repository not looked up yet (`user_id`: whose
        allowance of lookups it uses)."""
        result = self.get(text, count=count)
        if isinstance(result, HubPending):
            error = await self.lookup(result.repo, user_id)
            result = self.get(text, count=count)
            if isinstance(result, HubPending) and error is not None:  # the Hub did not answer: say so
                return Failure(result.query, error)
        return result

    def get(self, text: str, *, count: int | None = None) -> Estimate | Failure:
        """The estimate of `text`; with `count`, on that many GPUs when the text says no count of its own (the
        count filter said with a workload, "70B QLoRA x2": the answer is about 2 GPUs, as its offers are)."""
        query = normalise(text)
        key = query.lower() if count is None else f"{query.lower()}\x00{count}"
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        result = self._compute(query, count)
        if isinstance(result, HubPending) or (isinstance(result, Failure) and isinstance(result.error, HubError)):
            return result  # not an answer yet, or one the resolver remembers with its own expiry: ask it again
        self._cache[key] = result
        while len(self._cache) > self._capacity:
            self._cache.popitem(last=False)
        return result

    def _compute(self, query: str, count: int | None = None) -> Estimate | Failure:
        if not query:
            return Failure(query, None)
        base, changes = split_changes(query)  # "<text> [+offload_optimizer]": a remedy button's re-estimate
        try:
            spec = parse_workload(base)
            if count is not None and spec.gpus is None:
                spec = spec.model_copy(update={"gpus": count})
            repo = hub_name_to_resolve(spec) if self.hub is not None else None
            if repo is not None and self.hub is not None:
                known = self.hub.cached(repo)
                if known is None:
                    return HubPending(query, None, repo)
                if isinstance(known, HubError):
                    return Failure(query, known)
                spec = with_hub_arch(spec, repo, known)
            workload, assumptions = complete(spec)
            changed = apply_changes(workload, changes)
            result = answer(changed, assumptions)
        except ParseError as e:
            return Failure(query, e)
        except (ValueError, KeyError, ArithmeticError) as e:  # a phrase the estimator cannot model
            log.info("estimate failed for %r: %s", query, e)
            return Failure(query, e)
        return Estimate(query, result, differences(workload, changed) if changes else ())


# Phrases that walk every branch of the answer once (training and inference, a dataset, users, an engine, a named
# card and family, a quantisation, nothing that fits, both languages): `warm_up` answers each.
WARM_PHRASES = ("13B LoRA", "70B QLoRA ctx 8k bs 4 on 2x 4090", "7B full fine-tune 10k examples x 3 epochs",
                "Qwen2.5-72B inference 32k 8 users on vllm", "llama-3.1-8b inference fp8 on sglang",
                "инференс 70B int4, контекст 32k, 8 пользователей на H100", "полное дообучение 405B",
                "Qwen3-30B-A3B QLoRA через unsloth", "deepseek r1 inference q4_k_m on llama.cpp on 8x H200")


_warmed = False


def warm_up() -> None:
    """What every process would otherwise do on its first users' answers, done once at start-up (`App.start`):
    compile the parser's scanners, read both languages' text catalogs, build the catalogs' indexes and fit plans,
    answer the catalogs' own spellings and work out the models' display names, import what the answer path imports
    lazily, by answering and rendering `WARM_PHRASES` in both languages (with a throwaway Estimator: nothing of it
    is kept as an answer). About 1 s of CPU measured on 2 shared cores at load average 11 (bench/estimate.py
    --distinct prints it), most of it the parser's ~50 scanners (~4 MB) and the two text catalogs, which the first
    users' answers paid before. Once per process: a second call returns at once."""
    global _warmed
    if _warmed:
        return
    _warmed = True
    from bot.names import warm_up as warm_names
    from bot.views import render_estimate  # bot.views imports this module
    from core.answer import warm_up as warm_core
    from texts.i18n import warm_up as warm_texts

    try:
        warm_core()
        warm_texts()
        warm_names()
        scratch = Estimator(capacity=len(WARM_PHRASES))
        for phrase in WARM_PHRASES:
            est = scratch.get(phrase)
            if isinstance(est, Estimate):
                for lang, currency in (("en", "USD"), ("ru", "RUB")):
                    render_estimate(est, [], lang, currency)
                    render_estimate(est, [], lang, currency, assumptions=False)
    except Exception:  # a warm-up is an optimisation: it never keeps the bot from starting
        log.warning("estimate warm-up failed; the first answers will pay for it", exc_info=True)

