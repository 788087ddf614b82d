"""Every provider carries its evidence: a section in tests/fixtures/providers/SOURCES.md naming where each field
comes from, and a sample payload shaped like it (a declarative page provider whose page has not been captured
says so in its section instead); `gpuradar providers` has the 20+ providers a buyer shops among."""

from __future__ import annotations

import re

from scrapers.providers.declarative import fetch as declarative_fetch
from scrapers.registry import PROVIDERS
from testkit.provider_server import FIXTURES

SOURCES = (FIXTURES / "SOURCES.md").read_text(encoding="utf-8")
SECTIONS = {m.group(1).strip() for m in re.finditer(r"^## (.+?)(?: \(|—|$)", SOURCES, re.MULTILINE)}


def declarative(name: str) -> bool:
    return getattr(PROVIDERS[name].fetch, "func", None) is declarative_fetch


def test_the_market_is_twenty_providers_and_more() -> None:
    assert len(PROVIDERS) >= 20


def test_every_provider_has_a_sources_section() -> None:
    missing = [p.title for p in PROVIDERS.values()
               if not any(section.startswith(p.title) for section in SECTIONS)]
    assert not missing, f"no section in SOURCES.md for {missing}"


def test_every_api_provider_has_a_sample_payload() -> None:
    missing = [name for name in PROVIDERS if not declarative(name)
               and not any(FIXTURES.glob(f"{name}.sample.*")) and not any(FIXTURES.glob(f"{name}.*.sample.*"))]
    assert not missing, f"no sample payload for {missing}"
