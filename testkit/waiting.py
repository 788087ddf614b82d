"""Waiting for a condition in async tests: a guard against hanging, never a timing assertion."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import TypeVar

from sqlalchemy.exc import OperationalError

T = TypeVar("T")


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


async def unlocked(step: Callable[[], Awaitable[T]], limit: float = 120.0) -> T:
    """Run the test's own database step `step()`, again while SQLite says the database is locked: running replicas
    and their children can hold the one write lock (or a checkpoint's) past the busy timeout on a loaded machine,
    and a failed transaction wrote nothing. Any other error, or a lock lasting past `limit` seconds, fails the test."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while True:
        try:
            return await step()
        except OperationalError as exc:
            # SQLite's extended result code says which lock or which I/O step failed (SQLITE_BUSY_RECOVERY,
            # SQLITE_IOERR_SHMMAP, ...): the report carries it, for a failure that happens only on a busy machine.
            name = getattr(exc.orig, "sqlite_errorname", None)
            if name is not None:
                exc.add_note(f"SQLite result code: {name}")
            if "locked" not in str(exc) or loop.time() > deadline:
                raise
            await asyncio.sleep(0.1)
