"""The activity feed: each event recorded once, whatever the bus redelivers, on SQLite
and PostgreSQL."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from typing import cast

import pytest
from sqlalchemy import func, select

from plumbline.common.access import Role
from plumbline.common.changes import ActivityDraft, describe
from plumbline.common.context import Principal
from plumbline.common.db import Database
from plumbline.common.errors import PermissionDenied
from plumbline.common.events import Event
from plumbline.common.inbox import Inbox
from plumbline.services.activity import feed as feed_module
from plumbline.services.activity.feed import ActivityQuery, Feed
from plumbline.services.activity.models import (
    activities,
    consumed_events,
    consumer_positions,
    metadata,
    project_activities,
)
from tests.unit.common.conftest import db_url, pg_url  # noqa: F401  (fixtures)
from tests.unit.services.conftest import ADMIN, access_cache, acting_as


@pytest.fixture
async def feed_db(db_url: str) -> AsyncIterator[Database]:  # noqa: F811
    db = Database(db_url)
    async with db.engine.begin() as conn:
        await conn.run_sync(metadata.create_all)
    try:
        yield db
    finally:
        await db.close()


def make_feed(db: Database) -> Feed:
    inbox = Inbox(db, consumed_events, consumer_positions)
    return Feed(db, inbox, consistency_wait=1, access=access_cache())


async def activity_rows(db: Database) -> list[tuple[str, str, int | None]]:
    async with db.read() as session:
        result = await session.execute(
            select(activities.c.event_id, activities.c.object_type, activities.c.project)
        )
        return [tuple(r) for r in result.all()]


async def test_a_redelivered_event_is_recorded_once(feed_db: Database) -> None:
    feed = make_feed(feed_db)
    event = Event(
        "items.project.created",
        actor=1,
        project=3,
        object_ids=[3],
        payload={"name": "Apollo"},
        position=1,
    )
    await feed.record(event)
    await feed.record(event)
    assert await activity_rows(feed_db) == [(event.id, "PROJECT", 3)]
    assert await feed.inbox.position("items") == 1


async def test_concurrent_deliveries_of_one_event_are_recorded_once(feed_db: Database) -> None:
    feed = make_feed(feed_db)
    # A first event makes the position row exist, as it does in a running system.
    await feed.record(Event("items.project.created", actor=1, project=1, position=1))
    event = Event("items.project.updated", actor=1, project=1, object_ids=[1], position=2)
    await asyncio.gather(*(feed.record(event) for _ in range(4)))
    rows = await activity_rows(feed_db)
    assert [r[0] for r in rows].count(event.id) == 1
    assert len(rows) == 2


async def test_a_batch_is_recorded_in_order_and_once(feed_db: Database) -> None:
    feed = make_feed(feed_db)
    created = Event("items.project.created", actor=1, project=3, object_ids=[3], position=1)
    internal = Event("items.idblock.allocated", actor=None, position=2)
    updated = Event("items.project.updated", actor=1, project=3, object_ids=[3], position=3)
    user = Event("identity.user.created", actor=1, object_ids=[5], position=1)
    await feed.record(created)
    # A redelivered event, one that is not history, one given twice, another source.
    await feed.record_many([created, internal, updated, updated, user])
    async with feed_db.read() as session:
        rows = (
            await session.execute(select(activities.c.event_id).order_by(activities.c.id))
        ).all()
    assert [r.event_id for r in rows] == [created.id, updated.id, user.id]
    assert await feed.inbox.position("items") == 3
    assert await feed.inbox.position("identity") == 1
    await feed.caught_up({"items": 3, "identity": 1})


async def test_events_that_are_not_history_are_claimed_without_an_activity(
    feed_db: Database,
) -> None:
    feed = make_feed(feed_db)
    event = Event("items.idblock.allocated", actor=None, position=4)
    await feed.record(event)
    assert await activity_rows(feed_db) == []
    async with feed_db.read() as session:
        assert await session.scalar(select(func.count()).select_from(consumed_events)) == 1
    assert await feed.inbox.wait_for({"items": 4}, timeout=0.2)


async def test_an_event_whose_effect_failed_is_recorded_on_redelivery(
    feed_db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    feed = make_feed(feed_db)
    event = Event("items.project.created", actor=1, project=3, object_ids=[3], position=1)
    real_describe = describe

    def broken(e: Event) -> ActivityDraft | None:
        draft = real_describe(e)
        assert draft is not None
        # A NULL action: the insert into the feed fails.
        return dataclasses.replace(draft, action=cast(str, None))

    monkeypatch.setattr(feed_module, "describe", broken)
    with pytest.raises(Exception, match=r"(?i)null"):
        await feed.record(event)
    assert await activity_rows(feed_db) == []
    monkeypatch.setattr(feed_module, "describe", real_describe)
    await feed.record(event)  # the bus redelivers
    assert await activity_rows(feed_db) == [(event.id, "PROJECT", 3)]


async def test_a_relationship_into_a_project_the_reader_may_not_read_is_not_shown(
    feed_db: Database,
) -> None:
    reader = Principal(2, "reader")
    inbox = Inbox(feed_db, consumed_events, consumer_positions)
    feed = Feed(feed_db, inbox, 1, access_cache({2: {3: Role.READ_ONLY}}))
    for position, (rel, to_item, to_project) in enumerate(((7, 20, 3), (8, 90, 9)), 1):
        await feed.record(
            Event(
                "items.relationship.created",
                actor=1,
                project=3,
                object_ids=[rel],
                payload={
                    "fromItem": 10,
                    "toItem": to_item,
                    "name": f"10 to {to_item}",
                    "toProject": to_project,
                },
                position=position,
            )
        )
    with acting_as(ADMIN):
        everything, total = await feed.list(ActivityQuery(project=3))
    assert ([r.details for r in everything], total) == (
        ["relationship 10 to 90 created", "relationship 10 to 20 created"],
        2,
    )
    into_nine = everything[0].id
    with acting_as(reader):
        shown, total = await feed.list(ActivityQuery(project=3))
        assert ([r.details for r in shown], total) == (["relationship 10 to 20 created"], 1)
        assert (await feed.get(everything[1].id)).id == everything[1].id
        with pytest.raises(PermissionDenied, match=f"no access to activity {into_nine}"):
            await feed.get(into_nine)
        with pytest.raises(PermissionDenied, match=f"activity {into_nine}"):
            await feed.affected(into_nine, 0, 20)


async def test_a_projects_kept_total_is_what_counting_its_feed_finds(feed_db: Database) -> None:
    feed = make_feed(feed_db)
    made = [
        Event("items.project.created", actor=1, project=p, object_ids=[p], position=p)
        for p in (3, 4)
    ]
    updates = [
        Event("items.project.updated", actor=1, project=3 + n % 2, object_ids=[3], position=5 + n)
        for n in range(7)
    ]
    user = Event("identity.user.created", actor=1, object_ids=[5], position=1)
    await feed.record_many(made)
    # Redelivered, twice in one batch, the organisation's, one that is not history.
    internal = Event("items.idblock.allocated", actor=None, project=3, position=20)
    await feed.record_many([made[0], *updates, updates[0], user, internal])
    await asyncio.gather(feed.record(updates[1]), feed.record(updates[2]))
    for project, recorded in ((3, 5), (4, 4)):
        with acting_as(ADMIN):
            page, total = await feed.list(ActivityQuery(project=project, max_results=2))
            filtered = await feed.list(ActivityQuery(project=project, event_types=["UPDATE"]))
        async with feed_db.read() as session:
            counted = await session.scalar(
                select(func.count()).select_from(activities).where(activities.c.project == project)
            )
        assert (total, counted, len(page)) == (recorded, recorded, 2)
        # A filtered feed is counted, not kept: only its updates.
        assert filtered[1] == recorded - 1
    async with feed_db.read() as session:
        kept = (await session.execute(select(project_activities))).all()
    assert sorted(tuple(r) for r in kept) == [(3, 5), (4, 4)]
    with acting_as(ADMIN):
        assert (await feed.list(ActivityQuery(project=99)))[1] == 0
        assert (await feed.list(ActivityQuery(project=0, organization=True)))[1] == 1
