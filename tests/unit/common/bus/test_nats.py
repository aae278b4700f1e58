"""The JetStream bus against the machine's NATS (own stream and subjects per test)."""

from __future__ import annotations

import asyncio

from nats.js.api import AckPolicy, ConsumerConfig, ConsumerInfo

from plumbline.common.bus._nats import NatsBus
from plumbline.common.events import Event
from tests.unit.common.conftest import consumer_drained, eventually


async def _messages_in_stream(bus: NatsBus) -> int:
    info = await bus._jetstream().stream_info(bus.stream)
    return int(info.state.messages)


async def _consumer(bus: NatsBus, durable: str) -> ConsumerInfo:
    info: ConsumerInfo = await bus._jetstream().consumer_info(bus.stream, durable)
    return info


async def test_connect_declares_the_stream_on_the_prefix(nats_bus: NatsBus) -> None:
    info = await nats_bus._jetstream().stream_info(nats_bus.stream)
    assert info.config.subjects == [f"{nats_bus.prefix}.>"]
    assert info.config.duplicate_window == 120.0
    # Connecting again (a second replica) keeps the same stream.
    again = NatsBus(nats_bus.url, nats_bus.stream, nats_bus.prefix)
    await again.connect()
    await again.close()
    assert (await nats_bus._jetstream().stream_info(nats_bus.stream)).config.subjects == [
        f"{nats_bus.prefix}.>"
    ]


async def test_a_durable_consumer_receives_what_was_published_before(nats_bus: NatsBus) -> None:
    first = Event("items.project.created", actor=1, project=3, object_ids=[3], position=1)
    second = Event("identity.user.created", actor=1, payload={"username": "ann"}, position=2)
    await nats_bus.publish(first)
    await nats_bus.publish(second)
    received: list[Event] = []

    async def handler(event: Event) -> None:
        received.append(event)

    await nats_bus.subscribe(f"{nats_bus.prefix}.>", handler, durable="feed")
    await eventually(lambda: len(received) == 2)
    assert received == [first, second]  # every field survives the wire
    await eventually(lambda: consumer_drained(nats_bus, "feed"))


async def test_a_durable_consumer_only_gets_its_subjects(nats_bus: NatsBus) -> None:
    await nats_bus.publish(Event("identity.user.created", actor=1))
    project = Event("items.project.created", actor=1)
    await nats_bus.publish(project)
    received: list[str] = []

    async def handler(event: Event) -> None:
        received.append(event.id)

    await nats_bus.subscribe(f"{nats_bus.prefix}.items.>", handler, durable="items")
    await eventually(lambda: consumer_drained(nats_bus, "items"))
    assert received == [project.id]


async def test_the_same_event_id_is_stored_once(nats_bus: NatsBus) -> None:
    event = Event("items.project.created", actor=1)
    other = Event("items.project.deleted", actor=1)
    await nats_bus.publish(event)
    await nats_bus.publish(event)
    await nats_bus.publish(other)
    assert await _messages_in_stream(nats_bus) == 2
    received: list[str] = []

    async def handler(e: Event) -> None:
        received.append(e.id)

    await nats_bus.subscribe(f"{nats_bus.prefix}.>", handler, durable="dedup")
    await eventually(lambda: len(received) == 2)
    await eventually(lambda: consumer_drained(nats_bus, "dedup"))
    assert received == [event.id, other.id]


async def test_a_failing_handler_gets_the_event_again(nats_bus: NatsBus) -> None:
    attempts: list[str] = []

    async def flaky(event: Event) -> None:
        attempts.append(event.id)
        if len(attempts) == 1:
            raise RuntimeError("the database is busy")

    event = Event("items.project.created", actor=1)
    await nats_bus.publish(event)
    await nats_bus.subscribe(f"{nats_bus.prefix}.>", flaky, durable="flaky")
    await eventually(lambda: len(attempts) == 2)
    await eventually(lambda: consumer_drained(nats_bus, "flaky"))
    assert attempts == [event.id, event.id]
    info = await _consumer(nats_bus, "flaky")
    assert info.ack_floor is not None
    assert info.ack_floor.stream_seq == 1


