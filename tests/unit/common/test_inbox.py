"""Idempotent consumption and read-your-writes waits, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import MetaData, select

from plumbline.common.db import Database
from plumbline.common.events import Event
from plumbline.common.inbox import Inbox, inbox_tables


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
