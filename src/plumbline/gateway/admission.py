"""Adaptive admission of API requests: a concurrency limit that follows measured latency,
a short wait queue bounded by time, and a ``Retry-After`` from the measured drain rate.

- ``GradientLimit`` is the number of requests allowed in flight, moved after each one
  completes, after Netflix's concurrency-limits ``Gradient2``: while the recent handling
  time stays near its long-run average and within the latency ``target``, the limit grows
  (by about its square root); when it rises past ``tolerance`` times that average, or
  past the target, the limit shrinks in proportion. The average alone would drift: under
  a flood that lasts, the raised latency becomes the average and the limit climbs to its
  ceiling (and every gateway process behind one set of services would push the others'
  latency up in turn). The target is the absolute bound that holds however long the flood
  lasts and however many processes share the services: each shrinks while the latency
  they all see is over it.
- ``DrainRate`` is how many requests a second complete, measured over windows of busy
  time.
- ``Admission`` lets a request in while fewer than the limit are in flight; else it may
  wait, first come first served, if the queue is no deeper than the drain rate serves
  within ``queue_delay`` and its oldest waiter has not waited longer than that (CoDel's
  signal: a queue that stands is not draining); else it is refused at once. A waiter is
  refused when its wait reaches the wait limit (``timeout``). A refused client is given
  its own place in a schedule kept at the drain rate, its ``Retry-After``: refused
  clients come back spread out, about as fast as the server serves them.

Waiting counts only for the queue and the hold (``waited``); the latency the limit
follows is a request's handling, from admission to its answer's first byte.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import deque
from collections.abc import Callable

from prometheus_client import Gauge

#: Seconds, monotonic: the time the parts read (tests give a fake one).
Clock = Callable[[], float]

#: The limit never goes below this (or the ceiling, if lower): the concurrency of an
#: ordinary busy load. Below it, a machine whose handling of writes is slower than the
#: latency target (a 2-core machine at 32 writers: 0.3 to 0.4 s a write, queueing in the
#: services included) refused 30 to 60 % of that ordinary load with 429s; at 32 in flight
#: the latency stays what the machine's throughput makes it, 32 / req/s.
FLOOR = 32

QUEUED = Gauge("plumbline_http_queued", "API requests waiting for a slot")
LIMIT = Gauge("plumbline_http_limit", "API requests allowed in flight (the adaptive limit)")


class GradientLimit:
    """Requests allowed in flight, between ``minimum`` and ``maximum``, following the
    handling times ``sample`` is given (seconds) to keep them within ``tolerance`` times
    their long-run average and within ``target``."""

    #: Samples the short and the long averages of handling time weigh (their windows).
    SHORT = 10
    LONG = 600

    def __init__(
        self,
        maximum: int,
        target: float = 0.25,
        minimum: int = 4,
        initial: int = 20,
        tolerance: float = 2.0,
        smoothing: float = 0.2,
    ) -> None:
        self.maximum = max(1, maximum)
        self.target = target
        self.minimum = max(1, min(minimum, self.maximum))
        self.limit = float(min(max(initial, self.minimum), self.maximum))
        self.tolerance = tolerance
        self.smoothing = smoothing
        self.short = 0.0
        self.long = 0.0
        self.samples = 0

    def __int__(self) -> int:
        return int(self.limit)

    def sample(self, seconds: float, in_flight: int) -> None:
        """Moves the limit after a request that took ``seconds`` with ``in_flight``
        requests running (itself included)."""
        seconds = max(seconds, 1e-6)
        self.samples += 1
        if self.samples == 1:
            self.short = self.long = seconds
        self.short += (seconds - self.short) * min(1.0, 2 / (self.SHORT + 1))
        # The long average warms up as a plain mean, then moves slowly.
        self.long += (seconds - self.long) / min(self.samples, self.LONG)
        if self.long > 2 * self.short:
            # Latency fell back well below its average (the load went): let the average
            # come down faster than its window, or the limit would overshoot for long.
            self.long *= 0.95
        if in_flight < self.limit / 2:
            return  # the limit was not what held the requests back: it says nothing
        gradient = self.tolerance * self.long / self.short
        gradient = max(0.5, min(1.0, gradient, self.target / self.short))
        grown = self.limit * gradient + math.sqrt(self.limit)
        self.limit += (grown - self.limit) * self.smoothing
        self.limit = min(max(self.limit, self.minimum), self.maximum)


class DrainRate:
    """Requests a second that complete: counted over windows of at least ``window``
    seconds of busy time (a gap longer than a window between two completions is idle
    time, no drain: the window starts again), averaged over the last few windows."""

    def __init__(self, clock: Clock, window: float = 0.5) -> None:
        self.clock = clock
        self.window = window
        self.rate = 0.0
        self._count = 0
        self._since = 0.0
        self._last = -math.inf

    def completed(self) -> None:
        now = self.clock()
        if now - self._last > self.window:
            self._count, self._since = 0, now
        self._last = now
        self._count += 1
        elapsed = now - self._since
        if elapsed >= self.window:
            measured = self._count / elapsed
            self.rate = measured if self.rate == 0 else (self.rate + measured) / 2
            self._count, self._since = 0, now

    def per_second(self) -> float:
        """The measured rate; before the first window ends, what has completed so far
        (at least one a second: an unmeasured server is not assumed to drain nothing)."""
        if self.rate:
            return self.rate
        elapsed = self.clock() - self._since
        return max(1.0, self._count / elapsed if elapsed > 0 else 0.0)


class Admission:
    """The front door's admission: an adaptive limit of requests in flight (at most
    ``concurrency``, their handling within ``latency``), a queue that drains within
    ``queue_delay`` (and never more than ``queue`` waiting), the wait limit ``timeout``."""

    def __init__(
        self,
        concurrency: int,
        queue: int,
        timeout: float,
        queue_delay: float = 0.1,
        latency: float = 0.25,
        clock: Clock = time.monotonic,
    ) -> None:
        self.limit = GradientLimit(concurrency, latency, minimum=min(FLOOR, concurrency))
        self.queue = queue
        self.timeout = timeout
        self.queue_delay = queue_delay
        self.clock = clock
        self.drain = DrainRate(clock)
        self.in_flight = 0
        self._waiters: deque[tuple[float, asyncio.Future[None]]] = deque()
        # Until when returning clients have been given their times.
        self._booked = 0.0
        LIMIT.set(int(self.limit))

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    def depth(self) -> int:
        """How many may wait: what the measured drain rate serves within ``queue_delay``
        (at least one), and at most ``queue``."""
        return min(self.queue, max(1, int(self.drain.per_second() * self.queue_delay)))

    def full(self) -> bool:
        """Whether a new request would be refused now (checked before anything else)."""
        if self.in_flight < int(self.limit) and not self._waiters:
            return False
        if self.waiting >= self.depth():
            return True
        return bool(self._waiters) and self.clock() - self._waiters[0][0] > self.queue_delay

    async def acquire(self, waited: float = 0.0) -> bool:
        """True once the request may run; False when it is refused: the queue is full or
        standing, or its wait reached the wait limit. ``waited`` is how long the request
        was held already (a client that came back before its ``Retry-After``): no
        request waits longer than ``timeout`` in all."""
        if self.in_flight < int(self.limit) and not self._waiters:
            self.in_flight += 1
            return True
        left = self.timeout - waited
        if left <= 0 or self.full():
            return False
        entry = (self.clock(), asyncio.get_running_loop().create_future())
        self._waiters.append(entry)
        QUEUED.inc()
        granted = False
        try:
            async with asyncio.timeout(left):
                await entry[1]
            granted = True
        except TimeoutError:
            pass
        finally:
            QUEUED.dec()
            if not granted:
                self._give_up(entry)
        return granted

    def _give_up(self, entry: tuple[float, asyncio.Future[None]]) -> None:
        """A waiter that leaves without running (its wait limit, or its request cancelled)."""
        future = entry[1]
        if future.done() and not future.cancelled():
            # It was let in just as it left: the place goes to the next waiter.
            self.in_flight -= 1
            self._hand_on()
            return
        future.cancel()
        with contextlib.suppress(ValueError):
            self._waiters.remove(entry)

    def release(self, seconds: float | None = None) -> None:
        """A request ``acquire`` let in has completed; ``seconds`` is its handling time
        (up to its answer's first byte), None when it is not to count."""
        if seconds is not None:
            self.limit.sample(seconds, self.in_flight)
            LIMIT.set(int(self.limit))
        self.drain.completed()
        self.in_flight -= 1
        self._hand_on()

    def _hand_on(self) -> None:
        """Lets waiters in, oldest first, while the limit allows."""
        while self._waiters and self.in_flight < int(self.limit):
            _, future = self._waiters.popleft()
            if not future.done():
                future.set_result(None)
                self.in_flight += 1

    def retry_after(self) -> int:
        """Seconds a refused client should wait: the time the requests ahead of it (in
        flight, waiting, and the refused clients told to come back before it) take at the
        measured drain rate; each refusal books the next place. Never more than the wait
        limit: a client that comes back early is held until then, and that hold counts
        as waiting."""
        now = self.clock()
        rate = self.drain.per_second()
        ahead = now + (self.in_flight + self.waiting) / rate
        at = max(ahead, self._booked)
        self._booked = min(at + 1 / rate, now + self.timeout)
        return self.bounded(math.ceil(at - now))

    def bounded(self, seconds: int) -> int:
        """A ``Retry-After`` of ``seconds``, at least 1 and never more than the wait limit."""
        return max(1, min(math.floor(self.timeout), seconds))
