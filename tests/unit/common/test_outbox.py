"""The transactional outbox and its relay, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

import pytest
from sqlalchemy import MetaData, select

from plumbline.common.bus import Bus
from plumbline.common.bus._memory import MemoryBus
from plumbline.common.bus._nats import NatsBus
from plumbline.common.db import Database
from plumbline.common.events import Event
from plumbline.common.outbox import Outbox, outbox_table
from tests.unit.common.conftest import PrivateNats, consumer_drained, eventually


async def make_outbox(url: str) -> Outbox:
    """An outbox table in a fresh database."""
    metadata = MetaData()
    table = outbox_table(metadata)
    db = Database(url)
    async with db.engine.begin() as conn:
        await conn.run_sync(metadata.create_all)
    return Outbox(db, table, "test")


@pytest.fixture
async def outbox(db_url: str) -> AsyncIterator[Outbox]:
    box = await make_outbox(db_url)
    try:
        yield box
    finally:
        await box.stop(flush_timeout=1)
        await box.db.close()


class OutboxRow(NamedTuple):
    id: int
    event_id: str
    published_at: datetime | None


async def rows(outbox: Outbox) -> list[OutboxRow]:
    """(id, event_id, published_at) of every outbox row, by id."""
    table = outbox.table
    async with outbox.db.read() as session:
        result = await session.execute(
            select(table.c.id, table.c.event_id, table.c.published_at).order_by(table.c.id)
        )
        return [OutboxRow(*row) for row in result]


async def collect(bus: Bus) -> list[Event]:
    """What a durable consumer of every subject receives, in order."""
    received: list[Event] = []

    async def handler(event: Event) -> None:
        received.append(event)

    await bus.subscribe(f"{bus.prefix}.>", handler, durable="collector")
    return received


async def write(outbox: Outbox, *names: str) -> list[Event]:
    """One committed transaction holding one event per name."""
    events = [Event("items.project.created", actor=1, payload={"name": n}) for n in names]
    async with outbox.transaction() as session:
        for event in events:
            await outbox.add(session, event)
    return events


async def _add_then_roll_back(outbox: Outbox) -> None:
    async with outbox.transaction() as session:
        await outbox.add(session, Event("items.project.created", actor=1))
        raise RuntimeError("rolled back")


async def test_events_are_relayed_in_order_with_their_outbox_ids(outbox: Outbox) -> None:
    bus = MemoryBus("t")
    received = await collect(bus)
    outbox.start(bus)
    await write(outbox, "a")
    with pytest.raises(RuntimeError, match="rolled back"):
        await _add_then_roll_back(outbox)
    await write(outbox, "b", "c")
    await write(outbox, "d")
    await eventually(lambda: len(received) == 4)
    # The relay marks a row published after the bus has it; a subscriber can be faster.
    await eventually(lambda: _all_published(outbox))
    stored = await rows(outbox)
    assert [e.payload["name"] for e in received] == ["a", "b", "c", "d"]
    assert [e.id for e in received] == [r.event_id for r in stored]
    assert [e.position for e in received] == [r.id for r in stored]
    assert all(r.published_at is not None for r in stored)
    await bus.close()


async def test_a_rolled_back_transaction_publishes_nothing(outbox: Outbox) -> None:
    bus = MemoryBus("t")
    outbox.start(bus)
    with pytest.raises(RuntimeError, match="rolled back"):
        await _add_then_roll_back(outbox)
    assert await rows(outbox) == []
    [kept] = await write(outbox, "kept")
    await eventually(lambda: len(bus.log) == 1)
    await outbox.stop()
    assert [e.id for _, e in bus.log] == [kept.id]


async def test_event_fields_survive_the_outbox(outbox: Outbox) -> None:
    bus = MemoryBus("t")
    event = Event(
        "items.item.updated",
        actor=7,
        project=3,
        object_ids=[10, 11],
        version=2,
        payload={"name": "Ünïcode", "fields": {"n": 1.5}},
        traceparent="00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    )
    async with outbox.transaction() as session:
        await outbox.add(session, event)
    outbox.start(bus)
    await eventually(lambda: len(bus.log) == 1)
    [(subject, relayed)] = bus.log
    assert subject == "t.items.item.updated"
    [row] = await rows(outbox)
    assert relayed == Event(**{**event.__dict__, "position": row.id})


async def test_watermark_is_the_newest_committed_id(outbox: Outbox) -> None:
    assert await outbox.watermark() == 0
    await write(outbox, "a", "b")
    first = await outbox.watermark()
    assert first == max(r.id for r in await rows(outbox))
    with pytest.raises(RuntimeError, match="rolled back"):
        await _add_then_roll_back(outbox)
    assert await outbox.watermark() == first
    await write(outbox, "c")
    assert await outbox.watermark() > first
    assert await outbox.watermark() == max(r.id for r in await rows(outbox))


async def test_watermarks_name_each_partitions_newest_event(outbox: Outbox) -> None:
    assert await outbox.watermarks() == (0, [])  # no bus yet: one partition
    outbox.bus = MemoryBus("t", partitions=4)
    assert await outbox.watermarks() == (0, [0, 0, 0, 0])
    async with outbox.transaction() as session:
        await outbox.add_all(
            session,
            [Event("items.item.created", actor=1, project=p) for p in (5, 2, 9, 6)]
            + [Event("identity.user.created", actor=1)],
        )
    ids = [r.id for r in await rows(outbox)]
    # Projects 5 and 9 are partition 1, 2 and 6 partition 2, the organisation's 0;
    # partition 3 has none and is waited for by no reader.
    assert await outbox.watermarks() == (ids[4], [ids[4], ids[2], ids[3], 0])
    await outbox.bus.close()


async def test_relay_once_without_a_running_relay(outbox: Outbox) -> None:
    bus = MemoryBus("t")
    outbox.bus = bus
    assert await outbox.relay_once() == 0
    await write(outbox, "a", "b", "c")
    assert await outbox.relay_once(batch=2) == 2
    assert await outbox.relay_once(batch=2) == 1
    assert await outbox.relay_once() == 0
    assert [e.payload["name"] for _, e in bus.log] == ["a", "b", "c"]


async def test_stop_flushes_what_is_pending(outbox: Outbox) -> None:
    bus = MemoryBus("t")
    outbox.start(bus)
    await write(outbox, *"abcde")
    await outbox.stop()
    assert [e.payload["name"] for _, e in bus.log] == list("abcde")
    assert all(r.published_at is not None for r in await rows(outbox))


async def test_on_the_memory_bus_an_event_is_sent_once_every_consumer_has_it(
    outbox: Outbox,
) -> None:
    """The memory bus holds events only in this process: the relay marks a row sent once
    every durable consumer has handled it, so that a crash before then (kill -9) leaves
    it to be sent again at the next start, not lost. Plain subscribers do not count."""
    bus = MemoryBus("t")
    gate = asyncio.Event()
    handled: list[str] = []

    async def slow(event: Event) -> None:
        await gate.wait()
        handled.append(event.payload["name"])

    cache_gate = asyncio.Event()

    async def stuck(event: Event) -> None:
        await cache_gate.wait()

    await bus.subscribe(f"{bus.prefix}.>", slow, durable="slow")
    await bus.subscribe(f"{bus.prefix}.>", stuck)  # a cache's: it does not count
    outbox.start(bus)
    await write(outbox, "a", "b")
    await eventually(lambda: len(bus.log) == 2)
    assert [r.published_at for r in await rows(outbox)] == [None, None]
    gate.set()
    await eventually(lambda: _all_published(outbox))
    assert handled == ["a", "b"]
    cache_gate.set()
    await bus.close()


class FailingBus(MemoryBus):
    """A memory bus that refuses the first ``failures`` publishes."""

    def __init__(self, failures: int) -> None:
        super().__init__("t")
        self.failures = failures

    async def publish(self, event: Event) -> None:
        if self.failures > 0:
            self.failures -= 1
            raise ConnectionError("the bus is down")
        await super().publish(event)


async def test_a_failed_publish_is_retried_and_order_kept(outbox: Outbox) -> None:
    bus = FailingBus(failures=3)
    outbox.start(bus)
    await write(outbox, "a", "b")
    await write(outbox, "c")
    await eventually(lambda: len(bus.log) == 3)
    assert [e.payload["name"] for _, e in bus.log] == ["a", "b", "c"]
    assert bus.failures == 0
    await eventually(lambda: _all_published(outbox))


class FailsOnceOn(MemoryBus):
    """A memory bus that refuses one event once, after taking the ones before it."""

    def __init__(self, name: str) -> None:
        super().__init__("t")
        self.name = name
        self.attempts: list[str] = []

    async def publish(self, event: Event) -> None:
        self.attempts.append(event.payload["name"])
        if event.payload["name"] == self.name and self.attempts.count(self.name) == 1:
            raise ConnectionError("the bus went away mid-batch")
        await super().publish(event)


async def test_a_batch_that_fails_half_way_is_sent_again_without_duplicates(
    outbox: Outbox,
) -> None:
    bus = FailsOnceOn("b")
    received = await collect(bus)
    outbox.start(bus)
    await write(outbox, "a", "b", "c")
    await eventually(lambda: len(received) == 3)
    await eventually(lambda: _all_published(outbox))
    assert bus.attempts == ["a", "b", "a", "b", "c"]  # the whole batch again
    assert [e.payload["name"] for e in received] == ["a", "b", "c"]  # "a" once


async def _all_published(outbox: Outbox) -> bool:
    return all(r.published_at is not None for r in await rows(outbox))


class SlowRelayOutbox(Outbox):
    """Commits an event while the relay is between its read and its return."""

    sneaked: Event | None = None

    async def relay_once(self, batch: int = 200) -> int:
        sent = await super().relay_once(batch)
        if self.sneaked is None:
            [self.sneaked] = await write(self, "sneaked")
        return sent


async def test_a_commit_during_a_relay_pass_is_not_left_waiting(tmp_path: Path) -> None:
    plain = await make_outbox(f"sqlite+aiosqlite:///{tmp_path}/o.db")
    outbox = SlowRelayOutbox(plain.db, plain.table, "test")
    bus = MemoryBus("t")
    started = time.monotonic()
    outbox.start(bus)
    try:
        await eventually(lambda: len(bus.log) == 1, timeout=5)
        # The commit woke the relay: it must not sit out its one-second idle wait.
        assert time.monotonic() - started < 0.5
    finally:
        await outbox.stop(flush_timeout=1)
        await outbox.db.close()


async def test_relay_on_postgres_to_nats(pg_url: str, nats_bus: NatsBus) -> None:
    outbox = await make_outbox(pg_url)
    received: list[Event] = []

    async def handler(event: Event) -> None:
        received.append(event)

    await nats_bus.subscribe(f"{nats_bus.prefix}.>", handler, durable="relayed")
    outbox.start(nats_bus)
    try:
        await write(outbox, "a", "b")
        await write(outbox, "c")
        await eventually(lambda: len(received) == 3)
        stored = await rows(outbox)
        assert [e.payload["name"] for e in received] == ["a", "b", "c"]
        assert [e.position for e in received] == [r.id for r in stored]
    finally:
        await outbox.stop(flush_timeout=1)
        await outbox.db.close()


class CountingNatsBus(NatsBus):
    """Counts publishes that failed."""

    failed = 0

    async def publish(self, event: Event) -> None:
        try:
            await super().publish(event)
        except Exception:
            self.failed += 1
            raise


async def test_an_event_written_while_nats_is_unreachable_is_published_once_it_is_back(
    tmp_path: Path, private_nats: PrivateNats
) -> None:
    outbox = await make_outbox(f"sqlite+aiosqlite:///{tmp_path}/outage.db")
    bus = CountingNatsBus(private_nats.url, "OUTAGE", prefix="outage")
    await bus.connect()
    outbox.start(bus)
    try:
        private_nats.stop()
        [event] = await write(outbox, "during the outage")

        # The relay tries, fails and keeps the row.
        await eventually(lambda: bus.failed >= 1, timeout=15)
        [row] = await rows(outbox)
        assert row.event_id == event.id
        assert row.published_at is None

        private_nats.start()
        await eventually(lambda: _all_published(outbox), timeout=20)

        received: list[Event] = []

        async def handler(e: Event) -> None:
            received.append(e)

        await bus.subscribe("outage.>", handler, durable="after-outage")
        await eventually(lambda: len(received) == 1, timeout=10)
        await eventually(lambda: consumer_drained(bus, "after-outage"), timeout=10)
        info = await bus._jetstream().stream_info("OUTAGE")
        assert info.state.messages == 1  # retries and buffered copies were deduplicated
        assert [e.id for e in received] == [event.id]
        assert received[0].position == row.id
    finally:
        with contextlib.suppress(Exception):
            await outbox.stop(flush_timeout=1)
        await outbox.db.close()
        with contextlib.suppress(Exception):
            await bus.close()
        private_nats.kill()
