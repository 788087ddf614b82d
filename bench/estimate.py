"""Time parse + complete + estimate + fit per answer, the work behind one inline-query keystroke.

Run: python bench/estimate.py [--rounds N]. Prints microseconds per answer: cold (first time each phrase is seen:
nothing memoised) and warm (the bot re-asks the same phrase as the user types; estimates are memoised per workload).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core import estimator, fit
from core.defaults import complete
from core.fit import fit_configs
from core.parser import parse_workload

PHRASES = [
    "13B LoRA", "70b qlora", "7B full fine-tune", "полное дообучение 7B", "70B QLoRA ctx 8k bs 4",
    "llama-3.1-8b lora r16 seq 4096", "Qwen2.5-72B inference 32k", "инференс 70B int4, контекст 32k, 8 пользователей",
    "mixtral qlora", "405B QLoRA на 8 GPU", "13B LoRA 10k примеров 3 эпохи", "7B LoRA, 5k examples x 3 epochs",
    "70B full fine-tune zero3 on 8 H100", "8B QLoRA on 4090", "32B lora ctx 16k",
]


def one(text: str) -> int:
    w, _ = complete(parse_workload(text))
    return len(fit_configs(w).fits)


def clear() -> None:
    estimator.estimate_on.cache_clear()
    fit.requirement.cache_clear()
    fit.fit_configs.cache_clear()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=200)
    rounds = ap.parse_args().rounds
    for p in PHRASES:  # warm imports and compiled regexes
        one(p)
    cold: list[float] = []
    warm: list[float] = []
    for _ in range(rounds):
        clear()
        t0 = time.perf_counter()
        for p in PHRASES:
            one(p)
        cold.append((time.perf_counter() - t0) / len(PHRASES) * 1e6)
        t0 = time.perf_counter()
        for p in PHRASES:
            one(p)
        warm.append((time.perf_counter() - t0) / len(PHRASES) * 1e6)
    workloads = [complete(parse_workload(p))[0] for p in PHRASES]
    parse_only: list[float] = []
    fit_cold: list[float] = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for p in PHRASES:
            complete(parse_workload(p))
        parse_only.append((time.perf_counter() - t0) / len(PHRASES) * 1e6)
        clear()
        t0 = time.perf_counter()
        for w in workloads:
            fit_configs(w)
        fit_cold.append((time.perf_counter() - t0) / len(PHRASES) * 1e6)
    print(f"{len(PHRASES)} phrases x {rounds} rounds")
    print(f"parse + complete only: median {statistics.median(parse_only):.0f} us/answer, best {min(parse_only):.0f}")
    print(f"estimate + fit only, cold: median {statistics.median(fit_cold):.0f} us/answer, best {min(fit_cold):.0f}")
    print(f"cold (nothing memoised): median {statistics.median(cold):.0f} us/answer, best {min(cold):.0f}")
    print(f"warm (memoised estimates): median {statistics.median(warm):.0f} us/answer, best {min(warm):.0f}")


if __name__ == "__main__":
    main()
