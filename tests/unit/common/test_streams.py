"""read_ahead: order, bounded reading ahead, failures where the item would be, closing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from plumbline.common.streams import read_ahead


async def _numbers(count: int, pulled: list[int], fail_at: int | None = None) -> AsyncIterator[int]:
    for n in range(count):
        if n == fail_at:
            raise ValueError(f"broken at {n}")
        pulled.append(n)
        yield n


async def test_items_come_in_order() -> None:
    pulled: list[int] = []
    assert [n async for n in read_ahead(_numbers(50, pulled), depth=3)] == list(range(50))


async def test_it_reads_ahead_at_most_depth_items() -> None:
    pulled: list[int] = []
    stream = read_ahead(_numbers(100, pulled), depth=4)
    assert await anext(stream) == 0
    await asyncio.sleep(0.05)
    # One taken, four queued, one more pulled and waiting for room.
    assert len(pulled) <= 1 + 4 + 1
    await stream.aclose()  # type: ignore[attr-defined]


async def test_a_failure_is_raised_after_the_items_before_it() -> None:
    pulled: list[int] = []
    seen: list[int] = []

    async def read_all() -> None:
        async for n in read_ahead(_numbers(10, pulled, fail_at=5)):
            seen.append(n)

    with pytest.raises(ValueError, match="broken at 5"):
        await read_all()
    assert seen == [0, 1, 2, 3, 4]


async def test_closing_stops_the_reading() -> None:
    stopped = asyncio.Event()

    async def endless() -> AsyncIterator[int]:
        try:
            n = 0
            while True:
                yield n
                n += 1
        finally:
            stopped.set()

    stream = read_ahead(endless(), depth=2)
    assert await anext(stream) == 0
    await stream.aclose()  # type: ignore[attr-defined]
    assert stopped.is_set()
