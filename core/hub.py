"""Hugging Face Hub answers -> an architecture (pure: the fetching is `modelhub/`'s business).

A model the catalog lacks is read from its repository: `config.json` (the shape) and the model info API
(`/api/models/{repo}`: the safetensors parameter count, which includes towers and anything the shape misses).
The parameter count, when the Hub gives one, replaces the count from the shape; everything else comes from the
config. Failures are codes (`HubError.code`), worded by the front ends in the user's language:

  not_found     no such repository (or no config.json in it)
  gated         the repository needs an accepted licence / a token (HF_TOKEN) and none was given
  forbidden     a token was given but does not open this repository
  offline       the Hub did not answer in time (or at all)
  unreadable    the config.json is not one the estimator can read (not a transformer LM, fields missing,
                shapes outside any published model's range)
  busy          this user asked for too many new names in a short time (a per-user limit of the front end)

A front end asks through `ArchLookup` (the resolver in `modelhub/` is one; `gpuradar/` wires it in), so neither the
bot nor the CLI imports the Hub client.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import asdict, fields
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol

from core.models import Arch, ConfigError, arch_from_config, arch_from_entry

if TYPE_CHECKING:
    from core.msg import Msg
    from core.workload import WorkloadSpec

HUB_CODES = ("not_found", "gated", "forbidden", "offline", "unreadable", "busy")
_REPO = re.compile(r"^[A-Za-z0-9][\w.\-]{0,95}/[A-Za-z0-9][\w.\-]{0,95}$")
# First path segments the Hub routes itself (its API, the other repository kinds, its site pages): `api/whoami` is
# spelled like a repository but `/api/models/api/whoami` would be a call to the Hub's API with our token. The Hub
# does not let an account or organisation take these names (https://huggingface.co/api/..., /datasets/..., ...).
RESERVED_NAMESPACES = frozenset({
    "api", "datasets", "spaces", "models", "docs", "settings", "organizations", "new", "login", "logout", "join",
    "pricing", "papers", "blog", "posts", "collections", "oauth", "static-proxy", "resolve", "search", "tasks",
    "enterprise", "notifications", "chat", "learn",
})


class HubError(Exception):
    """A Hub lookup that gave no architecture; `code` is one of HUB_CODES, `repo` the name asked for."""

    def __init__(self, code: str, repo: str, detail: str = "") -> None:
        super().__init__(f"{code}: {repo} {detail}".strip())
        self.code = code
        self.repo = repo
        self.detail = detail


def is_repo_name(name: str | None) -> bool:
    """'org/name' as the Hub spells repositories (no URL, no path beyond the repository, no Hub route)."""
    if not name or not _REPO.match(name) or ".." in name:
        return False
    return name.split("/", 1)[0].lower() not in RESERVED_NAMESPACES


class ArchLookup(Protocol):
    """What a front end needs of a Hub lookup (`modelhub.HubResolver` is one)."""

    def cached(self, repo: str) -> Arch | HubError | None: ...

    async def resolve(self, repo: str) -> Arch: ...


# The widest shapes a published transformer LM has (largest today: hidden 18,432 / 61 layers DeepSeek V3,
# 126 layers Llama 3.1 405B, vocab 262k Gemma 3, 2T parameters Kimi K2-class MoE) with ample headroom. A config
# outside them is a typo or a hostile file, not a model: answered "unreadable" instead of "8.6e17 GiB".
SANE_RANGES: dict[str, tuple[float, float]] = {
    "hidden": (1, 131_072), "layers": (1, 1_024), "heads": (1, 4_096), "kv_heads": (1, 4_096),
    "intermediate": (1, 1_048_576), "vocab": (1, 4_194_304), "head_dim": (1, 4_096), "experts": (1, 4_096),
    "experts_active": (1, 4_096), "params_b": (1e-4, 100_000.0), "max_context": (0, 1 << 27),
    "window": (0, 1 << 27), "vision_params_b": (0.0, 10_000.0), "image_tokens": (0, 1 << 20),
    # the rest of the shape: 0 means "none" (dense, no MLA, no window); DeepSeek V3's MLA ranks are 512 / 1,536
    "active_b": (0.0, 100_000.0), "shared_intermediate": (0, 1_048_576), "dense_intermediate": (0, 1_048_576),
    "moe_layers": (0, 1_024), "mlp_matrices": (2, 3), "kv_lora_rank": (0, 131_072), "q_lora_rank": (0, 131_072),
    "rope_head_dim": (0, 4_096), "v_head_dim": (0, 4_096), "local_layers": (0, 1_024), "cross_layers": (0, 1_024),
}
# Parts that cannot exceed their whole: (part, whole).
SANE_PARTS = (("kv_heads", "heads"), ("experts_active", "experts"), ("rope_head_dim", "head_dim"),
              ("moe_layers", "layers"), ("local_layers", "layers"), ("cross_layers", "layers"))


def check_shape(arch: Arch, repo: str) -> Arch:
    """`arch` when every dimension is finite and within SANE_RANGES (head_dim 0, a negative rank: refused) and no
    part exceeds its whole; raises HubError("unreadable") otherwise."""
    for name, (low, high) in SANE_RANGES.items():
        value = getattr(arch, name)
        if not isinstance(value, (int, float)) or not math.isfinite(value) or not low <= value <= high:
            raise HubError("unreadable", repo, f"{name}={value!r} is outside {low}..{high}")
    for part, whole in SANE_PARTS:
        if getattr(arch, part) > getattr(arch, whole):
            raise HubError("unreadable", repo,
                           f"{part}={getattr(arch, part)!r} exceeds {whole}={getattr(arch, whole)!r}")
    return arch


def safetensors_params(info: Mapping[str, Any] | None) -> float | None:
    """Billions of parameters from the model info's `safetensors` block ({"total": n} or {"parameters": {...}})."""
    if not isinstance(info, Mapping):
        return None
    st = info.get("safetensors")
    if not isinstance(st, Mapping):
        return None
    total = st.get("total")
    if not isinstance(total, (int, float)) or isinstance(total, bool):
        params = st.get("parameters")
        if isinstance(params, Mapping):
            total = sum(v for v in params.values() if isinstance(v, (int, float)) and not isinstance(v, bool))
    if isinstance(total, (int, float)) and total > 0:
        return float(total) / 1e9
    return None


