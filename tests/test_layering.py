"""The layers of docs/architecture.md, held: each package imports only the parts its row names, and the tests and
the benches share `testkit/` instead of importing each other. Read from the source (every import statement, also
inside functions), so an import added anywhere fails here, not in a review."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OURS = {"core", "texts", "scrapers", "modelhub", "storage", "bot", "gpuradar", "testkit", "tests", "bench"}
PRODUCT = {"core", "texts", "scrapers", "modelhub", "storage", "bot", "gpuradar"}
ALLOWED = {
    "core": {"core"},
    "texts": {"texts", "core"},
    "scrapers": {"scrapers", "core"},
    "modelhub": {"modelhub", "core"},
    "storage": {"storage", "core"},
    "bot": {"bot", "core", "texts", "storage"},
    "gpuradar": PRODUCT,
    "testkit": PRODUCT | {"testkit"},
    "bench": PRODUCT | {"testkit", "bench"},
    "tests": PRODUCT | {"testkit", "tests"},
}


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
    return names & OURS


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_each_part_imports_only_what_its_layer_allows(package: str) -> None:
    wrong = sorted(f"{path.relative_to(ROOT)} imports {name}"
                   for path in (ROOT / package).rglob("*.py") if "fixtures" not in path.parts
                   for name in _imports(path) - ALLOWED[package])
    assert not wrong, wrong
