"""core.memo.AheadMemo: answers filled ahead are served from the table, the rest through a bounded LRU, and both are
what the function says."""

from __future__ import annotations

from core.memo import AheadMemo


def test_filled_answers_skip_the_function_and_others_are_memoised() -> None:
    calls: list[tuple[str, bool]] = []

    def shout(word: str, loud: bool) -> str:
        calls.append((word, loud))
        return word.upper() if loud else word

    memo: AheadMemo[str] = AheadMemo(shout, maxsize=2)
    memo.fill([("a", True), ("b", False)])
    assert len(memo) == 2 and len(calls) == 2
    calls.clear()
    assert memo("a", True) == "A" and memo("b", False) == "b"
    assert calls == []  # from the table
    assert memo("c", True) == "C" and memo("c", True) == "C"
    assert calls == [("c", True)]  # worked out once, then from the LRU
    memo.fill([("d", True)])  # a filled table is not filled again
    assert len(memo) == 2 and memo("d", True) == "D" and calls[-1] == ("d", True)
