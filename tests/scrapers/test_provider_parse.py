"""Pure parsers: every provider from its shared sample payload and from variations (missing / null fields, unknown
new fields, odd GPU spellings, empty lists, broken shapes)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from core.offers import Billing, Period
from scrapers.errors import PayloadValidationError
from scrapers.providers import cloudrift, declarative, hostkey, runpod, selectel, vastai, vultr
from scrapers.providers.selectel import SelectelSettings
from scrapers.settings import DeclarativeProviderSettings
from testkit.provider_server import hostkey_for_location, load_fixture


def by(offers: list[Any], **match: Any) -> list[Any]:
    return [o for o in offers if all(getattr(o, k) == v for k, v in match.items())]


# -- Selectel ---------------------------------------------------------------------------------------------------------
def selectel_payload() -> dict[str, Any]:
    return {"services": load_fixture("selectel.sample.json"),
            "locations": load_fixture("selectel.location.sample.json")}


def test_selectel_counts_only_storefront_locations_and_stock_per_location() -> None:
    offers = selectel.parse(selectel_payload())
    a2 = {o.location: o for o in by(offers, sku="GL12-1-A2")}
    # TAS-2 is in available[] with count 1 but is not sold on the storefront
    assert set(a2) == {"MSK-1", "SPB-5"}
    assert (a2["MSK-1"].in_stock, a2["MSK-1"].available) == (True, 3)
    assert (a2["SPB-5"].in_stock, a2["SPB-5"].available) == (False, 0)
    assert a2["MSK-1"].gpu == "rtx-a2000" and a2["MSK-1"].gpu_count == 1
    assert (a2["MSK-1"].price, a2["MSK-1"].currency, a2["MSK-1"].period) == (23200.0, "RUB", Period.MONTH)
    assert a2["MSK-1"].billing is Billing.MONTHLY
    assert a2["MSK-1"].vcpu == 6 and a2["MSK-1"].ram_gb == 32 and a2["MSK-1"].disk_gb == 2000


def test_selectel_location_price_override_and_preorder_and_non_gpu() -> None:
    offers = selectel.parse(selectel_payload())
    a100 = {o.location: o for o in by(offers, sku="GL80-8-A100")}
    assert a100["MSK-1"].price == 1150000.0 and a100["NSK-1"].price == 1090000.0  # NSK-1 override
    assert a100["NSK-1"].gpu == "a100-80gb" and a100["NSK-1"].gpu_count == 8
    h100 = by(offers, sku="GL90-8-H100")
    assert [(o.location, o.in_stock) for o in h100] == [("MSK-1", False)]  # pre-order with 0 stock
    assert not by(offers, sku="EL42-NVMe")  # no GPU
    # `quantity` (always 1) never shows up as stock
    assert all(o.available != 1 or o.sku == "GL80-8-A100" for o in offers)


def test_selectel_variations_null_gpu_unknown_fields_odd_spelling() -> None:
    payload = selectel_payload()
    services = payload["services"]["result"]
    services[0]["gpu"] = {}  # {} as well as null means "no GPU"
    services[1]["brand_new_field"] = {"x": 1}  # tolerated
    services[1]["gpu"]["name"] = "Tesla Q9000 Turbo"
    services[2]["location_price_collection"] = None
    services[2]["available"] = None
    offers = selectel.parse(payload)
    assert not by(offers, sku="GL12-1-A2")
    odd = by(offers, sku="GL40-4-4090")
    assert odd and all(o.gpu is None and o.gpu_name == "Tesla Q9000 Turbo" for o in odd)
    assert not by(offers, sku="GL80-8-A100")


def test_selectel_not_orderable_is_not_in_stock_and_prefixes_are_settings() -> None:
    payload = selectel_payload()
    payload["services"]["result"][0]["is_order"] = False
    offers = selectel.parse(payload)
    assert all(not o.in_stock and o.available == 0 for o in by(offers, sku="GL12-1-A2"))
    only_msk = selectel.parse(selectel_payload(), SelectelSettings(base_url="x", storefront_prefixes=["MSK"]))
    assert {o.location for o in only_msk} == {"MSK-1"}


def test_selectel_empty_and_broken() -> None:
    assert selectel.parse({"services": {"result": []}, "locations": {"result": []}}) == []
    bad = selectel.parse({"services": {"result": [{"uuid": 1}]}, "locations": {"result": []}})
    assert bad == [] and (bad.records, bad.skipped) == (1, 1)  # one bad record: skipped and counted
    with pytest.raises(PayloadValidationError):
        selectel.parse({"services": {"items": []}, "locations": {}})


# -- HOSTKEY ----------------------------------------------------------------------------------------------------------
def hostkey_payload(*locations: str) -> dict[str, Any]:
    sample = load_fixture("hostkey.sample.json")
    return {loc: hostkey_for_location(sample, loc) for loc in locations}


def test_hostkey_per_location_monthly_presets() -> None:
    offers = hostkey.parse(hostkey_payload("NL", "FI"))
    nl = {o.sku: o for o in offers if o.location == "NL"}
    assert set(nl) == {"gpu.v3-4090t", "gpu.v2-a5000", "gpu.v4-h100", "gpu.v4-2xa100", "vgpu.v2-a4000"}
    assert (nl["gpu.v3-4090t"].gpu, nl["gpu.v3-4090t"].gpu_count, nl["gpu.v3-4090t"].available) == ("rtx-4090", 4, 2)
    assert nl["gpu.v3-4090t"].price == 1199.0 and nl["gpu.v3-4090t"].currency == "EUR"
    assert nl["gpu.v3-4090t"].period is Period.MONTH and nl["gpu.v3-4090t"].billing is Billing.MONTHLY
    assert nl["gpu.v2-a5000"].in_stock is False
    assert nl["gpu.v4-2xa100"].gpu == "a100-80gb" and nl["gpu.v4-2xa100"].gpu_count == 2
    fi = {o.sku: o for o in offers if o.location == "FI"}
    assert fi["gpu.v5-l40s"].in_stock is False and fi["gpu.v5-l40s"].available == 0  # active == 0
    assert not [o for o in offers if o.sku.startswith("bm.")]


def test_hostkey_variations() -> None:
    payload = hostkey_payload("NL")
    presets = payload["NL"]["presets"]
    presets[0]["gpu"] = None  # fall back to the preset name: gpu.v3-4090t -> RTX 4090
    presets[1]["gpu"] = "2x RTX A5000"
    presets[2]["price"] = None
    presets[3]["unexpected"] = [1, 2]
    presets[4]["available"] = None
    offers = {o.sku: o for o in hostkey.parse(payload, hostkey.HostkeySettings(base_url="x", currency="RUR"))}
    assert offers["gpu.v3-4090t"].gpu == "rtx-4090" and offers["gpu.v3-4090t"].gpu_name == "RTX 4090"
    assert offers["gpu.v2-a5000"].gpu_count == 2 and offers["gpu.v2-a5000"].gpu == "rtx-a5000"
    assert "gpu.v4-h100" not in offers  # not priced: not sold there
    assert offers["vgpu.v2-a4000"].available == 0 and not offers["vgpu.v2-a4000"].in_stock
    assert offers["gpu.v4-2xa100"].currency == "RUB" and offers["gpu.v4-2xa100"].price == 253820
    assert hostkey.parse({"NL": {"result": "OK", "presets": []}}) == []
    with pytest.raises(PayloadValidationError):
        hostkey.parse({"NL": {"result": -1, "error": "bad"}})
    no_id = hostkey.parse({"NL": {"presets": [{"name": "gpu.x"}]}})  # no id: that record is skipped and counted
    assert no_id == [] and no_id.skipped == 1


# -- Vast.ai ----------------------------------------------------------------------------------------------------------
def test_vast_sample_aggregates_configurations() -> None:
    offers = vastai.parse(load_fixture("vastai.sample.json"))
    h100 = by(offers, sku="H100 SXM", billing=Billing.HOURLY)
    assert len(h100) == 1
    o = h100[0]
    assert (o.gpu, o.gpu_count, o.location, o.price, o.currency) == ("h100-sxm", 8, "CA", 18.135, "USD")
    assert o.in_stock and o.available == 1 and o.gpu_memory_gb == pytest.approx(79.6, abs=0.1)
    a100 = by(offers, sku="A100 SXM4", billing=Billing.HOURLY)[0]
    assert not a100.in_stock and a100.available == 0 and a100.price == 2.0925  # listed but not rentable
    spot = by(offers, sku="RTX 4090", billing=Billing.SPOT)[0]
    assert spot.price == 0.18
    assert by(offers, sku="H100 PCIE")[0].gpu == "h100-pcie"


def test_vast_aggregation_best_price_and_distinct_machines() -> None:
    base = load_fixture("vastai.sample.json")["offers"][0]  # RTX 4090, Texas US
    listings = []
    for i, (machine, price, rentable) in enumerate([(1, 0.40, True), (1, 0.35, True), (2, 0.50, True),
                                                     (3, 0.10, False)]):
        listing = copy.deepcopy(base) | {"id": 100 + i, "machine_id": machine, "dph_total": price,
                                         "rentable": rentable, "min_bid": None}
        listings.append(listing)
    listings.append(copy.deepcopy(base) | {"id": 200, "machine_id": 9, "dph_total": 0.2, "geolocation": "Ontario, CA",
                                           "min_bid": None})
    listings.append(copy.deepcopy(base) | {"id": 201, "machine_id": 9, "num_gpus": 2, "dph_total": 0.7,
                                           "min_bid": None})
    offers = vastai.parse({"offers": listings})
    us1 = by(offers, location="US", gpu_count=1)
    assert len(us1) == 1 and us1[0].price == 0.35 and us1[0].available == 2  # machines 1 and 2; 3 not rentable
    assert by(offers, location="CA")[0].price == 0.2
    assert by(offers, gpu_count=2)[0].available == 1
    assert all(o.billing is Billing.HOURLY for o in offers)  # no min_bid: no spot configuration


def test_vast_variations() -> None:
    listing = {"id": 1, "num_gpus": 2, "gpu_name": "RTX 4090 48GB Custom", "gpu_ram": 49152, "dph_total": 1.0,
               "geolocation": None, "rentable": None, "machine_id": None, "new_field": {"a": [1]}}
    offers = vastai.parse({"offers": [listing]})
    assert len(offers) == 1
    o = offers[0]
    assert o.gpu is None and o.gpu_name == "RTX 4090 48GB Custom"  # modded card: never guessed as a 4090
    assert o.location == "" and o.in_stock and o.available == 1
    assert vastai.parse({"offers": []}) == []
    with pytest.raises(PayloadValidationError):
        vastai.parse({"msg": "Invalid user key", "error": "auth"})
    missing = vastai.parse({"offers": [{"id": 1, "gpu_name": "RTX 4090"}]})  # num_gpus missing
    assert missing == [] and (missing.records, missing.skipped) == (1, 1)


def test_vast_query_asks_for_rentable_listings_cheapest_first() -> None:
    body = vastai.query(vastai.VastSettings(base_url="x", limit=1234))
    assert body["limit"] == 1234 and body["order"] == [["dph_total", "asc"]] and body["rentable"] == {"eq": True}


# -- RunPod -----------------------------------------------------------------------------------------------------------
def test_runpod_sample_is_secure_cloud() -> None:
    offers = runpod.parse(load_fixture("runpod.sample.json"))
    assert {o.location for o in offers} == {"secure"}
    h100 = by(offers, sku="NVIDIA H100 80GB HBM3")[0]
    assert (h100.gpu, h100.gpu_count, h100.price, h100.in_stock, h100.available) == ("h100-sxm", 1, 2.99, True, 8)
    assert by(offers, sku="NVIDIA B200")[0].in_stock is False  # stockStatus null
    assert by(offers, sku="NVIDIA A100 80GB PCIe")[0].in_stock is False
    assert by(offers, sku="NVIDIA H200")[0].gpu == "h200"
    assert by(offers, sku="NVIDIA A100 80GB PCIe")[0].gpu == "a100-80gb"


def test_runpod_aliased_clouds_and_variations() -> None:
    types = load_fixture("runpod.sample.json")["data"]["gpuTypes"]
    community = copy.deepcopy(types)
    for t in community:
        t["lowestPrice"] = None  # null lowestPrice: not in stock, never a crash
    community[0]["displayName"] = "H100 SXM Ultra Mega"
    community[0]["id"] = "NVIDIA Mystery 80GB"
    offers = runpod.parse({"data": {"secure": types, "community": community}})
    comm = by(offers, location="community")
    assert comm and all(not o.in_stock for o in comm)
    assert by(comm, sku="NVIDIA H100 80GB HBM3") == []
    mystery = by(comm, sku="NVIDIA Mystery 80GB")[0]
    assert mystery.gpu is None and mystery.price == 2.69
    assert "NVIDIA B200" not in {o.sku for o in comm}  # communityCloud false / price null
    with pytest.raises(PayloadValidationError):
        runpod.parse({"errors": [{"message": "rate limited"}], "data": None})
    assert runpod.parse({"data": {"gpuTypes": []}}) == []


def test_runpod_query_asks_both_clouds() -> None:
    assert "secure: gpuTypes" in runpod.QUERY and "community: gpuTypes" in runpod.QUERY
    assert runpod.VARIABLES["community"]["secureCloud"] is False


# -- CloudRift --------------------------------------------------------------------------------------------------------
def test_cloudrift_sample_cents_per_variant_per_dc() -> None:
    offers = cloudrift.parse(load_fixture("cloudrift.sample.json"))
    r1 = {o.location: o for o in by(offers, sku="rtx49-7-50-500-nr.1")}
    assert set(r1) == {"us-east-nc-nr-1", "ustx1a_a01"}
    assert (r1["us-east-nc-nr-1"].price, r1["us-east-nc-nr-1"].currency) == (0.39, "USD")
    assert (r1["us-east-nc-nr-1"].in_stock, r1["us-east-nc-nr-1"].available) == (True, 3)
    assert r1["ustx1a_a01"].in_stock is False
    assert r1["us-east-nc-nr-1"].gpu == "rtx-4090" and r1["us-east-nc-nr-1"].gpu_memory_gb == 24.0
    eight = by(offers, sku="rtx49-7-50-500-nr.8")[0]
    assert eight.gpu_count == 8 and eight.price == 3.12 and eight.price_per_gpu_hour == pytest.approx(0.39)
    mi = by(offers, gpu_name="MI350X")
    assert mi and all(o.gpu == "mi350x" for o in mi)


def test_cloudrift_variations() -> None:
    payload = load_fixture("cloudrift.sample.json")
    itype = payload["data"]["instance_types"][0]
    itype["variants"][0]["available_nodes_per_dc"] = None
    itype["variants"][1]["cost_per_hour"] = None  # falls back to the type's price
    itype["variants"][2]["gpu_count"] = None  # cannot be a GPU configuration
    payload["data"]["instance_types"].append({"name": "cpu-only", "brand_short": None, "variants": []})
    offers = cloudrift.parse(payload)
    assert all(not o.in_stock for o in by(offers, sku="rtx49-7-50-500-nr.1"))
    assert by(offers, sku="rtx49-7-50-500-nr.2")[0].price == 0.39
    assert not by(offers, sku="rtx49-7-50-500-nr.8")
    assert cloudrift.parse({"data": {"instance_types": []}}) == []
    with pytest.raises(PayloadValidationError):
        cloudrift.parse({"version": "x", "data": {}})


# -- Vultr ------------------------------------------------------------------------------------------------------------
def vultr_payload(availability: dict[str, list[str]] | None = None) -> dict[str, Any]:
    return {"plans": load_fixture("vultr.sample.json")["plans"],
            "plans_metal": load_fixture("vultr.plans-metal.sample.json")["plans_metal"],
            "availability": availability if availability is not None else {
                "ewr": load_fixture("vultr.region-availability.sample.json")["available_plans"],
                "sea": [], "ord": ["vcg-b200-248c-2826g-1536vram"], "atl": []}}


def test_vultr_plans_regions_and_counts() -> None:
    offers = vultr.parse(vultr_payload())
    l40s = {o.location: o for o in by(offers, sku="vcg-l40s-16c-180g-48vram")}
    assert l40s["ewr"].in_stock and not l40s["atl"].in_stock  # listed in atl, not deployable there now
    assert (l40s["ewr"].gpu, l40s["ewr"].gpu_count, l40s["ewr"].price) == ("l40s", 1, 1.671)
    assert l40s["ewr"].available is None  # Vultr says yes/no, never how many
    b200 = by(offers, sku="vcg-b200-248c-2826g-1536vram")[0]
    assert (b200.gpu, b200.gpu_count, b200.in_stock) == ("b200", 8, True)  # from the plan id
    h100 = by(offers, sku="vcg-h100-216c-1914gb-640vram")[0]
    assert h100.gpu_count == 8 and not h100.in_stock  # deploy_ondemand false
    metal = by(offers, sku="vbm-112c-2048gb-8-h100-gpu")[0]
    assert (metal.gpu, metal.gpu_count, metal.location) == ("h100-sxm", 8, "sea")
    slice_ = by(offers, sku="vcg-a100-1c-6g-4vram")[0]  # a 4 GB slice of an A100: a fraction, never the card
    assert slice_.gpu is None and slice_.gpu_fraction == pytest.approx(0.05) and slice_.gpu_memory_gb == 4
    assert not by(offers, sku="vc2-2c-4gb")  # CPU plan
    assert not by(offers, sku="vbm-72c-480gb-gh200-gpu")  # no locations
    assert by(offers, sku="vcg-a16-2c-8g-2vram")[0].gpu is None  # A16 is not in the catalog


def test_vultr_variations() -> None:
    payload = vultr_payload({"ewr": ["vcg-l40s-16c-180g-48vram"]})
    payload["plans"][3]["location_cost"] = {"ewr": {"hourly_cost": 1.5, "monthly_cost": 1000}}
    payload["plans"][3]["shiny_new"] = True
    payload["plans"][3]["gpu_type"] = "NVIDIA_L40S_NEXTGEN"
    offers = vultr.parse(payload)
    assert {o.location for o in offers} == {"ewr"}  # only checked regions are claimed
    odd = by(offers, sku="vcg-l40s-16c-180g-48vram")[0]
    assert odd.price == 1.5 and odd.gpu is None and odd.gpu_name == "NVIDIA_L40S_NEXTGEN"
    assert vultr.parse({"plans": [], "plans_metal": [], "availability": {}}) == []
    with pytest.raises(PayloadValidationError):
        vultr.parse({"plans": "nope"})


# -- Declarative ------------------------------------------------------------------------------------------------------
HTML_PAGE = """<html><body><table class="prices"><tbody>
<tr><th>Flavor</th><th>GPU</th><th>Price</th></tr>
<tr><td class="flavor">rtx4090-1.8.16.40</td><td class="gpu">RTX 4090</td><td class="n">1</td>
    <td class="price">98,50 ₽/час</td><td class="stock">в наличии</td>
    <td><a href="/order/rtx4090">Заказать</a></td></tr>
