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
