"""Admission control for API requests: slots, a wait queue no longer than it can drain in
time, and a ``Retry-After`` computed from the load.

Under overload the cheapest answer is an early one: a request that would wait longer than
the timeout is refused before anything is spent on it (no credentials check, no body), so
the slots keep working at full capacity instead of queueing requests that time out.
"""

from __future__ import annotations

import asyncio
import math
import random

from prometheus_client import Gauge

QUEUED = Gauge("plumbline_http_queued", "API requests waiting for a slot")

# Service time starts at this guess (seconds) until requests have been measured.
_INITIAL_SERVICE = 0.005
# Weight of the newest measurement in the moving average of service times.
_ALPHA = 0.05


class Throttle:
    """At most ``concurrency`` API requests at once and at most ``queue`` more waiting,
    but never more waiting than the measured capacity serves within half of ``timeout``.
    """

    def __init__(self, concurrency: int, queue: int, timeout: float) -> None:
        self.slots = asyncio.Semaphore(concurrency)
        self.concurrency = concurrency
        self.queue = queue
        self.timeout = timeout
        self.waiting = 0
        self.service = _INITIAL_SERVICE
        self._random = random.Random()

    @property
    def capacity(self) -> float:
        """Requests a second the slots complete, from the measured service time."""
        return self.concurrency / max(self.service, 1e-4)

    def depth(self) -> int:
        """How many requests may wait: those served within half the timeout, at most ``queue``."""
        return min(self.queue, max(self.concurrency, int(self.capacity * self.timeout / 2)))

    def full(self) -> bool:
        """Whether a new request would be refused now (checked before anything else)."""
        return self.slots.locked() and self.waiting >= self.depth()

    async def acquire(self) -> bool:
        """True once a slot is held; False when the queue is full or the wait timed out."""
        if not self.slots.locked():
            await self.slots.acquire()
            return True
        if self.waiting >= self.depth():
            return False
        self.waiting += 1
        QUEUED.inc()
        try:
            async with asyncio.timeout(self.timeout):
                await self.slots.acquire()
            return True
        except TimeoutError:
            return False
        finally:
            self.waiting -= 1
            QUEUED.dec()

    def release(self, seconds: float | None = None) -> None:
        """Frees a slot; ``seconds`` is how long the request held it."""
        if seconds is not None:
            self.service += _ALPHA * (seconds - self.service)
        self.slots.release()

    def retry_after(self) -> int:
        """Seconds a refused client should wait: once to twice the time the queue takes to
        drain, at random, so that refused clients come back spread out. The slots do not
        stand idle meanwhile: clients whose requests complete refill the queue at once;
        a longer wait only means fewer 429s to answer."""
        drain = (self.waiting + self.concurrency) / self.capacity
        return max(1, min(60, math.ceil(drain * (1 + self._random.random()))))