<tr><td class="flavor">h100-2.32.128.200</td><td class="gpu">H100 PCIe</td><td class="n">2</td>
    <td class="price">1 368 ₽/час</td><td class="stock">нет</td><td><a href="/order/h100">Заказать</a></td></tr>
<tr><td class="flavor">x-1</td><td class="gpu">Quantum 9000</td><td class="n">1</td><td class="price">10</td>
    <td class="stock"></td><td></td></tr>
</tbody></table></body></html>"""


def html_settings(**kw: Any) -> DeclarativeProviderSettings:
    fields = {"sku": "td.flavor", "gpu": "td.gpu", "gpu_count": "td.n", "price": "td.price", "in_stock": "td.stock",
              "url": "a@href"}
    return DeclarativeProviderSettings(base_url="https://example.test", enabled=True, path="/prices/", format="html",
                                       rows="table.prices tbody tr", fields=fields, **kw)


def test_declarative_html_rows_and_fields() -> None:
    offers = declarative.parse(HTML_PAGE, html_settings(), name="immers")
    assert [o.sku for o in offers] == ["rtx4090-1.8.16.40", "h100-2.32.128.200", "x-1"]  # header row skipped
    rtx, h100, odd = offers
    assert (rtx.provider, rtx.gpu, rtx.price, rtx.currency, rtx.period, rtx.in_stock) == (
        "immers", "rtx-4090", 98.5, "RUB", Period.HOUR, True)
    assert rtx.url == "https://example.test/order/rtx4090"
    assert (h100.gpu, h100.gpu_count, h100.price, h100.in_stock) == ("h100-pcie", 2, 1368.0, False)
    assert odd.gpu is None and odd.url == "https://example.test/prices/"


def test_declarative_html_no_rows_is_suspect_not_sold_out() -> None:
    with pytest.raises(PayloadValidationError, match="no rows"):
        declarative.parse("<html><body>Checking your browser…</body></html>", html_settings(), name="immers")


def test_declarative_json_paths() -> None:
    doc = {"data": {"flavors": [
        {"name": "a100-1", "gpu": {"model": "A100 80GB"}, "price": {"month": 150000}, "free": 0},
        {"name": "l40s-4", "gpu": {"model": "L40S"}, "count": 4, "price": {"month": "420 000"}, "free": 3},
        {"name": "broken", "gpu": None, "price": {"month": 1}},
    ]}}
    cfg = DeclarativeProviderSettings(
        base_url="https://example.test", format="json", rows="data.flavors", period="month", billing="monthly",
        fields={"sku": "name", "gpu": "gpu.model", "gpu_count": "count", "price": "price.month", "available": "free"})
    offers = declarative.parse(doc, cfg, name="acme")
    assert [(o.sku, o.gpu, o.gpu_count, o.price, o.in_stock, o.available) for o in offers] == [
        ("a100-1", "a100-80gb", 1, 150000.0, False, 0), ("l40s-4", "l40s", 4, 420000.0, True, 3)]
    assert offers[0].period is Period.MONTH and offers[0].billing is Billing.MONTHLY
    with pytest.raises(PayloadValidationError):
        declarative.parse({"data": {}}, cfg, name="acme")


def test_declarative_ships_disabled_and_rejects_incomplete_definitions() -> None:
    from scrapers.registry import ProvidersSettings

    assert ProvidersSettings().immers.enabled is False
    assert "immers" not in ProvidersSettings().enabled()
    with pytest.raises(PayloadValidationError):
        declarative.parse("<html></html>", DeclarativeProviderSettings(base_url="x", rows="tr"), name="immers")


def test_declarative_number_reader() -> None:
    assert declarative.number("342,50 ₽/час") == 342.5
    assert declarative.number("1\u00a0290 ₽") == 1290.0
    assert declarative.number("—") is None and declarative.number(True) is None
