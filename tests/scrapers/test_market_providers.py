"""The providers added for more of the market (issue 20): each parser on a payload shaped like its cited public
evidence (tests/fixtures/providers/SOURCES.md), and each polled through the real client against the stand-in on
127.0.0.1 at its live path, with the key in its documented header; price-only sources are never in stock."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from core.offers import Billing
from core.polls import PollStatus
from scrapers import registry
from scrapers.http import PoliteClient, RetryPolicy, make_client
from scrapers.poller import poll
from scrapers.providers import (
    azure,
    cloudru,
    crusoe,
    digitalocean,
    gcp,
    hotaisle,
    jarvislabs,
    oci,
    seeweb,
    selectel_cloud,
    yandex,
)
from testkit.provider_server import FIXTURES, ProviderServer, load_fixture

ADDED = ["jarvislabs", "hotaisle", "digitalocean", "azure", "oci", "crusoe", "seeweb", "yandex", "gcp"]


def by(offers: list[Any], **match: Any) -> list[Any]:
    return [o for o in offers if all(getattr(o, k) == v for k, v in match.items())]


@pytest.fixture(autouse=True)
def no_cached_tokens() -> None:
    yandex._tokens.clear()  # per (OAuth token, IAM origin): a stand-in on a reused port must ask again


@pytest.fixture
async def client() -> PoliteClient:  # type: ignore[misc]
    c = make_client(retry=RetryPolicy(attempts=2, scale=0.001), rng=random.Random(3))
    yield c
    await c.aclose()


# -- through the real client ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ADDED)
async def test_every_added_provider_polls_ok_at_its_live_path(name: str, provider_server: ProviderServer,
                                                              client: PoliteClient) -> None:
    result = await poll(name, provider_server.providers_settings(keys=True), client)
    assert result.status is PollStatus.OK, result.error
    assert result.offers and all(o.provider == name for o in result.offers) and result.skipped == 0
    provider = registry.get(name)
    assert any(o.in_stock for o in result.offers) is provider.info.stock_known
    path = provider.paths[0].format(team_handle="test-hotaisle-team-handle", project_id="test-crusoe-project-id")
    assert provider_server.requests_to(path)


@pytest.mark.parametrize("name", [n for n in ADDED if registry.get(n).info.key_settings])
async def test_a_keyed_added_provider_is_not_polled_without_its_key(name: str, provider_server: ProviderServer,
                                                                    client: PoliteClient) -> None:
    settings = provider_server.providers_settings()
    assert name not in settings.enabled() and settings.setup()[name].startswith("needs:")
    result = await poll(name, settings, client)
    assert result.status is PollStatus.FAILED and "needs" in (result.error or "")
    assert not provider_server.requests


async def test_keys_travel_in_each_providers_documented_header(provider_server: ProviderServer,
                                                               client: PoliteClient) -> None:
    settings = provider_server.providers_settings(keys=True)
    for name in ADDED:
        await poll(name, settings, client)
    headers = {r.path: r.headers for r in provider_server.requests}
    assert headers[jarvislabs.META_PATH]["Authorization"] == "Bearer test-jarvislabs-api-key"
    hot = headers["/api/teams/test-hotaisle-team-handle/virtual_machines/available/"]
    assert hot["Authorization"] == "Token test-hotaisle-api-key"
    assert headers[digitalocean.SIZES_PATH]["Authorization"] == "Bearer test-digitalocean-api-key"
    assert headers[seeweb.PLANS_PATH]["X-APITOKEN"] == "test-seeweb-api-key"
    assert headers[gcp.SKUS_PATH]["X-Goog-Api-Key"] == "test-gcp-api-key"
    assert "Authorization" not in headers[azure.PRICES_PATH]  # a public price list
    for request in provider_server.requests:
        assert not any("test-" in value for value in request.query.values())  # never in a URL


# -- JarvisLabs -------------------------------------------------------------------------------------------------------
def test_jarvislabs_counts_up_to_num_gpus_in_stock_when_that_many_are_free() -> None:
    offers = jarvislabs.parse(load_fixture("jarvislabs.sample.json"))
    l4 = {o.gpu_count: o for o in by(offers, sku="L4", billing=Billing.HOURLY)}
    assert sorted(l4) == [1, 2, 4, 8] and l4[1].gpu == "l4"
    assert (l4[2].in_stock, l4[2].available, l4[2].price) == (True, 1, 0.88)
    assert not l4[4].in_stock  # 3 free
    spot = {o.gpu_count: o for o in by(offers, sku="L4", billing=Billing.SPOT)}
    assert spot[2].in_stock and not spot[4].in_stock and spot[1].price == 0.29
    # JarvisLabs' own tokens, as gpuhunt's override table reads them
    assert by(offers, sku="A100-80GB")[0].gpu == "a100-80gb" and by(offers, sku="RTX-PRO6000")[0].gpu == "rtx-pro-6000"
    assert [o.gpu_count for o in by(offers, sku="H100")] == [1]  # no num_gpus: one GPU per instance
    assert not any(o.in_stock for o in by(offers, sku="H200"))
    assert by(offers, sku="RTX 5000 Ada")[0].gpu == "rtx-5000-ada"
    assert not by(offers, billing=Billing.SPOT, sku="H100")  # no spot price


def test_jarvislabs_skips_a_row_without_a_price_and_counts_it() -> None:
    sample = copy.deepcopy(load_fixture("jarvislabs.sample.json"))
    sample["server_meta"][0]["price_per_hour"] = None
    out = jarvislabs.parse(sample)
    assert out.skipped == 1 and out


# -- Hot Aisle --------------------------------------------------------------------------------------------------------
def test_hotaisle_vm_shapes_in_cents_one_location() -> None:
    offers = hotaisle.parse(load_fixture("hotaisle.sample.json"))
    assert [(o.gpu, o.gpu_count, o.price, o.location, o.in_stock) for o in offers] == [
        ("mi300x", 1, 1.99, "us-michigan-1", True), ("mi300x", 8, 15.92, "us-michigan-1", True)]
    assert offers[1].ram_gb == 1792 and offers[1].vcpu == 104
    assert hotaisle.parse({"detail": "nope"}).skipped == 1


# -- DigitalOcean -----------------------------------------------------------------------------------------------------
def test_digitalocean_gpu_sizes_per_region() -> None:
    offers = digitalocean.parse(load_fixture("digitalocean.sample.json"))
    assert {o.location for o in by(offers, sku="gpu-h100x1-80gb")} == {"nyc2", "tor1"}
    eight = by(offers, sku="gpu-h100x8-640gb")[0]
    assert (eight.gpu, eight.gpu_count, eight.gpu_memory_gb, eight.price) == ("h100-sxm", 8, 80, 23.92)
    assert by(offers, sku="gpu-mi300x8-1536gb")[0].gpu == "mi300x"
    assert by(offers, sku="gpu-6000adax1-48gb")[0].gpu == "rtx-6000-ada"
    assert not by(offers, sku="gpu-l40sx1-48gb")  # no region can create it now
    assert not by(offers, sku="s-1vcpu-512mb-10gb")  # a CPU Droplet
    assert by(offers, sku="gpu-4000adax1-20gb")[0].gpu == "rtx-4000-ada"


# -- Azure (price only) -----------------------------------------------------------------------------------------------
def test_azure_listed_prices_per_size_region_and_spot() -> None:
    offers = azure.parse(load_fixture("azure.sample.json"))
    a100 = {o.billing: o for o in by(offers, sku="Standard_NC24ads_A100_v4")}
    assert (a100[Billing.HOURLY].price, a100[Billing.SPOT].price, a100[Billing.HOURLY].gpu) == (3.673, 1.469,
                                                                                                "a100-80gb")
    assert by(offers, sku="Standard_NC96ads_A100_v4")[0].gpu_count == 4
    assert (by(offers, sku="Standard_ND96isr_H100_v5")[0].gpu, by(offers, sku="Standard_NC40ads_H100_v5")[0].gpu) == (
        "h100-sxm", "h100-nvl")
    assert [o.price for o in by(offers, sku="Standard_NC4as_T4_v3")] == [0.526]  # the Windows row left out
    assert not by(offers, sku="Standard_NC6s_v3")  # Low Priority (retired) left out
    assert not any(o.in_stock or o.available is not None for o in offers)


async def test_a_price_only_source_is_never_in_stock_whatever_its_parser_says(
        provider_server: ProviderServer, client: PoliteClient) -> None:
    result = await poll("azure", provider_server.providers_settings(), client)
    assert result.status is PollStatus.OK and result.offers
    assert not registry.get("azure").info.stock_known
    assert not any(o.in_stock for o in result.offers)
    asked = provider_server.requests_to(azure.PRICES_PATH)[0].query
    assert "serviceName eq 'Virtual Machines'" in asked["$filter"] and asked["$skip"] == "0"


def test_the_poller_takes_stock_away_from_a_price_only_source() -> None:
    from core.offers import Offer
    from scrapers.poller import listed_only

    claimed = Offer(provider="azure", sku="s", gpu="t4", gpu_name="T4", gpu_count=1, price=0.5, currency="USD",
                    in_stock=True, available=3)
    assert [(o.in_stock, o.available) for o in listed_only([claimed], registry.get("azure"))] == [(False, None)]
    assert listed_only([claimed], registry.get("runpod")) == [claimed]


# -- Oracle Cloud (price only) ----------------------------------------------------------------------------------------
def oci_payload() -> dict[str, Any]:
    return {"shapes": load_fixture("oci.sample.json"), "products": load_fixture("oci.products.sample.json")}


def test_oci_gpu_shapes_priced_per_gpu_with_preemptible_at_half() -> None:
    offers = oci.parse(oci_payload())
    h100 = {o.billing: o for o in by(offers, sku="BM.GPU.H100.8")}
    assert (h100[Billing.HOURLY].gpu, h100[Billing.HOURLY].gpu_count, h100[Billing.HOURLY].price) == (
        "h100-sxm", 8, 80.0)
    assert h100[Billing.SPOT].price == 40.0
    assert by(offers, sku="BM.GPU4.8")[0].gpu == "a100-40gb"  # a generation number, not a card name
    assert by(offers, sku="BM.GPU.A100-v2.8")[0].gpu == "a100-80gb"  # 640 GB over 8 cards
    assert not by(offers, sku="BM.GPU.A100-v2.8", billing=Billing.SPOT)  # not preemptible
    assert not by(offers, sku="VM.Standard.E5.Flex")  # no GPU
    assert not any(o.in_stock for o in offers) and {o.location for o in offers} == {""}


def test_oci_a_shape_without_a_usable_price_is_skipped_and_counted() -> None:
    payload = oci_payload()
    payload["products"]["items"][0]["billingModel"] = "BYOL"
    out = oci.parse(payload)
    assert out.skipped == 1 and not by(out, sku="BM.GPU.H100.8") and out


# -- Crusoe -----------------------------------------------------------------------------------------------------------
def test_crusoe_capacity_per_type_and_location_priced_from_the_published_rates() -> None:
    payload = {"types": load_fixture("crusoe.sample.json"), "capacities": load_fixture("crusoe.capacities.sample.json")}
    offers = crusoe.parse(payload)
    h100 = {(o.location, o.billing): o for o in by(offers, sku="h100-80gb-sxm-ib.8x")}
    east = h100[("us-east1-a", Billing.HOURLY)]
    assert (east.gpu, east.gpu_count, east.price, east.in_stock, east.available) == ("h100-sxm", 8, 31.2, True, 2)
    assert h100[("us-east1-a", Billing.SPOT)].price == 12.8
    assert not h100[("eu-iceland1-a", Billing.HOURLY)].in_stock  # quantity 0
    assert by(offers, sku="mi300x-192gb.8x")[0].gpu == "mi300x"
    assert not by(offers, sku="mi355x-288gb.8x")  # no published rate: nothing to compare
    assert not by(offers, sku="c1a.16x") and not by(offers, sku="ghost.1x")  # CPU / a type the list lacks
    # the rates are a setting: an operator follows the pricing page without a release
    cheaper = crusoe.CrusoeSettings(base_url="x", prices={"H100-SXM-80GB": 2.0}, spot_prices={})
    assert {o.price for o in by(crusoe.parse(payload, cheaper), sku="h100-80gb-sxm-ib.8x")} == {16.0}


async def test_crusoe_signs_each_request_with_its_key_pair(provider_server: ProviderServer,
                                                           client: PoliteClient) -> None:
    result = await poll("crusoe", provider_server.providers_settings(keys=True), client)
    assert result.status is PollStatus.OK
    for request in provider_server.requests:
        stamp = request.headers["X-Crusoe-Timestamp"]
        version, access, sig = request.headers["Authorization"].removeprefix("Bearer ").split(":")
        assert (version, access) == ("1.0", "test-crusoe-access-key")
        assert sig == crusoe.signature("test-crusoe-secret-key", request.path, "", "GET", stamp)
        assert "test-crusoe-secret-key" not in str(request.headers)  # the secret itself never travels


# -- Seeweb (listed prices) -------------------------------------------------------------------------------------------
def test_seeweb_plans_per_region_listed_prices_in_euro() -> None:
    offers = seeweb.parse(load_fixture("seeweb.sample.json"))
    assert {o.location for o in by(offers, sku="ECS1GPU7")} == {"it-fr2", "it-mi2"}
    a100 = by(offers, sku="ECS2GPU3")[0]
    assert (a100.gpu, a100.gpu_count, a100.price, a100.currency, a100.ram_gb) == ("a100-80gb", 2, 1.98, "EUR", 240)
    assert len(by(offers, sku="ECS1GPU11")) == 1  # a region listed twice is one offer
    assert not by(offers, sku="eCS4") and not by(offers, sku="ECS1GPU1")  # CPU-only; a plan no longer active
    assert by(offers, sku="ECS1GPU12")[0].gpu is None  # a Tenstorrent card the catalog lacks
    assert not any(o.in_stock for o in offers)  # "active in a region" is not capacity
    assert not registry.get("seeweb").info.stock_known


# -- FullGPU (declarative, monthly) -----------------------------------------------------------------------------------
FULLGPU_PAGE = """<html><body><ul class="gpus">
<li class="gpu"><a class="name" href="/ru/gpus/nvidia-h100">NVIDIA H100 SXM</a><span class="mem">80 ГБ</span>
    <span class="price">2 190 $ в месяц</span></li>
