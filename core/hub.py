"""Hugging Face Hub answers -> an architecture (pure: the fetching is `scrapers/hub.py`'s business).

A model the catalog lacks is read from its repository: `config.json` (the shape) and the model info API
(`/api/models/{repo}`: the safetensors parameter count, which includes towers and anything the shape misses).
The parameter count, when the Hub gives one, replaces the count from the shape; everything else comes from the
config. Failures are codes (`HubError.code`), worded by the front ends in the user's language:

  not_found     no such repository (or no config.json in it)
  gated         the repository needs an accepted licence / a token (HF_TOKEN) and none was given
  forbidden     a token was given but does not open this repository
  offline       the Hub did not answer in time (or at all)
  unreadable    the config.json is not one the estimator can read (not a transformer LM, fields missing)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, fields
from typing import Any

from core.models import Arch, ConfigError, arch_from_config, arch_from_entry

HUB_CODES = ("not_found", "gated", "forbidden", "offline", "unreadable")
_REPO = re.compile(r"^[A-Za-z0-9][\w.\-]{0,95}/[A-Za-z0-9][\w.\-]{0,95}$")


class HubError(Exception):
    """A Hub lookup that gave no architecture; `code` is one of HUB_CODES, `repo` the name asked for."""

    def __init__(self, code: str, repo: str, detail: str = "") -> None:
        super().__init__(f"{code}: {repo} {detail}".strip())
        self.code = code
        self.repo = repo
        self.detail = detail


def is_repo_name(name: str | None) -> bool:
    """'org/name' as the Hub spells repositories (no URL, no path beyond the repository)."""
    return bool(name) and bool(_REPO.match(name or "")) and ".." not in (name or "")


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
    params = safetensors_params(info)
    try:
        shape = arch_from_config(config, repo, source=f"Hugging Face Hub: {repo}")
    except (ConfigError, KeyError, TypeError, ValueError, AttributeError, ZeroDivisionError) as exc:
        raise HubError("unreadable", repo, str(exc)) from exc
    if params and _packed_share(info) < 0.2 and 0.5 < params / shape.params_b < 2.0:
        # the checkpoint's own count (towers, biases, norms the shape misses) within a sane range of the shape
        return arch_from_config(config, repo, params_b=round(params, 3), source=f"Hugging Face Hub: {repo}")
    return shape


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
