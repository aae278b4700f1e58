"""The throttle: how many requests run, queue, wait and are refused."""

from __future__ import annotations

import asyncio

from plumbline.gateway.throttle import Throttle, Transfers


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


async def test_retry_after_is_never_longer_than_the_wait_limit() -> None:
    """However slow the measured service (long requests skew it), a refused client is
    never told to wait longer than a request may wait."""
    throttle = Throttle(concurrency=2, queue=500, timeout=10)
    throttle.service = 40.0  # as after requests held for a 40 s download
    assert {throttle.retry_after() for _ in range(200)} <= set(range(1, 11))
    assert Throttle(concurrency=2, queue=5, timeout=0.5).retry_after() == 1


async def test_a_request_held_already_waits_only_the_rest_of_the_limit() -> None:
    """A client held for coming back before its Retry-After has spent that much of the
    wait limit: it waits for a slot only for the rest of it."""
    throttle = Throttle(concurrency=1, queue=5, timeout=5)
    assert await throttle.acquire()
    assert not await throttle.acquire(waited=5)  # nothing left: refused at once
    assert throttle.waiting == 0
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert not await throttle.acquire(waited=4.9)
    assert loop.time() - started < 4  # the 0.1 s left, not the whole 5 s
    throttle.release()


def test_transfers_are_bounded_in_all_and_per_user() -> None:
    transfers = Transfers(concurrency=3, per_user=2)
    assert transfers.start(7, body=True) is None
    assert transfers.start(7, body=True) is None
    refused = transfers.start(7, body=True)
    assert refused is not None
    assert "2 files or reports" in refused
    assert transfers.start(7, body=False) is None  # a download is no upload of the user's
    full = transfers.start(8, body=True)
    assert full is not None
    assert "most transfers at once (3)" in full
    transfers.end(7, body=True)
    assert transfers.start(8, body=True) is None
    assert transfers.sending == {7: 1, 8: 1}
    for user in (7, 8):
        transfers.end(user, body=True)
    transfers.end(7, body=False)
    assert (transfers.open, transfers.sending) == (0, {})
