"""Abstract-item id blocks."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plumbline.common.idblocks import BLOCK_SIZE, IdAllocator, block_of, first_id_of


@given(st.integers(min_value=0, max_value=10**9))
def test_every_id_of_a_block_maps_back_to_it(block: int) -> None:
    first = first_id_of(block)
    assert block_of(first) == block
    assert block_of(first + BLOCK_SIZE - 1) == block
    assert block_of(first + BLOCK_SIZE) == block + 1


def test_ids_start_at_one() -> None:
    with pytest.raises(ValueError):
        block_of(0)


async def test_allocator_crosses_blocks_without_duplicates() -> None:
    blocks = iter([0, 5, 9])
    fetched = 0

    async def fetch() -> tuple[int, int]:
        nonlocal fetched
        fetched += 1
        await asyncio.sleep(0)
        return first_id_of(next(blocks)), BLOCK_SIZE

    allocator = IdAllocator(fetch)
    ids = await asyncio.gather(*(allocator.next_id() for _ in range(2 * BLOCK_SIZE + 10)))
    assert len(set(ids)) == len(ids)
    assert fetched == 3
    assert min(ids) == 1 and first_id_of(5) in ids and first_id_of(9) + 9 in ids
