"""Vast.ai's spelling of each card and the `gpu_ram` (MB per GPU) its listings carry, for the benches' generated
marketplaces (bench/scrape.py, bench/memory.py, bench/soak.py, bench/ingest_loop.py).

The seven in tests/fixtures/providers/vastai.sample.json are that sample's own figures (its sources:
tests/fixtures/providers/SOURCES.md); the rest are the cards' memory as nvidia-smi reports it in MiB, the way Vast
states it. The parser checks a name against its memory (`scrapers.providers._common.gpu_id`), so a listing that
gives every card one made-up size is an unknown card that reaches nobody. No imports: bench/ingest_loop.py reads
this file by path while it runs another checkout's code.
"""

VAST_GPU_RAM_MB = {"RTX 4090": 24564, "RTX 3090": 24576, "RTX 5090": 32607, "H100 SXM": 81559, "H100 PCIE": 81559,
                   "H200": 143771, "A100 SXM4": 81920, "A100 PCIE": 81920, "L40S": 46068, "RTX A6000": 49140,
                   "RTX 6000Ada": 49140, "A40": 46068, "L4": 23034, "Tesla V100": 16384, "B200": 183359}
