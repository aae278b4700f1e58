"""Events split into partitions by project: subjects, patterns, markers, on both buses."""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import partial

import pytest
from sqlalchemy import MetaData

from plumbline.common.bus import Bus
from plumbline.common.bus._base import durable_name, partition_pattern
from plumbline.common.bus._memory import MemoryBus
from plumbline.common.bus._nats import NatsBus
from plumbline.common.db import Database
from plumbline.common.events import Event, position_marker
from plumbline.common.outbox import Outbox, outbox_table
from tests.unit.common.conftest import NATS_URL, consumer_drained, eventually, require, unique


def test_a_pattern_narrows_to_one_partitions_subjects() -> None:
    assert partition_pattern("pl.>", "pl", 3) == "pl.*.*.*.3"
    assert partition_pattern("pl.items.>", "pl", 0) == "pl.items.*.*.0"
    assert partition_pattern("pl.items.item.deleted", "pl", 5) == "pl.items.item.deleted.5"
    assert partition_pattern("a.b.items.>", "a.b", 1) == "a.b.items.*.*.1"


def test_one_partition_keeps_the_durable_consumers_name() -> None:
    assert durable_name("activity", 0, 1) == "activity"
    assert durable_name("activity", None, 8) == "activity"
    assert durable_name("activity", 3, 8) == "activity-p3of8"


def test_an_event_belongs_to_its_projects_partition_else_to_the_first() -> None:
    assert Event("items.item.created", actor=1, project=11, object_ids=[4]).partition(4) == 3
    assert Event("identity.user.created", actor=1, object_ids=[6]).partition(4) == 0
    assert Event("identity.settings.updated", actor=1).partition(4) == 0
    assert Event("items.item.created", actor=1, project=11).partition(1) == 0
    marker = position_marker("items", 40, 2)
    assert marker.is_marker
    assert (marker.source, marker.position) == ("items", 40)
    assert marker.partition(4) == 2
    assert not Event("items.item.created", actor=1).is_marker


def test_subjects_carry_the_partition_only_when_there_are_several() -> None:
    event = Event("items.item.created", actor=1, project=6)
    assert MemoryBus("pl").subject_of(event) == "pl.items.item.created"
    assert MemoryBus("pl", partitions=4).subject_of(event) == "pl.items.item.created.2"
    assert MemoryBus("pl", partitions=4).widened("pl.items.item.deleted") == (
        "pl.items.item.deleted.*"
    )
    assert MemoryBus("pl", partitions=4).widened("pl.items.>") == "pl.items.>"
    assert MemoryBus("pl").widened("pl.items.item.deleted") == "pl.items.item.deleted"


@pytest.fixture(params=["memory", "nats"])
async def bus(request: pytest.FixtureRequest) -> AsyncIterator[Bus]:
    """A bus of each kind with three partitions."""
    if request.param == "memory":
        bus: Bus = MemoryBus(unique("t"), partitions=3)
    else:
        require(NATS_URL, "NATS")
        bus = NatsBus(NATS_URL, unique("T_"), unique("t"), partitions=3)
    await bus.connect()
    try:
        yield bus
    finally:
        if isinstance(bus, NatsBus):
            await bus.delete_stream()
        await bus.close()


def _burst(count: int) -> list[Event]:
    """Changes of projects 1 to 6, each project's numbered in order, and a marker for
    every partition after them."""
    events = [
        Event("items.item.updated", actor=1, project=1 + n % 6, payload={"n": n})
        for n in range(count)
    ]
    return [*events, *(position_marker("items", count, p) for p in range(3))]


async def test_a_partitions_consumer_gets_its_projects_changes_and_markers_in_order(
    bus: Bus,
) -> None:
    published = _burst(30)
    for event in published:
        await bus.publish(event)
    got: dict[int, list[Event]] = {0: [], 1: [], 2: []}
    everything: list[Event] = []
    deleted: list[Event] = []

    for partition in range(3):

        async def into(batch: list[Event], partition: int = partition) -> None:
            got[partition].extend(batch)

        await bus.subscribe_batch(f"{bus.prefix}.>", into, durable="feed", partition=partition)

    async def every(batch: list[Event]) -> None:
        everything.extend(batch)

    async def one(event: Event) -> None:
        deleted.append(event)

    await bus.subscribe_batch(f"{bus.prefix}.items.>", every, durable="all")
    await bus.subscribe(f"{bus.prefix}.items.item.updated", one, durable="exact")
    await eventually(lambda: sum(map(len, got.values())) == len(published))
    await eventually(lambda: len(everything) == 30 and len(deleted) == 30)
    for partition, events in got.items():
        expected = [e for e in published if e.partition(3) == partition]
        assert [e.id for e in events] == [e.id for e in expected]
        assert events[-1].is_marker  # after every change of the partition
    # Who takes every partition gets every change in order, and no marker.
    assert [e.id for e in everything] == [e.id for e in published[:30]]
    assert [e.id for e in deleted] == [e.id for e in published[:30]]
    if isinstance(bus, NatsBus):
        for name in ("feed-p0of3", "feed-p1of3", "feed-p2of3"):
            await eventually(partial(consumer_drained, bus, name))


async def test_the_relay_sends_no_markers_as_the_watermark_names_each_partition(
    tmp_path: object,
) -> None:
    metadata = MetaData()
    table = outbox_table(metadata)
    db = Database(f"sqlite+aiosqlite:///{tmp_path}/outbox.db")
    async with db.engine.begin() as conn:
        await conn.run_sync(metadata.create_all)
    bus = MemoryBus("t", partitions=2)
    outbox = Outbox(db, table, "items")
    got: list[Event] = []

    async def into(batch: list[Event]) -> None:
        got.extend(batch)

    await bus.subscribe_batch("t.>", into, durable="feed", partition=1)
    try:
        # Written before the relay starts: no partition is known yet.
        async with outbox.transaction() as session:
            await outbox.add(session, Event("items.item.created", actor=1, project=3))
        outbox.bus = bus
        assert await outbox.watermarks() == (1, [0, 0])
        await outbox._announce()  # what a start does first: the unsent row gets its own
        assert await outbox.watermarks() == (1, [0, 1])
        async with outbox.transaction() as session:
            await outbox.add_all(
                session, [Event("items.item.created", actor=1, project=p) for p in (1, 2)]
            )
        # Partition 0 holds project 2 (position 3), partition 1 projects 3 and 1.
        assert await outbox.watermarks() == (3, [3, 2])
        assert await outbox.relay_once() == 3
        assert [(e.project, e.position, e.is_marker) for e in got] == [(3, 1, False), (1, 2, False)]
        # A start tells every partition how far the relay had got before it: a row
        # relayed under another partition count may name a partition its event missed.
        await outbox._announce()
        await bus.delivered()
        assert [(e.project, e.position, e.is_marker) for e in got[2:]] == [(None, 3, True)]
    finally:
        await bus.close()
        await db.close()
