"""The newer providers (Lambda, Verda, Hyperstack, Shadeform, Lium): pure parsers from payloads shaped like the
live APIs (tests/fixtures/providers/SOURCES.md), and polls through the real client at the live paths — keys in
headers, OAuth client credentials, providers that need a key stay off until they have one."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from core.offers import Billing
from core.polls import PollStatus
from scrapers.http import PoliteClient, RetryPolicy, make_client
from scrapers.poller import poll
from scrapers.providers import hyperstack, lambdacloud, lium, shadeform, verda
from testkit.provider_server import (
    HYPERSTACK_STOCKS_PATH,
    LAMBDA_PATH,
    LIUM_PATH,
    SHADEFORM_PATH,
    VERDA_AVAILABILITY_PATH,
    VERDA_TOKEN_PATH,
    VERDA_TYPES_PATH,
    ProviderServer,
    load_fixture,
)

NEW = ["lambda", "verda", "hyperstack", "shadeform", "lium"]


def by(offers: list[Any], **match: Any) -> list[Any]:
    return [o for o in offers if all(getattr(o, k) == v for k, v in match.items())]


@pytest.fixture(autouse=True)
def no_cached_verda_tokens() -> None:
    # Verda's tokens are cached per (API origin, client id) for the process; a stand-in server on a port an earlier
    # test's server had would find that test's token and never ask for one (seen once in CI).
    verda._tokens.clear()


@pytest.fixture
async def client() -> PoliteClient:  # type: ignore[misc]
    c = make_client(retry=RetryPolicy(attempts=2, scale=0.001), rng=random.Random(1))
    yield c
    await c.aclose()


# -- pure parsers -----------------------------------------------------------------------------------------------------
def test_lambda_one_offer_per_region_with_capacity() -> None:
    offers = lambdacloud.parse(load_fixture("lambda.sample.json"))
    h100 = by(offers, sku="gpu_8x_h100_sxm5")
    assert [(o.gpu, o.gpu_count, o.location, o.price, o.in_stock) for o in h100] == [
        ("h100-sxm", 8, "us-east-1", 23.92, True)]
    assert {o.location for o in by(offers, sku="gpu_1x_h100_pcie")} == {"us-west-1", "us-south-1"}
    assert by(offers, sku="gpu_1x_h100_pcie")[0].gpu == "h100-pcie"
    assert not by(offers, sku="gpu_1x_a10")  # no capacity anywhere: not listed (hysteresis decides sold out)
    assert not by(offers, sku="cpu_4x_general")
    assert by(offers, sku="gpu_8x_b200_sxm6")[0].gpu == "b200"
    assert all(o.billing is Billing.HOURLY and o.currency == "USD" for o in offers)


def test_lambda_polls_its_documented_host() -> None:
    from scrapers import registry

    assert registry.get("lambda").settings.base_url == "https://cloud.lambda.ai"


def test_vast_search_body_matches_the_official_cli() -> None:
    from scrapers.providers import vastai

    body = vastai.query(vastai.VastSettings(base_url="x"))
    assert body["type"] == "on-demand"  # the CLI's spelling; "ondemand" is not one of its choices
    assert body["rentable"] == {"eq": True} and body["rented"] == {"eq": False}
    assert body["external"] == {"eq": False} and body["verified"] == {"eq": True}


def test_verda_on_demand_and_spot_per_location() -> None:
    payload = {"types": load_fixture("verda.instance-types.sample.json"),
               "ondemand": load_fixture("verda.availability.sample.json"),
               "spot": load_fixture("verda.availability-spot.sample.json")}
    offers = verda.parse(payload)
    eight = {(o.location, o.billing): o for o in by(offers, sku="8H100.80S.176V")}
    assert eight[("FIN-02", Billing.HOURLY)].in_stock and not eight[("FIN-01", Billing.HOURLY)].in_stock
    assert eight[("FIN-02", Billing.HOURLY)].price == 19.92  # a string in the API
    assert eight[("FIN-02", Billing.SPOT)].price == 6.96 and not eight[("FIN-02", Billing.SPOT)].in_stock
    one = by(offers, sku="1H100.80S.30V", location="FIN-01", billing=Billing.SPOT)[0]
    assert (one.gpu, one.gpu_count, one.gpu_memory_gb, one.in_stock) == ("h100-sxm", 1, 80, True)
    assert by(offers, sku="8B200.180S.240V")[0].gpu == "b200"
    assert not by(offers, sku="CPU.4V.16G")


def test_hyperstack_configurations_per_region() -> None:
    payload = {"stocks": load_fixture("hyperstack.stocks.sample.json")["stocks"],
               "pricebook": load_fixture("hyperstack.pricebook.sample.json")}
    offers = hyperstack.parse(payload)
    pcie = {o.gpu_count: o for o in by(offers, sku="H100-80G-PCIe")}
    assert (pcie[8].price, pcie[8].available, pcie[8].in_stock, pcie[8].location) == (15.2, 1, True, "NORWAY-1")
    assert not pcie[10].in_stock and pcie[1].gpu == "h100-pcie"
    assert not any(o.in_stock for o in by(offers, sku="A100-80G-PCIe"))
    # a model without configurations: 1x with `available` (a string) as its stock; an unpriced one is skipped
    payload["stocks"][0]["models"].append({"model": "L40", "available": "5"})
    payload["stocks"][1]["models"].append({"model": "GH200", "available": "2",
                                           "configurations": {"1x": 2}})
    payload["stocks"][1]["region"] = "US-1"
    again = hyperstack.parse(payload)
    assert not by(again, sku="GH200")


def test_hyperstack_documented_model_names_floors_and_spot_rows() -> None:
    payload = {"stocks": load_fixture("hyperstack.stocks.sample.json")["stocks"],
               "pricebook": load_fixture("hyperstack.pricebook.sample.json")}
    offers = by(hyperstack.parse(payload), location="US-1")
    cards = {o.sku: o.gpu for o in offers}
    assert cards["H100-80G-PCIe-NVLink"] == "h100-pcie" and cards["A100-80G-PCIe-NVLink"] == "a100-80gb"
    assert cards["RTX-A6000-ada"] == "rtx-6000-ada"
    assert cards["RTX-4000-ada"] == "rtx-4000-ada"
    # "200+" is at least 200, not 0 (a model without configurations offers 1x with it)
    l40 = by(offers, sku="L40", billing=Billing.SPOT)
    assert [(o.gpu_count, o.available, o.in_stock, o.price) for o in l40] == [(1, 200, True, 0.8)]
    assert not by(offers, sku="L40", billing=Billing.HOURLY, available=0)
    # "-spot" rows of the pricebook: spot configurations beside the on-demand ones, same stock
    h100 = {(o.billing, o.gpu_count): o for o in by(offers, sku="H100-80G-PCIe-NVLink")}
    assert h100[(Billing.SPOT, 4)].price == 6.24 and h100[(Billing.HOURLY, 4)].price == 7.8
    # the region lists the spot stock as its own `-spot` model: spot follows it, not the on-demand stock
    assert (h100[(Billing.SPOT, 4)].available, h100[(Billing.HOURLY, 4)].available) == (1, 3)
    assert not h100[(Billing.SPOT, 8)].in_stock and h100[(Billing.HOURLY, 8)].in_stock
    # no `-spot` model for RTX-A6000-ada there: its spot offers follow its own stock
    ada = {(o.billing, o.gpu_count): o.available for o in by(offers, sku="RTX-A6000-ada")}
    assert ada[(Billing.SPOT, 2)] == ada[(Billing.HOURLY, 2)] == 4
    assert by(offers, sku="RTX-PRO6000-SE")[0].gpu == "rtx-pro-6000"
    assert not by(offers, sku="A100-80G-PCIe-NVLink", billing=Billing.SPOT)  # no spot price: no spot offer
    assert not any(o.sku.endswith("-spot") for o in offers)


def test_shadeform_keeps_the_underlying_cloud_visible() -> None:
    offers = shadeform.parse(load_fixture("shadeform.sample.json"))
    lam = by(offers, sku="lambdalabs/gpu_8x_h100_sxm5")
    assert {o.location: o.in_stock for o in lam} == {"lambdalabs/us-east-1": True, "lambdalabs/us-west-1": False}
    assert lam[0].price == 23.92 and lam[0].gpu == "h100-sxm" and lam[0].gpu_count == 8
    assert by(offers, sku="datacrunch/1A100.22V")[0].gpu == "a100-80gb"
    # the same card from two clouds: two offers, each naming its cloud
    h100 = by(offers, gpu="h100-pcie", gpu_count=1)
    assert {o.location.split("/")[0] for o in h100} == {"hyperstack"}
    assert {o.sku.split("/")[0] for o in offers} == {"lambdalabs", "datacrunch", "hyperstack", "massedcompute"}


def test_shadeform_reads_the_form_factor_from_interconnect() -> None:
    offers = shadeform.parse(load_fixture("shadeform.sample.json"))
    pcie = by(offers, sku="hyperstack/n3-H100x1")[0]
    assert (pcie.gpu, pcie.gpu_name) == ("h100-pcie", "H100 PCIe")  # `interconnect: pcie`, never the SXM card
    assert by(offers, sku="lambdalabs/gpu_8x_h100_sxm5")[0].gpu == "h100-sxm"  # `interconnect: sxm5`
    sample = copy.deepcopy(load_fixture("shadeform.sample.json"))
    sample["instance_types"][0]["configuration"]["interconnect"] = "pcie"
    assert {o.gpu for o in by(shadeform.parse(sample), sku="lambdalabs/gpu_8x_h100_sxm5")} == {"h100-pcie"}


def test_lium_public_feed_nodes() -> None:
    """The feed's own fields: per-GPU price, free GPUs of a partly rented node, its minimum, spot tier, rent_url."""
    offers = lium.parse(load_fixture("lium.sample.json"))
    whole = by(offers, gpu="h100-sxm", gpu_count=8, location="US-VA")[0]  # country and subdivision
    # two 8x nodes in the US, one fully rented: one free node, the free one's price and rent link
    assert (whole.price, whole.available, whole.in_stock, whole.billing) == (14.4, 1, True, Billing.HOURLY)
    assert whole.url.endswith("-000000000001")
    # partly rented (3 of 8 free, minimum 1): offers the 3 free GPUs, not 8
    part = by(offers, gpu="h100-sxm", location="DE-HE")
    assert [(o.gpu_count, o.price, o.in_stock) for o in part] == [(3, 5.85, True)]
    # spot tier: spot billing; two nodes fold into one configuration at the best per-GPU price
    spot = by(offers, gpu="rtx-4090")
    assert [(o.billing, o.gpu_count, o.price, o.available) for o in spot] == [(Billing.SPOT, 4, 1.16, 2)]
    # 2 free but at least 4 rentable: offers nothing now, listed as its full configuration out of stock
    a100 = by(offers, gpu="a100-80gb")
    assert [(o.gpu_count, o.in_stock, o.available) for o in a100] == [(8, False, 0)]
    assert {o.gpu for o in offers} >= {"h200", "b200", "b300"}  # "B300 SXM6 AC": marketing words dropped
    assert by(offers, gpu="b300")[0].gpu_name == "B300 SXM6 AC"  # shown as Lium spells it


