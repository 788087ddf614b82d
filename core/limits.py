"""The bounds on what a user may ask for, in one place: every reader of input (the workload parser, the subscription
filters, the wizard, callback data, deep links) checks against these, so a value one entry point accepts is never
refused later by another (e.g. an estimate of "70B LoRA 100 GPUs" that then fails to subscribe).

Inclusive ranges unless said otherwise. Sources: no single node or cluster an offer describes has more than a few
thousand GPUs; a price per GPU-hour above ten million (roubles or dollars) is a typo, not a budget.
"""

from __future__ import annotations

# Characters of user text read from any entry point (a message, a command argument, a deep link, an inline query).
MAX_INPUT_CHARS = 500
# Concurrent sequences one serving deployment is sized for: vLLM's scheduler batches up to `max_num_seqs` (256 by
# default, a few thousand at most in practice); more users than that are several replicas, each estimated alone.
MAX_CONCURRENCY = 4096

# GPUs per configuration, in a workload and in a subscription's "x8" filter alike.
MIN_GPUS, MAX_GPUS = 1, 4096

# Workload fields the parser reads (value ranges; whole numbers where the parser says so).
WORKLOAD_LIMITS: dict[str, tuple[float, float]] = {
    "params_b": (0.01, 10_000), "experts": (2, 512), "seq_len": (16, 4_194_304), "batch": (1, 4096),
    "lora_rank": (1, 4096), "gpus": (MIN_GPUS, MAX_GPUS), "concurrency": (1, MAX_CONCURRENCY),
    "examples": (1, 10**10),
    "tokens_per_example": (1, 4_194_304), "dataset_tokens": (1, 10**14),
    "gpu_memory_gb": (1, 4096), "epochs": (0.01, 1000), "images": (1, 10_000),
    "prompt_len": (1, 4_194_304), "output_len": (1, 4_194_304),
    # serving targets: requests a second (a day's trickle to a large API's rate), answer tokens a second per user
    # (a slow reader to the fastest published single-stream speeds, ~thousands), answer tokens a second in all
    "request_rate": (1e-5, 1e6), "answer_tps": (0.1, 10_000), "total_tps": (0.1, 1e8),
    "ttft_s": (0.001, 3600),  # time to the first token, seconds
}

# A subscription's price cap per GPU-hour, in its currency: above 0 (exclusive) and at most this.
MAX_PRICE = 10_000_000.0

# A subscription's region filter (a substring of the offer's location).
MAX_REGION_CHARS = 100

# Pages of a paged list (offers, inline results): a forged page number beyond this is clamped, never computed.
MAX_PAGE = 10_000

# Database ids travel in callback data; anything outside a 32-bit serial is forged.
MAX_ID = 2**31 - 1


def price_ok(value: float) -> bool:
    """A finite price cap in (0, MAX_PRICE]."""
    return 0 < value <= MAX_PRICE  # NaN compares False, inf is above MAX_PRICE


def gpu_count_ok(value: int) -> bool:
    return MIN_GPUS <= value <= MAX_GPUS
