"""Each scraper against the shape of its live API as public clients see it (evidence in the provider modules'
docstrings): Selectel's GPU servers per storefront model and a slow location lookup, HOSTKEY's preset names and
location discovery, Vultr's plan fields, bare-metal plans and fractional vGPUs."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from core.polls import PollStatus
from scrapers.http import PoliteClient, RetryPolicy, make_client
from scrapers.poller import poll
from scrapers.providers import hostkey, selectel, vultr
from testkit.provider_server import (
    HOSTKEY_PATH,
    SELECTEL_LOCATIONS_PATH,
    Fault,
    ProviderServer,
    load_fixture,
    vultr_availability_path,
)


@pytest.fixture
async def client() -> PoliteClient:  # type: ignore[misc]
    c = make_client(retry=RetryPolicy(attempts=2, scale=0.001), rng=random.Random(2), rate_limits={"vastai": None})
    yield c
    await c.aclose()


# -- Selectel ---------------------------------------------------------------------------------------------------------
# The GPU models on selectel.ru's dedicated-server storefront, as `gpu.name` spells them (verified: "RTX A2000";
# the others follow the same short model style), and the catalog card each must be recognised as.
SELECTEL_MODELS = [
    ("RTX A2000", "rtx-a2000"), ("RTX A4000", "rtx-a4000"), ("RTX A5000", "rtx-a5000"), ("RTX A6000", "rtx-a6000"),
    ("RTX 3090", "rtx-3090"), ("RTX 4090", "rtx-4090"), ("Tesla T4", "t4"), ("L4", "l4"), ("A40", "a40"),
    ("L40S", "l40s"), ("A100", "a100-80gb"), ("A100 40GB", "a100-40gb"), ("H100", "h100-sxm"), ("H200", "h200"),
    ("Tesla A2", "a2"), ("A2", "a2"), ("A30", "a30"), ("Tesla A30", "a30"), ("RTX 2080 Ti", "rtx-2080-ti"),
    ("GeForce RTX 2080Ti", "rtx-2080-ti"), ("A16", "a16"),
]


def selectel_payload(gpu: dict[str, Any] | None) -> dict[str, Any]:
    services = load_fixture("selectel.sample.json")
    service = copy.deepcopy(services["result"][0]) | {"gpu": gpu}
    return {"services": {**services, "result": [service]}, "locations": load_fixture("selectel.location.sample.json")}


@pytest.mark.parametrize("spelling,card", SELECTEL_MODELS)
def test_selectel_recognises_every_storefront_gpu(spelling: str, card: str) -> None:
    offers = selectel.parse(selectel_payload({"name": spelling, "count": 2}))
    assert offers and {(o.gpu, o.gpu_count, o.gpu_name) for o in offers} == {(card, 2, spelling)}


@pytest.mark.parametrize("gpu", [None, {}, {"name": "", "count": 0}, {"name": "RTX A2000", "count": 0}])
def test_selectel_cpu_servers_are_not_gpu_offers(gpu: dict[str, Any] | None) -> None:
    assert selectel.parse(selectel_payload(gpu)) == []


def test_selectel_unknown_model_is_kept_as_spelled_never_guessed() -> None:
    offers = selectel.parse(selectel_payload({"name": "Tesla P40", "count": 1}))
    assert offers and all(o.gpu is None and o.gpu_name == "Tesla P40" for o in offers)


async def test_selectel_keeps_the_last_good_location_list_when_the_lookup_is_slow(
        provider_server: ProviderServer, client: PoliteClient) -> None:
    settings = provider_server.providers_settings()
    settings.selectel.base_url = provider_server.base_url + "/"  # its own cache entry
    provider_server.inject(SELECTEL_LOCATIONS_PATH, Fault.TIMEOUT, times=None, delay=3.0)
    first = await poll("selectel", settings, client)  # no good list yet: cannot place stock, fails
    assert first.status is PollStatus.FAILED and "timeout" in (first.error or "")
    provider_server.clear_faults()
    good = await poll("selectel", settings, client)
    assert good.status is PollStatus.OK and good.offers
    provider_server.inject(SELECTEL_LOCATIONS_PATH, Fault.TIMEOUT, times=None, delay=3.0)
    slow = await poll("selectel", settings, client)
    assert slow.status is PollStatus.OK and {o.key for o in slow.offers} == {o.key for o in good.offers}


# -- HOSTKEY ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,card,count", [
    ("gpu.v3-4090t", "rtx-4090", 1), ("gpu.v2-a5000", "rtx-a5000", 1), ("vgpu.v2-a4000", "rtx-a4000", 1),
    ("gpu.v4-2xa100", "a100-80gb", 2), ("gpu.v5-l40s", "l40s", 1), ("gpu.v4-h100", "h100-sxm", 1),
    ("gpu.v3-4x3090", "rtx-3090", 4),
])
def test_hostkey_preset_names_map_to_their_card(name: str, card: str, count: int) -> None:
    preset = {"id": 1, "name": name, "active": 1, "cpu": 8, "ram": 64, "gpu": None, "available": 1,
              "price": {"NL": {"EUR": 500, "USD": 540, "RUR": 50000}}}
    offers = hostkey.parse({"NL": {"result": "OK", "presets": [preset]}})
    assert [(o.gpu, o.gpu_count) for o in offers] == [(card, count)]


async def test_hostkey_polls_every_location_the_api_lists(provider_server: ProviderServer,
                                                         client: PoliteClient) -> None:
    sample = load_fixture("hostkey.sample.json")
    preset = copy.deepcopy(sample["presets"][0]) | {"price": {"KZ": {"EUR": 900, "USD": 980, "RUR": 90000}},
                                                    "locations": "KZ"}
    provider_server.serve(HOSTKEY_PATH, {**sample, "presets": [*sample["presets"], preset]})
    provider_server.serve(HOSTKEY_PATH, {"result": "OK", "presets": [preset | {"available": 3}]},
                          query={"filter": "yes", "location": "KZ"})
    settings = provider_server.providers_settings(hostkey={"locations": ["NL"]})
    result = await poll("hostkey", settings, client)
    assert result.status is PollStatus.OK
    asked = {r.query.get("location") for r in provider_server.requests_to(HOSTKEY_PATH)}
    assert {"NL", "FI", "KZ"} <= asked  # configured NL, plus every location a GPU preset is priced in
    kz = [o for o in result.offers if o.location == "KZ"]
    assert kz and kz[0].available == 3 and kz[0].in_stock
    # the discovery call failing leaves the configured list
    provider_server.inject(HOSTKEY_PATH, Fault.SERVER_ERROR, times=2)
    assert (await poll("hostkey", settings, client)).status is PollStatus.OK


# -- Vultr ------------------------------------------------------------------------------------------------------------
def vultr_plan(plan_id: str, **fields: Any) -> dict[str, Any]:
    return {"id": plan_id, "vcpu_count": 16, "ram": 65536, "disk": 350, "hourly_cost": 2.0, "monthly_cost": 1460,
            "locations": ["ewr"], "deploy_ondemand": True, **fields}


def vultr_offers(*plans: dict[str, Any], metal: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    every = [p["id"] for p in [*plans, *(metal or [])]]
    return {o.sku: o for o in vultr.parse({"plans": list(plans), "plans_metal": metal or [],
                                           "availability": {"ewr": every}})}


def test_vultr_count_and_model_come_from_the_plan_fields() -> None:
    offers = vultr_offers(
        vultr_plan("vcg-a16-96c-960g-256vram", gpu_type="NVIDIA_A16", gpu_vram_gb=256),
        vultr_plan("vcg-l40s-64c-720g-192vram", gpu_type="NVIDIA_L40S", gpu_vram_gb=192),
        vultr_plan("vcg-odd-name", gpu_type="NVIDIA_H100", gpu_vram_gb=320, gpu_count=4),
        vultr_plan("vcg-a100-3c-30g-20vram", gpu_type="NVIDIA_A100", gpu_vram_gb=20, gpu_count="1/4"),
    )
    assert offers["vcg-a16-96c-960g-256vram"].gpu_count == 16  # 16x A16 (16 GB each), not "1 card"
    assert offers["vcg-a16-96c-960g-256vram"].gpu == "a16"
    assert (offers["vcg-l40s-64c-720g-192vram"].gpu, offers["vcg-l40s-64c-720g-192vram"].gpu_count) == ("l40s", 4)
    assert (offers["vcg-odd-name"].gpu_count, offers["vcg-odd-name"].gpu_memory_gb) == (4, 80)  # no id regex
    quarter = offers["vcg-a100-3c-30g-20vram"]
    assert (quarter.gpu, quarter.gpu_count, quarter.gpu_fraction, quarter.gpu_memory_gb) == (None, 1, 0.25, 20)


def test_vultr_a16_whole_cards_map_to_the_catalog_and_slices_stay_slices() -> None:
    offers = vultr_offers(
        vultr_plan("vcg-a16-6c-64g-16vram", gpu_type="NVIDIA_A16", gpu_vram_gb=16),
        vultr_plan("vcg-a16-12c-128g-32vram", gpu_type="NVIDIA_A16", gpu_vram_gb=32),
        vultr_plan("vcg-a16-2c-8g-2vram", gpu_type="NVIDIA_A16", gpu_vram_gb=2),
    )
    assert (offers["vcg-a16-6c-64g-16vram"].gpu, offers["vcg-a16-6c-64g-16vram"].gpu_count) == ("a16", 1)
    assert (offers["vcg-a16-12c-128g-32vram"].gpu, offers["vcg-a16-12c-128g-32vram"].gpu_count) == ("a16", 2)
    two_gb = offers["vcg-a16-2c-8g-2vram"]  # a vGPU slice is never counted as the card
    assert (two_gb.gpu, two_gb.gpu_count, two_gb.gpu_fraction) == (None, 1, 0.125)


def test_vultr_bare_metal_plans_from_the_known_table() -> None:
    metal = [vultr_plan("vbm-64c-2048gb-8-l40-gpu", hourly_cost=14.0),
             vultr_plan("vbm-48c-1024gb-4-a100-gpu", hourly_cost=7.0)]
    offers = vultr_offers(metal=metal)
    assert (offers["vbm-64c-2048gb-8-l40-gpu"].gpu, offers["vbm-64c-2048gb-8-l40-gpu"].gpu_count) == ("l40s", 8)
    assert (offers["vbm-48c-1024gb-4-a100-gpu"].gpu, offers["vbm-48c-1024gb-4-a100-gpu"].gpu_count) == (
        "a100-80gb", 4)


async def test_vultr_asks_availability_as_documented(provider_server: ProviderServer, client: PoliteClient) -> None:
    result = await poll("vultr", provider_server.providers_settings(), client)
    assert result.status is PollStatus.OK
    asked = provider_server.requests_to(vultr_availability_path("ewr"))
    assert asked and all("type" not in r.query for r in asked)  # the API reference lists no `type=all`
    metal = [o for o in result.offers if o.sku.startswith("vbm-")]
    assert metal and {o.gpu for o in metal} >= {"h100-sxm"}


async def test_vultr_one_regions_failure_costs_that_region_only(provider_server: ProviderServer,
                                                                client: PoliteClient) -> None:
    good = await poll("vultr", provider_server.providers_settings(), client)
    regions = sorted({o.location for o in good.offers})
    assert "ewr" in regions and len(regions) > 1
    broken = next(r for r in regions if r != "ewr")
    provider_server.inject(vultr_availability_path(broken), Fault.SERVER_ERROR, times=None)
    result = await poll("vultr", provider_server.providers_settings(), client)
    assert result.status is PollStatus.OK and result.skipped == 1
    assert {o.key for o in result.offers} == {o.key for o in good.offers if o.location != broken}
    for region in regions:
        provider_server.inject(vultr_availability_path(region), Fault.SERVER_ERROR, times=None)
    assert (await poll("vultr", provider_server.providers_settings(), client)).status is PollStatus.FAILED
