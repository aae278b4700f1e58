"""The abstract-item ID space: blocks of ids, on a real SQLite database."""

from __future__ import annotations

import asyncio

import pytest

from plumbline.common.db import Database
from plumbline.common.errors import InvalidArgument, NotFound
from plumbline.common.idblocks import BLOCK_SIZE
from plumbline.services.items.idspace import IdSpace


async def test_id_blocks_are_disjoint_and_owned(items_db: Database) -> None:
    ids = IdSpace(items_db)
    blocks = await asyncio.gather(*(ids.allocate(owner) for owner in ["items", "testmgmt"] * 3))
    firsts = sorted(first for first, _size in blocks)
    assert firsts == [1 + i * BLOCK_SIZE for i in range(6)]
    owners = ["items", "testmgmt"] * 3
    first_testmgmt = next(
        first for (first, _), owner in zip(blocks, owners, strict=True) if owner == "testmgmt"
    )
    assert await ids.owner_of(first_testmgmt + BLOCK_SIZE - 1) == "testmgmt"
    with pytest.raises(NotFound):
        await ids.owner_of(7 * BLOCK_SIZE + 1)
    with pytest.raises(NotFound):
        await ids.owner_of(0)
    with pytest.raises(InvalidArgument):
        await ids.allocate("nobody")
