"""``every_page``: every record of a paged list call, page after page."""

from __future__ import annotations

from typing import Any

from plumbline.api.core.v1 import core_pb2
from plumbline.common.rpc import every_page


class _Listed:
    def __init__(self, records: list[int], total: int) -> None:
        self.records = records
        self.page_info = core_pb2.PageInfo(total_results=total)


async def test_every_record_once_until_the_total_or_an_empty_page() -> None:
    asked: list[tuple[int, int]] = []

    async def call(page: core_pb2.Page) -> Any:
        asked.append((page.start_at, page.max_results))
        return _Listed(list(range(7))[page.start_at : page.start_at + page.max_results], 7)

    got = [r async for r in every_page(call, lambda reply: reply.records, 3)]
    assert got == [0, 1, 2, 3, 4, 5, 6]
    assert asked == [(0, 3), (3, 3), (6, 3)]

    async def shrinking(page: core_pb2.Page) -> Any:
        # The list lost records while it was read: an empty page ends it.
        return _Listed([1] if page.start_at == 0 else [], 10)

    assert [r async for r in every_page(shrinking, lambda reply: reply.records)] == [1]