def test_lium_node_priced_per_node_only_and_unpriced_nodes() -> None:
    feed = copy.deepcopy(load_fixture("lium.sample.json"))
    del feed["nodes"][6]["price_per_gpu_hour"]  # the H200: 8 x 2.3 per node
    del feed["nodes"][7]["price_per_gpu_hour"], feed["nodes"][7]["price_per_node_hour"]
    out = lium.parse(feed)
    assert by(out, gpu="h200")[0].price == 18.4 and not by(out, gpu="b200") and out.skipped == 1


def test_new_parsers_skip_a_bad_record_and_count_it() -> None:
    lam = copy.deepcopy(load_fixture("lambda.sample.json"))
    lam["data"]["gpu_8x_h100_sxm5"]["instance_type"]["price_cents_per_hour"] = None
    out = lambdacloud.parse(lam)
    assert out.skipped == 1 and not by(out, sku="gpu_8x_h100_sxm5") and out
    sf = copy.deepcopy(load_fixture("shadeform.sample.json"))
    sf["instance_types"][0]["configuration"]["num_gpus"] = 10**9
    out = shadeform.parse(sf)
    assert out.skipped == 1 and not by(out, sku="lambdalabs/gpu_8x_h100_sxm5")
    nodes = copy.deepcopy(load_fixture("lium.sample.json"))
    nodes["nodes"][0]["price_per_gpu_hour"] = 1e30
    assert lium.parse(nodes).skipped == 1


