"""The memory bus of another process, followed over gRPC (``follow://host:port``).

The embedded default's gateway workers (``plumbline.workers``) run in processes of their
own, but their caches must hear identity's events as the gateway beside the services
does. The process that runs the services serves ``plumbline.core.v1.Events`` beside its
memory bus; a worker's bus subscribes through it. Only non-durable subscriptions exist
here (new events, at most once: what caches need), and a worker publishes nothing: the
services' outboxes, in the other process, are where events come from.

Should the stream break, the subscription follows again from the events after the break,
as a NATS subscription does after a reconnect: what it missed, the gateway's periodic
reloads and cache TTLs make good.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

from grpc import aio

from plumbline.api.core.v1 import core_pb2, core_pb2_grpc
from plumbline.common.bus._base import MAX_BATCH, BatchHandler, Bus, Handler, Subscription
from plumbline.common.errors import FailedPrecondition, InvalidArgument, Unavailable
from plumbline.common.events import Event
from plumbline.common.rpc import NO_DEADLINE, Context, connect

log = logging.getLogger(__name__)

#: How long ``subscribe`` waits for the other process to have subscribed.
SUBSCRIBE_TIMEOUT = 30.0


class EventsServicer(core_pb2_grpc.EventsServicer):
    """``plumbline.core.v1.Events``: this process's bus, followed by other processes."""

    def __init__(self, bus: Bus) -> None:
        self.bus = bus

    async def Follow(
        self, request: core_pb2.FollowRequest, context: Context
    ) -> AsyncIterator[core_pb2.FollowedEvent]:
        queue: asyncio.Queue[Event] = asyncio.Queue()

        async def put(event: Event) -> None:
            queue.put_nowait(event)

        subscription = await self.bus.subscribe(request.pattern, put)
        try:
            yield core_pb2.FollowedEvent()  # subscribed: later events reach the follower
            while True:
                event = await queue.get()
                yield core_pb2.FollowedEvent(event=event.to_json())
        finally:
            await subscription.stop()


class _FollowSubscription(Subscription):
    """One ``Follow`` stream, followed again whenever it breaks."""

    def __init__(self, stub: core_pb2_grpc.EventsAsyncStub, pattern: str, handler: Handler) -> None:
        self._stub = stub
        self._pattern = pattern
        self._handler = handler
        self.subscribed = asyncio.Event()
        self._task = asyncio.create_task(self._run(), name=f"follow:{pattern}")

    async def _run(self) -> None:
        backoff = 0.05
        while True:
            try:
                await self._follow()
                backoff = 0.05
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if self.subscribed.is_set():
                    log.warning("following %s broke (%s); following again", self._pattern, exc)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 2.0)

    async def _follow(self) -> None:
        request = core_pb2.FollowRequest(pattern=self._pattern)
        async for message in self._stub.Follow(request, timeout=NO_DEADLINE):
            if not message.event:
                self.subscribed.set()
                continue
            try:
                await self._handler(Event.from_json(message.event))
            except Exception:
                log.exception("cache handler failed on an event of %s", self._pattern)

    async def stop(self) -> None:
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass


class FollowBus(Bus):
    """Follows the bus of the process serving ``Events`` at ``address``."""

    def __init__(self, address: str, prefix: str = "plumbline") -> None:
        self.address = address
        self.prefix = prefix
        self._channel: aio.Channel | None = None
        self._subscriptions: list[_FollowSubscription] = []

    async def connect(self) -> None:
        self._channel = connect("events", self.address)

    @property
    def channel(self) -> aio.Channel:
        """The channel to the followed process (for what else it shares: ``Logins``)."""
        if self._channel is None:
            raise Unavailable("the follow:// bus is not connected")
        return self._channel

    async def close(self) -> None:
        for subscription in self._subscriptions:
            await subscription.stop()
        self._subscriptions.clear()
        if self._channel is not None:
            await self._channel.close()

    async def publish(self, event: Event) -> None:
        raise FailedPrecondition(
            f"a follow:// bus only follows the events of {self.address}; events are "
            "published by the process that runs the services"
        )

    async def subscribe(
        self, pattern: str, handler: Handler, durable: str | None = None
    ) -> Subscription:
        """Returns once the other process has subscribed; Unavailable when it does not
        within ``SUBSCRIBE_TIMEOUT``."""
        if durable is not None:
            raise InvalidArgument(
                f"a follow:// bus has no durable consumers (asked for {durable!r}): "
                "run that consumer where the services run"
            )
        stub = core_pb2_grpc.EventsStub(self.channel)
        subscription = _FollowSubscription(stub, pattern, handler)
        self._subscriptions.append(subscription)
        try:
            async with asyncio.timeout(SUBSCRIBE_TIMEOUT):
                await subscription.subscribed.wait()
        except TimeoutError:
            raise Unavailable(
                f"could not follow the events of {self.address} within {SUBSCRIBE_TIMEOUT:g} s"
            ) from None
        return subscription

    async def subscribe_batch(
        self,
        pattern: str,
        handler: BatchHandler,
        durable: str,
        max_batch: int = MAX_BATCH,
        partition: int | None = None,
    ) -> Subscription:
        """Refused: batches are for durable consumers, which run where the services do."""
        raise InvalidArgument(
            f"a follow:// bus has no durable consumers (asked for {durable!r}): "
            "run that consumer where the services run"
        )
