"""The memory bus of another process, followed over gRPC: what a gateway worker's caches
hear of the events of the process that runs the services."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from plumbline.api.core.v1 import core_pb2_grpc
from plumbline.common.bus import create_bus
from plumbline.common.bus._follow import EventsServicer, FollowBus
from plumbline.common.bus._memory import MemoryBus
from plumbline.common.errors import FailedPrecondition, InvalidArgument
from plumbline.common.events import Event
from plumbline.common.rpc import GrpcServer
from tests.unit.common.bus.test_memory import Recorder
from tests.unit.common.conftest import eventually


@dataclass
class Followed:
    """The services' process (its memory bus, served) and a worker's bus following it."""

    source: MemoryBus
    server: GrpcServer
    follower: FollowBus


@pytest.fixture
async def followed() -> AsyncIterator[Followed]:
    source = MemoryBus("t")
    server = GrpcServer("127.0.0.1", 0)
    server.add(core_pb2_grpc.add_EventsServicer_to_server, EventsServicer(source))
    port = await server.start()
    follower = create_bus(f"follow://127.0.0.1:{port}", "unused", "t")
    assert isinstance(follower, FollowBus)
    await follower.connect()
    try:
        yield Followed(source, server, follower)
    finally:
        await follower.close()
        await server.stop(0)
        await source.close()


async def test_events_published_after_subscribe_reach_the_follower(followed: Followed) -> None:
    before = Event("identity.user.updated", actor=1, object_ids=[7])
    await followed.source.publish(before)
    users, revoked = Recorder(), Recorder()
    await followed.follower.subscribe("t.identity.user.>", users)
    await followed.follower.subscribe("t.identity.apiclient.revoked", revoked)
    # Subscribed on return: nothing published from now on may be missed.
    changed = Event("identity.user.updated", actor=1, object_ids=[8])
    gone = Event("identity.apiclient.revoked", actor=1, payload={"clientId": "c1"})
    other = Event("items.project.created", actor=1)
    for event in (changed, other, gone):
        await followed.source.publish(event)
    await eventually(lambda: users.events == [changed] and revoked.events == [gone])
    assert users.events[0].object_ids == [8]
    assert revoked.events[0].payload == {"clientId": "c1"}


async def test_a_failing_handler_does_not_stop_the_following(followed: Followed) -> None:
    seen: list[str] = []

    async def flaky(event: Event) -> None:
        seen.append(event.id)
        if len(seen) == 1:
            raise RuntimeError("a cache that broke once")

    await followed.follower.subscribe("t.>", flaky)
    first, second = Event("identity.user.created", actor=1), Event("identity.user.x", actor=1)
    await followed.source.publish(first)
    await followed.source.publish(second)
    await eventually(lambda: seen == [first.id, second.id])


async def test_a_stopped_subscription_lets_the_source_drop_its_events(
    followed: Followed,
) -> None:
    recorder = Recorder()
    subscription = await followed.follower.subscribe("t.>", recorder)
    await eventually(lambda: len(followed.source._subscriptions) == 1)
    await subscription.stop()
    # The server's side ends with the stream: the source holds nothing for it.
    await eventually(lambda: not followed.source._subscriptions)


async def test_a_follower_neither_publishes_nor_consumes_durably(followed: Followed) -> None:
    with pytest.raises(FailedPrecondition, match="only follows"):
        await followed.follower.publish(Event("identity.user.created", actor=1))
    with pytest.raises(InvalidArgument, match="no durable consumers"):
        await followed.follower.subscribe("t.>", Recorder(), durable="feed")
    with pytest.raises(InvalidArgument, match="no durable consumers"):
        await followed.follower.subscribe_batch("t.>", _ignore, durable="history")


async def _ignore(events: list[Event]) -> None:
    return None
