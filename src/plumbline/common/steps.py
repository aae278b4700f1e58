"""Background loops that stop between steps.

A relay or a consumer cancelled in the middle of a database transaction leaves its
connection half-returned (the pool logs an error with a ``CancelledError`` traceback) and
its work to be redone. ``Steps`` lets ``stop`` ask the loop to finish the step it is on
(bounded by a timeout), and cancels only a loop that is waiting, or a step that overruns.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

#: Seconds ``stop`` lets a step finish before cancelling it.
STEP_TIMEOUT = 5.0


class Steps:
    """Marks a loop's steps; the loop checks ``stopping`` before starting one."""

    def __init__(self) -> None:
        self.stopping = False
        self._idle = asyncio.Event()
        self._idle.set()

    @contextlib.asynccontextmanager
    async def step(self) -> AsyncIterator[None]:
        """Around one unit of work that should not be cut short."""
        self._idle.clear()
        try:
            yield
        finally:
            self._idle.set()

    async def stop(self, task: asyncio.Task[Any], timeout: float = STEP_TIMEOUT) -> None:
        """Lets the current step finish (at most ``timeout``), then ends ``task``."""
        self.stopping = True
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), timeout)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
