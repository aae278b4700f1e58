"""Abstract-item id blocks and the allocator that hands them out."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plumbline.common.idblocks import BLOCK_SIZE, IdAllocator, block_of, first_id_of


@given(st.integers(min_value=0, max_value=10**12))
def test_every_id_of_a_block_maps_back_to_it(block: int) -> None:
    first = first_id_of(block)
    assert block_of(first) == block
    assert block_of(first + BLOCK_SIZE - 1) == block
    assert block_of(first + BLOCK_SIZE) == block + 1
    if block > 0:
        assert block_of(first - 1) == block - 1


@given(st.integers(min_value=1, max_value=10**15))
def test_an_id_lies_inside_its_block(item_id: int) -> None:
    block = block_of(item_id)
    assert first_id_of(block) <= item_id < first_id_of(block + 1)


def test_known_values() -> None:
    assert BLOCK_SIZE == 1000
    assert first_id_of(0) == 1
    assert first_id_of(3) == 3001
    assert block_of(1) == 0
    assert block_of(1000) == 0
    assert block_of(1001) == 1


@pytest.mark.parametrize("item_id", [0, -1])
def test_ids_start_at_one(item_id: int) -> None:
    with pytest.raises(ValueError, match="start at 1"):
        block_of(item_id)


def _fetcher(blocks: Iterable[tuple[int, int]]) -> tuple[list[int], IdAllocator]:
    calls: list[int] = []
    source = iter(blocks)

    async def fetch() -> tuple[int, int]:
        calls.append(1)
        await asyncio.sleep(0)  # a real fetch awaits the items service
        return next(source)

    return calls, IdAllocator(fetch)


async def test_ids_are_consecutive_and_cross_block_boundaries() -> None:
    calls, allocator = _fetcher([(first_id_of(0), BLOCK_SIZE), (first_id_of(5), BLOCK_SIZE)])
    ids = [await allocator.next_id() for _ in range(BLOCK_SIZE + 3)]
    assert ids[:BLOCK_SIZE] == list(range(1, BLOCK_SIZE + 1))
    assert ids[BLOCK_SIZE:] == [5001, 5002, 5003]
    assert len(calls) == 2  # one fetch per block, none before it is needed


async def test_many_ids_at_once_span_blocks_like_one_at_a_time() -> None:
    calls, allocator = _fetcher(
        [(first_id_of(0), BLOCK_SIZE), (first_id_of(5), BLOCK_SIZE), (first_id_of(9), BLOCK_SIZE)]
    )
    assert await allocator.next_id() == 1
    ids = await allocator.next_ids(BLOCK_SIZE + 2)
    assert ids == [*range(2, BLOCK_SIZE + 1), 5001, 5002, 5003]
    assert await allocator.next_ids(0) == []
    assert await allocator.next_id() == 5004
    assert len(calls) == 2


async def test_no_fetch_before_the_first_id() -> None:
    calls, allocator = _fetcher([(1, BLOCK_SIZE)])
    assert calls == []
    assert await allocator.next_id() == 1
    assert len(calls) == 1


async def test_concurrent_callers_get_unique_ids() -> None:
    calls, allocator = _fetcher([(first_id_of(b), BLOCK_SIZE) for b in (0, 5, 9)])
    ids = await asyncio.gather(*(allocator.next_id() for _ in range(2 * BLOCK_SIZE + 10)))
    assert len(set(ids)) == len(ids)
    assert len(calls) == 3
    expected = [
        *range(1, 1001),
        *range(first_id_of(5), first_id_of(5) + BLOCK_SIZE),
        *range(first_id_of(9), first_id_of(9) + 10),
    ]
    assert sorted(ids) == expected


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(min_value=0, max_value=10**6), st.integers(1, 5)),
        min_size=1,
        max_size=6,
        unique_by=lambda b: b[0],
    ),
    st.data(),
)
def test_allocator_hands_out_each_block_in_order(
    blocks: list[tuple[int, int]], data: st.DataObject
) -> None:
    ranges = [(first_id_of(block), size) for block, size in blocks]
    total = sum(size for _, size in ranges)
    wanted = data.draw(st.integers(min_value=1, max_value=total))

    async def run() -> list[int]:
        _calls, allocator = _fetcher(ranges)
        return list(await asyncio.gather(*(allocator.next_id() for _ in range(wanted))))

    ids = asyncio.run(run())
    expected = [i for first, size in ranges for i in range(first, first + size)][:wanted]
    assert sorted(ids) == sorted(expected)
    assert len(set(ids)) == wanted
