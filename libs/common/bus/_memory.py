"""The in-process bus of the embedded default: a list with cursors."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict

from plumbline.common.bus._base import Bus, Handler, Subscription, subject_matches
from plumbline.common.events import Event

log = logging.getLogger(__name__)

_DEDUP_WINDOW = 100_000


class _MemorySubscription(Subscription):
    def __init__(self, bus: MemoryBus, pattern: str, handler: Handler, start: int) -> None:
        self._bus = bus
        self._pattern = pattern
        self._handler = handler
        self._cursor = start
        self._task = asyncio.create_task(self._run(), name=f"memory-consumer:{pattern}")

    async def _run(self) -> None:
        backoff = 0.05
        while True:
            while self._cursor >= len(self._bus.log):
                await self._bus.wait_for_more(self._cursor)
            subject, event = self._bus.log[self._cursor]
            if subject_matches(self._pattern, subject):
                try:
                    await self._handler(event)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("handler failed for event %s; redelivering", event.id)
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, 2.0)
                    continue
            backoff = 0.05
            self._cursor += 1

    async def stop(self) -> None:
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass


class MemoryBus(Bus):
    """Keeps every event of this process in order; consumers follow with cursors."""

    def __init__(self, prefix: str = "plumbline") -> None:
        self.prefix = prefix
        self.log: list[tuple[str, Event]] = []
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._grew = asyncio.Condition()
        self._subscriptions: list[Subscription] = []

    async def connect(self) -> None:
        return None

    async def close(self) -> None:
        for subscription in self._subscriptions:
            await subscription.stop()
        self._subscriptions.clear()

    async def publish(self, event: Event) -> None:
        if event.id in self._seen:
            return
        self._seen[event.id] = None
        if len(self._seen) > _DEDUP_WINDOW:
            self._seen.popitem(last=False)
        self.log.append((event.subject(self.prefix), event))
        async with self._grew:
            self._grew.notify_all()

    async def wait_for_more(self, cursor: int) -> None:
        """Returns once the log is longer than ``cursor``."""
        async with self._grew:
            await self._grew.wait_for(lambda: len(self.log) > cursor)

    async def subscribe(
        self, pattern: str, handler: Handler, durable: str | None = None
    ) -> Subscription:
        start = 0 if durable else len(self.log)
        subscription = _MemorySubscription(self, pattern, handler, start)
        self._subscriptions.append(subscription)
        return subscription
