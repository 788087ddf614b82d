"""`gpuradar scrape/offers/providers/db` as a user runs them: subprocesses against the provider stand-in on
127.0.0.1 (PROVIDERS__<NAME>__BASE_URL) and the test's fresh database (DATABASE_URL: a SQLite file, or PostgreSQL with
TEST_DATABASE_URL). Nothing reaches the internet."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest

from gpuradar.cli import main
from scrapers.registry import ProvidersSettings
from storage import migrate
from testkit.provider_server import CLOUDRIFT_PATH, Fault, ProviderServer

CBR_PATH = "/scripts/XML_daily.asp"
CBR_XML = ('<?xml version="1.0" encoding="windows-1251"?><ValCurs Date="01.03.2025" name="Foreign Currency Market">'
           '<Valute ID="R01235"><NumCode>840</NumCode><CharCode>USD</CharCode><Nominal>1</Nominal>'
           '<Name>Dollar</Name><Value>90,0000</Value></Valute>'
           '<Valute ID="R01239"><NumCode>978</NumCode><CharCode>EUR</CharCode><Nominal>1</Nominal>'
           '<Name>Euro</Name><Value>100,0000</Value></Valute></ValCurs>').encode("cp1251")
OFFER_FIELDS = {"provider", "gpu", "gpu_count", "gpu_memory_gb", "location", "billing", "price", "currency", "period",
                "price_per_gpu_hour_rub", "price_per_gpu_hour_usd", "price_per_hour_rub", "price_per_hour_usd",
                "fraction", "in_stock", "available", "url"}


def env_for(server: ProviderServer, database_url: str,
            enabled: tuple[str, ...] = ("runpod", "cloudrift")) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROVIDERS__", "DATABASE_URL", "FX_"))}
    env.update({"DATABASE_URL": database_url, "FX_URL": server.base_url + CBR_PATH})
    for name, _ in ProvidersSettings():
        env[f"PROVIDERS__{name.upper()}__BASE_URL"] = server.base_url
        env[f"PROVIDERS__{name.upper()}__ENABLED"] = "true" if name in enabled else "false"
        env[f"PROVIDERS__{name.upper()}__TIMEOUT"] = "2"
    return env


async def gpuradar(env: dict[str, str], cwd: Path, *args: str) -> tuple[int, str, str]:
    """Run the real command line in a subprocess while this loop keeps serving the stand-in."""
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "gpuradar.cli", *args, env=env, cwd=cwd,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    return proc.returncode or 0, out.decode(), err.decode()


async def in_thread(env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                    *args: str) -> tuple[int, str, str]:
    """The same command line in this process (cheaper than a subprocess: no interpreter start-up), on a worker
    thread with its own event loop, while this loop keeps serving the stand-in."""
    for key, value in env.items():
        if key.startswith(("PROVIDERS__", "DATABASE_URL", "FX_")):
            monkeypatch.setenv(key, value)
    capsys.readouterr()
    rc = await asyncio.to_thread(main, list(args))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def cli_env(provider_server: ProviderServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
            database_url: str) -> dict[str, str]:
    provider_server.serve(CBR_PATH, body=CBR_XML, content_type="application/xml")
    monkeypatch.chdir(tmp_path)  # the rates cache file and any .env are looked up here
    return env_for(provider_server, database_url)


async def test_scrape_once_json_then_offers_and_providers(
        provider_server: ProviderServer, cli_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    def cli(*args: str) -> Coroutine[Any, Any, tuple[int, str, str]]:
        return in_thread(cli_env, monkeypatch, capsys, *args)

    rc, out, err = await gpuradar(cli_env, tmp_path, "scrape", "--once", "--json")
    assert rc == 0, err
    data: dict[str, Any] = json.loads(out)
    assert set(data) == {"providers", "offers"}
    assert sorted((p["name"], p["status"], p["error"]) for p in data["providers"]) == [
        ("cloudrift", "ok", None), ("runpod", "ok", None)]
    assert all(set(p) == {"name", "status", "error", "offers"} for p in data["providers"])
    offers = data["offers"]
    assert len(offers) == sum(p["offers"] for p in data["providers"]) > 0
    assert all(set(o) == OFFER_FIELDS for o in offers)
    rub = [o["price_per_gpu_hour_rub"] for o in offers]
    assert rub == sorted(rub)
    for o in offers:  # USD prices per GPU-hour at the CBR rate the stand-in served (90 roubles)
        assert o["currency"] == "USD" and o["period"] == "hour"
        assert o["price_per_gpu_hour_usd"] == pytest.approx(o["price"] / o["gpu_count"], abs=1e-3)
        assert o["price_per_gpu_hour_rub"] == pytest.approx(o["price_per_gpu_hour_usd"] * 90, abs=1e-2)

    def ident(o: dict[str, Any]) -> tuple[Any, ...]:
        return o["provider"], o["gpu"], o["gpu_count"], o["location"], o["billing"], o["price"]

    in_stock = sorted(ident(o) for o in offers if o["in_stock"] and o["available"] != 0)

    # a captcha from one provider: that provider is suspect, exit status 1, the other's offers still print
    provider_server.inject(CLOUDRIFT_PATH, Fault.CAPTCHA, times=None)
    rc, out, err = await gpuradar(cli_env, tmp_path, "scrape", "--once", "--json", "--lang", "ru")
    assert rc == 1
    second = json.loads(out)
    status = {p["name"]: (p["status"], p["error"]) for p in second["providers"]}
    assert status["runpod"] == ("ok", None)
    assert status["cloudrift"][0] == "suspect" and "HTML" in status["cloudrift"][1]
    assert {o["provider"] for o in second["offers"]} == {"runpod"}

    # the captcha changed nothing: every offer in stock after the first scrape is still listed, cloudrift's too
    rc, out, err = await cli("offers", "--json", "--limit", "1000")
    assert rc == 0, err
    assert sorted(ident(o) for o in json.loads(out)["offers"]) == in_stock
    rc, out, err = await cli("offers", "--gpu", "H100", "--json")
    assert rc == 0, err
    listed = json.loads(out)["offers"]
    # 'H100' is the family: SXM, PCIe and NVL; ranked by the whole configuration's price per hour
    assert sorted(ident(o) for o in listed) == [i for i in in_stock if i[1] in ("h100-sxm", "h100-pcie", "h100-nvl")]
    assert {o["gpu"] for o in listed} >= {"h100-sxm"}
    whole = [o["price_per_hour_rub"] for o in listed]
    assert whole == sorted(whole) and all(o["price_per_hour_rub"] == pytest.approx(
        o["price_per_gpu_hour_rub"] * o["gpu_count"], rel=1e-3) for o in listed)

    rc, out, err = await cli("providers", "--json")
    assert rc == 0, err
    health = {p["name"]: p for p in json.loads(out)["providers"]}
    assert health["runpod"]["status"] == "ok" and health["runpod"]["last_error"] is None
    assert health["cloudrift"]["status"] == "degraded"
    assert "HTML" in health["cloudrift"]["last_error"]
    assert health["cloudrift"]["last_success"] is not None
    assert health["vastai"]["status"] is None and health["vastai"]["enabled"] is False

    rc, out, _ = await cli("providers", "--lang", "ru")
    assert rc == 0
    assert "Провайдер" in out and "сбои" in out and "ещё не опрашивался" in out


async def test_offers_fits_tables_and_polite_errors(cli_env: dict[str, str], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    def cli(*args: str) -> Coroutine[Any, Any, tuple[int, str, str]]:
        return in_thread(cli_env, monkeypatch, capsys, *args)

    rc, out, err = await cli("scrape", "--once", "--provider", "runpod")
    assert rc == 0, err
    assert "runpod" in out and "Provider" in out and "$/GPU-h" in out

    rc, out, err = await gpuradar(cli_env, tmp_path, "offers", "--fits", "70B QLoRA", "--lang", "ru")
    assert rc == 0, err
    assert "Подходит для: 70B QLoRA" in out and "₽/GPU-ч" in out
    assert "RTX 4090" not in out  # one 24 GB card cannot hold a 70B QLoRA
    assert "H100 SXM" in out

    rc, out, err = await gpuradar(cli_env, tmp_path, "offers", "--fits", "тридцать попугаев", "--lang", "ru")
    assert rc == 2
    assert "Traceback" not in err and out == ""
    assert "Не понял" in err

    rc, out, err = await cli("offers", "--gpu", "Voodoo 5")
    assert rc == 2 and "Unknown GPU" in err and "Traceback" not in err

    rc, out, err = await cli("scrape", "--once", "--provider", "nosuch", "--lang", "ru")
    assert rc == 2 and "Неизвестный провайдер «nosuch»" in err and "Traceback" not in err

    rc, out, err = await cli("db", "current")
    head = ", ".join(migrate.heads())
    assert rc == 0, err
    assert f"Database revision: {head} (latest: {head})." in out
