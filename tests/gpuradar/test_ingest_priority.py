"""The ingest child runs at a lower CPU priority than the bot (gpuradar/ingest_process.py, `CHILD_NICENESS`): where
the cores are busy, answers users wait for come before recording a poll."""

from __future__ import annotations

import os

from gpuradar.ingest_process import CHILD_NICENESS, IngestProcess


async def test_the_ingest_child_is_niced_below_its_parent(database_url: str) -> None:
    ingest = IngestProcess(database_url)
    await ingest.start()
    try:
        assert ingest.pid is not None
        ours = os.getpriority(os.PRIO_PROCESS, 0)
        assert os.getpriority(os.PRIO_PROCESS, ingest.pid) == min(19, ours + CHILD_NICENESS)
        assert ours == os.getpriority(os.PRIO_PROCESS, 0)  # the bot's own priority is untouched
    finally:
        await ingest.stop()