<li class="gpu"><a class="name" href="/ru/gpus/nvidia-h200">NVIDIA H200</a><span class="mem">141 ГБ</span>
    <span class="price">3 090 $ в месяц</span></li>
<li class="gpu"><a class="name" href="/ru/gpus/nvidia-b200">NVIDIA B200</a><span class="mem">180 ГБ</span>
    <span class="price">4 590 $ в месяц</span></li>
</ul></body></html>"""


async def test_fullgpu_is_off_until_its_page_is_described_then_reads_monthly_usd(
        provider_server: ProviderServer, client: PoliteClient) -> None:
    default = registry.get("fullgpu")
    assert not default.settings.enabled and default.period.value == "month"
    provider_server.serve("/ru/gpus", body=FULLGPU_PAGE, content_type="text/html")
    fields = {"gpu": "a.name", "price": "span.price", "url": "a.name@href"}
    settings = provider_server.providers_settings(fullgpu={"enabled": True, "rows": "li.gpu", "fields": fields})
    result = await poll("fullgpu", settings, client)
    assert result.status is PollStatus.OK, result.error
    offers = {o.gpu: o for o in result.offers}
    assert set(offers) == {"h100-sxm", "h200", "b200"}
    h100 = offers["h100-sxm"]
    assert (h100.price, h100.currency, h100.period.value, h100.billing) == (2190, "USD", "month", Billing.MONTHLY)
    assert h100.price_per_hour == 2190 / 730
    # the stand-in serves plain http on 127.0.0.1, which is never rendered as an order link: the provider's page is
    assert h100.url == "https://fullgpu.com/ru/gpus"
    # on the live https origin the row's own link is kept
    from scrapers.providers.declarative import safe_link
    assert safe_link("/ru/gpus/nvidia-h100", "https://fullgpu.com", frozenset({"fullgpu.com"})) == \
        "https://fullgpu.com/ru/gpus/nvidia-h100"


# -- Yandex Cloud (price only, OAuth -> IAM token) --------------------------------------------------------------------
def test_yandex_gpu_skus_as_listed_per_gpu_prices() -> None:
    offers = yandex.parse(load_fixture("yandex.sample.json"))
    a100 = {o.billing: o for o in offers if o.gpu == "a100-80gb"}
    assert (a100[Billing.HOURLY].price, a100[Billing.SPOT].price, a100[Billing.HOURLY].currency) == (348.0, 87.0,
                                                                                                     "RUB")
    assert all(o.sku.endswith("(GPU only)") for o in offers)  # vCPU and RAM are billed on top
    assert not [o for o in offers if "vCPU" in o.gpu_name or "RAM" in o.gpu_name]
    assert [o.gpu for o in offers if o.gpu_name == "T4i"] == [None]
    assert not any(o.in_stock for o in offers)
    assert registry.get("yandex").info.vat is not None and not registry.get("yandex").info.vat.confirmed


async def test_yandex_exchanges_the_oauth_token_for_an_iam_token_once(provider_server: ProviderServer,
                                                                      client: PoliteClient) -> None:
    settings = provider_server.providers_settings(keys=True)
    for _ in range(2):
        assert (await poll("yandex", settings, client)).status is PollStatus.OK
    token = provider_server.requests_to(yandex.TOKEN_PATH)
    assert len(token) == 1 and token[0].method == "POST"
    assert token[0].json() == {"yandexPassportOauthToken": "test-yandex-oauth-token"}
    skus = provider_server.requests_to(yandex.SKUS_PATH)
    assert skus[0].headers["Authorization"] == "Bearer t1.sample-iam-token"
    assert skus[0].query["currency"] == "RUB" and skus[0].query["filter"] == 'serviceId="dn22pas77ftg9h3f2djj"'
    live = yandex.YandexSettings(base_url="https://billing.api.cloud.yandex.net")
    assert yandex.iam_origin(live) == "https://iam.api.cloud.yandex.net"


# -- Cloud.ru (tariff page, price only) -------------------------------------------------------------------------------
async def test_cloudru_reads_gpu_rows_of_its_tariff_document_before_vat(provider_server: ProviderServer,
                                                                        client: PoliteClient) -> None:
    assert not registry.get("cloudru").settings.enabled  # until an operator confirms the document
    result = await poll("cloudru", provider_server.providers_settings(cloudru={"enabled": True}), client)
    assert result.status is PollStatus.OK, result.error
    offers = {o.gpu_name: o for o in result.offers}
    a100 = offers["NVIDIA A100 80GB"]
    assert (a100.gpu, a100.gpu_count, a100.price, a100.currency, a100.period.value) == ("a100-80gb", 1, 230.0,
                                                                                       "RUB", "hour")
    assert round(a100.gross_price, 2) == 280.6  # the document's own "Цена с НДС"
    assert offers["NVIDIA Tesla V100 32GB"].gpu == "v100-32gb" and offers["NVIDIA L20 48GB"].gpu == "l20"
    assert not [o for o in result.offers if "vGPU" in o.sku or "vCPU" in o.sku]  # shares and CPU rows left out
    assert not any(o.in_stock for o in result.offers)
    vat = registry.get("cloudru").info.vat
    assert vat is not None and vat.confirmed and not vat.included and vat.rate == 0.22


def test_cloudru_a_gpu_row_without_a_readable_price_is_skipped_and_counted() -> None:
    page = (FIXTURES / "cloudru.sample.html").read_text(encoding="utf-8").replace("230,00", "по запросу")
    out = cloudru.parse(page)
    assert out.skipped == 1 and out and not [o for o in out if o.gpu == "a100-80gb"]


# -- Google Cloud (price only) ----------------------------------------------------------------------------------------
def test_gcp_gpu_skus_per_region_on_demand_and_spot() -> None:
    offers = gcp.parse(load_fixture("gcp.sample.json"))
    t4 = {(o.location, o.billing): o.price for o in offers if o.gpu == "t4"}
    assert t4 == {("us-central1", Billing.HOURLY): 0.35, ("us-east1", Billing.HOURLY): 0.35,
                  ("us-central1", Billing.SPOT): 0.14}  # units + nanos / 1e9
    assert {o.gpu for o in offers if o.gpu_name.startswith("A100")} == {"a100-40gb"}  # "Tesla A100" is 40 GB
    assert [o.gpu for o in offers if "A100 80GB" in o.gpu_name] == ["a100-80gb"]
    assert {o.location for o in offers if o.gpu == "h100-sxm"} == {"us-central1", "us-east4"}  # not Sole Tenancy
    assert not [o for o in offers if "Commitment" in o.sku or "Core" in o.gpu_name]  # commitments, CPU SKUs
    assert [o.gpu for o in offers if "P100" in o.gpu_name] == [None]
    assert all(o.sku.endswith("(GPU only)") and not o.in_stock for o in offers)


# -- Selectel Cloud (price list, price only) --------------------------------------------------------------------------
async def test_selectel_cloud_gpu_resources_of_the_public_price_list(provider_server: ProviderServer,
                                                                     client: PoliteClient) -> None:
    assert not registry.get("selectel_cloud").settings.enabled  # what a value is per is not verified
    settings = provider_server.providers_settings(selectel_cloud={"enabled": True})
    result = await poll("selectel_cloud", settings, client)
    assert result.status is PollStatus.OK, result.error
    assert provider_server.requests_to(selectel_cloud.PRICES_PATH)[0].query == {"currency": "rub"}
    offers = {(o.gpu, o.billing): o for o in result.offers}
    a100 = offers[("a100-80gb", Billing.MONTHLY)]
    assert (a100.price, a100.currency, a100.period.value, a100.location) == (199000.0, "RUB", "month", "ru-7")
    assert offers[("a100-80gb", Billing.SPOT)].price == 59700.0  # the `_preemptible` resource
    assert ("rtx-4090", Billing.MONTHLY) in offers
    assert not [o for o in result.offers if "cores" in o.sku or "ram" in o.sku]
    assert not any(o.in_stock for o in result.offers)
    # the period is a setting an operator confirms
    hourly = provider_server.providers_settings(selectel_cloud={"enabled": True, "period": "hour"})
    again = await poll("selectel_cloud", hourly, client)
    assert {o.period.value for o in again.offers} == {"hour"}
