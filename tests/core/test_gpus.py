"""The GPU catalog: every card's figures are coherent and sourced, and the spellings the providers' own payloads use
(tests/fixtures/providers) name the card they mean."""

from __future__ import annotations

import pytest

from core.gpus import GPUS, families, find_gpu, get_gpu, resolve_gpus


def test_every_card_is_sourced_and_coherent() -> None:
    for gpu in GPUS:
        assert gpu.source and gpu.architecture, gpu.id
        # usable memory is what the device reports: at most the label (GiB on HBM cards), never far under it
        assert 0.9 * gpu.memory_gb <= gpu.usable_gib <= gpu.memory_gb, gpu.id
        assert gpu.fp8_tflops == 0 or gpu.fp8_tflops >= 1.9 * gpu.bf16_tflops, gpu.id
        assert gpu.runs_fp8 == (gpu.fp8_tflops > 0), gpu.id  # FP8 figures exactly where FP8 tensor cores are
        assert not gpu.base_mhz or gpu.base_mhz < gpu.boost_mhz, gpu.id


@pytest.mark.parametrize(("spelling", "memory", "card"), [
    ("GH200 (96 GB)", None, "gh200"),  # Lambda's gpu_description
    ("NVIDIA_GH200", None, "gh200"), ("AMD_MI325X", None, "mi325x"),  # Vultr's gpu_type
    ("MI355X_288GB", None, "mi355x"),  # Crusoe's gpu_type
    ("MI350X", None, "mi350x"),  # CloudRift's brand_short
    ("RTX4000 ADA", 20, "rtx-4000-ada"),  # DigitalOcean's size, as its parser spells it
    ("RTX 5000 Ada", None, "rtx-5000-ada"),  # JarvisLabs' gpu_type
    ("NVIDIA L20 48GB", None, "l20"),  # Cloud.ru's tariff row
])
def test_provider_spellings_name_their_card(spelling: str, memory: float | None, card: str) -> None:
    found = find_gpu(spelling, memory)
    assert found is not None and found.id == card


def test_a_variant_with_other_memory_is_not_guessed() -> None:
    # GH200 also ships with 144 GB of HBM3e (4.9 TB/s): not the 96 GB card the catalog describes
    assert find_gpu("GH200", 144) is None and find_gpu("GH200 144GB") is None
    assert find_gpu("RTX 4000") is None  # the Turing Quadro RTX 4000 (8 GB) is another card


def test_amd_cdna3_and_cdna4_have_bf16_and_fp8_matrix_cores() -> None:
    for card in ("mi300x", "mi325x", "mi350x", "mi355x"):
        gpu = get_gpu(card)
        assert gpu.runs_bf16 and gpu.runs_fp8 and gpu.vendor == "amd"
    assert get_gpu("mi355x").bf16_tflops > get_gpu("mi325x").bf16_tflops == get_gpu("mi300x").bf16_tflops


def test_a_family_said_by_its_number_covers_its_variants() -> None:
    # "3080" is how people say "RTX 3080": both boards, as "A100" is both A100s
    assert {g.id for g in resolve_gpus("3080")} == {g.id for g in resolve_gpus("RTX 3080")} == \
        {"rtx-3080", "rtx-3080-12gb"}
    assert [g.id for g in resolve_gpus("4060 Ti", 16)] == ["rtx-4060-ti-16gb"]
    assert [g.id for g in resolve_gpus("RTX 4060 Ti 8GB")] == ["rtx-4060-ti"]
    # each family once, though it is found under two spellings
    assert sorted(g.id for family in families() for g in family) == sorted(g.id for g in GPUS)


def test_a_card_size_people_own_is_a_size_the_catalog_has() -> None:
    # "на 8 гб видеокарте": the 8 GB cards marketplaces rent, each with what the device really reports
    eight = [g for g in GPUS if g.memory_gb == 8]
    assert {g.id for g in eight} >= {"rtx-3060-ti", "rtx-3070", "rtx-4060", "rtx-4060-ti"}
    assert all(7.5 <= g.usable_gib < 8 for g in eight)


def test_turing_workstation_cards_have_no_bf16_and_no_fp8() -> None:
    for card in ("titan-rtx", "quadro-rtx-6000", "quadro-rtx-8000"):
        gpu = get_gpu(card)
        assert gpu.architecture == "turing" and not gpu.runs_bf16 and not gpu.runs_fp8 and not gpu.bf16
    # full-rate FP32 accumulate on the Quadro / TITAN board: faster per clock than the GeForce 2080 Ti
    assert get_gpu("quadro-rtx-8000").bf16_tflops > 2 * get_gpu("rtx-2080-ti").bf16_tflops
