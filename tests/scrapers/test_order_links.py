"""Order links point at the offer's own page where the provider has one: RunPod's pod deploy with the GPU type
preselected, the Vast.ai listing that gave the price, Lium's `rent_url`; else the provider's console."""

from __future__ import annotations

import copy
from urllib.parse import parse_qs, urlsplit

from scrapers.providers import lium, runpod, vastai
from testkit.provider_server import load_fixture


def test_runpod_links_the_deploy_page_with_the_gpu_type_preselected() -> None:
    offers = runpod.parse(load_fixture("runpod.sample.json"))
    assert offers
    for o in offers:
        url = urlsplit(o.url or "")
        assert (url.scheme, url.netloc, url.path) == ("https", "console.runpod.io", "/deploy")
        assert parse_qs(url.query) == {"gpu": [o.sku], "count": ["1"]}  # the GPU type id, as the API names it
    assert any(" " in o.sku for o in offers) and all(" " not in (o.url or "") for o in offers)  # quoted


def test_vastai_links_the_cheapest_rentable_listing_of_each_configuration() -> None:
    payload = load_fixture("vastai.sample.json")
    offers = vastai.parse(payload)
    listings = {row["id"]: row for row in payload["offers"]}
    for o in offers:
        if not o.in_stock:
            assert o.url == vastai.ORDER_URL
            continue
        offer_id = int(parse_qs(urlsplit(o.url or "").query)["id"][0])
        row = listings[offer_id]
        assert row["gpu_name"] == o.gpu_name and row["num_gpus"] == o.gpu_count
        if o.billing.value == "hourly":
            assert row["dph_total"] == o.price
    # a configuration with no rentable listing links the create page itself
    for row in (changed := copy.deepcopy(payload))["offers"]:
        row["rentable"] = False
    assert all(o.url == vastai.ORDER_URL for o in vastai.parse(changed))


def test_lium_links_the_nodes_own_rent_url_else_its_pods_page() -> None:
    payload = load_fixture("lium.sample.json")
    offers = lium.parse(payload)
    urls = {n.get("rent_url") for n in payload["nodes"]}
    assert offers and all(o.url in urls or o.url == lium.ORDER_URL for o in offers)
    assert any(o.url != lium.ORDER_URL for o in offers)
