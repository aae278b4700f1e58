"""The in-process bus of the embedded default: a list with cursors.

Events stay in the list until every subscription has passed them, then go: a process that
runs for weeks must not hold every event it ever published (the outbox tables, not this
list, are what survives a restart: ``delivered`` tells the outbox relay when every durable
consumer has handled what it published, and only then does it mark those events sent). A
durable subscriber that joins late sees the events still held.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict

from plumbline.common.bus._base import (
    MAX_BATCH,
    BatchHandler,
    Bus,
    Handler,
    Subscription,
    subject_matches,
    told_failed,
)
from plumbline.common.events import Event
from plumbline.common.steps import Steps

log = logging.getLogger(__name__)

_DEDUP_WINDOW = 100_000

#: Consumed events are dropped in chunks of at least this many, to keep trimming cheap.
_TRIM_CHUNK = 1024


class _MemorySubscription(Subscription):
    """A cursor that hands the matching events after it to a batch handler; a
    one-event subscription is a batch handler of at most one."""

    def __init__(
        self,
        bus: MemoryBus,
        pattern: str,
        handler: BatchHandler,
        start: int,
        max_batch: int,
        durable: bool,
        markers: bool,
    ) -> None:
        self._bus = bus
        self.durable = durable
        self._markers = markers
        self._pattern = pattern
        self._handler = handler
        self._max_batch = max_batch
        self._cursor = start
        self._steps = Steps()
        self._task = asyncio.create_task(self._run(), name=f"memory-consumer:{pattern}")

    async def _run(self) -> None:
        backoff = 0.05
        while not self._steps.stopping:
            if self._cursor >= self._bus.end:
                self.caught_up()
            while self._cursor >= self._bus.end:
                await self._bus.wait_for_more(self._cursor)
            if self._steps.stopping:
                return
            events, after = self._bus.matching(
                self._pattern, self._cursor, self._max_batch, self._markers
            )
            if events:
                self.fetched(events, self._bus.end - after)
                try:
                    async with self._steps.step():
                        await self._handler(events)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    told_failed(exc, f"event {events[0].id} ({len(events)} in the batch)")
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, 2.0)
                    continue
            backoff = 0.05
            self._cursor = after
            if events:
                # Every event after it, matching or not: at most the ones waiting.
                self.handled(events, self._bus.end - after)
            self._bus.advanced()

    @property
    def cursor(self) -> int:
        """The position of the next event this subscription will handle."""
        return self._cursor

    async def stop(self) -> None:
        await self._steps.stop(self._task)
        self._bus.forget(self)


class MemoryBus(Bus):
    """Keeps this process's events in order until consumed; consumers follow with cursors.

    Cursors are absolute positions; ``log`` holds the events from position ``base`` on.
    """

    keeps_events = False

    def __init__(self, prefix: str = "plumbline", partitions: int = 1) -> None:
        self.prefix = prefix
        self.partitions = partitions
        self.log: list[tuple[str, Event]] = []
        self.base = 0
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._grew = asyncio.Condition()
        self._moved = asyncio.Event()
        self._subscriptions: list[_MemorySubscription] = []

    async def connect(self) -> None:
        return None

    async def close(self) -> None:
        for subscription in list(self._subscriptions):
            await subscription.stop()
        self._subscriptions.clear()

    async def publish(self, event: Event) -> None:
        if event.id in self._seen:
            return
        self._seen[event.id] = None
        if len(self._seen) > _DEDUP_WINDOW:
            self._seen.popitem(last=False)
        self.log.append((self.subject_of(event), event))
        async with self._grew:
            self._grew.notify_all()

    @property
    def end(self) -> int:
        """The position the next published event will take."""
        return self.base + len(self.log)

    def at(self, position: int) -> tuple[str, Event]:
        """The (subject, event) at an absolute position still held."""
        return self.log[position - self.base]

    def matching(
        self, pattern: str, start: int, limit: int, markers: bool = False
    ) -> tuple[list[Event], int]:
        """The first ``limit`` events from ``start`` on whose subject matches (position
        markers only where ``markers``), and the position after the last event looked at
        (the events it skipped are passed too)."""
        found: list[Event] = []
        position = start
        while position < self.end and len(found) < limit:
            subject, event = self.at(position)
            if subject_matches(pattern, subject) and (markers or not event.is_marker):
                found.append(event)
            position += 1
        return found, position

    def advanced(self) -> None:
        """A subscription has passed an event: drops what all have passed, wakes
        ``delivered``."""
        self._moved.set()
        self.trim()

    async def delivered(self) -> None:
        """Returns once every durable subscription (of those there are now) has passed
        the events published so far."""
        end = self.end
        while any(s.durable and s.cursor < end for s in self._subscriptions):
            self._moved.clear()
            await self._moved.wait()

    def trim(self) -> None:
        """Drops the events every subscription has passed (in chunks)."""
        if not self._subscriptions:
            return
        consumed = min(s.cursor for s in self._subscriptions)
        if consumed - self.base >= _TRIM_CHUNK:
            del self.log[: consumed - self.base]
            self.base = consumed

    def forget(self, subscription: _MemorySubscription) -> None:
        """A stopped subscription no longer holds events back."""
        if subscription in self._subscriptions:
            self._subscriptions.remove(subscription)
        self._moved.set()

    async def wait_for_more(self, cursor: int) -> None:
        """Returns once an event exists at position ``cursor``."""
        async with self._grew:
            await self._grew.wait_for(lambda: self.end > cursor)

    async def subscribe(
        self, pattern: str, handler: Handler, durable: str | None = None
    ) -> Subscription:
        async def one(events: list[Event]) -> None:
            await handler(events[0])

        pattern = self.widened(pattern)
        if durable is None:
            return self._follow(pattern, one, self.end, 1, durable=False)
        return self._follow(pattern, one, self.base, 1, durable=True)

    async def subscribe_batch(
        self,
        pattern: str,
        handler: BatchHandler,
        durable: str,
        max_batch: int = MAX_BATCH,
        partition: int | None = None,
    ) -> Subscription:
        pattern, markers = self.batch_pattern(pattern, partition)
        return self._follow(pattern, handler, self.base, max_batch, True, markers)

    def _follow(
        self,
        pattern: str,
        handler: BatchHandler,
        start: int,
        max_batch: int,
        durable: bool,
        markers: bool = False,
    ) -> _MemorySubscription:
        subscription = _MemorySubscription(
            self, pattern, handler, start, max_batch, durable, markers
        )
        self._subscriptions.append(subscription)
        return subscription