async def test_a_message_is_acked_only_after_the_handler_returned(nats_bus: NatsBus) -> None:
    entered = asyncio.Event()
    release = asyncio.Event()

    async def slow(event: Event) -> None:
        entered.set()
        await release.wait()

    await nats_bus.publish(Event("items.project.created", actor=1))
    await nats_bus.subscribe(f"{nats_bus.prefix}.>", slow, durable="slow")
    await asyncio.wait_for(entered.wait(), 10)
    assert nats_bus._nc is not None
    await nats_bus._nc.flush()  # anything the consumer sent so far has reached the server
    info = await _consumer(nats_bus, "slow")
    assert info.num_ack_pending == 1
    assert info.ack_floor is not None
    assert info.ack_floor.stream_seq == 0
    release.set()
    await eventually(lambda: consumer_drained(nats_bus, "slow"))
    info = await _consumer(nats_bus, "slow")
    assert info.ack_floor is not None
    assert info.ack_floor.stream_seq == 1


async def test_a_plain_subscriber_sees_only_new_events(nats_bus: NatsBus) -> None:
    await nats_bus.publish(Event("items.project.created", actor=1))
    received: list[str] = []

    async def handler(event: Event) -> None:
        received.append(event.id)

    await nats_bus.subscribe(f"{nats_bus.prefix}.>", handler)
    new = Event("items.project.updated", actor=1)
    await nats_bus.publish(new)
    await eventually(lambda: len(received) >= 1)
    assert received == [new.id]


async def test_stop_ends_delivery(nats_bus: NatsBus) -> None:
    before: list[str] = []
    after: list[str] = []

    async def handler(event: Event) -> None:
        before.append(event.id)

    async def successor(event: Event) -> None:
        after.append(event.id)

    subscription = await nats_bus.subscribe(f"{nats_bus.prefix}.>", handler, durable="stops")
    first = Event("items.project.created", actor=1)
    await nats_bus.publish(first)
    await eventually(lambda: consumer_drained(nats_bus, "stops"))
    await subscription.stop()
    second = Event("items.project.updated", actor=1)
    await nats_bus.publish(second)
    # The durable's next replica picks up where the stopped one left off.
    await nats_bus.subscribe(f"{nats_bus.prefix}.>", successor, durable="stops")
    await eventually(lambda: len(after) == 1)
    await eventually(lambda: consumer_drained(nats_bus, "stops"))
    assert before == [first.id]
    assert after == [second.id]


async def test_a_stopped_subscription_is_forgotten(nats_bus: NatsBus) -> None:
    """A replica takes and lets go of partitions for as long as it runs: the bus keeps
    only the subscriptions that still run."""

    async def batch(events: list[Event]) -> None:
        pass

    async def one(event: Event) -> None:
        pass

    for round_ in range(3):
        taken = [
            await nats_bus.subscribe_batch(f"{nats_bus.prefix}.>", batch, durable="again"),
            await nats_bus.subscribe(f"{nats_bus.prefix}.>", one, durable="again-one"),
            await nats_bus.subscribe(f"{nats_bus.prefix}.>", one),
        ]
        assert len(nats_bus._subscriptions) == 3, round_
        for subscription in taken:
            await subscription.stop()
        assert nats_bus._subscriptions == []
    await taken[0].stop()  # again: nothing left to forget


async def test_a_batch_consumer_gets_what_waits_in_order_in_one_call(nats_bus: NatsBus) -> None:
    events = [Event("items.item.created", actor=1, payload={"n": n}) for n in range(5)]
    for event in events:
        await nats_bus.publish(event)
    calls: list[list[Event]] = []

    async def handler(batch: list[Event]) -> None:
        calls.append(batch)

    await nats_bus.subscribe_batch(f"{nats_bus.prefix}.>", handler, durable="batch", max_batch=3)
    await eventually(lambda: sum(map(len, calls)) == 5)
    await eventually(lambda: consumer_drained(nats_bus, "batch"))
    assert [e for batch in calls for e in batch] == events
    assert [len(batch) for batch in calls] == [3, 2]


