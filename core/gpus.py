"""The GPU catalog: what each card offers and every spelling people and providers use for it.

Usable memory is what CUDA reports as the device total (PyTorch / vLLM measurements, `docs/reference/estimator.md` §5),
not the number on the box: a "24 GB" card gives 23.58 GiB, an "80 GB" H100 79.22 GiB. The estimator compares against it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache

# AMD Instinct generations with BF16 and FP8 matrix cores (ROCm "GPU hardware specifications": MI300X / MI325X are
# CDNA3, gfx942; MI350X / MI355X CDNA4, gfx950)
_AMD_MATRIX = frozenset({"cdna3", "cdna4"})


class GPUClass(StrEnum):
    """Market segment of a card (shown to people; the speed model uses each card's own figures, not this)."""

    CONSUMER = "consumer"
    WORKSTATION = "workstation"
    DATACENTER = "datacenter"


class Interconnect(StrEnum):
    """How the GPUs of one server exchange data (drives multi-GPU scaling in `core.speed`)."""

    SXM = "sxm"  # NVLink / NVSwitch between every pair (HGX boards, OAM for AMD)
    NVLINK = "nvlink"  # NVLink bridges between pairs (H100 NVL, H200 NVL); PCIe beyond the pair
    PCIE = "pcie"  # PCIe peer-to-peer
    PCIE_NO_P2P = "pcie-no-p2p"  # GeForce: peer-to-peer disabled by the driver, every transfer through host memory


@dataclass(frozen=True, slots=True)
class GPU:
    id: str  # stable catalog id, e.g. "h100-sxm"
    name: str  # display name, e.g. "H100 SXM"
    memory_gb: float  # the label, decimal GB
    usable_gib: float  # what the device really reports (GiB)
    bf16_tflops: float  # dense tensor BF16 (FP16 where there is no BF16); GeForce at the FP32-accumulate rate
    bandwidth_gbs: float  # memory bandwidth, GB/s
    gpu_class: GPUClass
    bf16: bool = True  # T4 / V100 have no BF16 (and no FlashAttention 2)
    vendor: str = "nvidia"
    aliases: tuple[str, ...] = field(default=())
    family: str = ""  # what people call every variant of it: "H100" for SXM, PCIe and NVL
    interconnect: Interconnect = Interconnect.PCIE
    link_gbs: float = 0.0  # GPU-to-GPU bandwidth, one direction, GB/s (NVLink per GPU; PCIe x16 of its generation)
    pcie_gen: int = 4  # host link: CPU offload and no-P2P transfers go over it
    fp8_tflops: float = 0.0  # dense FP8 tensor (0 where the card has no FP8 tensor cores)
    source: str = ""  # where the figures come from
    # Graphics clocks, MHz: base (what the card guarantees at its board power under a worst-case load) and boost
    # (what the datasheet TFLOPS are computed at). 0 where the vendor publishes none (B200/B300, MI300X).
    base_mhz: float = 0.0
    boost_mhz: float = 0.0
    # CUDA compute capability (NVIDIA's "CUDA GPUs - Compute Capability" table, developer.nvidia.com/cuda-gpus):
    # 7.0 Volta, 7.5 Turing, 8.0 / 8.6 Ampere, 8.9 Ada, 9.0 Hopper, 10.0 / 12.0 Blackwell. 0 for AMD (gfx942).
    compute_capability: float = 0.0
    architecture: str = ""  # "volta" | "turing" | "ampere" | "ada" | "hopper" | "blackwell" | "cdna3" | "cdna4"

    @property
    def runs_fp8(self) -> bool:
        """FP8 tensor cores: compute capability 8.9 (Ada) or newer, or AMD CDNA3 (vLLM `Fp8Config` needs
        capability 89 for W8A8; cuBLASLt FP8 GEMMs run on sm_89 / sm_90 and newer), or AMD CDNA3 / CDNA4."""
        return self.compute_capability >= 8.9 or self.architecture in _AMD_MATRIX

    @property
    def runs_bf16(self) -> bool:
        """BF16 tensor cores and FlashAttention 2 (which requires Ampere, sm_80, or newer: its README): Ampere and
        newer, or AMD CDNA3 / CDNA4. Volta and Turing (V100, T4, RTX 20) have neither."""
        return self.compute_capability >= 8.0 or self.architecture in _AMD_MATRIX


# Datasheets the figures are read from (dense numbers, i.e. the sparsity figures halved). GeForce cards: the
# "FP16 Tensor TFLOPS with FP32 Accumulate" row of NVIDIA's architecture whitepapers (mixed-precision training
# accumulates in FP32; GeForce runs that at half the FP16-accumulate rate).
_AMPERE_GF = "NVIDIA Ampere GA102 whitepaper, Appendix A (GeForce RTX 30 series)"
_ADA_GF = "NVIDIA Ada Lovelace architecture whitepaper v2.1, Appendix A (GeForce RTX 40 series)"
_AMPERE_WS = "NVIDIA RTX A-series datasheets (Tensor TFLOPS, sparse / 2)"
_ADA_WS = "NVIDIA RTX 6000 Ada / L40 / L40S datasheets"
_AMPERE_DC = "NVIDIA A100 Tensor Core GPU datasheet (2021); A10 / A40 datasheets"
_HOPPER = "NVIDIA H100 / H200 datasheets (dense = sparse / 2)"
_BLACKWELL = ("NVIDIA DGX/HGX B200 and B300 datasheets; RTX Blackwell GPU architecture whitepaper "
              "(RTX 5090, RTX PRO 6000)")
_OLD_DC = "NVIDIA Tesla T4 / V100 datasheets"
_A2 = ("NVIDIA A2 Tensor Core GPU datasheet (BF16/FP16 tensor 18 | 36 TFLOPS sparse, 16 GB GDDR6 200 GB/s, "
       "PCIe Gen4 x8, base 1440 / boost 1770 MHz)")
_A16 = ("NVIDIA A16 datasheet (per board 4 GPUs x 16 GB GDDR6, 4 x 200 GB/s, BF16/FP16 tensor 4 x 35.9 | 4 x 71.8 "
        "TFLOPS sparse, PCIe Gen4 x16; providers sell it per GPU; base 885 / boost 1695 MHz)")
_A30 = ("NVIDIA A30 Tensor Core GPU datasheet (BF16/FP16 tensor 165 | 330 TFLOPS sparse, 24 GB HBM2 933 GB/s, "
        "NVLink bridge 200 GB/s both ways between a pair, PCIe Gen4; base 930 / boost 1440 MHz)")
_TURING_GF = ("NVIDIA Turing TU102 whitepaper, Appendix A (RTX 2080 Ti reference board: FP16 tensor 53.8 TFLOPS "
              "with FP32 accumulate, no BF16; 11 GB GDDR6 616 GB/s; base 1350 / boost 1545 MHz)")
_AMD = "AMD Instinct MI300X datasheet (dense FP16/BF16 1307.4 TFLOPS, 5.3 TB/s, Infinity Fabric 896 GB/s per OAM)"
_GH200 = ("NVIDIA GH200 Grace Hopper Superchip datasheet (96 GB HBM3 up to 4 TB/s; FP16/BF16 tensor 990 dense, FP8 "
          "1,979 dense), the H100's GH100 die: 132 SMs at 1980 MHz (public nvidia-smi / OpenCL dumps of "
          "'NVIDIA GH200 480GB', 97871 MiB; base clock taken as the H100 SXM's); NVLink 4 900 GB/s both ways. Usable "
          "memory: 97871 MiB less the H100 SXM's share (81559 MiB -> 79.22 GiB)")
_L20 = ("NVIDIA L20 (48 GB GDDR6 384-bit 864 GB/s, dense BF16 119.5 TFLOPS as published, FP8 twice that; AD102, "
        "PCIe Gen4 x16, no NVLink; TechPowerUp GPU Database l20.c4206 for bandwidth and clocks; nvidia-smi 46068 MiB, "
        "the L40's figure, so the L40's usable memory)")
_ADA_WS_SMALL = ("NVIDIA RTX 4000 / RTX 5000 Ada Generation datasheets ('Tensor Performance' 327.6 / 1044.4 TFLOPS is "
                 "FP8 with sparsity: BF16 dense = / 4, FP8 dense = / 2; 20 GB 360 GB/s / 32 GB 576 GB/s GDDR6 ECC, "
                 "PCIe Gen4 x16, no NVLink); usable = nvidia-smi 20475 / 32760 MiB (workstation cards report it all, "
                 "as the RTX A6000's 49140 MiB)")
_AMD_MI325X = ("AMD Instinct MI325X (CDNA3 gfx942, the MI300X's compute: dense FP16/BF16 1307.4, FP8 2614.9 TFLOPS; "
               "256 GB HBM3E 6 TB/s; AMD ROCm 'GPU hardware specifications' lists 256 GiB; Infinity Fabric as the "
               "MI300X's; usable memory less the MI300X's reserve)")
_AMD_MI355X = ("AMD Instinct MI355X (CDNA4 gfx950, ROCm 'GPU hardware specifications': 256 CUs, 288 GB HBM3E 8 TB/s; "
               "FP8 8,192 FLOP per CU per clock at 2.4 GHz = 5,033 TFLOPS dense (ISSCC 2026; Hot Chips 2025 for the "
               "clock), BF16 half of it; 7 XGMI links of 153.6 GB/s, 1,075 GB/s = 537.6 per direction; vLLM sees "
               "288 GiB)")
_AMD_MI350X = ("AMD Instinct MI350X: the MI355X's silicon, memory and links, air-cooled at 1000 W with a 2.2 GHz peak "
               "clock (Hot Chips 2025): FP8 256 CUs x 8,192 x 2.2 GHz = 4,614 TFLOPS dense, BF16 half of it")

# The mid-range GeForce cards providers rent by the GPU (vast.ai's `gpu_name` list, HOSTKEY's RTX 3080): NVIDIA
# publishes their tensor rate only for a few (RTX 5070: 61.7 TFLOPS BF16 dense, RTX Blackwell whitepaper Appendix C),
# and every published GeForce figure is SMs x boost clock x 512 FLOP per clock for FP16 with FP32 accumulate (RTX 3090
# 82 x 1695 -> 71, RTX 4080 76 x 2505 -> 97.5, RTX 4090 128 x 2520 -> 165.2, RTX 5090 170 x 2407 -> 209.5, RTX 5070
# 48 x 2512 -> 61.7), so the others are that product from their SM count and clocks (TechPowerUp GPU Database, same
# SKU; NVIDIA's product pages for the RTX 50 clocks); memory and bandwidth from the same pages. Usable memory: the
# nvidia-smi total (public dumps: 8188, 10240, 12282, 16376, 16380, 12227, 16303, 16311 MiB) less the 0.42 GiB the
# 24 GB GeForce cards lose between nvidia-smi (24564 MiB) and CUDA (23.58 GiB, vLLM #14447).
_GF_DERIVED = ("SMs x boost MHz x 512 FLOP/clock (FP16 tensor, FP32 accumulate: the factor of NVIDIA's published "
               "RTX 3090 / 4080 / 4090 / 5070 / 5090 figures); SMs, clocks, memory and bandwidth: TechPowerUp GPU "
               "Database entry of the SKU")
_AMPERE_GF_MID = "NVIDIA GeForce RTX 30 series (GA102 / GA104); " + _GF_DERIVED
_ADA_GF_MID = "NVIDIA GeForce RTX 40 series (AD103 / AD104 / AD106 / AD107); " + _GF_DERIVED
_BLACKWELL_GF_MID = ("NVIDIA GeForce RTX 50 series (GB203 / GB205 / GB206; RTX 5070 61.7 TFLOPS from the RTX "
                     "Blackwell whitepaper, Appendix C); " + _GF_DERIVED)
# Turing workstation boards run FP16 tensor math with FP32 accumulate at the full rate: 72 SMs x 1770 MHz x 1024
# = 130.5 TFLOPS ("Turing Architecture In-Depth", NVIDIA developer blog, Quadro RTX 6000 row; the Quadro RTX 6000 /
# 8000 datasheets: "130.5 TFLOPS FP16 or FP32 accumulate"); 672 GB/s GDDR6, PCIe Gen3 x16, no BF16. The TITAN RTX is
# the same TU102 at the same clocks with 24 GB (NVIDIA's TITAN RTX page). nvidia-smi totals: Quadro RTX 8000 48601
# MiB, TITAN RTX 24220 MiB (public dumps).
_TURING_WS = ("NVIDIA Turing: Quadro RTX 6000 / 8000 datasheets (130.5 TFLOPS FP16 tensor with FP32 accumulate, "
              "672 GB/s, base 1455 / boost 1770 MHz), TITAN RTX (same TU102 and rate, base 1350 / boost 1770 MHz)")
# RTX 4500 Ada: 60 SMs; its datasheet's 'Tensor Performance' 634.0 TFLOPS is FP8 with sparsity (60 x 2580 MHz x
# 4096), so BF16 dense is a quarter of it, FP8 dense half; 24 GB GDDR6 ECC at 432 GB/s, PCIe Gen4 x16, no NVLink.
_ADA_WS_4500 = ("NVIDIA RTX 4500 Ada Generation datasheet (Tensor Performance 634.0 TFLOPS = FP8 sparse: BF16 dense "
                "158.5, FP8 dense 317; 24 GB GDDR6 ECC 432 GB/s; boost 2580 MHz)")
# The smaller RTX PRO Blackwell workstation cards (GB203 / GB202, sm_120, PCIe Gen5 x16, GDDR7 ECC, no NVLink), rented
# by the GPU (Lium's "RTX PRO 4500 Blackwell", RunPod's and AWS G7's "RTX PRO 4500 Blackwell Server Edition").
# Workstation Blackwell runs FP16 tensor math with FP32 accumulate at the full rate, 1024 FLOP per SM per clock: the
# RTX PRO 6000's datasheet 4,000 AI TOPS (FP4 sparse = 8 x BF16 dense) is its 188 SMs x 2617 MHz x 8192. The RTX PRO
# 5000 has NVIDIA's own figure, 2,064 AI TOPS (48 and 72 GB alike): BF16 dense 258, FP8 516 (a 2.29 GHz rating
# clock, so no base / boost pair is taken for it). The 4000 and 4500 are SMs x boost x 1024, as the catalog derives
# GeForce rates. Usable memory: the label times the RTX 5090's CUDA-visible share (31.36 of 32 GB), the lower of the
# two GDDR7 Blackwell cards with public dumps (the RTX PRO 6000 gives 94.97 of 96), none being public for these.
_BLACKWELL_WS_MID = ("NVIDIA RTX PRO Blackwell family (RTX PRO 4000: 70 SMs, 24 GB 192-bit 672 GB/s, 140 W; RTX PRO "
                     "4500: 82 SMs, 32 GB 256-bit 896 GB/s, 200 W; base 1590 / boost 2617 MHz; TechPowerUp GPU "
                     "Database entries of the SKUs); BF16 dense = SMs x boost MHz x 1024 FLOP/clock (the RTX PRO "
                     "6000's 4,000 AI TOPS = 188 x 2617 x 8192), FP8 twice that")
_BLACKWELL_WS_5000 = ("NVIDIA RTX PRO 5000 Blackwell (48 GB, and 72 GB since Oct 2025: GDDR7 ECC 1,344 GB/s, 110 SMs, "
                      "2,064 AI TOPS = FP4 sparse: BF16 dense 258, FP8 dense 516; 300 W; PCIe Gen5 x16)")

# GPU-to-GPU bandwidth per direction: NVLink 2 (V100 SXM2) 150 GB/s, NVLink 3 (A100) 300, NVLink 4 (H100/H200)
# 450, NVLink 5 (B200/B300) 900; NVLink bridge of H100 NVL 300 (600 GB/s both ways), H200 NVL 450; PCIe x16
# gen 3 / 4 / 5: 16 / 32 / 64 GB/s raw, so 12 / 25 / 50 GB/s effective (NCCL busbw on PCIe peer-to-peer).
PCIE_GBS: dict[int, float] = {3: 12.0, 4: 25.0, 5: 50.0}

# Base / boost graphics clocks (`core.speed` derives the clock dense matmuls sustain from them): NVIDIA datasheets
# where they list them (A100, H100, H200, L4, L40, L40S, RTX 6000 Ada, RTX A-series, A2, A16, A30, T4, V100), the
# architecture whitepapers' reference boards for GeForce (Ampere GA102, Ada, Blackwell, Turing), and the TechPowerUp
# GPU Database entry of the same SKU for the rest.
_CLOCKS = "clocks: NVIDIA datasheet / whitepaper reference board (TechPowerUp GPU Database, same SKU)"

# Compute capability and architecture per card: NVIDIA's "CUDA GPUs - Compute Capability" table
# (developer.nvidia.com/cuda-gpus; Blackwell: the CUDA 12.8 release notes, B200/B300 sm_100, RTX 50 / RTX PRO sm_120);
# MI300X: AMD ROCm "GPU hardware specifications" (gfx942, CDNA3: FP8 and BF16 matrix cores).
_V, _T, _AM, _AD, _H, _B = "volta", "turing", "ampere", "ada", "hopper", "blackwell"
_CAPABILITY: dict[str, tuple[float, str]] = {
    "t4": (7.5, _T), "v100-16gb": (7.0, _V), "v100-32gb": (7.0, _V), "rtx-2080-ti": (7.5, _T),
    "a2": (8.6, _AM), "a16": (8.6, _AM), "rtx-a4000": (8.6, _AM), "rtx-a2000": (8.6, _AM), "rtx-3060": (8.6, _AM),
    "rtx-a4500": (8.6, _AM), "a10": (8.6, _AM), "a30": (8.0, _AM), "rtx-3090": (8.6, _AM), "rtx-a5000": (8.6, _AM),
    "a100-40gb": (8.0, _AM), "a100-80gb": (8.0, _AM), "a40": (8.6, _AM), "rtx-a6000": (8.6, _AM),
    "rtx-4080": (8.9, _AD), "l4": (8.9, _AD), "rtx-4090": (8.9, _AD), "l40": (8.9, _AD), "l40s": (8.9, _AD),
    "rtx-6000-ada": (8.9, _AD), "h100-pcie": (9.0, _H), "h100-sxm": (9.0, _H), "h100-nvl": (9.0, _H),
    "h200": (9.0, _H), "h200-nvl": (9.0, _H), "b200": (10.0, _B), "b300": (10.3, _B), "rtx-5090": (12.0, _B),
    "rtx-pro-6000": (12.0, _B), "mi300x": (0.0, "cdna3"),
    "gh200": (9.0, _H), "l20": (8.9, _AD), "rtx-4000-ada": (8.9, _AD), "rtx-5000-ada": (8.9, _AD),
    "mi325x": (0.0, "cdna3"), "mi350x": (0.0, "cdna4"), "mi355x": (0.0, "cdna4"),
    "rtx-3060-ti": (8.6, _AM), "rtx-3070": (8.6, _AM), "rtx-3070-ti": (8.6, _AM), "rtx-3080": (8.6, _AM),
    "rtx-3080-12gb": (8.6, _AM), "rtx-3080-ti": (8.6, _AM), "rtx-4060": (8.9, _AD), "rtx-4060-ti": (8.9, _AD),
    "rtx-4060-ti-16gb": (8.9, _AD), "rtx-4070": (8.9, _AD), "rtx-4070-super": (8.9, _AD), "rtx-4070-ti": (8.9, _AD),
    "rtx-4070-ti-super": (8.9, _AD), "rtx-4500-ada": (8.9, _AD), "rtx-5060-ti": (12.0, _B), "rtx-5070": (12.0, _B),
    "rtx-5070-ti": (12.0, _B), "rtx-5080": (12.0, _B), "rtx-pro-4000": (12.0, _B), "rtx-pro-4500": (12.0, _B),
    "rtx-pro-5000": (12.0, _B), "rtx-pro-5000-72gb": (12.0, _B), "titan-rtx": (7.5, _T), "quadro-rtx-6000": (7.5, _T),
    "quadro-rtx-8000": (7.5, _T),
}

_S, _NV, _P, _NP = Interconnect.SXM, Interconnect.NVLINK, Interconnect.PCIE, Interconnect.PCIE_NO_P2P


def _g(id_: str, name: str, mem: float, usable: float, tflops: float, bw: float, cls: GPUClass,
       aliases: tuple[str, ...], *, family: str, link: Interconnect, source: str, pcie: int = 4,
       link_gbs: float | None = None, fp8: float = 0.0, bf16: bool = True, vendor: str = "nvidia",
       clocks: tuple[float, float] = (0.0, 0.0)) -> GPU:
    cc, arch = _CAPABILITY[id_]
    return GPU(id_, name, mem, usable, tflops, bw, cls, bf16, vendor, aliases, family=family, interconnect=link,
               link_gbs=PCIE_GBS[pcie] if link_gbs is None else link_gbs, pcie_gen=pcie, fp8_tflops=fp8,
               source=source + "; " + _CLOCKS if clocks[0] else source, base_mhz=clocks[0], boost_mhz=clocks[1],
               compute_capability=cc, architecture=arch)


C, W, D = GPUClass.CONSUMER, GPUClass.WORKSTATION, GPUClass.DATACENTER

# Ordered from the smallest memory up; aliases are free text, normalised by `compact_name`.
GPUS: tuple[GPU, ...] = (
    # 8 GB GeForce. The RTX 4060 / 4060 Ti link at PCIe Gen4 x8, the bandwidth of Gen3 x16 (`pcie` is the x16
    # generation of the same bandwidth).
    _g("rtx-3060-ti", "RTX 3060 Ti", 8, 7.58, 32.4, 448, C, ("rtx 3060 ti", "3060 ti", "rtx 3060ti", "3060ti"),
       family="RTX 3060 Ti", link=_NP, source=_AMPERE_GF_MID, clocks=(1410, 1665)),
    _g("rtx-3070", "RTX 3070", 8, 7.58, 40.6, 448, C, ("rtx 3070", "3070"), family="RTX 3070", link=_NP,
       source=_AMPERE_GF_MID, clocks=(1500, 1725)),
    _g("rtx-3070-ti", "RTX 3070 Ti", 8, 7.58, 43.5, 608, C, ("rtx 3070 ti", "3070 ti", "rtx 3070ti", "3070ti"),
       family="RTX 3070 Ti", link=_NP, source=_AMPERE_GF_MID, clocks=(1575, 1770)),
    _g("rtx-4060", "RTX 4060", 8, 7.58, 30.2, 272, C, ("rtx 4060", "4060"), family="RTX 4060", link=_NP, pcie=3,
       fp8=60.4, source=_ADA_GF_MID, clocks=(1830, 2460)),
    _g("rtx-4060-ti", "RTX 4060 Ti 8GB", 8, 7.58, 44.1, 288, C, ("rtx 4060 ti", "4060 ti", "rtx 4060ti", "4060ti",
                                                                   "rtx 4060 ti 8gb"),
       family="RTX 4060 Ti", link=_NP, pcie=3, fp8=88.2, source=_ADA_GF_MID, clocks=(2310, 2535)),
    _g("rtx-3080", "RTX 3080", 10, 9.58, 59.5, 760, C, ("rtx 3080", "3080", "rtx 3080 10gb"), family="RTX 3080",
       link=_NP, source=_AMPERE_GF_MID, clocks=(1440, 1710)),
    _g("rtx-3080-12gb", "RTX 3080 12GB", 12, 11.58, 61.3, 912, C, ("rtx 3080", "3080", "rtx 3080 12gb"),
       family="RTX 3080", link=_NP, source=_AMPERE_GF_MID, clocks=(1260, 1710)),
    _g("rtx-3080-ti", "RTX 3080 Ti", 12, 11.58, 68.2, 912, C, ("rtx 3080 ti", "3080 ti", "rtx 3080ti", "3080ti"),
       family="RTX 3080 Ti", link=_NP, source=_AMPERE_GF_MID, clocks=(1365, 1665)),
    _g("rtx-4070", "RTX 4070", 12, 11.58, 58.3, 504, C, ("rtx 4070", "4070"), family="RTX 4070", link=_NP,
       fp8=116.6, source=_ADA_GF_MID, clocks=(1920, 2475)),
    _g("rtx-4070-super", "RTX 4070 Super", 12, 11.58, 71.0, 504, C,
       ("rtx 4070 super", "4070 super", "rtx 4070s", "4070s"), family="RTX 4070 Super", link=_NP, fp8=141.9,
       source=_ADA_GF_MID, clocks=(1980, 2475)),
    _g("rtx-4070-ti", "RTX 4070 Ti", 12, 11.58, 80.2, 504, C, ("rtx 4070 ti", "4070 ti", "rtx 4070ti", "4070ti"),
       family="RTX 4070 Ti", link=_NP, fp8=160.4, source=_ADA_GF_MID, clocks=(2310, 2610)),
    _g("rtx-5070", "RTX 5070", 12, 11.52, 61.7, 672, C, ("rtx 5070", "5070"), family="RTX 5070", link=_NP, pcie=5,
       fp8=123.5, source=_BLACKWELL_GF_MID, clocks=(2160, 2512)),
    _g("rtx-4060-ti-16gb", "RTX 4060 Ti 16GB", 16, 15.58, 44.1, 288, C, ("rtx 4060 ti", "4060 ti", "rtx 4060ti",
                                                                          "4060ti", "rtx 4060 ti 16gb"),
       family="RTX 4060 Ti", link=_NP, pcie=3, fp8=88.2, source=_ADA_GF_MID, clocks=(2310, 2535)),
    _g("rtx-4070-ti-super", "RTX 4070 Ti Super", 16, 15.57, 88.2, 672, C,
       ("rtx 4070 ti super", "4070 ti super", "rtx 4070s ti", "4070s ti", "rtx 4070 ti s"),
       family="RTX 4070 Ti Super", link=_NP, fp8=176.4, source=_ADA_GF_MID, clocks=(2340, 2610)),
    # RTX 5060 Ti: PCIe Gen5 x8, the bandwidth of Gen4 x16.
    _g("rtx-5060-ti", "RTX 5060 Ti", 16, 15.51, 47.4, 448, C, ("rtx 5060 ti", "5060 ti", "rtx 5060ti", "5060ti",
                                                               "rtx 5060 ti 16gb"),
       family="RTX 5060 Ti", link=_NP, fp8=94.8, source=_BLACKWELL_GF_MID, clocks=(2407, 2572)),
    _g("rtx-5070-ti", "RTX 5070 Ti", 16, 15.5, 87.9, 896, C, ("rtx 5070 ti", "5070 ti", "rtx 5070ti", "5070ti"),
       family="RTX 5070 Ti", link=_NP, pcie=5, fp8=175.8, source=_BLACKWELL_GF_MID, clocks=(2295, 2452)),
    _g("rtx-5080", "RTX 5080", 16, 15.5, 112.6, 960, C, ("rtx 5080", "5080"), family="RTX 5080", link=_NP, pcie=5,
       fp8=225.2, source=_BLACKWELL_GF_MID, clocks=(2295, 2617)),
    _g("t4", "T4", 16, 14.58, 65, 320, D, ("t4", "tesla t4"), family="T4", link=_P, pcie=3, bf16=False,
       source=_OLD_DC, clocks=(585, 1590)),
    _g("v100-16gb", "V100 16GB", 16, 15.78, 125, 900, D,
       ("v100", "v100 16gb", "v100-sxm2-16gb", "v100 pcie 16gb", "tesla v100"), family="V100", link=_S,
       link_gbs=150, pcie=3, bf16=False, source=_OLD_DC, clocks=(1312, 1530)),
    # A2 / A16: 16 GB GDDR6 with ECC on by default, like the T4: the same usable memory.
    _g("a2", "A2", 16, 14.58, 18, 200, D, ("a2", "tesla a2"), family="A2", link=_P, source=_A2,
       clocks=(1440, 1770)),
    _g("a16", "A16", 16, 14.58, 35.9, 200, D, ("a16", "a16 16gb"), family="A16", link=_P, source=_A16,
       clocks=(885, 1695)),
    _g("rtx-a4000", "RTX A4000", 16, 15.56, 76.7, 448, W, ("rtx a4000", "a4000"), family="RTX A4000", link=_P,
       source=_AMPERE_WS, clocks=(735, 1560)),
    _g("rtx-4080", "RTX 4080", 16, 15.57, 97.5, 717, C, ("rtx 4080", "4080", "rtx 4080 super", "rtx 4080s", "4080s"),
       family="RTX 4080", link=_NP, fp8=195, source=_ADA_GF, clocks=(2205, 2505)),
    _g("rtx-a2000", "RTX A2000", 12, 11.5, 32, 288, W, ("rtx a2000", "a2000", "rtx a2000 12gb"),
       family="RTX A2000", link=_P, source=_AMPERE_WS, clocks=(562, 1200)),
    _g("rtx-3060", "RTX 3060", 12, 11.6, 25.6, 360, C, ("rtx 3060", "3060"), family="RTX 3060", link=_NP,
       source=_AMPERE_GF, clocks=(1320, 1777)),
    # Turing GeForce: no BF16 and no FlashAttention 2 (like T4); 11 GB reports 10.75 GiB.
    _g("rtx-2080-ti", "RTX 2080 Ti", 11, 10.75, 53.8, 616, C, ("rtx 2080 ti", "2080 ti", "rtx 2080ti", "2080ti"),
       family="RTX 2080 Ti", link=_NP, pcie=3, bf16=False, source=_TURING_GF, clocks=(1350, 1545)),
    _g("rtx-a4500", "RTX A4500", 20, 19.6, 94.6, 640, W, ("rtx a4500", "a4500"), family="RTX A4500", link=_P,
       source=_AMPERE_WS, clocks=(1050, 1650)),
    _g("rtx-4000-ada", "RTX 4000 Ada", 20, 19.99, 81.9, 360, W,
       ("rtx 4000 ada", "rtx 4000 ada generation", "rtx 4000ada", "4000 ada", "rtx4000 ada"), family="RTX 4000 Ada",
       link=_P, fp8=163.8, source=_ADA_WS_SMALL, clocks=(1500, 2175)),
    _g("l4", "L4", 24, 22.0, 121, 300, D, ("l4",), family="L4", link=_P, fp8=242.5,
       source="NVIDIA L4 datasheet (BF16 242 TFLOPS sparse)", clocks=(795, 2040)),
    _g("a10", "A10", 24, 22.0, 125, 600, D, ("a10", "a10g"), family="A10", link=_P, source=_AMPERE_DC,
       clocks=(885, 1695)),
    # A30: HBM2 24 GB reports ~23.5 GiB; NVLink bridge pairs two cards (100 GB/s each way).
    _g("a30", "A30", 24, 23.5, 165, 933, D, ("a30", "a30 24gb"), family="A30", link=_NV, link_gbs=100,
       source=_A30, clocks=(930, 1440)),
    _g("rtx-3090", "RTX 3090", 24, 23.58, 71, 936, C, ("rtx 3090", "3090", "rtx 3090 ti", "3090 ti"),
       family="RTX 3090", link=_NP, source=_AMPERE_GF, clocks=(1395, 1695)),
    _g("rtx-4090", "RTX 4090", 24, 23.58, 165.2, 1008, C, ("rtx 4090", "4090", "rtx 4090d", "4090d"),
       family="RTX 4090", link=_NP, fp8=330.3, source=_ADA_GF, clocks=(2235, 2520)),
    _g("rtx-a5000", "RTX A5000", 24, 23.58, 111.1, 768, W, ("rtx a5000", "a5000"), family="RTX A5000", link=_P,
       source=_AMPERE_WS, clocks=(1170, 1695)),
    _g("rtx-4500-ada", "RTX 4500 Ada", 24, 23.99, 158.5, 432, W,
       ("rtx 4500 ada", "rtx 4500 ada generation", "rtx 4500ada", "4500 ada", "rtx4500 ada"), family="RTX 4500 Ada",
       link=_P, fp8=317, source=_ADA_WS_4500),
    _g("rtx-pro-4000", "RTX PRO 4000", 24, 23.52, 187.6, 672, W,
       ("rtx pro 4000", "rtx pro 4000 blackwell", "rtx pro 4000 blackwell server edition", "rtx pro 4000 se"),
       family="RTX PRO 4000", link=_P, pcie=5, fp8=375.2, source=_BLACKWELL_WS_MID, clocks=(1590, 2617)),
    _g("titan-rtx", "TITAN RTX", 24, 23.23, 130.5, 672, W, ("titan rtx", "nvidia titan rtx"), family="TITAN RTX",
       link=_NP, pcie=3, bf16=False, source=_TURING_WS, clocks=(1350, 1770)),
    _g("quadro-rtx-6000", "Quadro RTX 6000", 24, 23.99, 130.5, 672, W,
       ("quadro rtx 6000", "q rtx 6000", "rtx 6000 quadro"), family="Quadro RTX 6000", link=_P, pcie=3, bf16=False,
       source=_TURING_WS, clocks=(1455, 1770)),
    _g("rtx-5090", "RTX 5090", 32, 31.36, 209.5, 1792, C, ("rtx 5090", "5090"), family="RTX 5090", link=_NP,
       pcie=5, fp8=419, source=_BLACKWELL, clocks=(2017, 2407)),
    _g("rtx-pro-4500", "RTX PRO 4500", 32, 31.36, 219.7, 896, W,
       ("rtx pro 4500", "rtx pro 4500 blackwell", "rtx pro 4500 blackwell server edition", "rtx pro 4500 se"),
       family="RTX PRO 4500", link=_P, pcie=5, fp8=439.5, source=_BLACKWELL_WS_MID, clocks=(1590, 2617)),
    _g("v100-32gb", "V100 32GB", 32, 31.75, 125, 900, D,
       ("v100", "v100 32gb", "v100-sxm2-32gb", "v100s", "v100 pcie 32gb"), family="V100", link=_S, link_gbs=150,
       pcie=3, bf16=False, source=_OLD_DC, clocks=(1312, 1530)),
    _g("rtx-5000-ada", "RTX 5000 Ada", 32, 31.99, 261.1, 576, W,
       ("rtx 5000 ada", "rtx 5000 ada generation", "rtx 5000ada", "5000 ada", "rtx5000 ada"), family="RTX 5000 Ada",
       link=_P, fp8=522.2, source=_ADA_WS_SMALL, clocks=(1155, 2550)),
    _g("a100-40gb", "A100 40GB", 40, 40.0, 312, 1555, D,
       ("a100", "a100 40gb", "a100-sxm4-40gb", "a100 pcie 40gb", "a100 sxm4", "a100 pcie", "a100 sxm"),
       family="A100", link=_S, link_gbs=300, source=_AMPERE_DC, clocks=(1095, 1410)),
    _g("l40", "L40", 48, 44.5, 181, 864, D, ("l40",), family="L40", link=_P, fp8=362, source=_ADA_WS,
       clocks=(735, 2490)),
    _g("l40s", "L40S", 48, 44.5, 362, 864, D, ("l40s",), family="L40S", link=_P, fp8=733, source=_ADA_WS,
       clocks=(1110, 2520)),
    _g("l20", "L20", 48, 44.5, 119.5, 864, D, ("l20", "l20 48gb", "nvidia l20"), family="L20", link=_P, fp8=239,
       source=_L20, clocks=(1440, 2520)),
    _g("a40", "A40", 48, 44.5, 149.7, 696, D, ("a40",), family="A40", link=_P, source=_AMPERE_DC,
       clocks=(1305, 1740)),
    _g("rtx-a6000", "RTX A6000", 48, 47.99, 154.8, 768, W, ("rtx a6000", "a6000"), family="RTX A6000", link=_P,
       source=_AMPERE_WS, clocks=(1410, 1800)),
    _g("rtx-6000-ada", "RTX 6000 Ada", 48, 47.99, 364.2, 960, W,
       ("rtx 6000 ada", "rtx 6000ada", "rtx 6000 ada generation", "6000 ada"), family="RTX 6000 Ada", link=_P,
       fp8=728.5, source=_ADA_WS, clocks=(915, 2505)),
    _g("quadro-rtx-8000", "Quadro RTX 8000", 48, 47.46, 130.5, 672, W,
       ("quadro rtx 8000", "q rtx 8000", "rtx 8000", "rtx 8000 quadro"), family="Quadro RTX 8000", link=_P, pcie=3,
       bf16=False, source=_TURING_WS, clocks=(1455, 1770)),
    _g("rtx-pro-5000", "RTX PRO 5000", 48, 47.04, 258, 1344, W,
       ("rtx pro 5000", "rtx pro 5000 blackwell", "rtx pro 5000 48gb", "rtx pro 5000 blackwell 48gb"),
       family="RTX PRO 5000", link=_P, pcie=5, fp8=516, source=_BLACKWELL_WS_5000),
    _g("rtx-pro-5000-72gb", "RTX PRO 5000 72GB", 72, 70.56, 258, 1344, W,
       ("rtx pro 5000", "rtx pro 5000 blackwell", "rtx pro 5000 72gb", "rtx pro 5000 blackwell 72gb"),
       family="RTX PRO 5000", link=_P, pcie=5, fp8=516, source=_BLACKWELL_WS_5000),
    _g("a100-80gb", "A100 80GB", 80, 79.15, 312, 2039, D,
       ("a100", "a100 80gb", "a100-sxm4-80gb", "a100 80gb pcie", "a100 pcie 80gb", "a100 sxm4", "a100 sxm",
        "a100 pcie", "a100 sxm4 80gb", "a100x"), family="A100", link=_S, link_gbs=300, source=_AMPERE_DC,
       clocks=(1275, 1410)),
    _g("h100-pcie", "H100 PCIe", 80, 79.22, 756, 2000, D, ("h100 pcie", "h100 pcie 80gb", "h100-pcie-80gb"),
       family="H100", link=_P, pcie=5, fp8=1513, source=_HOPPER, clocks=(1125, 1755)),
    _g("h100-sxm", "H100 SXM", 80, 79.22, 989, 3350, D,
       ("h100", "h100 sxm", "h100 sxm5", "h100 80gb hbm3", "h100 hbm3", "h100-sxm5-80gb", "h100 sxm 80gb"),
       family="H100", link=_S, link_gbs=450, pcie=5, fp8=1979, source=_HOPPER, clocks=(1590, 1980)),
    _g("h100-nvl", "H100 NVL", 94, 93.1, 835, 3900, D, ("h100 nvl", "h100 nvl 94gb"), family="H100", link=_NV,
       link_gbs=300, pcie=5, fp8=1671, source=_HOPPER, clocks=(1080, 1785)),
    _g("gh200", "GH200", 96, 95.0, 989, 4000, D, ("gh200", "gh200 96gb", "gh200 superchip", "grace hopper",
                                                    "gh200 grace hopper"),
       family="GH200", link=_S, link_gbs=450, pcie=5, fp8=1979, source=_GH200, clocks=(1590, 1980)),
    _g("rtx-pro-6000", "RTX PRO 6000", 96, 94.97, 500, 1792, W,
       ("rtx pro 6000", "rtx pro 6000 blackwell", "rtx pro 6000 blackwell server edition",
        "rtx pro 6000 blackwell workstation edition", "rtx pro 6000 se", "rtx pro 6000 we",
        "rtx pro 6000 ws", "rtx pro 6000 s"),
       family="RTX PRO 6000", link=_P, pcie=5, fp8=1000, source=_BLACKWELL, clocks=(1590, 2617)),
    _g("h200", "H200", 141, 139.8, 989, 4800, D, ("h200", "h200 sxm", "h200 141gb", "h200 sxm5", "h200 hbm3e"),
       family="H200", link=_S, link_gbs=450, pcie=5, fp8=1979, source=_HOPPER, clocks=(1590, 1980)),
    _g("h200-nvl", "H200 NVL", 141, 139.8, 835, 4800, D, ("h200 nvl",), family="H200", link=_NV, link_gbs=450,
       pcie=5, fp8=1671, source=_HOPPER, clocks=(1365, 1785)),
    # Bandwidth: the 180 GB B200 has a 7680-bit HBM3e bus (15 of 16 channels, as 180 of 192 GB) at 3996 MHz:
    # 7,672 GB/s, not the datasheet's 8 TB/s (pytorch/ao PR #4002, "update b200 peak memory bandwidth", 2026-03:
    # cudaGetDeviceProperties memory bus width 7680 bits, nvidia-smi clocks.max.memory 3996 MHz, 178.35 GB).
    _g("b200", "B200", 180, 178.0, 2250, 7672, D, ("b200", "b200 sxm", "b200 180gb", "hgx b200", "dgx b200"),
       family="B200", link=_S, link_gbs=900, pcie=5, fp8=4500,
       source=_BLACKWELL + "; memory bandwidth 7,672 GB/s from the device's 7680-bit bus at 3996 MHz "
       "(pytorch/ao PR #4002)"),
    _g("mi300x", "MI300X", 192, 191.5, 1307, 5300, D, ("mi300x", "instinct mi300x"), family="MI300X", link=_S,
       link_gbs=448, pcie=5, fp8=2615, vendor="amd", source=_AMD),
    _g("mi325x", "MI325X", 256, 255.5, 1307, 6000, D, ("mi325x", "instinct mi325x"), family="MI325X", link=_S,
       link_gbs=448, pcie=5, fp8=2615, vendor="amd", source=_AMD_MI325X),
    _g("mi350x", "MI350X", 288, 287.5, 2306.9, 8000, D, ("mi350x", "instinct mi350x"), family="MI350X", link=_S,
       link_gbs=537.6, pcie=5, fp8=4613.7, vendor="amd", source=_AMD_MI350X),
    _g("mi355x", "MI355X", 288, 287.5, 2516.6, 8000, D, ("mi355x", "instinct mi355x"), family="MI355X", link=_S,
       link_gbs=537.6, pcie=5, fp8=5033, vendor="amd", source=_AMD_MI355X),
    _g("b300", "B300", 288, 267.0, 2250, 8000, D, ("b300", "b300 sxm", "hgx b300", "blackwell ultra"),
       family="B300", link=_S, link_gbs=900, pcie=5, fp8=4500, source=_BLACKWELL),
)

# Words that say nothing about which card it is.
_NOISE = {"nvidia", "geforce", "tesla", "amd", "radeon", "instinct", "graphics", "gpu", "card", "generation",
          "server", "edition", "x1", "1x", "gb", "гб", "тесла"}
# Form-factor words that may be dropped when the exact spelling is unknown (NVL and PCIe change the card).
_DROPPABLE = {"sxm", "sxm2", "sxm4", "sxm5", "hbm2", "hbm2e", "hbm3", "hbm3e", "oam", "server", "pcie"}
_MEM = re.compile(r"^(\d{1,3})(?:gb|g|гб)$")
_SPLIT = re.compile(r"[\s_\-/,()\[\]+:;|]+")


def _tokens(text: str) -> tuple[list[str], float | None]:
    """Lower-cased tokens without noise, and a memory size (GB) when the name carries one."""
    t = text.lower().replace("nvidia", " nvidia ")
    # "rtx4090" -> "rtx 4090", "6000ada" -> "6000 ada", "80gb" stays one token
    t = re.sub(r"(rtx|gtx|quadro)(?=\d)", r"\1 ", t)
    t = re.sub(r"(\d)(ada|ti|super)\b", r"\1 \2", t)
    tokens: list[str] = []
    memory: float | None = None
    raw = [x for x in _SPLIT.split(t) if x]
    for i, tok in enumerate(raw):
        m = _MEM.match(tok)
        if m:
            memory = float(m.group(1))
            continue
        # ASCII digits only: '²' passes str.isdigit() but not float()
        if tok.isascii() and tok.isdigit() and i + 1 < len(raw) and raw[i + 1] in ("gb", "гб") and i > 0:
            memory = float(tok)
            continue
        if tok.isascii() and tok.isdigit() and len(tok) <= 3 and i == len(raw) - 1 and i > 0:
            memory = float(tok)  # "A100 80", "a100 40": no card's name ends in a number that short
            continue
        if tok in _NOISE:
            continue
        tokens.append(tok)
    return tokens, memory


def compact_name(text: str) -> str:
    """The key under which a spelling is looked up: 'GeForce RTX 4090 24GB' -> 'rtx4090'."""
    return "".join(_tokens(text)[0])


@lru_cache(maxsize=1)
def _index() -> tuple[dict[str, list[GPU]], dict[str, list[GPU]], dict[str, GPU]]:
    exact: dict[str, list[GPU]] = {}
    loose: dict[str, list[GPU]] = {}
    by_id = {g.id: g for g in GPUS}
    for gpu in GPUS:
        keys = {compact_name(a) for a in (*gpu.aliases, gpu.name, gpu.id)}
        for key in keys:
            exact.setdefault(key, []).append(gpu)
        for alias in (*gpu.aliases, gpu.name):
            toks, _ = _tokens(alias)
            lkey = "".join(t for t in toks if t not in _DROPPABLE)
            if gpu not in loose.setdefault(lkey, []):
                loose[lkey].append(gpu)
    return exact, loose, by_id


# When a spelling without memory fits several cards, the one people mean today.
# The RTX 3080 sold mostly as the 10 GB card (the 12 GB came a year later, in fewer numbers); so did the 48 GB RTX PRO
# 5000 (the 72 GB came seven months later).
_DEFAULT_FOR_AMBIGUOUS = {"a100": "a100-80gb", "v100": "v100-32gb", "rtx3080": "rtx-3080",
                          "3080": "rtx-3080", "rtxpro5000": "rtx-pro-5000", "rtxpro5000blackwell": "rtx-pro-5000"}


def _pick(candidates: list[GPU], key: str, memory_gb: float | None) -> GPU | None:
    if memory_gb is not None:
        # A memory that matches none of the candidates (a modded "4090 48GB") is a different card: unknown.
        fitting = [g for g in candidates if abs(g.memory_gb - memory_gb) <= 0.15 * g.memory_gb]
        if not fitting:
            return None
        candidates = fitting
    if len(candidates) == 1:
        return candidates[0]
    default = _DEFAULT_FOR_AMBIGUOUS.get("".join(t for t in _tokens(key)[0] if t not in _DROPPABLE))
    for g in candidates:
        if g.id == default:
            return g
    return max(candidates, key=lambda g: g.memory_gb)


def find_gpu(name: str, memory_gb: float | None = None) -> GPU | None:
    """The catalog card for a free-text spelling, or None when nothing matches (never a guess).

    `memory_gb` (per GPU, decimal GB or GiB: the tolerance absorbs the difference) disambiguates A100 40/80 and
    V100 16/32; a name that carries its own memory ("A100 PCIe 40GB") uses that.
    """
    if not name or not name.strip():
        return None
    exact, loose, by_id = _index()
    if name in by_id:
        return by_id[name]
    tokens, mem_in_name = _tokens(name)
    if mem_in_name is not None and memory_gb is None:
        memory_gb = mem_in_name
    key = "".join(tokens)
    if not key:
        return None
    if key in exact:
        return _pick(exact[key], key, memory_gb)
    lkey = "".join(t for t in tokens if t not in _DROPPABLE)
    if lkey in loose:
        return _pick(loose[lkey], lkey, memory_gb)
    return None


@lru_cache(maxsize=1)
def _families() -> dict[str, tuple[GPU, ...]]:
    out: dict[str, list[GPU]] = {}
    for gpu in GPUS:
        key = compact_name(gpu.family or gpu.name)
        out.setdefault(key, []).append(gpu)
        if _RTX_NUMBER.match(key):  # "RTX 3080" is said "3080" as often: the same family
            out.setdefault(key[3:], []).append(gpu)
    return {k: tuple(v) for k, v in out.items()}


_RTX_NUMBER = re.compile(r"rtx\d")


def families() -> tuple[tuple[GPU, ...], ...]:
    """Every family's cards, as `resolve_gpus` gives them for the family's name (one card for most)."""
    return tuple(dict.fromkeys(_families().values()))  # a family under two keys ("rtx3080", "3080") once


def warm_up() -> None:
    """The spelling and family indexes, built now rather than by the first phrase that names a card."""
    _index()
    _families()


def singular(name: str) -> str | None:
    """A card name said in the plural, as the singular ("H100s", "A100's" -> "H100", "A100"); None when `name` does
    not end in one. Users' words only: a provider's name is matched as written (`find_gpu`)."""
    name = name.rstrip()
    if len(name) > 2 and name[-1] in "sS" and name[-2] not in "sS":
        return name[:-1].rstrip("'\u2019")
    return None


def resolve_gpus(name: str, memory_gb: float | None = None) -> tuple[GPU, ...]:
    """Every card a spelling means: a bare family name covers its variants ('H100' is SXM, PCIe and NVL; 'A100'
    40 and 80 GB; 'H100 80GB' the two 80 GB ones); a named variant ('H100 PCIe', 'A100 80GB') only that card; a
    plural ('H100s') what its singular means. Empty when nothing matches."""
    if not name or not name.strip():
        return ()
    found = _resolve(name, memory_gb)
    if not found and (one := singular(name)) is not None:
        found = _resolve(one, memory_gb)
    return found


def _resolve(name: str, memory_gb: float | None) -> tuple[GPU, ...]:
    tokens, mem_in_name = _tokens(name)
    family = _families().get("".join(tokens))
    if family is not None and len(family) > 1:
        memory = memory_gb if memory_gb is not None else mem_in_name
        if memory is None:
            return family
        return tuple(g for g in family if abs(g.memory_gb - memory) <= 0.1 * g.memory_gb)
    gpu = find_gpu(name, memory_gb)
    return (gpu,) if gpu is not None else ()


def family_ids(name: str) -> list[str]:
    """Catalog ids `resolve_gpus` gives for a spelling (what an offer filter keeps)."""
    return [g.id for g in resolve_gpus(name)]


def get_gpu(gpu_id: str) -> GPU:
    """The card with this catalog id (KeyError for an unknown id: ids come from our own data)."""
    return _index()[2][gpu_id]


def all_gpus() -> tuple[GPU, ...]:
    return GPUS
