"""The cards a GPU marketplace rents besides the data-centre ones (vast.ai's mid-range GeForce, Turing Quadro and
Blackwell workstation listings) reach the catalog through the real poll: each listing's `gpu_name` with its
`gpu_ram` names one card, the memory telling apart the variants sold under one name (RTX 3080 10/12 GB, RTX 4060 Ti
8/16 GB), and none is left unknown."""

from __future__ import annotations

import copy
import random
from collections.abc import AsyncIterator

import pytest

from core.offers import Billing
from scrapers.http import PoliteClient, RetryPolicy, make_client
from scrapers.poller import poll
from testkit.provider_server import VAST_PATH, ProviderServer, load_fixture

# Vast's spellings (its `gpu_name` list: SUPER is written "S", "RTX 4070S Ti" is the 4070 Ti Super) and the
# nvidia-smi totals in MiB the listings carry in `gpu_ram`.
LISTINGS = [
    ("RTX 3060 Ti", 8192, "rtx-3060-ti"), ("RTX 3070", 8192, "rtx-3070"), ("RTX 3070 Ti", 8192, "rtx-3070-ti"),
    ("RTX 3080", 10240, "rtx-3080"), ("RTX 3080", 12288, "rtx-3080-12gb"), ("RTX 3080 Ti", 12288, "rtx-3080-ti"),
    ("RTX 4060", 8188, "rtx-4060"), ("RTX 4060 Ti", 8188, "rtx-4060-ti"), ("RTX 4060 Ti", 16380, "rtx-4060-ti-16gb"),
    ("RTX 4070", 12282, "rtx-4070"), ("RTX 4070S", 12282, "rtx-4070-super"), ("RTX 4070 Ti", 12282, "rtx-4070-ti"),
    ("RTX 4070S Ti", 16376, "rtx-4070-ti-super"), ("RTX 4080S", 16376, "rtx-4080"),
    ("RTX 5060 Ti", 16311, "rtx-5060-ti"), ("RTX 5070", 12227, "rtx-5070"), ("RTX 5070 Ti", 16303, "rtx-5070-ti"),
    ("RTX 5080", 16303, "rtx-5080"), ("Titan RTX", 24220, "titan-rtx"), ("Q RTX 6000", 24576, "quadro-rtx-6000"),
    ("Q RTX 8000", 48601, "quadro-rtx-8000"), ("RTX 4500Ada", 24570, "rtx-4500-ada"),
    ("RTX PRO 6000 WS", 97887, "rtx-pro-6000"), ("RTX PRO 6000 S", 97887, "rtx-pro-6000"),
]


@pytest.fixture
async def client() -> AsyncIterator[PoliteClient]:
    c = make_client(retry=RetryPolicy(attempts=3, scale=0.001), rng=random.Random(7), rate_limits={"vastai": None})
    yield c
    await c.aclose()


def _marketplace() -> dict[str, list[dict[str, object]]]:
    template = next(o for o in load_fixture("vastai.sample.json")["offers"] if o["gpu_name"] == "RTX 4090")
    offers = []
    for i, (name, ram, _) in enumerate(LISTINGS):
        offer = copy.deepcopy(template)
        offer.update(id=900_000 + i, ask_contract_id=900_000 + i, machine_id=70_000 + i, gpu_name=name, gpu_ram=ram,
                     gpu_total_ram=ram, num_gpus=1, rentable=True, dph_total=0.05 + i / 100)
        offers.append(offer)
    return {"offers": offers}


async def test_every_listing_names_its_card(provider_server: ProviderServer, client: PoliteClient) -> None:
    provider_server.serve(VAST_PATH, _marketplace())
    result = await poll("vastai", provider_server.providers_settings(), client)
    assert result.unknown_gpus == []
    hourly = sorted((o for o in result.offers if o.billing is Billing.HOURLY), key=lambda o: o.price_per_hour)
    assert [o.gpu for o in hourly] == [card for _, _, card in LISTINGS]
    assert all(o.in_stock and o.available == 1 for o in hourly)
    # the variants sold under one name are offers of their own, kept apart across polls by their keys
    assert len({o.key for o in hourly}) == len(LISTINGS)
    by_card = {o.gpu: o for o in hourly}
    assert by_card["rtx-3080"].sku == "RTX 3080" and by_card["rtx-3080-12gb"].sku == "RTX 3080 12GB"
    assert by_card["rtx-4060-ti-16gb"].sku == "RTX 4060 Ti" and by_card["rtx-4060-ti"].sku == "RTX 4060 Ti 8GB"


async def test_an_a100_40gb_listing_is_not_priced_as_the_80gb_one(provider_server: ProviderServer,
                                                                 client: PoliteClient) -> None:
    # Vast names both A100 PCIe boards "A100 PCIE": the cheap 40 GB one must not become an 80 GB offer
    template = next(o for o in load_fixture("vastai.sample.json")["offers"] if o["gpu_name"] == "RTX 4090")
    small = dict(template, id=1, machine_id=1, gpu_name="A100 PCIE", gpu_ram=40960, dph_total=0.6, rentable=True)
    big = dict(template, id=2, machine_id=2, gpu_name="A100 PCIE", gpu_ram=81920, dph_total=1.2, rentable=True)
    provider_server.serve(VAST_PATH, {"offers": [small, big]})
    result = await poll("vastai", provider_server.providers_settings(), client)
    hourly = {o.gpu: o for o in result.offers if o.billing is Billing.HOURLY}
    assert hourly["a100-40gb"].price == 0.6 and hourly["a100-80gb"].price == 1.2
    assert hourly["a100-40gb"].key != hourly["a100-80gb"].key


async def test_a_memory_no_variant_has_is_unknown_not_guessed(provider_server: ProviderServer,
                                                              client: PoliteClient) -> None:
    # a "4060 Ti" with 12 GB does not exist: reported by its spelling rather than priced as the 8 or 16 GB card
    market = _marketplace()
    market["offers"] = [dict(market["offers"][7], gpu_ram=12288, gpu_total_ram=12288)]
    provider_server.serve(VAST_PATH, market)
    result = await poll("vastai", provider_server.providers_settings(), client)
    assert result.unknown_gpus == ["RTX 4060 Ti"]
