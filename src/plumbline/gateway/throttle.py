"""Admission control for API requests: slots, a wait queue no longer than it can drain in
time, and a ``Retry-After`` computed from the load.

Under overload the cheapest answer is an early one: a request that would wait longer than
the timeout is refused before anything is spent on it (no credentials check, no body), so
the slots keep working at full capacity instead of queueing requests that time out.

Transfers (a file's or a report's body, a file's download) take no API slot: their time
is the client's and the network's, not the server's, and a slot held for it would starve
every other request. They have their own bounded pool (``Transfers``), with a cap per user
on bodies being sent; the throttle's service time counts API handling only.
"""

from __future__ import annotations

import asyncio
import math
import random

from prometheus_client import Gauge

QUEUED = Gauge("plumbline_http_queued", "API requests waiting for a slot")
TRANSFERS = Gauge("plumbline_http_transfers", "Transfers (uploads, downloads, reports) open")

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

    async def acquire(self, waited: float = 0.0) -> bool:
        """True once a slot is held; False when the queue is full or the wait timed out.
        ``waited`` is how long the request was held already (a client that came back
        before its ``Retry-After``): no request waits longer than ``timeout`` in all."""
        if not self.slots.locked():
            await self.slots.acquire()
            return True
        left = self.timeout - waited
        if self.waiting >= self.depth() or left <= 0:
            return False
        self.waiting += 1
        QUEUED.inc()
        try:
            async with asyncio.timeout(left):
                await self.slots.acquire()
            return True
        except TimeoutError:
            return False
        finally:
            self.waiting -= 1
            QUEUED.dec()

    def release(self, seconds: float | None = None) -> None:
        """Frees a slot; ``seconds`` is how long the request's handling took (up to its
        answer's first byte: sending the answer is the network's time), None when it is
        not to count."""
        if seconds is not None:
            self.service += _ALPHA * (seconds - self.service)
        self.slots.release()

    def retry_after(self) -> int:
        """Seconds a refused client should wait: once to twice the time the queue takes to
        drain, at random, so that refused clients come back spread out, and never more
        than the wait limit (``timeout``): a client that comes back early is held until
        then, and that hold counts as waiting. The slots do not stand idle meanwhile:
        clients whose requests complete refill the queue at once; a longer wait only
        means fewer 429s to answer."""
        drain = (self.waiting + self.concurrency) / self.capacity
        return self.bounded(math.ceil(drain * (1 + self._random.random())))

    def bounded(self, seconds: int) -> int:
        """A ``Retry-After`` of ``seconds``, at least 1 and never more than the wait limit."""
        return max(1, min(math.floor(self.timeout), seconds))


class Transfers:
    """At most ``concurrency`` transfers at once, and at most ``per_user`` bodies being
    sent by one user (uploads, reports); a transfer over either is refused at once (429),
    never queued: a queued body would hold its connection for nothing."""

    def __init__(self, concurrency: int, per_user: int, retry_after: int = 5) -> None:
        self.concurrency = concurrency
        self.per_user = per_user
        self.retry_after = retry_after
        self.open = 0
        self.sending: dict[int, int] = {}

    def start(self, user: int | None, body: bool) -> str | None:
        """Starts a transfer (``body``: the client sends one), counted until ``end``; or
        says why it may not start now."""
        if self.open >= self.concurrency:
            return (
                f"The server is running its most transfers at once ({self.concurrency}); "
                "retry after the number of seconds in Retry-After."
            )
        if body and user is not None and self.sending.get(user, 0) >= self.per_user:
            return (
                f"You are sending {self.per_user} files or reports already, the most one "
                "user may send at once; retry once one of them has finished (after the "
                "number of seconds in Retry-After)."
            )
        self.open += 1
        TRANSFERS.inc()
        if body and user is not None:
            self.sending[user] = self.sending.get(user, 0) + 1
        return None

    def end(self, user: int | None, body: bool) -> None:
        """A transfer ``start`` let in has ended."""
        self.open -= 1
        TRANSFERS.dec()
        if body and user is not None:
            left = self.sending.get(user, 0) - 1
            if left > 0:
                self.sending[user] = left
            else:
                self.sending.pop(user, None)
