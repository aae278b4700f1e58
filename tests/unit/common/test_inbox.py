"""Idempotent consumption and read-your-writes waits, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import MetaData, select

from plumbline.api.core.v1 import core_pb2
from plumbline.common.db import Database
from plumbline.common.events import Event, position_marker
from plumbline.common.inbox import Inbox, inbox_tables, targets


@pytest.fixture
async def inbox(db_url: str) -> AsyncIterator[Inbox]:
    metadata = MetaData()
    consumed, positions = inbox_tables(metadata)
    db = Database(db_url)
    async with db.engine.begin() as conn:
        await conn.run_sync(metadata.create_all)
    try:
        yield Inbox(db, consumed, positions)
    finally:
        await db.close()


async def consume(inbox: Inbox, event: Event) -> bool:
    """What a consumer does: claim in its transaction, then report the commit."""
    async with inbox.db.transaction() as session:
        claimed = await inbox.claim(session, event)
    if claimed:
        await inbox.committed(event)
    return claimed


async def consumed_ids(inbox: Inbox) -> list[str]:
    async with inbox.db.read() as session:
        return list((await session.scalars(select(inbox.consumed.c.event_id))).all())


async def test_a_redelivered_event_is_claimed_once(inbox: Inbox) -> None:
    event = Event("items.project.created", actor=1, position=7)
    assert await consume(inbox, event) is True
    assert await consume(inbox, event) is False
    assert await consumed_ids(inbox) == [event.id]


async def test_a_second_claim_in_the_same_transaction_is_refused(inbox: Inbox) -> None:
    event = Event("items.project.created", actor=1, position=1)
    async with inbox.db.transaction() as session:
        assert await inbox.claim(session, event) is True
        assert await inbox.claim(session, event) is False


async def test_a_claim_that_was_rolled_back_does_not_count(inbox: Inbox) -> None:
    event = Event("items.project.created", actor=1, position=3)

    async def claim_then_fail() -> None:
        async with inbox.db.transaction() as session:
            assert await inbox.claim(session, event)
            raise RuntimeError("the effect failed")

    with pytest.raises(RuntimeError, match="the effect failed"):
        await claim_then_fail()
    assert await consumed_ids(inbox) == []
    assert await inbox.position("items") == 0
    assert await consume(inbox, event) is True


async def test_positions_are_kept_per_source_and_never_go_back(inbox: Inbox) -> None:
    await consume(inbox, Event("items.project.created", actor=1, position=5))
    await consume(inbox, Event("items.project.updated", actor=1, position=3))  # late arrival
    await consume(inbox, Event("identity.user.created", actor=1, position=2))
    assert await inbox.position("items") == 5
    assert await inbox.position("identity") == 2
    assert await inbox.position("activity") == 0


async def test_another_replica_sees_the_stored_positions(inbox: Inbox) -> None:
    await consume(inbox, Event("items.project.created", actor=1, position=9))
    other = Inbox(inbox.db, inbox.consumed, inbox.positions)
    assert await other.position("items") == 9
    assert await other.wait_for({"items": 9}, timeout=0.5) is True


async def test_wait_for_returns_true_once_every_position_is_reached(inbox: Inbox) -> None:
    assert await inbox.wait_for({}, timeout=0.1) is True
    await consume(inbox, Event("items.project.created", actor=1, position=4))
    await consume(inbox, Event("identity.user.created", actor=1, position=2))
    assert await inbox.wait_for({"items": 4, "identity": 2}, timeout=0.5) is True
    assert await inbox.wait_for({"items": 3}, timeout=0.5) is True


async def test_wait_for_returns_false_on_time_out(inbox: Inbox) -> None:
    await consume(inbox, Event("items.project.created", actor=1, position=4))
    started = time.monotonic()
    assert await inbox.wait_for({"items": 5}, timeout=0.3) is False
    assert 0.25 <= time.monotonic() - started < 2
    assert await inbox.wait_for({"items": 4, "identity": 1}, timeout=0.2) is False


async def test_wait_for_wakes_when_the_event_is_consumed(inbox: Inbox) -> None:
    waiter = asyncio.create_task(inbox.wait_for({"items": 2}, timeout=5))
    await asyncio.sleep(0.05)
    assert not waiter.done()
    started = time.monotonic()
    await consume(inbox, Event("items.project.created", actor=1, position=2))
    assert await asyncio.wait_for(waiter, 2) is True
    assert time.monotonic() - started < 1


async def consume_many(inbox: Inbox, events: list[Event]) -> list[Event]:
    """What a batch consumer does: one transaction claims the batch."""
    async with inbox.db.transaction() as session:
        claimed = await inbox.claim_many(session, events)
    await inbox.committed_many(claimed)
    return claimed


async def test_claim_many_returns_the_events_not_consumed_before_in_order(inbox: Inbox) -> None:
    first, second, third = (Event("items.item.created", actor=1, position=n) for n in (1, 2, 3))
    assert await consume_many(inbox, [second]) == [second]
    # A batch redelivered after a crash, with an event consumed since and a new one.
    assert await consume_many(inbox, [first, second, third]) == [first, third]
    assert await consume_many(inbox, [first, second, third]) == []
    assert sorted(await consumed_ids(inbox)) == sorted([first.id, second.id, third.id])


async def test_an_event_twice_in_one_batch_is_claimed_once(inbox: Inbox) -> None:
    event = Event("items.item.created", actor=1, position=1)
    other = Event("items.item.updated", actor=1, position=2)
    assert await consume_many(inbox, [event, other, event]) == [event, other]
    assert sorted(await consumed_ids(inbox)) == sorted([event.id, other.id])
    assert await consume_many(inbox, []) == []


async def test_claim_many_moves_each_source_to_its_highest_claimed_position(
    inbox: Inbox,
) -> None:
    await consume(inbox, Event("testmgmt.testrun.updated", actor=1, position=10))
    claimed = await consume_many(
        inbox,
        [
            Event("items.item.created", actor=1, position=4),
            Event("identity.user.created", actor=1, position=2),
            Event("items.item.updated", actor=1, position=6),
            Event("items.item.updated", actor=1, position=5),  # out of order
            Event("testmgmt.testrun.updated", actor=1, position=8),  # late
        ],
    )
    assert len(claimed) == 5
    other = Inbox(inbox.db, inbox.consumed, inbox.positions)  # reads the stored ones
    assert await other.position("items") == 6
    assert await other.position("identity") == 2
    assert await other.position("testmgmt") == 10  # never back
    assert await inbox.wait_for({"items": 6, "identity": 2}, timeout=0.5) is True


async def test_a_batch_whose_effect_failed_is_claimed_again(inbox: Inbox) -> None:
    events = [Event("items.item.created", actor=1, position=n) for n in (1, 2)]

    async def claim_then_fail() -> None:
        async with inbox.db.transaction() as session:
            assert await inbox.claim_many(session, events) == events
            raise RuntimeError("the effect failed")

    with pytest.raises(RuntimeError, match="the effect failed"):
        await claim_then_fail()
    assert await consumed_ids(inbox) == []
    assert await inbox.position("items") == 0
    assert await consume_many(inbox, events) == events
    assert await inbox.position("items") == 2


async def test_committed_many_wakes_a_waiting_reader(inbox: Inbox) -> None:
    waiter = asyncio.create_task(inbox.wait_for({"items": 3, "identity": 1}, timeout=5))
    await asyncio.sleep(0.05)
    assert not waiter.done()
    await consume_many(
        inbox,
        [
            Event("identity.user.created", actor=1, position=1),
            Event("items.item.created", actor=1, position=3),
        ],
    )
    assert await asyncio.wait_for(waiter, 2) is True


async def test_a_partitioned_reader_waits_for_each_partitions_own_newest_event(
    inbox: Inbox,
) -> None:
    # As a consumer whose replicas share three partitions keeps its positions (a lease
    # table is not what this is about).
    inbox.partitions = 3
    await consume_many(inbox, [Event("items.item.created", actor=1, project=1, position=5)])
    # The writer's watermark names partition 1's newest event only: no marker needed
    # for the partitions that got none.
    assert await inbox.wait_for({"items": [0, 5, 0]}, timeout=0.5) is True
    assert await inbox.wait_for({"items": [0, 5, 2]}, timeout=0.2) is False
    # One position is wanted of every partition; so is the highest of a list that
    # names another count of partitions.
    assert await inbox.wait_for({"items": 5}, timeout=0.2) is False
    assert await inbox.wait_for({"items": [0, 5]}, timeout=0.2) is False
    await consume_many(inbox, [position_marker("items", 5, p) for p in (0, 2)])
    assert await inbox.wait_for({"items": 5}, timeout=0.5) is True


def test_targets_take_a_position_per_partition_where_the_watermark_has_them() -> None:
    given = [
        core_pb2.Watermark(source="items", position=9, partitions=[3, 9, 0]),
        core_pb2.Watermark(source="identity", position=4),
    ]
    assert targets(given) == {"items": [3, 9, 0], "identity": 4}
