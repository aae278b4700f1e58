"""JetStream: one stream for every subject under the prefix, dedup by ``Nats-Msg-Id``."""

from __future__ import annotations

import abc
import asyncio
import logging

import nats
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.errors import TimeoutError as NatsTimeout
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy, StreamConfig
from nats.js.errors import NotFoundError

from plumbline.common.bus._base import (
    MAX_BATCH,
    BatchHandler,
    Bus,
    Handler,
    Subscription,
    durable_name,
    told_failed,
)
from plumbline.common.errors import Unavailable
from plumbline.common.events import Event
from plumbline.common.steps import Steps

log = logging.getLogger(__name__)

#: How long a batch consumer that has caught up waits before fetching again (``_Pull``).
LINGER_SECONDS = 0.025


class _Pull(Subscription):
    """A durable pull consumer: fetch, handle, ack after the handler returned.

    With ``linger``, a fetch that found fewer events than ``batch`` is followed by that
    pause before the next one, so that at a steady write rate the next batch holds the
    events of the pause instead of one: each batch has a fixed cost (the fetch, a
    transaction, the inbox's claim), paid once for all of them.
    """

    def __init__(
        self, sub: JetStreamContext.PullSubscription, batch: int, linger: float = 0.0
    ) -> None:
        self._sub = sub
        self._batch = batch
        self._linger = linger
        self._steps = Steps()
        self._task = asyncio.create_task(self._run(), name="nats-consumer")

    async def _run(self) -> None:
        while not self._steps.stopping:
            try:
                # What is waiting, up to ``batch``: a lone message comes back at once
                # instead of waiting for the batch to fill.
                messages = await self._sub.fetch(batch=self._batch, timeout=1.0)
            except (TimeoutError, NatsTimeout):
                self.caught_up()
                continue
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # connection trouble: keep trying
                log.warning("fetch failed (%s); retrying", exc)
                await asyncio.sleep(0.5)
                continue
            await self._deliver(messages)
            if self._linger and len(messages) < self._batch:
                await asyncio.sleep(self._linger)

    @abc.abstractmethod
    async def _deliver(self, messages: list[Msg]) -> None:
        """Hands a fetch's messages to the handler and acknowledges them."""

    async def stop(self) -> None:
        await self._steps.stop(self._task)
        try:
            await self._sub.unsubscribe()
        except Exception:  # the connection may already be gone
            pass
        self.stopped()


class _PullSubscription(_Pull):
    """One event per handler call, each acknowledged on its own."""

    def __init__(self, sub: JetStreamContext.PullSubscription, handler: Handler) -> None:
        self._handler = handler
        super().__init__(sub, batch=64)

    async def _deliver(self, messages: list[Msg]) -> None:
        for message in messages:
            if self._steps.stopping:
                return  # not acknowledged: redelivered to whoever consumes next
            async with self._steps.step():
                await self._handle(message)

    async def _handle(self, message: Msg) -> None:
        event = await _parse(message)
        if event is None:
            return
        if event.is_marker:  # for partitioned consumers only
            await message.ack()
            return
        try:
            await self._handler(event)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            told_failed(exc, f"event {event.id}")
            await message.nak(delay=0.5)
            return
        await message.ack()


class _BatchPullSubscription(_Pull):
    """A fetch's messages in one handler call: all acknowledged after it returned, all
    redelivered when it raised."""

    def __init__(
        self,
        sub: JetStreamContext.PullSubscription,
        handler: BatchHandler,
        batch: int,
        markers: bool,
    ) -> None:
        self._handler = handler
        self._markers = markers
        super().__init__(sub, batch, LINGER_SECONDS)

    async def _deliver(self, messages: list[Msg]) -> None:
        if self._steps.stopping:
            return  # not acknowledged: redelivered to whoever consumes next
        async with self._steps.step():
            handled = []
            for message in messages:
                event = await _parse(message)
                if event is None:
                    continue
                if event.is_marker and not self._markers:
                    await message.ack()
                    continue
                handled.append((message, event))
            if not handled:
                return
            events = [event for _, event in handled]
            self.fetched(events, _pending_after(messages[-1]))
            try:
                await self._handler(events)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                told_failed(exc, f"event {events[0].id} ({len(events)} in the batch)")
                for message, _ in handled:
                    await message.nak(delay=0.5)
                return
            for message, _ in handled:
                await message.ack()
            self.handled(events, _pending_after(messages[-1]))


def _pending_after(message: Msg) -> int:
    """The consumer's events not yet delivered after ``message``, as JetStream told."""
    try:
        return int(message.metadata.num_pending or 0)
    except Exception:  # a message without JetStream metadata
        return 0


async def _parse(message: Msg) -> Event | None:
    """The event a message carries; None (and the message dropped) when it is malformed."""
    try:
        return Event.from_json(message.data)
    except Exception:
        log.exception("dropping malformed event on %s", message.subject)
        await message.term()
        return None


class _CoreSubscription(Subscription):
    """A plain NATS subscription: new events only, for caches."""

    def __init__(self, sub: object) -> None:
        self._sub = sub

    async def stop(self) -> None:
        try:
            await self._sub.unsubscribe()  # type: ignore[attr-defined]
        except Exception:
            pass
        self.stopped()


