"""Every record of a paged list call, page after page (offset pages, as the lists of
``core.v1.Page`` answer them)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, TypeVar

from plumbline.api.core.v1 import core_pb2

T = TypeVar("T")


async def every_page(
    call: Callable[[core_pb2.Page], Any],
    listed: Callable[[Any], Sequence[T]],
    size: int = 50,
) -> AsyncIterator[T]:
    """The records ``listed`` takes from each answer of ``await call(page)`` (a stub's
    call: awaitable, typed as the stubs are), from the first
    page until one comes back empty or the answer's ``page_info`` says none are left."""
    start = 0
    while True:
        reply = await call(core_pb2.Page(start_at=start, max_results=size))
        found = listed(reply)
        for record in found:
            yield record
        start += len(found)
        if not found or start >= reply.page_info.total_results:
            return