# -- through the real client ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NEW)
async def test_every_new_provider_polls_ok_at_the_live_paths(name: str, provider_server: ProviderServer,
                                                             client: PoliteClient) -> None:
    result = await poll(name, provider_server.providers_settings(keys=True), client)
    assert result.status is PollStatus.OK, result.error
    assert result.offers and all(o.provider == name for o in result.offers)
    assert any(o.in_stock for o in result.offers) and result.skipped == 0


async def test_keys_travel_in_headers(provider_server: ProviderServer, client: PoliteClient) -> None:
    settings = provider_server.providers_settings(keys=True)
    for name in NEW:
        await poll(name, settings, client)
    assert provider_server.requests_to(LAMBDA_PATH)[0].headers["Authorization"] == "Bearer test-lambda-key"
    assert provider_server.requests_to(HYPERSTACK_STOCKS_PATH)[0].headers["api_key"] == "test-hyperstack-key"
    shade = provider_server.requests_to(SHADEFORM_PATH)[0]
    assert shade.headers["X-API-KEY"] == "test-shadeform-key" and shade.query == {"available": "true"}
    token = provider_server.requests_to(VERDA_TOKEN_PATH)[0]
    assert token.method == "POST" and token.json() == {"grant_type": "client_credentials",
                                                       "client_id": "test-client", "client_secret": "test-secret"}
    assert provider_server.requests_to(VERDA_TYPES_PATH)[0].headers["Authorization"] == "Bearer eyJ.sample.token"
    assert "Authorization" not in provider_server.requests_to(LIUM_PATH)[0].headers  # public, no key
    for request in provider_server.requests:
        assert not any("test-" in value for value in request.query.values())  # never in a URL


