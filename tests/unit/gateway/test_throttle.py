"""The throttle: how many requests run, queue, wait and are refused."""

from __future__ import annotations

import asyncio

from plumbline.gateway.throttle import Throttle


async def test_throttle_queues_then_refuses() -> None:
    throttle = Throttle(concurrency=1, queue=1, timeout=5)
    assert await throttle.acquire()
    waiter = asyncio.create_task(throttle.acquire())
    await asyncio.sleep(0)
    assert throttle.waiting == 1
    assert not await throttle.acquire()  # queue full
    throttle.release()
    assert await waiter
    throttle.release()


async def test_throttle_times_out() -> None:
    throttle = Throttle(concurrency=1, queue=5, timeout=0.01)
    assert await throttle.acquire()
    assert not await throttle.acquire()
    assert throttle.waiting == 0


async def test_throttle_keeps_the_queue_to_what_drains_in_time() -> None:
    throttle = Throttle(concurrency=2, queue=500, timeout=10)
    throttle.service = 1.0  # two requests a second: five seconds hold ten waiting
    assert throttle.depth() == 10
    assert not throttle.full()
    assert await throttle.acquire()
    assert await throttle.acquire()
    waiters = [asyncio.create_task(throttle.acquire()) for _ in range(10)]
    await asyncio.sleep(0)
    assert throttle.full()
    assert not await throttle.acquire()
    assert 6 <= throttle.retry_after() <= 12  # (10 waiting + 2) / 2 per second, spread
    for _ in range(12):
        throttle.release(1.0)
    assert all(await asyncio.gather(*waiters))


async def test_throttle_learns_the_service_time() -> None:
    throttle = Throttle(concurrency=4, queue=500, timeout=10)
    for _ in range(200):
        assert await throttle.acquire()
        throttle.release(0.1)
    assert 0.09 < throttle.service < 0.11
    assert throttle.depth() == 200  # 40 a second for half the timeout
