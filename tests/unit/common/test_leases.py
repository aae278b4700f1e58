"""Replicas of a consumer share its partitions, one holder each, and consume a burst
exactly once and in order per project while they join and leave (NATS JetStream)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from prometheus_client import REGISTRY
from sqlalchemy import BigInteger, Column, Integer, MetaData, String, Table, select

from plumbline.common.bus._nats import NatsBus
from plumbline.common.db import Database
from plumbline.common.events import Event, position_marker
from plumbline.common.inbox import Inbox, inbox_tables
from plumbline.common.leases import Consumer, LeaseLost, Leases, lease_tables
from tests.unit.common.conftest import NATS_URL, require, unique

PARTITIONS = 4

metadata = MetaData()
consumed, positions = inbox_tables(metadata)
leases_table, members_table = lease_tables(metadata)
#: What the consumer applies: each change, in the order it was applied.
applied = Table(
    "applied",
    metadata,
    Column("seq", Integer, primary_key=True, autoincrement=True),
    Column("event_id", String(36), nullable=False),
    Column("project", BigInteger, nullable=False),
    Column("n", Integer, nullable=False),
    Column("holder", String(96), nullable=False),
)


@dataclass
class Replica:
    """One replica of the consumer: its database handle, leases and inbox."""

    db: Database
    leases: Leases
    inbox: Inbox

    async def handle(self, events: list[Event]) -> None:
        async with self.db.transaction() as session:
            claimed = await self.inbox.claim_many(session, events)
            rows = [
                {
                    "event_id": e.id,
                    "project": e.project,
                    "n": e.payload["n"],
                    "holder": self.leases.holder,
                }
                for e in claimed
            ]
            if rows:
                await session.execute(applied.insert(), rows)
        await self.inbox.committed_many(events)


@pytest.fixture
async def nats_bus() -> AsyncIterator[NatsBus]:
    require(NATS_URL, "NATS")
    bus = NatsBus(NATS_URL, unique("T_"), unique("t"), partitions=PARTITIONS)
    await bus.connect()
    try:
        yield bus
    finally:
        await bus.delete_stream()
        await bus.close()


@pytest.fixture
async def url(pg_url: str) -> str:
    db = Database(pg_url)
    async with db.engine.begin() as conn:
        await conn.run_sync(metadata.create_all)
    await db.close()
    return pg_url


async def replica(
    url: str, bus: NatsBus, name: str, ttl: float = 30.0, hold: asyncio.Event | None = None
) -> Replica:
    """A replica that has joined (its first balance done); the test balances it on. With
    ``hold``, its handler waits for that to be set."""
    db = Database(url)
    leases = Leases(db, (leases_table, members_table), "feed", PARTITIONS, ttl, holder=name)
    made = Replica(db, leases, Inbox(db, consumed, positions, leases))

    async def handle(events: list[Event]) -> None:
        if hold is not None:
            await hold.wait()
        await made.handle(events)

    await leases.start(bus, [Consumer(f"{bus.prefix}.>", "feed", handle)])
    return made


async def stop(*replicas: Replica) -> None:
    for r in replicas:
        await r.leases.stop()
        await r.db.close()


async def holders(url: str) -> dict[int, str]:
    db = Database(url)
    try:
        async with db.read() as session:
            rows = await session.execute(select(leases_table.c.partition, leases_table.c.holder))
            return {int(p): h for p, h in rows}
    finally:
        await db.close()


async def test_replicas_take_fair_shares_and_take_over_from_one_that_stops(
    url: str, nats_bus: NatsBus
) -> None:
    a = await replica(url, nats_bus, "a")
    assert sorted(a.leases.held) == [0, 1, 2, 3]  # alone: every partition
    b = await replica(url, nats_bus, "b")
    assert b.leases.held == {}  # all held by a, whose leases have not expired
    await a.leases.balance()  # two members now: a lets two go
    await b.leases.balance()
    assert len(a.leases.held) == len(b.leases.held) == 2
    assert set(a.leases.held) | set(b.leases.held) == {0, 1, 2, 3}
    assert sorted(await holders(url)) == [0, 1, 2, 3]
    await stop(a)  # lets its partitions go at once
    await b.leases.balance()
    assert sorted(b.leases.held) == [0, 1, 2, 3]
    assert set((await holders(url)).values()) == {"b"}
    await stop(b)
    assert await holders(url) == {}


async def test_a_replica_that_died_loses_its_partitions_when_its_leases_expire(
    url: str, nats_bus: NatsBus
) -> None:
    a = await replica(url, nats_bus, "a", ttl=2.5)
    b = await replica(url, nats_bus, "b", ttl=2.5)
    # a dies: its loop and subscriptions end, and nothing lets its leases go.
    assert a.leases._task is not None
    a.leases._task.cancel()
    for partition in list(a.leases.held):
        await a.leases._unsubscribe(partition)
    await b.leases.balance()
    assert b.leases.held == {}  # not before they expire
    await asyncio.sleep(2.6)
    await b.leases.balance()
    assert sorted(b.leases.held) == [0, 1, 2, 3]
    # a's late transaction commits nothing: the lease check refuses it.
    a.leases.held[0] = float("inf")
    with pytest.raises(LeaseLost):
        async with a.db.transaction() as session:
            await a.leases.hold(session, 0)
    with pytest.raises(LeaseLost):  # and one it never held, without asking
        async with a.db.transaction() as session:
            await a.leases.hold(session, 1)
    # The inbox's claim checks the lease in its own statement (PostgreSQL): a's batch
    # of a partition b holds now records nothing, consumed or position.
    late = next(
        Event("items.item.created", actor=1, project=p, position=99, payload={"n": 1})
        for p in range(100)
        if Event("x", actor=1, project=p).partition(PARTITIONS) == 0
    )
    with pytest.raises(LeaseLost, match="taken over"):
        async with a.db.transaction() as session:
            await a.inbox.claim_many(session, [late])
    async with b.db.read() as session:
        found = select(consumed.c.event_id).where(consumed.c.event_id == late.id)
        assert (await session.execute(found)).first() is None
    assert await b.inbox.position("items/0") == 0
    await stop(a, b)


async def test_two_replicas_consume_a_burst_once_and_in_order_per_project(
    url: str, nats_bus: NatsBus
) -> None:
    """A burst over eight projects while a second replica joins, the partitions are
    rebalanced, and the first replica stops halfway."""
    a = await replica(url, nats_bus, "a")
    published: list[Event] = []

    async def publish(count: int) -> None:
        for _ in range(count):
            n = len(published)
            event = Event("items.item.updated", actor=1, project=n % 8 + 1, payload={"n": n})
            published.append(event)
            await nats_bus.publish(event)
        for partition in range(PARTITIONS):
            await nats_bus.publish(position_marker("items", len(published), partition))

    await publish(150)
    b = await replica(url, nats_bus, "b")
    publishing = asyncio.create_task(publish(150))
    await a.leases.balance()
    await b.leases.balance()
    await publishing
    assert len(a.leases.held) == len(b.leases.held) == 2
    await publish(100)
    await stop(a)
    await b.leases.balance()
    await publish(100)
    assert await b.inbox.wait_for({"items": len(published)}, timeout=20)
    db = Database(url)
    try:
        async with db.read() as session:
            rows = (await session.execute(select(applied).order_by(applied.c.seq))).all()
    finally:
        await db.close()
    assert sorted(r.event_id for r in rows) == sorted(e.id for e in published)  # once each
    for project in range(1, 9):
        ns = [r.n for r in rows if r.project == project]
        assert ns == sorted(ns), f"project {project} applied out of order"
    assert {r.holder for r in rows} == {"a", "b"}
    await stop(b)


async def test_each_partition_says_how_far_behind_it_is_to_every_replica(
    url: str, nats_bus: NatsBus
) -> None:
    """While a replica's handler is held up, its partitions report events waiting; any
    replica answers for them from what was reported at the last renewal."""
    release = asyncio.Event()
    a = await replica(url, nats_bus, "a", hold=release)
    for n in range(120):
        await nats_bus.publish(
            Event("items.item.updated", actor=1, project=n % 8 + 1, payload={"n": n})
        )
    await asyncio.sleep(0.5)  # the first batch of each partition is fetched and held
    await a.leases.balance()  # renews, and reports how far behind each partition is
    # Another replica (not started: it holds nothing) answers from the reports.
    other = Leases(a.db, (leases_table, members_table), "feed", PARTITIONS, holder="other")
    told = await other.status()
    assert [lag.partition for lag in told] == [0, 1, 2, 3]
    assert {lag.holder for lag in told} == {"a"}
    assert sum(lag.events_behind for lag in told) > 0
    assert all(lag.reported_at is not None for lag in told)
    assert (await a.leases.status())[0].reported_at is not None  # live, for its own
    scraped = [
        REGISTRY.get_sample_value(
            "plumbline_consumer_behind_events", {"consumer": "feed", "partition": str(p)}
        )
        for p in range(PARTITIONS)
    ]
    assert sum(v or 0 for v in scraped) == sum(lag.events_behind for lag in told)
    release.set()
    await a.inbox.wait_for({}, timeout=0)
    await asyncio.sleep(1.5)  # each fetch then finds nothing more: caught up
    await a.leases.balance()
    for lag in await other.status():
        assert (lag.holder, lag.events_behind, lag.seconds_behind) == ("a", 0, 0.0), lag
    await stop(a)
