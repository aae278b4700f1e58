"""Outbox, relay, buses and the inbox, on real SQLite, PostgreSQL and NATS."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sqlalchemy import MetaData, select

from plumbline.common.bus import Bus
from plumbline.common.bus._memory import MemoryBus
from plumbline.common.bus._nats import NatsBus
from plumbline.common.db import Database
from plumbline.common.events import Event
from plumbline.common.inbox import Inbox, inbox_tables
from plumbline.common.outbox import Outbox, outbox_table
from tests.unit.common.conftest import PrivateNats, eventually


async def _outbox(url: str) -> Outbox:
    metadata = MetaData()
    table = outbox_table(metadata)
    db = Database(url)
    async with db.engine.begin() as conn:
        await conn.run_sync(metadata.create_all)
    return Outbox(db, table, "test")


async def _collect(bus: Bus, durable: str | None = "c") -> list[Event]:
    received: list[Event] = []

    async def handler(event: Event) -> None:
        received.append(event)

    await bus.subscribe(f"{bus.prefix}.>", handler, durable=durable)
    return received


async def _relay_order(url: str, bus: Bus) -> None:
    outbox = await _outbox(url)
    try:
        received = await _collect(bus)
        outbox.start(bus)
        for n in range(5):
            async with outbox.transaction() as session:
                await outbox.add(session, Event("test.thing.created", actor=1, payload={"n": n}))
        with pytest.raises(RuntimeError):
            async with outbox.transaction() as session:
                await outbox.add(session, Event("test.thing.created", actor=1, payload={"n": 99}))
                raise RuntimeError("rolled back")
        await eventually(lambda: len(received) >= 5)
        await asyncio.sleep(0.1)
        assert [e.payload["n"] for e in received] == [0, 1, 2, 3, 4]
        assert [e.position for e in received] == [1, 2, 3, 4, 5]
        assert await outbox.watermark() == 5
        await outbox.stop()
    finally:
        await outbox.db.close()


async def test_relay_in_order_on_sqlite_and_memory(tmp_path: Path) -> None:
    await _relay_order(f"sqlite+aiosqlite:///{tmp_path}/o.db", MemoryBus("t"))


async def test_relay_in_order_on_postgres_and_nats(pg_url: str, nats_bus: NatsBus) -> None:
    await _relay_order(pg_url, nats_bus)


async def test_memory_bus_semantics() -> None:
    bus = MemoryBus("t")
    first = Event("test.a.created", actor=1)
    await bus.publish(first)
    durable = await _collect(bus, durable="d")
    fresh = await _collect(bus, durable=None)
    second = Event("test.a.updated", actor=1)
    await bus.publish(second)
    await bus.publish(second)  # same id: dropped
    await eventually(lambda: len(durable) == 2 and len(fresh) == 1)
    assert [e.id for e in durable] == [first.id, second.id]
    assert [e.id for e in fresh] == [second.id]
    await bus.close()


async def _redelivers(bus: Bus) -> None:
    attempts: list[str] = []

    async def flaky(event: Event) -> None:
        attempts.append(event.id)
        if attempts.count(event.id) == 1 and event.payload.get("fail"):
            raise RuntimeError("first attempt fails")

    await bus.subscribe(f"{bus.prefix}.>", flaky, durable="flaky")
    failing = Event("test.a.created", actor=1, payload={"fail": True})
    await bus.publish(failing)
    await eventually(lambda: attempts.count(failing.id) == 2, timeout=15)


async def test_memory_bus_redelivers_after_a_failure() -> None:
    bus = MemoryBus("t")
    await _redelivers(bus)
    await bus.close()


async def test_nats_redelivers_after_a_failure(nats_bus: NatsBus) -> None:
    await _redelivers(nats_bus)


async def test_nats_drops_a_second_publish_of_the_same_event(nats_bus: NatsBus) -> None:
    event = Event("test.a.created", actor=1)
    await nats_bus.publish(event)
    await nats_bus.publish(event)
    received = await _collect(nats_bus, durable="dedup")
    await eventually(lambda: len(received) == 1)
    await asyncio.sleep(0.3)
    assert len(received) == 1


async def test_event_written_while_nats_is_down_is_published_when_it_is_back(
    tmp_path: Path, private_nats: PrivateNats
) -> None:
    outbox = await _outbox(f"sqlite+aiosqlite:///{tmp_path}/o.db")
    bus = NatsBus(private_nats.url, "OUTAGE", prefix="outage")
    await bus.connect()
    outbox.start(bus)
    try:
        private_nats.stop()
        event = Event("test.thing.created", actor=1, payload={"during": "outage"})
        async with outbox.transaction() as session:
            await outbox.add(session, event)
        await asyncio.sleep(1.0)  # the relay tries and fails meanwhile

        async def unpublished() -> int:
            async with outbox.db.read() as session:
                rows = await session.execute(
                    select(outbox.table.c.id).where(outbox.table.c.published_at.is_(None))
                )
                return len(rows.all())

        assert await unpublished() == 1
        private_nats.start()
        await eventually(lambda: _zero(unpublished), timeout=20)
        received = await _collect(bus, durable="after-outage")
        await eventually(lambda: len(received) >= 1, timeout=20)
        await asyncio.sleep(0.3)
        assert [e.id for e in received] == [event.id]
    finally:
        await outbox.stop(flush_timeout=1)
        await outbox.db.close()
        await bus.close()


async def _zero(count) -> bool:  # type: ignore[no-untyped-def]
    return bool(await count() == 0)


async def test_inbox_records_an_event_once(tmp_path: Path) -> None:
    metadata = MetaData()
    consumed, positions = inbox_tables(metadata)
    db = Database(f"sqlite+aiosqlite:///{tmp_path}/i.db")
    async with db.engine.begin() as conn:
        await conn.run_sync(metadata.create_all)
    inbox = Inbox(db, consumed, positions)
    event = Event("items.project.created", actor=1, position=7)
    async with db.transaction() as session:
        assert await inbox.claim(session, event)
    await inbox.committed(event)
    async with db.transaction() as session:
        assert not await inbox.claim(session, event)
    assert await inbox.position("items") == 7
    assert await inbox.wait_for({"items": 7}, timeout=0.5)
    assert not await inbox.wait_for({"items": 8}, timeout=0.2)
    await db.close()


async def test_a_redelivered_event_is_recorded_once(tmp_path: Path) -> None:
    from plumbline.common.migrations import upgrade
    from plumbline.services.activity.feed import ActivityQuery, Feed
    from plumbline.services.activity.models import consumed_events, consumer_positions
    from tests.unit.services.conftest import ADMIN, acting_as

    url = f"sqlite+aiosqlite:///{tmp_path}/activity.db"
    await upgrade("activity", url)
    db = Database(url)
    feed = Feed(db, Inbox(db, consumed_events, consumer_positions), consistency_wait=1)
    event = Event("items.project.created", actor=1, project=3, object_ids=[3], position=1)
    await feed.record(event)
    await feed.record(event)
    with acting_as(ADMIN):
        rows, total = await feed.list(ActivityQuery(project=3))
    assert total == 1 and rows[0].object_type == "PROJECT"
    await db.close()
