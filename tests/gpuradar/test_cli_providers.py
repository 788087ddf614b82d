"""`gpuradar providers` (every provider: enabled / needs key / off, healthy / degraded, both languages) and
`gpuradar providers check NAME` (one fetch and parse, what matched and what did not, nothing stored), run as an
operator runs them against the provider stand-in on loopback."""

from __future__ import annotations

import json
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from storage.offer_tables import CurrentOffer, ScrapeRun
from testkit.provider_server import LIUM_PATH, ProviderServer
from tests.gpuradar.test_cli_scrape import env_for, in_thread
from tests.scrapers.test_new_providers import lium_with_a_card_the_catalog_lacks

PAGE = """<html><body><table class="prices"><thead><tr><th>Flavor</th><th>GPU</th><th>Price</th></tr></thead>
<tbody>
<tr><td class="flavor">rtx4090-1.8.16.40</td><td class="gpu">RTX 4090</td><td class="price">98,50 ₽/час</td>
    <td><a class="order" href="/order/rtx4090-1">Order</a></td></tr>
<tr><td class="flavor">h100-1.16.64.160</td><td class="gpu">H100 PCIe</td><td class="price">342 ₽/час</td>
    <td><a class="order" href="javascript:alert(1)">Order</a></td></tr>
</tbody></table></body></html>"""
FIELDS = {"sku": "td.flavor", "gpu": "td.gpu", "price": "td.price", "url": "a.order@href", "vcpu": "td.vcpu"}


@pytest.fixture
def env(provider_server: ProviderServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        database_url: str) -> dict[str, str]:
    monkeypatch.chdir(tmp_path)
    provider_server.serve("/prices/", body=PAGE, content_type="text/html")
    e = env_for(provider_server, database_url, enabled=("runpod",))
    for keyed in ("LAMBDA", "VERDA", "HYPERSTACK", "SHADEFORM"):  # left on: they wait for their keys
        e.pop(f"PROVIDERS__{keyed}__ENABLED")
        monkeypatch.delenv(f"PROVIDERS__{keyed}__ENABLED", raising=False)
    e |= {"PROVIDERS__IMMERS__PATH": "/prices/", "PROVIDERS__IMMERS__ROWS": "table.prices tbody tr",
          "PROVIDERS__IMMERS__FIELDS": json.dumps(FIELDS)}
    return e


def _cli(env: dict[str, str], monkeypatch: pytest.MonkeyPatch,
         capsys: pytest.CaptureFixture[str]) -> Any:
    def cli(*args: str) -> Coroutine[Any, Any, tuple[int, str, str]]:
        return in_thread(env, monkeypatch, capsys, *args)
    return cli


async def _stored(database_url: str) -> tuple[int, int]:
    from sqlalchemy.exc import SQLAlchemyError

    from storage.db import make_engine

    engine = make_engine(database_url)
    try:
        async with engine.connect() as conn:
            return ((await conn.execute(select(func.count()).select_from(CurrentOffer))).scalar_one(),
                    (await conn.execute(select(func.count()).select_from(ScrapeRun))).scalar_one())
    except SQLAlchemyError:
        return (0, 0)  # no tables: nothing was ever stored
    finally:
        await engine.dispose()