class NatsBus(Bus):
    """Events on NATS JetStream."""

    def __init__(
        self, url: str, stream: str, prefix: str = "plumbline", partitions: int = 1
    ) -> None:
        self.url = url
        self.stream = stream
        self.prefix = prefix
        self.partitions = partitions
        self._nc: Client | None = None
        self._js: JetStreamContext | None = None
        self._subscriptions: list[Subscription] = []

    async def connect(self) -> None:
        try:
            self._nc = await nats.connect(
                self.url,
                max_reconnect_attempts=-1,
                reconnect_time_wait=0.5,
                connect_timeout=5,
            )
        except Exception as exc:
            raise Unavailable(f"cannot reach NATS at {self.url}: {exc}") from exc
        self._js = self._nc.jetstream(timeout=5)
        subjects = [f"{self.prefix}.>"]
        try:
            await self._js.stream_info(self.stream)
        except NotFoundError:
            await self._js.add_stream(
                StreamConfig(name=self.stream, subjects=subjects, duplicate_window=120.0)
            )

    async def close(self) -> None:
        for subscription in list(self._subscriptions):
            await subscription.stop()
        self._subscriptions.clear()
        if self._nc is not None and not self._nc.is_closed:
            await self._nc.drain()

    def _jetstream(self) -> JetStreamContext:
        if self._js is None:
            raise Unavailable("the NATS bus is not connected")
        return self._js

    async def publish(self, event: Event) -> None:
        await self._jetstream().publish(
            self.subject_of(event),
            event.to_json(),
            stream=self.stream,
            headers={"Nats-Msg-Id": event.id},
            timeout=2.0,
        )

    async def subscribe(
        self, pattern: str, handler: Handler, durable: str | None = None
    ) -> Subscription:
        subscription: Subscription
        pattern = self.widened(pattern)
        if durable is None:
            assert self._nc is not None

            async def callback(message: Msg) -> None:
                try:
                    event = Event.from_json(message.data)
                    if not event.is_marker:
                        await handler(event)
                except Exception:
                    log.exception("cache handler failed on %s", message.subject)

            subscription = _CoreSubscription(await self._nc.subscribe(pattern, cb=callback))
        else:
            sub = await self._pull(pattern, durable)
            subscription = _PullSubscription(sub, handler)
        return self._track(subscription)

    def _track(self, subscription: Subscription) -> Subscription:
        """Keeps ``subscription`` until it stops (a replica takes partitions and lets
        them go for as long as it runs; each take is a new subscription)."""
        self._subscriptions.append(subscription)
        subscription.on_stop = self._subscriptions.remove
        return subscription

    async def subscribe_batch(
        self,
        pattern: str,
        handler: BatchHandler,
        durable: str,
        max_batch: int = MAX_BATCH,
        partition: int | None = None,
    ) -> Subscription:
        pattern, markers = self.batch_pattern(pattern, partition)
        sub = await self._pull(pattern, durable_name(durable, partition, self.partitions))
        return self._track(_BatchPullSubscription(sub, handler, max_batch, markers))

    async def _pull(self, pattern: str, durable: str) -> JetStreamContext.PullSubscription:
        """Binds to (or creates) the durable consumer ``durable`` of ``pattern``."""
        config = ConsumerConfig(
            durable_name=durable,
            ack_policy=AckPolicy.EXPLICIT,
            deliver_policy=DeliverPolicy.ALL,
            ack_wait=30.0,
            filter_subject=pattern,
        )
        await self._resume_in_order(durable, config)
        return await self._jetstream().pull_subscribe(
            pattern, durable=durable, stream=self.stream, config=config
        )

    async def _resume_in_order(self, durable: str, config: ConsumerConfig) -> None:
        """Starts the durable consumer again from its first unacknowledged event when
        events handed out before are still unacknowledged (their consumer was killed,
        or stopped between fetching and handling them).

        JetStream would hand those out again only after their ack wait, after the later
        ones: the history and the feed would miss them meanwhile while their positions
        said they had caught up, and the feed would list them out of order. Events from
        the first unacknowledged one on come again in order; those already handled are
        dropped by the consumer's inbox. A replica consuming at that moment gets its
        events again too (handled once, by the inbox).
        """
        js = self._jetstream()
        try:
            info = await js.consumer_info(self.stream, durable)
        except NotFoundError:
            return
        if not info.num_ack_pending or info.ack_floor is None:
            return
        start = info.ack_floor.stream_seq + 1
        log.info(
            "%s: %d events unacknowledged; resuming at %d", durable, info.num_ack_pending, start
        )
        await js.delete_consumer(self.stream, durable)
        config.deliver_policy = DeliverPolicy.BY_START_SEQUENCE
        config.opt_start_seq = start
        await js.add_consumer(self.stream, config)

    async def delete_stream(self) -> None:
        """Removes the stream (tests use unique stream names and drop them)."""
        await self._jetstream().delete_stream(self.stream)
