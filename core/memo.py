"""A pure function's answers kept two ways: a table filled ahead for the arguments a catalog itself spells (never
evicted: bounded by the catalog), and a bounded LRU for everything else people type.

The bot's warm-up fills the table (`fill`), so a first-time phrase that pastes a catalog name costs one dict look-up
instead of the function's normalising passes, which the LRU cannot save for names nobody has asked about yet. An
answer is the same with or without the table: both hold what the function returns.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from functools import lru_cache
from typing import Generic, TypeVar

R = TypeVar("R")


class AheadMemo(Generic[R]):
    """`memo(*args)` is `fn(*args)`, looked up in the filled table first, then in an LRU of `maxsize`. Arguments are
    passed positionally, always the same way (a default left out would be another key)."""

    def __init__(self, fn: Callable[..., R], maxsize: int) -> None:
        self._fn = fn
        self._ahead: dict[tuple[Hashable, ...], R] = {}
        self._lru = lru_cache(maxsize=maxsize)(fn)

    def __call__(self, *args: Hashable) -> R:
        try:
            return self._ahead[args]
        except KeyError:
            return self._lru(*args)

    def fill(self, argument_tuples: Iterable[tuple[Hashable, ...]]) -> None:
        """Answer these now, into the table (once: a second fill of a filled table does nothing)."""
        if self._ahead:
            return
        fn = self._fn
        self._ahead = {args: fn(*args) for args in argument_tuples}

    def __len__(self) -> int:
        return len(self._ahead)
