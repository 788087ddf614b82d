"""scrapers.http.loads_in_parts (issue 26): a catalogue's long arrays decoded a run of elements at a time give
exactly what `json.loads` gives, and an invalid document the same error, wherever the runs' commas fall."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from scrapers import http
from scrapers.http import decode_json, loads_in_parts

ATOMS: list[Any] = [1, -2.5, 0, "a,b]", 'x"}, {"', "},", "],[", None, True, False, 1e300, "ü\u2028", 2**70]


def value(rng: random.Random, depth: int = 0) -> Any:
    r = rng.random()
    if depth > 2 or r < 0.35:
        return rng.choice(ATOMS)
    if r < 0.65:
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 6))]
    return {f"k{rng.randint(0, 5)},}}": value(rng, depth + 1) for _ in range(rng.randint(0, 5))}


def documents(rng: random.Random) -> list[str]:
    rows = [value(rng) for _ in range(rng.randint(0, 60))]
    shapes: list[Any] = [rows, {"offers": rows, "truncated": rng.random() < 0.5},
                         {"data": {"items": rows, "n": len(rows)}, "x": [[1, 2], {"a": [3]}]},
                         [{"id": i, "gpu": "RTX 4090", "price": i / 7} for i in range(40)],
                         [[i, [i]] for i in range(40)]]
    return [json.dumps(shape, indent=rng.choice([None, 1]), separators=rng.choice([None, (",", ":")]))
            for shape in shapes]


def outcome(loads: Any, text: str) -> object:
    try:
        return ("value", repr(loads(text)))
    except json.JSONDecodeError as exc:
        return ("error", exc.msg, exc.pos)


@pytest.mark.parametrize("seed", range(12))
def test_in_parts_is_json_loads_for_any_document_and_any_damage(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    monkeypatch.setattr(http, "PART_CHARS", rng.choice([1, 7, 40, 200]))  # runs of a few elements, cut anywhere
    for text in documents(rng):
        assert outcome(loads_in_parts, text) == outcome(json.loads, text)
        for _ in range(6):  # cut short, a byte inserted, a byte lost, something after the end
            at = rng.randrange(len(text) + 1)
            for bad in (text[:at], text[:at] + rng.choice("x,]}\"[{: ") + text[at:], text[:at] + text[at + 1:],
                        text + " ]"):
                assert outcome(loads_in_parts, bad) == outcome(json.loads, bad), bad


def test_a_large_body_is_decoded_in_parts_with_the_same_reasons(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http, "PART_CHARS", 64)
    rows = [{"id": i, "dph_total": i / 3, "gpu_name": "H100 SXM"} for i in range(500)]
    body = json.dumps({"offers": rows, "truncated": False}).encode()
    runs: list[str] = []
    real = http._DECODER.decode
    monkeypatch.setattr(http._DECODER, "decode", lambda s: runs.append(s) or real(s))
    assert decode_json(body, "application/json", "u") == {"offers": rows, "truncated": False}
    assert len(runs) > 10  # in runs, not in one go
    with pytest.raises(http.TruncatedPayload, match="truncated JSON"):
        decode_json(body[:-40], "application/json", "u")
