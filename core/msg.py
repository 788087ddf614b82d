"""A user-facing message as data: a catalog key and its values, never a sentence.

`core` explains itself (a parse error, an assumption, advice) with `Msg`s; the front ends render them in the
user's language through the one text catalog (`texts.i18n.render`). A value may itself be a `Msg` (or a tuple of
them), rendered first: "«13B» — model size: 13B" is `Msg("parse_meaning", fragment=..., meaning=Msg(...))`.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Msg(NamedTuple):
    key: str
    values: tuple[tuple[str, Any], ...] = ()

    def get(self, name: str, default: Any = None) -> Any:
        return next((v for k, v in self.values if k == name), default)


def msg(key: str, /, **values: Any) -> Msg:
    """`msg("parse_range", field=..., lo=1, hi=8)`: hashable (usable in lru_cache'd core functions)."""
    return Msg(key, tuple(values.items()))


class Joined(NamedTuple):
    """Several messages shown as one, joined by `sep` after rendering (", " for lists of meanings)."""

    parts: tuple[Any, ...]
    sep: str = ", "