async def test_check_immers_shows_what_matched_and_stores_nothing(env: dict[str, str], database_url: str,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    cli = _cli(env, monkeypatch, capsys)
    rc, out, err = await cli("providers", "check", "immers")
    assert rc == 0, out + err
    assert "immers.cloud (immers): answer looks right" in out
    assert "Rows matched by `table.prices tbody tr`: 2 (2 with a GPU and a price)" in out
    assert "gpu            2/2" in out and "price          2/2" in out
    assert "vcpu           0/2  ← matched nothing" in out  # a locator that finds nothing is named
    assert "Offers: 2 (2 in stock)" in out and "98.5 RUB/hour" in out and "[rtx-4090]" in out
    assert "Nothing was stored." in out and "PROVIDERS__IMMERS__ENABLED=true" in out
    assert await _stored(database_url) == (0, 0)

    rc, out, _ = await cli("providers", "check", "immers", "--json")
    report = json.loads(out)
    assert rc == 0 and report["page"]["fields"]["gpu"] == 2
    # the stand-in serves plain http on 127.0.0.1: a scraped order link there is never rendered (https on the
    # provider's own hosts only), the configured page stands in for it
    assert [o["url"] for o in report["offers"]] == [env["PROVIDERS__IMMERS__BASE_URL"] + "/prices/"] * 2

    rc, out, _ = await cli("providers", "check", "immers", "--lang", "ru")
    assert rc == 0 and "Строк по" in out and "Ничего не сохранено." in out


async def test_check_reports_a_layout_that_does_not_match(env: dict[str, str], monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PROVIDERS__IMMERS__ROWS", "div.card")
    env = env | {"PROVIDERS__IMMERS__ROWS": "div.card"}
    rc, out, _ = await _cli(env, monkeypatch, capsys)("providers", "check", "immers")
    assert rc == 1
    assert "answer not believable" in out and "no rows match 'div.card'" in out
    assert "Rows matched by `div.card`: 0" in out


async def test_check_needs_key_unknown_and_api_provider(env: dict[str, str], monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    cli = _cli(env, monkeypatch, capsys)
    rc, out, _ = await cli("providers", "check", "lambda")
    assert rc == 1 and "Set first: PROVIDERS__LAMBDA__API_KEY" in out
    rc, _, err = await cli("providers", "check", "nope")
    assert rc == 2 and "Unknown provider" in err and "lambda" in err
    rc, out, _ = await cli("providers", "check", "vastai")  # disabled in this env, checked anyway
    assert rc == 0 and "Vast.ai (vastai): answer looks right" in out and "Offers:" in out
    assert "PROVIDERS__VASTAI__ENABLED=true" in out


async def test_providers_lists_setup_and_health_in_both_languages(env: dict[str, str],
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    cli = _cli(env, monkeypatch, capsys)
    rc, _, err = await cli("scrape", "--once")
    assert rc == 0, err
    rc, out, _ = await cli("providers")
    assert rc == 0
    lines = {line.split("  ")[0]: line for line in out.splitlines()}
    assert "enabled" in lines["RunPod (runpod)"] and "healthy" in lines["RunPod (runpod)"]
    assert "needs key: PROVIDERS__LAMBDA__API_KEY" in lines["Lambda (lambda)"]
    assert "PROVIDERS__VERDA__CLIENT_ID, PROVIDERS__VERDA__CLIENT_SECRET" in lines["Verda (verda)"]
    assert "off" in lines["immers.cloud (immers)"] and "not polled yet" in lines["immers.cloud (immers)"]
    rc, out, _ = await cli("providers", "--lang", "ru")
    assert "нужен ключ: PROVIDERS__LAMBDA__API_KEY" in out and "в порядке" in out and "выключен" in out
    rc, out, _ = await cli("providers", "--json")
    data = {p["name"]: p for p in json.loads(out)["providers"]}
    assert data["runpod"]["home"] == "https://runpod.io" and "per hour" in data["runpod"]["sells"]
    assert data["lambda"]["setup"] == "needs_key" and data["lambda"]["needs"] == ["PROVIDERS__LAMBDA__API_KEY"]
    assert data["runpod"]["setup"] == "enabled" and data["runpod"]["status"] == "ok"
    assert data["hyperstack"]["title"] == "Hyperstack"


async def test_providers_shows_vat_terms_with_their_source_and_unknown_gpu_names(
        env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        provider_server: ProviderServer) -> None:
    env = env | {"PROVIDERS__LIUM__ENABLED": "true"}
    provider_server.serve(LIUM_PATH, lium_with_a_card_the_catalog_lacks())  # one node's card is not in the catalog
    cli = _cli(env, monkeypatch, capsys)
    rc, _, err = await cli("scrape", "--once")
    assert rc == 0, err
    rc, out, _ = await cli("providers")
    lines = {line.split("  ")[0]: line for line in out.splitlines()}
    # no statement on the provider's own pages could be cited: said so, not stated as fact
    assert "VAT 22 % included (unconfirmed)" in lines["Selectel (selectel)"]
    assert "no VAT" in lines["RunPod (runpod)"]
    assert "listed price, availability unknown" in lines["Microsoft Azure (azure)"]  # a price-only source
    assert "VAT terms and where they are stated:" in out and "Selectel: VAT 22 % included (unconfirmed); source:" in out
    assert "Lium: 1 offer with unknown GPU `Tesla K80`" in out
    rc, out, _ = await cli("providers", "--lang", "ru")
    assert "НДС 22 % включён (не подтверждено)" in out
    assert "Lium: 1 предложение с неизвестной GPU `Tesla K80`" in out
    rc, out, _ = await cli("providers", "--json")
    data = {p["name"]: p for p in json.loads(out)["providers"]}
    assert data["selectel"]["vat"]["confirmed"] is False and data["selectel"]["vat"]["source"]
    assert data["runpod"]["vat"] is None
    assert data["lium"]["unknown_gpus"] == {"Tesla K80": 1}
