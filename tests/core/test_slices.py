"""core.slices: one computation, run at once or on the loop in slices, gives the same result; the loop runs other
work between the slices; the cyclic collector paused from several threads at once is on again after the last."""

from __future__ import annotations

import asyncio
import gc
import threading

from core.slices import Steps, collector_paused, run_in_slices, run_steps


def squares(n: int) -> Steps[list[int]]:
    out = []
    for i in range(n):
        out.append(i * i)
        yield
    return out


async def test_in_slices_or_at_once_the_same_result_and_the_loop_runs_between() -> None:
    ran: list[int] = []

    async def other() -> None:
        while True:
            ran.append(1)
            await asyncio.sleep(0)

    task = asyncio.create_task(other())
    await asyncio.sleep(0)
    before = len(ran)
    got = await run_in_slices(squares(50), budget=0.0)
    task.cancel()
    assert got == run_steps(squares(50)) == [i * i for i in range(50)]
    assert len(ran) - before >= 50  # a turn of the loop after every step
    assert run_steps(squares(0)) == []


def test_the_collector_paused_from_threads_is_on_again_after_the_last() -> None:
    assert gc.isenabled()
    inside = threading.Barrier(3)
    states: list[bool] = []

    def work() -> None:
        with collector_paused():
            inside.wait()
            states.append(gc.isenabled())
            inside.wait()

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    inside.wait()
    inside.wait()
    for t in threads:
        t.join()
    assert states == [False, False]
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # off before: left off
    finally:
        gc.enable()
