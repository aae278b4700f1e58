"""Loops stop between steps, not in the middle of one."""

from __future__ import annotations

import asyncio
import time

from plumbline.common.steps import Steps


async def test_a_step_in_progress_finishes_before_the_loop_stops() -> None:
    steps = Steps()
    finished: list[int] = []
    started = asyncio.Event()

    async def loop() -> None:
        n = 0
        while not steps.stopping:
            async with steps.step():
                started.set()
                await asyncio.sleep(0.2)
                finished.append(n)
            n += 1

    task = asyncio.create_task(loop())
    await started.wait()
    await steps.stop(task)
    assert finished == [0]  # the step it was on, and no other
    assert task.done()


async def test_a_waiting_loop_is_cancelled_at_once() -> None:
    steps = Steps()
    never = asyncio.Event()

    async def loop() -> None:
        while not steps.stopping:
            await never.wait()

    task = asyncio.create_task(loop())
    await asyncio.sleep(0)
    began = time.monotonic()
    await steps.stop(task)
    assert task.cancelled()
    assert time.monotonic() - began < 0.5


async def test_a_step_that_overruns_is_cancelled() -> None:
    steps = Steps()
    entered = asyncio.Event()

    async def loop() -> None:
        async with steps.step():
            entered.set()
            await asyncio.sleep(60)

    task = asyncio.create_task(loop())
    await entered.wait()
    await steps.stop(task, timeout=0.1)
    assert task.cancelled()