async def test_verda_asks_for_a_new_token_after_a_401(provider_server: ProviderServer, client: PoliteClient) -> None:
    settings = provider_server.providers_settings(keys=True)
    settings.verda.base_url = provider_server.base_url + "/"  # a distinct token cache entry for this test
    provider_server.serve(VERDA_TYPES_PATH, {"code": "unauthorized"}, status=401)
    first = await poll("verda", settings, client)
    assert first.status is PollStatus.SUSPECT and "401" in (first.error or "")
    assert len(provider_server.requests_to(VERDA_TOKEN_PATH)) == 2  # asked again once, then gave up
    provider_server.serve(VERDA_TYPES_PATH, load_fixture("verda.instance-types.sample.json"))
    assert (await poll("verda", settings, client)).status is PollStatus.OK


async def test_a_provider_that_needs_a_key_is_off_until_it_has_one(provider_server: ProviderServer,
                                                                   client: PoliteClient) -> None:
    settings = provider_server.providers_settings()
    enabled = settings.enabled()
    assert "lium" in enabled and not {"lambda", "verda", "hyperstack", "shadeform"} & set(enabled)
    result = await poll("hyperstack", settings, client)  # asked for explicitly: says why, asks nothing
    assert result.status is PollStatus.FAILED and "needs API_KEY" in (result.error or "")
    assert not provider_server.requests_to(HYPERSTACK_STOCKS_PATH)
    verda_result = await poll("verda", settings, client)
    assert "CLIENT_ID" in (verda_result.error or "") and "CLIENT_SECRET" in (verda_result.error or "")
    assert "hyperstack" in provider_server.providers_settings(hyperstack={"api_key": "k"}).enabled()


async def test_verda_sends_the_spot_filter_as_both_official_clients_do(provider_server: ProviderServer,
                                                                      client: PoliteClient) -> None:
    settings = provider_server.providers_settings(keys=True)
    result = await poll("verda", settings, client)
    asked = provider_server.requests_to(VERDA_AVAILABILITY_PATH)
    assert sorted((r.query["is_spot"], r.query["isSpot"]) for r in asked) == [("false", "false"), ("true", "true")]
    spot = {o.key: o.in_stock for o in result.offers if o.billing is Billing.SPOT}
    ondemand = {o.key.replace("|hourly", "|spot"): o.in_stock for o in result.offers if o.billing is Billing.HOURLY}
    assert spot and spot != {k: v for k, v in ondemand.items() if k in spot}  # the spot answer was read
    # an API that ignores both spellings answers on-demand stock to the spot question: no spot claim at all
    provider_server.serve(VERDA_AVAILABILITY_PATH, load_fixture("verda.availability.sample.json"),
                          query={"isSpot": "true"})
    ignored = await poll("verda", settings, client)
    assert ignored.status is PollStatus.OK and ignored.skipped == 1
    assert not [o for o in ignored.offers if o.billing is Billing.SPOT]
    assert [o for o in ignored.offers if o.billing is Billing.HOURLY]


UNKNOWN_CARD = "Tesla K80"


def lium_with_a_card_the_catalog_lacks() -> dict[str, Any]:
    """Lium's sample with its RTX PRO 4500 node relabelled as a Tesla K80 (Kepler: the catalog leaves it out on
    purpose, nothing current fine-tunes or serves on it)."""
    payload = copy.deepcopy(load_fixture("lium.sample.json"))
    node = next(n for n in payload["nodes"] if n["gpu_model"] == "RTX PRO 4500 Blackwell")
    node["gpu_model"] = UNKNOWN_CARD
    return dict(payload)


def test_lium_rtx_pro_4500_is_a_catalog_card() -> None:
    offers = lium.parse(load_fixture("lium.sample.json"))
    assert [o.gpu for o in offers if o.gpu_name == "RTX PRO 4500 Blackwell"] == ["rtx-pro-4500"]


def test_an_unknown_gpu_name_is_logged_once_per_provider_and_name(caplog: pytest.LogCaptureFixture) -> None:
    from scrapers.providers import _common

    _common._LOGGED_UNKNOWN.discard(("lium", UNKNOWN_CARD))
    with caplog.at_level("WARNING", logger="scrapers"):
        for _ in range(3):
            offers = lium.parse(lium_with_a_card_the_catalog_lacks())
    assert [o.gpu for o in offers if o.gpu_name == UNKNOWN_CARD] == [None]
    said = [r for r in caplog.records if UNKNOWN_CARD in r.getMessage()]
    assert len(said) == 1 and said[0].levelname == "WARNING"
