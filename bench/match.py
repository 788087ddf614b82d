"""Matching at scale: 100,000 subscriptions against one cycle's 1,000 changed offers.

Prints the index build time, the indexed match time for the whole cycle, and the naive every-subscription-against-
every-offer loop measured on a sample of offers and extrapolated to the cycle (running it on all 1,000 offers would
take minutes, which is the point). The indexed and naive answers are compared on the sample.

Each timed phase starts after a full garbage collection (`gc.collect()`, outside the timing): otherwise a full
collection that the set-up's allocations (100,000 watches, the index) have made due lands in whichever phase happens
to cross the collector's threshold, ~0.15 s of CPU here, several times the indexed match itself, and which phase
that is shifts with a few thousand objects more or less anywhere in the process.

    python3 bench/match.py [--subs 100000] [--offers 1000] [--naive-sample 20] [--seed 1]
"""

from __future__ import annotations

import argparse
import gc
import random
import time

from core.gpus import GPUS
from core.matching import LEVELS, Target, Watch, WatchIndex, naive_match

PROVIDERS = ["selectel", "hostkey", "vastai", "runpod", "cloudrift", "vultr", "immers"]
RUB_PER_USD = 80.0
# Requirement shapes of common workloads (per-GPU GiB at 1/2/4/8 GPUs), from tiny LoRA to 70B full-ish.
WORKLOAD_NEEDS = [
    {1: 18.0, 2: 14.0, 4: 12.0, 8: 11.0},  # 7B QLoRA
    {1: 38.0, 2: 24.0, 4: 18.0, 8: 15.0},  # 13B LoRA
    {1: 46.0, 2: 30.0, 4: 22.0, 8: 18.0},  # 70B QLoRA
    {1: 150.0, 2: 80.0, 4: 45.0, 8: 30.0},  # 34B full
    {1: 1300.0, 2: 650.0, 4: 330.0, 8: 170.0},  # 70B full
    {1: 9.0, 2: 7.0, 4: 6.0, 8: 6.0},  # 7B inference
]


def typical_usd(usable: float) -> float:
    """A rough per-GPU-hour price that grows with memory, so price caps bite like they would."""
    return 0.15 + 0.022 * usable


def make_watches(n: int, rng: random.Random) -> list[Watch]:
    gpus = list(GPUS)
    weights = [3 if g.usable_gib >= 40 else 1 for g in gpus]  # people watch big cards more
    out: list[Watch] = []
    for i in range(n):
        kind = rng.random()
        currency = "RUB" if rng.random() < 0.6 else "USD"
        providers = frozenset(rng.sample(PROVIDERS, rng.randint(1, 2))) if rng.random() < 0.3 else None
        billing = rng.choice(["hourly", "monthly"]) if rng.random() < 0.2 else None
        count = rng.choice([1, 2, 4, 8]) if rng.random() < 0.3 else None
        if kind < 0.5:
            gpu = rng.choices(gpus, weights)[0]
            cap_usd = typical_usd(gpu.usable_gib) * rng.uniform(0.5, 1.2) if rng.random() < 0.7 else None
            gpu_ids, needs = frozenset({gpu.id}), None
        else:
            needs = rng.choice(WORKLOAD_NEEDS)
            first_fit = next((lv for lv in LEVELS if lv >= min(needs.values())), LEVELS[-1])
            cap_usd = typical_usd(first_fit) * rng.uniform(0.5, 1.5) if rng.random() < 0.8 else None
            gpu_ids = None
        cap = None if cap_usd is None else (cap_usd * RUB_PER_USD if currency == "RUB" else cap_usd)
        out.append(Watch(id=i, gpu_ids=gpu_ids, min_gib_by_count=needs, max_price=cap, currency=currency,
                         providers=providers, gpu_count=count, billing=billing))
    return out


def make_targets(n: int, rng: random.Random) -> list[Target]:
    out: list[Target] = []
    for i in range(n):
        gpu = rng.choice(GPUS)
        usd = typical_usd(gpu.usable_gib) * rng.uniform(0.6, 1.4)
        out.append(Target(key=f"offer-{i}", provider=rng.choice(PROVIDERS), gpu=gpu.id,
                          gpu_count=rng.choice([1, 1, 2, 4, 8]), billing=rng.choice(["hourly", "monthly"]),
                          location=rng.choice(["ru-1", "us-east", "eu"]), price_rub=usd * RUB_PER_USD,
                          price_usd=usd))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--subs", type=int, default=100_000)
    ap.add_argument("--offers", type=int, default=1_000)
    ap.add_argument("--naive-sample", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    watches = make_watches(args.subs, rng)
    targets = make_targets(args.offers, rng)

    gc.collect()
    t0 = time.perf_counter()
    index = WatchIndex.build(watches)
    build_s = time.perf_counter() - t0

    gc.collect()
    t0 = time.perf_counter()
    matched = index.match_many(targets)
    match_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    pairs = sum(len(v.ids()) for v in matched.values())
    enumerate_s = time.perf_counter() - t0

    sample = targets[: args.naive_sample]
    gc.collect()
    t0 = time.perf_counter()
    naive = naive_match(watches, sample)
    naive_sample_s = time.perf_counter() - t0
    naive_s = naive_sample_s * len(targets) / len(sample)
    indexed_sample = index.match_many(sample)
    same = {k: sorted(v) for k, v in naive.items()} == {k: sorted(v) for k, v in indexed_sample.items()}

    print(f"subscriptions: {len(watches):,}   changed offers: {len(targets):,}")
    print(f"index build:   {build_s:.3f} s (once per change of the subscription set)")
    print(f"indexed match: {match_s:.3f} s for the cycle: finds {pairs:,} (subscription, offer) matches "
          f"({len(matched)} offers reach someone)")
    print(f"  + listing every matched id once: {enumerate_s:.3f} s (proportional to the matches, not the subs)")
    print(f"naive loop:    {naive_sample_s:.3f} s for {len(sample)} offers -> ~{naive_s:.1f} s for the cycle "
          f"(extrapolated)")
    total_s = match_s + enumerate_s
    print(f"ratio:         indexed (find + list) is ~{naive_s / total_s:.0f}x faster than the loop; "
          f"target < 1 s: {'met' if total_s < 1 else 'MISSED'} ({total_s:.3f} s)")
    print(f"agreement with the naive loop on the sample: {'identical' if same else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
