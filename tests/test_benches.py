"""The benches run outside pytest, where nothing has imported `gpuradar` (the wiring that installs the provider catalog
core reads: names, spellings, VAT terms). A bench that records polls or renders the bot's texts without it fails at
its first offer ("no provider catalog installed"), as bench/ranking.py, storage.py, fanout.py, fanout_cycle.py and
scrape.py did once the catalog moved into the providers' own definitions. Each bench that imports the product's
storage, bot or scrapers (itself or through another bench) is imported here in a fresh interpreter, as
`python bench/X.py` would, and must leave the catalog installed."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NEEDS_CATALOG = {"storage", "bot", "scrapers"}


def _imports(name: str) -> set[str]:
    """Our top-level packages a bench imports, through the other benches it imports."""
    seen: set[str] = set()
    todo, found = [name], set()
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        for node in ast.walk(ast.parse((ROOT / "bench" / f"{module}.py").read_text(encoding="utf-8"))):
            names = ([node.module] if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            for full in names:
                top, _, rest = full.partition(".")
                found.add(top)
                if top == "bench" and rest:
                    todo.append(rest.split(".")[0])
    return found


BENCHES = sorted(p.stem for p in (ROOT / "bench").glob("*.py") if _imports(p.stem) & NEEDS_CATALOG)


def test_the_benches_that_need_the_catalog_are_found() -> None:
    assert {"ranking", "storage", "fanout", "fanout_cycle", "scrape"} <= set(BENCHES)


@pytest.mark.parametrize("bench", BENCHES)
def test_a_bench_run_alone_has_the_provider_catalog(bench: str) -> None:
    code = (f"import sys; sys.argv = ['bench/{bench}.py']; import bench.{bench}; import core.providers; "
            "print(len(core.providers.catalog()))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout.split()[-1]) >= 20  # every provider of scrapers.registry, not an empty stand-in


def test_the_benches_generated_vast_market_names_only_catalog_cards() -> None:
    """The scrape, memory, soak and ingest-loop benches poll a generated Vast.ai marketplace; the parser checks each
    card's name against its memory, so a listing with a made-up size is an unknown card that reaches nobody (the
    benches once gave every card 24 GB: their polls then matched no subscription and alerted no one)."""
    code = ("import random, sys; sys.argv = ['bench/scrape.py']; from bench.scrape import vast_payload; "
            "from bench.ingest_loop import Market; from scrapers.providers import vastai; "
            "a = vastai.parse(vast_payload(3000, random.Random(7))); "
            "b = vastai.parse({'offers': Market(400).listings}); "
            "print(len(a), sum(o.gpu is None for o in a), len({o.gpu for o in a}), "
            "len(b), sum(o.gpu is None for o in b))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    parsed, unknown, cards, parsed_loop, unknown_loop = map(int, done.stdout.split()[-5:])
    assert parsed > 1000 and parsed_loop > 100
    assert unknown == 0 and unknown_loop == 0
    assert cards >= 12  # the table's cards, not one stand-in
