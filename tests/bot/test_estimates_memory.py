"""A failed estimate keeps no frames alive: it is cached, and in the bot (whose heap is frozen, gpuradar/heap.py) a
reference cycle through its traceback would stay until the hourly full collection, with the update it answered."""

from __future__ import annotations

import gc
import weakref

from bot.estimates import Estimator, Failure
from core.parser import ParseError


class _Update:
    """Stands for what a handler's frame holds while it answers (aiogram's InlineQuery and the rest)."""


def _answer(estimator: Estimator, text: str) -> tuple[Failure, weakref.ref[_Update]]:
    update = _Update()  # a local of the frame that asks, as a handler's update is
    result = estimator.get(text)
    assert isinstance(result, Failure)
    return result, weakref.ref(update)


def test_failed_phrase_holds_no_traceback_and_no_cycle() -> None:
    estimator = Estimator(capacity=1)
    gc.collect()
    gc.disable()  # what reference counting alone frees: a cycle would survive this test
    try:
        failure, update = _answer(estimator, "please tell me a joke")
        assert isinstance(failure.error, ParseError)
        assert failure.error.__traceback__ is None
        assert failure.message("en")  # still explains what was understood
        del failure
        estimator.get("13B LoRA")  # evicts the failure (capacity 1)
        assert update() is None, "the asking frame's locals outlived the answer"
    finally:
        gc.enable()


def test_chained_errors_lose_their_tracebacks_too() -> None:
    try:
        try:
            raise KeyError("inner")
        except KeyError as inner:
            raise ValueError("outer") from inner
    except ValueError as outer:
        failure = Failure("q", outer)
    assert failure.error is not None
    assert failure.error.__traceback__ is None
    assert failure.error.__cause__ is not None and failure.error.__cause__.__traceback__ is None
