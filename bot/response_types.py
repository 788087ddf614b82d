"""Keep the Bot API response types this process has used alive, so a garbage collection never makes them be rebuilt.

aiogram parses every Bot API answer with `Response[method.__returning__]` (`BaseSession.check_response`), a pydantic
generic model parametrised per call. pydantic keeps parametrised generics only in a `WeakValueDictionary`
(`pydantic._internal._generics._GENERIC_TYPES_CACHE`, pydantic PR #6681, there to stop dynamically made generics
leaking), and a model class lives in reference cycles, so nothing but the cyclic collector frees it: each full
collection dropped `Response[bool]` (answerInlineQuery) and `Response[list[Update]]` (getUpdates), and the next call
built it again, schema, validator and all: 60-100 ms holding the event loop (found with a stall sampler on
`bench/inline.py --ingest`; it was the ~100 ms stall behind ~1 % of inline answers while polls are ingested, because
each ingest leaves enough long-lived objects behind to bring the next full collection sooner).

`KeepResponseTypes` is an aiogram request middleware that holds a strong reference to the response type of each
method this process calls, once. A bot calls a few dozen methods at most, so this keeps a few dozen classes: what
the process would have rebuilt again and again anyway.
"""

from __future__ import annotations

import contextlib
from typing import Any

from aiogram.client.session.middlewares.base import BaseRequestMiddleware, NextRequestMiddlewareType
from aiogram.methods import Response, TelegramMethod
from aiogram.methods.base import TelegramType

# The process's one pydantic generics cache is weak for every bot alike: so is this one strong for every bot.
_KEPT: dict[Any, type[Response[Any]]] = {}


def keep(returning: Any) -> type[Response[Any]]:
    """`Response[returning]`, built once per process and then held."""
    kept = _KEPT.get(returning)
    if kept is None:
        kept = _KEPT[returning] = Response[returning]
    return kept


def kept() -> dict[Any, type[Response[Any]]]:
    """What is held now, by returned type (for tests and diagnostics)."""
    return dict(_KEPT)


class KeepResponseTypes(BaseRequestMiddleware):
    """On a bot's session: the response type of each method it calls stays built (see the module's docstring)."""

    async def __call__(self, make_request: NextRequestMiddlewareType[TelegramType], bot: Any,
                       method: TelegramMethod[TelegramType]) -> Response[TelegramType]:
        with contextlib.suppress(TypeError):  # an unhashable return annotation: aiogram's own (weak) caching
            keep(method.__returning__)
        return await make_request(bot, method)
