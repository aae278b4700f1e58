"""Abstract-item IDs: one ID space shared by every service, handed out in blocks.

The items service owns the block table; a service that creates abstract items takes a
block of ``BLOCK_SIZE`` ids at a time and hands them out locally. The owner of an id
is found from its block number, ``(id - 1) // BLOCK_SIZE``, in one primary-key read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

BLOCK_SIZE = 1000


def block_of(item_id: int) -> int:
    """The block number that holds ``item_id`` (ids start at 1)."""
    if item_id < 1:
        raise ValueError(f"abstract item ids start at 1, got {item_id}")
    return (item_id - 1) // BLOCK_SIZE


def first_id_of(block: int) -> int:
    """The first id of block ``block``."""
    return block * BLOCK_SIZE + 1


class IdAllocator:
    """Hands out ids from blocks obtained through ``fetch_block`` (first id, size).

    Ids left in a block when the process stops are skipped, never reused: the space is
    large and reuse would be the worse failure.
    """

    def __init__(self, fetch_block: Callable[[], Awaitable[tuple[int, int]]]) -> None:
        self._fetch_block = fetch_block
        self._next = 0
        self._end = 0
        self._lock = asyncio.Lock()

    async def next_id(self) -> int:
        """A fresh id."""
        [value] = await self.next_ids(1)
        return value

    async def next_ids(self, count: int) -> list[int]:
        """``count`` fresh ids, in increasing order (taking new blocks as needed)."""
        ids: list[int] = []
        async with self._lock:
            while len(ids) < count:
                if self._next >= self._end:
                    first, size = await self._fetch_block()
                    self._next, self._end = first, first + size
                take = min(count - len(ids), self._end - self._next)
                ids.extend(range(self._next, self._next + take))
                self._next += take
        return ids