async def test_a_lone_event_reaches_a_batch_consumer_without_waiting_for_more(
    nats_bus: NatsBus,
) -> None:
    calls: list[list[str]] = []
    arrived = asyncio.Event()

    async def handler(batch: list[Event]) -> None:
        calls.append([e.id for e in batch])
        arrived.set()

    await nats_bus.subscribe_batch(f"{nats_bus.prefix}.>", handler, durable="lone")
    for _ in range(2):
        arrived.clear()
        event = Event("items.item.created", actor=1)
        await nats_bus.publish(event)
        began = asyncio.get_running_loop().time()
        await asyncio.wait_for(arrived.wait(), 5)
        # Far less than the fetch's 1 s time-out: the batch did not wait to fill.
        assert asyncio.get_running_loop().time() - began < 0.5
        assert calls[-1] == [event.id]


async def test_a_caught_up_batch_consumer_lingers_so_a_steady_stream_comes_in_batches(
    nats_bus: NatsBus,
) -> None:
    """Events published one every 5 ms reach a caught-up batch consumer several to a call
    (it pauses ``LINGER_SECONDS`` after a short fetch), in order, none missed."""
    calls: list[list[str]] = []

    async def handler(batch: list[Event]) -> None:
        calls.append([e.id for e in batch])

    await nats_bus.subscribe_batch(f"{nats_bus.prefix}.>", handler, durable="steady")
    sent = []
    for _ in range(40):
        event = Event("items.item.created", actor=1)
        await nats_bus.publish(event)
        sent.append(event.id)
        await asyncio.sleep(0.005)
    await eventually(lambda: sum(map(len, calls)) == 40)
    assert [e for batch in calls for e in batch] == sent
    assert len(calls) <= 20, [len(batch) for batch in calls]  # about 40 without the pause


async def test_a_failing_batch_is_redelivered_whole(nats_bus: NatsBus) -> None:
    calls: list[list[str]] = []

    async def flaky(batch: list[Event]) -> None:
        calls.append([e.id for e in batch])
        if len(calls) == 1:
            raise RuntimeError("the database is busy")

    events = [Event("items.item.created", actor=1) for _ in range(3)]
    for event in events:
        await nats_bus.publish(event)
    await nats_bus.subscribe_batch(f"{nats_bus.prefix}.>", flaky, durable="flaky")
    await eventually(lambda: consumer_drained(nats_bus, "flaky"))
    ids = [e.id for e in events]
    assert calls[0] == ids
    assert sorted(i for call in calls[1:] for i in call) == sorted(ids)  # each once more
    info = await _consumer(nats_bus, "flaky")
    assert info.ack_floor is not None
    assert info.ack_floor.stream_seq == 3


async def test_what_a_killed_consumer_held_comes_first_and_at_once(nats_bus: NatsBus) -> None:
    """A consumer killed with events in hand (fetched, not acknowledged): its successor
    gets them at once and before the later ones, not after their ack wait behind them."""
    events = [Event("items.project.updated", actor=1, payload={"n": n}) for n in range(4)]
    for event in events[:3]:
        await nats_bus.publish(event)
    pattern = f"{nats_bus.prefix}.>"
    config = ConsumerConfig(
        durable_name="killed", ack_policy=AckPolicy.EXPLICIT, ack_wait=30.0, filter_subject=pattern
    )
    killed = await nats_bus._jetstream().pull_subscribe(
        pattern, durable="killed", stream=nats_bus.stream, config=config
    )
    first, *_held = await killed.fetch(3, timeout=5)
    await first.ack_sync()
    await nats_bus.publish(events[3])
    received: list[int] = []

    async def successor(event: Event) -> None:
        received.append(event.payload["n"])

    await nats_bus.subscribe(pattern, successor, durable="killed")
    await eventually(lambda: len(received) == 3, timeout=10)
    assert received == [1, 2, 3]