def _packed_share(info: Mapping[str, Any] | None) -> float:
    """GPTQ/AWQ/bnb checkpoints count packed int32 words, not weights: the safetensors total is then useless."""
    st = info.get("safetensors") if isinstance(info, Mapping) else None
    params = st.get("parameters") if isinstance(st, Mapping) else None
    if not isinstance(params, Mapping):
        return 0.0
    total = sum(v for v in params.values() if isinstance(v, (int, float)))
    packed = sum(v for k, v in params.items() if str(k).upper() in ("I32", "U8", "I8") and isinstance(v, (int, float)))
    return packed / total if total else 0.0


def arch_from_hub(repo: str, config: Mapping[str, Any], info: Mapping[str, Any] | None = None) -> Arch:
    """The architecture of Hub repository `repo` from its config.json and (optionally) its model info."""
    try:
        params = safetensors_params(info)
        shape = check_shape(arch_from_config(config, repo, source=f"Hugging Face Hub: {repo}"), repo)
        if params and _packed_share(info) < 0.2 and 0.5 < params / shape.params_b < 2.0:
            # the checkpoint's own count (towers, biases, norms the shape misses) within a sane range of the shape
            return check_shape(arch_from_config(config, repo, params_b=round(params, 3),
                                                source=f"Hugging Face Hub: {repo}"), repo)
        return shape
    except HubError:
        raise
    except (ConfigError, KeyError, TypeError, ValueError, AttributeError, ArithmeticError, RecursionError) as exc:
        # Infinity, 1e300, a JSON nested 100k deep: whatever a hostile config makes the shape code raise
        raise HubError("unreadable", repo, f"{type(exc).__name__}: {exc}"[:200]) from exc


def arch_to_record(arch: Arch) -> dict[str, Any]:
    """An architecture as JSON (what the Hub cache stores), the same keys as `core/data/models.json`."""
    defaults = {f.name: f.default for f in fields(Arch)}
    out: dict[str, Any] = {}
    for k, v in asdict(arch).items():
        if k in ("id", "name", "hidden", "layers", "heads", "kv_heads", "intermediate", "vocab", "params_b") \
                or v != defaults.get(k):
            out[k] = list(v) if isinstance(v, tuple) else v
    return out


def arch_from_record(record: Mapping[str, Any]) -> Arch:
    return arch_from_entry(record)


@lru_cache(maxsize=1024)
def _hub_only(name: str) -> bool:
    """An org/name the catalog does not know (asked per keystroke: remembered; the catalog does not change)."""
    from core.models import find_model

    return is_repo_name(name) and find_model(name) is None


def hub_name_to_resolve(spec: WorkloadSpec) -> str | None:
    """The `org/name` a parsed workload names that only the Hub can tell about (None when nothing to look up)."""
    if spec.arch is not None or not spec.model or "/" not in spec.model:
        return None
    return spec.model if _hub_only(spec.model) else None


def with_hub_arch(spec: WorkloadSpec, repo: str, arch: Arch) -> WorkloadSpec:
    return spec.model_copy(update={"arch": arch, "model": repo, "model_source": "hub"})


def hub_error_msg(error: HubError) -> Msg:
    """The text-catalog message for a failed lookup (`hub_error_<code>`)."""
    from core.msg import msg

    return msg(f"hub_error_{error.code}", repo=error.repo)
