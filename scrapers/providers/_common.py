"""Helpers every provider parser shares: payload validation with a dedicated error, GPU lookup that never guesses."""

from __future__ import annotations

import logging
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from core.gpus import find_gpu
from scrapers.errors import PayloadValidationError

log = logging.getLogger("scrapers")

M = TypeVar("M", bound=BaseModel)


class Lenient(BaseModel):
    """Base of payload models: providers add fields all the time; unknown ones are ignored, not fatal."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)


def validate(model: type[M], payload: Any, provider: str) -> M:
    """The payload as `model`, or PayloadValidationError (the poll becomes suspect) naming the first problems."""
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}" for err in exc.errors()[:3])
        raise PayloadValidationError(f"{provider}: payload does not match the documented shape ({problems})") from exc


def gpu_id(name: str, memory_gb: float | None = None, provider: str = "") -> str | None:
    """Catalog id for a provider's spelling, None (logged) when unknown: kept as spelled, never guessed."""
    gpu = find_gpu(name, memory_gb)
    if gpu is None:
        log.info("%s: unknown GPU spelling %r (memory %s GB) kept unmatched", provider, name, memory_gb)
        return None
    return gpu.id


def join_url(base_url: str, path: str) -> str:
    return base_url.rstrip("/") + "/" + path.lstrip("/")
