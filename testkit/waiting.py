"""Waiting for a condition in async tests: a guard against hanging, never a timing assertion."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable


async def until(predicate: Callable[[], object], limit: float = 30.0, interval: float = 0.02) -> None:
    """Return once `predicate()` (sync or async) is truthy; fail the test if it is not within `limit` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while True:
        result = predicate()
        if inspect.isawaitable(result):
            result = await result
        if result:
            return
        if loop.time() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(interval)
