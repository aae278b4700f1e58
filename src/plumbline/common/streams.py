"""Streams that keep moving: one hop of a transfer reads ahead while the next one writes.

A file passes several hops (the HTTP connection, the gateway's parser, gRPC, the blob
store). Pulled one piece at a time, each hop waits for the next to finish before it reads
again, and the transfer runs at the speed of their sum. :func:`read_ahead` pulls from its
source in a task of its own, up to ``depth`` pieces ahead, so the hops overlap; memory
stays bounded by ``depth`` pieces.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterable, AsyncIterator
from typing import TypeVar, cast

T = TypeVar("T")

_END = object()


class _Failed:
    """The source's failure, in the queue in place of an item."""

    def __init__(self, error: Exception) -> None:
        self.error = error


async def read_ahead(source: AsyncIterable[T], depth: int = 4) -> AsyncIterator[T]:
    """``source``'s items in order, read up to ``depth`` ahead; its failure is raised
    where the item would have come, and closing this stops the reading."""
    queue: asyncio.Queue[object] = asyncio.Queue(maxsize=depth)

    async def pull() -> None:
        iterator = aiter(source)
        try:
            async for item in iterator:
                await queue.put(item)
        except Exception as exc:
            await queue.put(_Failed(exc))
            return
        finally:
            # Stopped early (closed, cancelled): the source's own clean-up runs now.
            close = getattr(iterator, "aclose", None)
            if close is not None:
                await close()
        await queue.put(_END)

    task = asyncio.create_task(pull())
    try:
        while True:
            item = await queue.get()
            if item is _END:
                return
            if isinstance(item, _Failed):
                raise item.error
            yield cast(T, item)
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
